package evidence

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestCallsAreFilteredAndOrderedByProbeID(t *testing.T) {
	s := NewStore(Target{MCP: "http://127.0.0.1:1/mcp"})
	s.Add(Call{ProbeID: "mcp/b", Transport: MCP, Kind: KindToolCall, Purposes: []Purpose{PurposeContext}, Message: json.RawMessage(`{}`)})
	s.Add(Call{ProbeID: "mcp/a", Transport: MCP, Kind: KindToolCall, HarnessError: "timeout"})
	s.Add(Call{ProbeID: "mcp/c", Transport: MCP, Kind: KindToolsList, Message: json.RawMessage(`{}`)})
	s.Add(Call{ProbeID: "a2a/a", Transport: A2A, Kind: KindToolCall, Message: json.RawMessage(`{}`)})

	got := ids(s.Calls(ToolCalls(MCP)))
	if got != "mcp/a mcp/b" {
		t.Fatalf("ToolCalls(MCP) = %s", got)
	}
	if got := ids(s.Calls(ToolCalls(MCP), Answered())); got != "mcp/b" {
		t.Fatalf("answered MCP tool calls = %s", got)
	}
	if got := ids(s.Calls(WithPurpose(PurposeContext))); got != "mcp/b" {
		t.Fatalf("WithPurpose(context) = %s", got)
	}
	if _, ok := s.Call("mcp/zzz"); ok {
		t.Fatal("Call found an absent probe")
	}
}

func TestAStoreSurvivesAJSONRoundTrip(t *testing.T) {
	s := NewStore(Target{MCP: "http://x/mcp", Credential: true})
	s.Add(Call{ProbeID: "mcp/a", Transport: MCP, Kind: KindToolCall, Result: json.RawMessage(`{"isError":false}`), NotRun: ""})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Store
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	c, ok := back.Call("mcp/a")
	if !ok || string(c.Result) != `{"isError":false}` || c.RPCError != nil || !back.Target().Credential {
		t.Fatalf("round trip lost data: %+v %+v", c, back.Target())
	}
}

func ids(calls []Call) string {
	out := ""
	for i, c := range calls {
		if i > 0 {
			out += " "
		}
		out += c.ProbeID
	}
	return out
}

// TestStoreKeepsDeepReplies: a reply nested deeper than encoding/json's
// 10 000 levels (which the harness reads) is written to evidence.json and
// read back byte for byte, as is a value shaped like the wrapper.
func TestStoreKeepsDeepReplies(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	msg := `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"x":` + deep + `}}}`
	result := `{"structuredContent":{"x":` + deep + `}}`
	look := `{"adcp_conform_json_text":"x"}`
	s := NewStore(Target{MCP: "http://x"})
	s.Add(Call{ProbeID: "mcp/deep", Transport: MCP, Kind: KindToolCall, Message: json.RawMessage(msg), Result: json.RawMessage(result)})
	s.Add(Call{ProbeID: "mcp/look", Transport: MCP, Kind: KindToolCall, Result: json.RawMessage(look), Message: json.RawMessage("{\"a\":\"\xff\"}")})
	marshal, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	var written bytes.Buffer // the writer evidence.json is written with
	if err := s.WriteJSON(&written); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	for name, b := range map[string][]byte{"Marshal": marshal, "WriteJSON": written.Bytes()} {
		back := NewStore(Target{})
		if err := json.Unmarshal(b, back); err != nil {
			t.Fatalf("%s, then Unmarshal: %v", name, err)
		}
		c, _ := back.Call("mcp/deep")
		if string(c.Message) != msg || string(c.Result) != result {
			t.Errorf("%s: the deep reply did not come back whole", name)
		}
		if name == "WriteJSON" {
			continue // indented: a plain raw value's whitespace changes, as the encoder's always did
		}
		c, _ = back.Call("mcp/look")
		if string(c.Result) != look || string(c.Message) != "{\"a\":\"\xff\"}" {
			t.Errorf("%s: a wrapper-shaped value came back as %s, %q", name, c.Result, c.Message)
		}
	}
}
