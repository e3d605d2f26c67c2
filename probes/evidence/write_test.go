package evidence

import (
	"bytes"
	"encoding/json"
	"testing"
)

// WriteJSON writes, call by call, the bytes an indenting json.Encoder
// writes for the whole store.
func TestWriteJSONIsTheIndentedEncoding(t *testing.T) {
	full := NewStore(Target{MCP: "http://127.0.0.1:1/mcp", Credential: true})
	full.Add(Call{ProbeID: "b", Transport: MCP, Kind: KindToolCall, Tool: "get_products",
		Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"a":[1, 2],"html":"<b>&</b>"}}`)})
	full.Add(Call{ProbeID: "a", Transport: MCP, HarnessError: "x"})
	for name, s := range map[string]*Store{"empty": NewStore(Target{}), "full": full} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s:\n got %s\nwant %s", name, got.String(), want.String())
		}
	}
}

// WriteJSONUntil stops writing calls once stop gives a reason: the file
// is still one JSON document, loads, holds the calls written, and counts
// the ones it left out with the reason.
func TestWriteJSONUntilNamesTheCallsItLeftOut(t *testing.T) {
	s := NewStore(Target{})
	for _, id := range []string{"a", "b", "c"} {
		s.Add(Call{ProbeID: id, Transport: MCP, HarnessError: "x"})
	}
	asked := 0
	var b bytes.Buffer
	written, err := s.WriteJSONUntil(&b, func() string {
		if asked++; asked > 1 {
			return "interrupted by SIGINT"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Calls   []Call   `json:"calls"`
		Omitted *Omitted `json:"omitted"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(written) != 1 || written[0] != "a" || len(doc.Calls) != 1 {
		t.Errorf("written %v, %d calls in the file", written, len(doc.Calls))
	}
	if doc.Omitted == nil || doc.Omitted.Calls != 2 || doc.Omitted.Reason != "interrupted by SIGINT" {
		t.Errorf("omitted %+v", doc.Omitted)
	}
	var back Store
	if err := back.UnmarshalJSON(b.Bytes()); err != nil || len(back.Calls()) != 1 {
		t.Errorf("read back: %v, %d calls", err, len(back.Calls()))
	}
}
