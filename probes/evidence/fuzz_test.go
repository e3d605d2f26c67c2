package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// FuzzWriteJSON: whatever bytes a seller's reply holds (recorded as a raw
// member, a body and an event), evidence.json as WriteJSON writes it is
// one JSON document in UTF-8 that encoding/json reads, the hashes it
// returns are those of each call's bytes in it, and every value reads
// back exactly as it was recorded.
func FuzzWriteJSON(f *testing.F) {
	for _, seed := range []string{`{"a":1}`, `[1, 2 ,3]`, ` "x" `, strings.Repeat("[", 70) + strings.Repeat("]", 70),
		"{\"a\":\"\xff\"}", `{"adcp_conform_json_text":"x"}`, `{"\u0061dcp_conform_json_text":"x"}`, `1e999`, `-0.0`, "\"\\ud800\"",
		"\xef\xbb\xbf{}", `{"a":1}{"b":2}`, "", `nul`, "\"\u2028\x7f\""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := NewStore(Target{MCP: "http://x"})
		s.Add(Call{ProbeID: "mcp/a", Transport: MCP, Message: json.RawMessage(raw), Result: json.RawMessage(raw),
			Exchanges: []wire.Exchange{{Method: "POST", ResponseBody: wire.Bytes(raw), Events: []wire.Event{{Data: strings.ToValidUTF8(string(raw), "\uFFFD"), Raw: wire.Bytes(raw)}}}}})
		var out bytes.Buffer
		written, err := s.WriteJSONUntil(&out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out.Bytes()) {
			t.Fatalf("not JSON:\n%q", out.Bytes())
		}
		var doc struct {
			Calls []json.RawMessage `json:"calls"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Calls) != 1 || len(written) != 1 {
			t.Fatalf("%v: %d calls", err, len(doc.Calls))
		}
		if !bytes.Contains(out.Bytes(), doc.Calls[0]) || written[0].SHA256 != sha256Hex(doc.Calls[0]) {
			t.Fatal("the call's hash is not that of its bytes in the file")
		}
		back := NewStore(Target{})
		if err := back.UnmarshalJSON(out.Bytes()); err != nil {
			t.Fatal(err)
		}
		c, _ := back.Call("mcp/a")
		if len(raw) == 0 {
			return
		}
		want := raw // a value kept as JSON loses the whitespace around it, as any JSON value does
		if verbatim(raw) {
			want = bytes.Trim(raw, " \t\r\n")
		}
		if !bytes.Equal(c.Message, want) || !bytes.Equal(c.Result, want) {
			t.Fatalf("read back %q, want %q", c.Message, want)
		}
		if len(c.Exchanges) != 1 || !bytes.Equal(c.Exchanges[0].ResponseBody, raw) || len(c.Exchanges[0].Events) != 1 ||
			!bytes.Equal(c.Exchanges[0].Events[0].Raw, raw) {
			t.Fatalf("the exchange read back %+v", c.Exchanges)
		}
	})
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
