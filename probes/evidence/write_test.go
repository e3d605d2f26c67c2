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
