package fuzz

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// An unknown id keeps its id's length, prefix and separators, differs
// from it, and is the same for the same seed.
func TestUnknownLikeKeepsTheShape(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"mb_0001", "mb_4445"},
		{"3f2c1d9e-0b7a-4c11-9f00-0123456789ab", "7f6c5d3e-4b1a-8c55-3f44-4567890123ab"},
		{"acct_sandbox", "eaax_werbfsh"},
		{"ABC-def", "EFA-bcd"},
	} {
		got := unknownLike(tc.id, 1)
		if got != tc.want {
			t.Errorf("unknownLike(%q) = %q, want %q", tc.id, got, tc.want)
		}
		if len(got) != len(tc.id) || got == tc.id || unknownLike(tc.id, 1) != got {
			t.Errorf("unknownLike(%q) = %q: not of the same length, not different or not stable", tc.id, got)
		}
	}
}

// asciiJSON writes the same JSON value in ASCII, whatever the strings
// hold (astral runes, bidi controls, NBSP, quotes).
func TestASCIIJSONIsTheSameValue(t *testing.T) {
	in := []byte("{\"a\":\"\u202eé🙂\u00a0'\\\"\",\n\"b\":[1,2]}")
	out := asciiJSON(in)
	for _, r := range out {
		if r < 0x20 || r > 0x7e {
			t.Fatalf("non-ASCII or control character %U in %q", r, out)
		}
	}
	var a, b any
	if err := json.Unmarshal(in, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("asciiJSON changed the value: %q (%v)", out, err)
	}
}

// The shell text sends the recorded request, names the token's variable
// and never a token, and quotes what it sends for the shell.
func TestShellSendsTheRecordedRequest(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"it's"}}}`
	c := evidence.Call{ProbeID: "fuzz/s1/get_products/t000", Transport: evidence.MCP, Kind: evidence.KindToolCall,
		Exchanges: []wire.Exchange{{Method: "POST", URL: "http://127.0.0.1:1/mcp", RequestBody: wire.Bytes(body)}}}
	sh := Shell(c, "SELLER_TOKEN")
	for _, want := range []string{"URL='http://127.0.0.1:1/mcp'", `"Authorization: Bearer $SELLER_TOKEN"`, `"method":"initialize"`,
		`'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"it'\''s"}}}'`,
		"adcp-conform extract --jsonrpc --transport mcp"} {
		if !strings.Contains(sh, want) {
			t.Errorf("the shell text lacks %s:\n%s", want, sh)
		}
	}
	c.Transport = evidence.A2A
	if sh := Shell(c, ""); strings.Contains(sh, "initialize") || strings.Contains(sh, "Authorization") || !strings.Contains(sh, "--transport a2a") {
		t.Errorf("an A2A call without a token:\n%s", sh)
	}
	if Shell(evidence.Call{}, "T") != "" {
		t.Error("a call with no request sent has a reproduction")
	}
}
