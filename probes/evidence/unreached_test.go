package evidence

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUnreachedTellsARefusalBeforeTheApplicationFromAnAnswer(t *testing.T) {
	rpc := func(code string) json.RawMessage { return json.RawMessage(`{"code":` + code + `,"message":"m"}`) }
	for _, tc := range []struct {
		name string
		call Call
		want string // a substring of the reason; "" when reached
	}{
		{"an answer", Call{Kind: KindToolCall, HTTPStatus: 200}, ""},
		{"a 401 on a read probe", Call{Kind: KindToolCall, HTTPStatus: 401, Purposes: []Purpose{PurposeValid}}, "HTTP 401"},
		{"a 403 on an error probe", Call{Kind: KindToolCall, HTTPStatus: 403, Purposes: []Purpose{PurposeErrorVersion}}, "HTTP 403"},
		{"a 401 on the no-credential probe is its answer", Call{Kind: KindToolCall, HTTPStatus: 401, Purposes: []Purpose{PurposeAuthNone}}, ""},
		{"a 401 on the random-credential probe is its answer", Call{Kind: KindToolCall, HTTPStatus: 401, Purposes: []Purpose{PurposeAuthRandom}}, ""},
		{"a 429 outside the burst", Call{Kind: KindToolCall, HTTPStatus: 429}, "429"},
		{"a 429 in the burst is its answer", Call{Kind: KindToolCall, HTTPStatus: 429, Purposes: []Purpose{PurposeRateBurst}}, ""},
		{"a gateway's 502", Call{Kind: KindToolCall, HTTPStatus: 502}, "gateway"},
		{"a gateway's 503", Call{Kind: KindHTTPGet, HTTPStatus: 503}, "gateway"},
		{"a gateway's 504", Call{Kind: KindInitialize, HTTPStatus: 504}, "gateway"},
		{"JSON-RPC -32028", Call{Kind: KindToolCall, HTTPStatus: 200, RPCError: rpc("-32028")}, "-32028"},
		{"JSON-RPC -32028 on the no-credential probe", Call{Kind: KindToolCall, HTTPStatus: 200, RPCError: rpc("-32028"), Purposes: []Purpose{PurposeAuthNone}}, ""},
		{"JSON-RPC -32029 outside the burst", Call{Kind: KindToolCall, RPCError: rpc("-32029")}, "-32029"},
		{"JSON-RPC -32029 in the burst", Call{Kind: KindToolCall, RPCError: rpc("-32029"), Purposes: []Purpose{PurposeRateBurst}}, ""},
		{"JSON-RPC -32027", Call{Kind: KindToolCall, RPCError: rpc("-32027")}, "-32027"},
		{"another JSON-RPC error is an answer", Call{Kind: KindToolCall, RPCError: rpc("-32602")}, ""},
		{"a 404 is an answer", Call{Kind: KindToolCall, HTTPStatus: 404}, ""},
		{"a webhook delivery is never refused", Call{Kind: KindWebhook, HTTPStatus: 503}, ""},
		{"an unreadable error member", Call{Kind: KindToolCall, RPCError: json.RawMessage(`[1`)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.call.Unreached()
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("Unreached() = %q, want one holding %q", got, tc.want)
			}
		})
	}
}

func TestViewKeepsTheTargetAndScope(t *testing.T) {
	s := NewStore(Target{MCP: "https://s.example/mcp", Credential: true})
	s.Add(Call{ProbeID: "mcp/a", Transport: MCP})
	s.Add(Call{ProbeID: "a2a/a", Transport: A2A})
	v := s.Only(MCP).View(func(c Call) Call { c.HarnessError = "x"; return c })
	if v.Scope() != MCP || v.Target() != s.Target() {
		t.Fatalf("scope %q target %+v", v.Scope(), v.Target())
	}
	calls := v.Calls()
	if len(calls) != 1 || calls[0].HarnessError != "x" {
		t.Fatalf("calls %+v", calls)
	}
	if orig, _ := s.Call("mcp/a"); orig.HarnessError != "" {
		t.Fatal("View changed the store it was made from")
	}
}
