package plan

import (
	"encoding/json"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
)

// TestRefusalReadsTheReplyAsAClient: refusal detection reads exact-case
// keys, the last of a repeated key, and isError by JavaScript truthiness,
// as a client does (encoding/json's struct decoding matches keys
// case-insensitively, so {"isError":false,"IsError":true} read as a
// refusal).
func TestRefusalReadsTheReplyAsAClient(t *testing.T) {
	call := func(result string) evidence.Call {
		return evidence.Call{ProbeID: "mcp/p", Transport: evidence.MCP, Kind: evidence.KindToolCall,
			Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":` + result + `}`), Result: json.RawMessage(result)}
	}
	rpc := func(e string) evidence.Call {
		return evidence.Call{ProbeID: "mcp/p", Transport: evidence.MCP, Kind: evidence.KindToolCall,
			Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"error":` + e + `}`), RPCError: json.RawMessage(e)}
	}
	for _, tc := range []struct {
		name string
		c    evidence.Call
		want string
	}{
		{"success", call(`{"content":[],"structuredContent":{"status":"completed"}}`), ""},
		{"IsError is not isError", call(`{"isError":false,"IsError":true,"content":[{"type":"text","text":"ok"}]}`), ""},
		{"IsError alone", call(`{"IsError":true,"content":[{"type":"text","text":"ok"}]}`), ""},
		{"isError true, prose", call(`{"isError":true,"content":[{"type":"text","text":"no"}]}`), "an isError result"},
		{"isError truthy string", call(`{"isError":"yes","content":[{"type":"text","text":"no"}]}`), "an isError result"},
		{"isError repeated, the last counts", call(`{"isError":true,"isError":false,"content":[]}`), ""},
		{"adcp_error", call(`{"isError":true,"structuredContent":{"adcp_error":{"code":"INVALID_REQUEST","message":"brief is required","Message":"x"}}}`), "INVALID_REQUEST: brief is required"},
		{"JSON-RPC error", rpc(`{"code":-32602,"message":"Invalid params","Message":"other","CODE":1}`), "JSON-RPC -32602: Invalid params"},
		{"JSON-RPC error, exact-case message only", rpc(`{"code":-32602,"MESSAGE":"shout"}`), "JSON-RPC -32602: "},
	} {
		if got := refusal(tc.c); got != tc.want {
			t.Errorf("%s: refusal = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestPlanReadsSellerJSONExactCase: every place the plan reads seller JSON
// to decide what to probe next matches keys exactly, as a client does.
func TestPlanReadsSellerJSONExactCase(t *testing.T) {
	if got := ToolNames(json.RawMessage(`{"tools":[{"name":"get_products","Name":"x"},{"NAME":"shout"}],"Tools":[{"name":"other"}]}`)); len(got) != 2 || got[0] != "get_products" || got[1] != "" {
		t.Errorf("toolNames = %q", got)
	}
	list := json.RawMessage(`{"tools":[{"name":"get_products","execution":{"taskSupport":"optional","TaskSupport":"required"}},{"name":"x","Execution":{"taskSupport":"required"}}]}`)
	if got := taskSupportOf(list, "get_products"); got != "optional" {
		t.Errorf("taskSupportOf(get_products) = %q", got)
	}
	if got := taskSupportOf(list, "x"); got != "" {
		t.Errorf("taskSupportOf(x) = %q, want none (Execution is not execution)", got)
	}
	if got := tasksUndeclared(json.RawMessage(`{"Capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}}}`)); got != NotDeclaredTasks {
		t.Errorf("tasksUndeclared with Capabilities = %q", got)
	}
	if got := tasksUndeclared(json.RawMessage(`{"capabilities":{"tasks":{"requests":{"tools":{"Call":{}}}}}}`)); got == "" {
		t.Error("tasksUndeclared reads Call as call")
	}
	if got := tasksUndeclared(json.RawMessage(`{"capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}}}`)); got != "" {
		t.Errorf("tasksUndeclared of a declaration = %q", got)
	}
	caps := func(body string) evidence.Call {
		return evidence.Call{Transport: evidence.MCP, Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":` + body + `}}`)}
	}
	if got := supportedVersions(extract.TransportMCP, caps(`{"status":"completed","ADCP":{"supported_versions":["3.0"]}}`)); len(got) != 0 {
		t.Errorf("supportedVersions reads ADCP as adcp: %q", got)
	}
	if got := supportedVersions(extract.TransportMCP, caps(`{"status":"completed","adcp":{"supported_versions":["3.0","3.1"],"Supported_Versions":["9.9"]}}`)); len(got) != 2 || got[1] != "3.1" {
		t.Errorf("supportedVersions = %q", got)
	}
	if settled([]webhook.Delivery{{Status: 200, Body: []byte(`{"status":"working","Status":"completed"}`)}}) {
		t.Error("settled reads Status as status")
	}
	if !settled([]webhook.Delivery{{Status: 200, Body: []byte(`{"status":"completed"}`)}}) {
		t.Error("settled misses a completed delivery")
	}
	if st, id := firstStatus(caps(`{"status":"completed","Status":"submitted","TASK_ID":"x"}`)); st != "completed" || id != "" {
		t.Errorf("firstStatus = %q, %q", st, id)
	}
}

func TestToolNamesOfANonObjectIsNone(t *testing.T) {
	if got := ToolNames(json.RawMessage(`[1,2]`)); got != nil {
		t.Errorf("ToolNames of a non-object = %v", got)
	}
}
