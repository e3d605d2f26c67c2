package suites

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// taskCall is a recorded call of the task probes with the given result (or
// JSON-RPC error) member.
func taskCall(id, method string, kind evidence.Kind, result, rpcErr string) evidence.Call {
	c := evidence.Call{ProbeID: id, Transport: evidence.MCP, Kind: kind, Method: method, Tool: "get_products", Started: time.Now(), HTTPStatus: 200}
	msg := map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": json.RawMessage(`1`)}
	if result != "" {
		c.Result = json.RawMessage(result)
		msg["result"] = c.Result
	}
	if rpcErr != "" {
		c.RPCError = json.RawMessage(rpcErr)
		msg["error"] = c.RPCError
	}
	c.Message, _ = json.Marshal(msg)
	return c
}

const (
	goodHandle  = `{"task":{"taskId":"t1","status":"working","createdAt":"2026-11-22T10:00:00Z","lastUpdatedAt":"2026-11-22T10:00:00Z","ttl":60000,"pollInterval":200}}`
	notFound    = `{"code":-32602,"message":"Task not found"}`
	productBody = `{"status":"completed","products":[],"adcp_version":"3.1"}`
)

func toolResult(body string, isError bool) string {
	text, _ := json.Marshal(body)
	flag := ""
	if isError {
		flag = `,"isError":true`
	}
	return `{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + body + flag + `}`
}

// taskStore records one task run: the handle, one poll ending in status
// and tasks/result answering result (a JSON-RPC error when it is one); and
// the isolation probes answering
// leak (a result) or not found.
func taskStore(handle, status, result string, leak bool) *evidence.Store {
	s := evidence.NewStore(evidence.Target{MCP: "http://seller.example/mcp"})
	s.Add(taskCall("mcp/task/get_products/create", "tools/call", evidence.KindTask, handle, ""))
	s.Add(taskCall("mcp/task/get_products/get/01", "tasks/get", evidence.KindTask, `{"taskId":"t1","status":"`+status+`","ttl":60000,"pollInterval":200}`, ""))
	if strings.HasPrefix(result, `{"code"`) {
		s.Add(taskCall("mcp/task/get_products/result", "tasks/result", evidence.KindToolCall, "", result))
	} else {
		s.Add(taskCall("mcp/task/get_products/result", "tasks/result", evidence.KindToolCall, result, ""))
	}
	for _, m := range []string{"get", "result", "cancel"} {
		if leak {
			s.Add(taskCall("mcp/task/isolation/"+m, "tasks/"+m, evidence.KindTask, `{"taskId":"t1","status":"completed"}`, ""))
		} else {
			s.Add(taskCall("mcp/task/isolation/"+m, "tasks/"+m, evidence.KindTask, "", notFound))
		}
	}
	list := `{"tasks":[]}`
	if leak {
		list = `{"tasks":[{"taskId":"t1","status":"completed"}]}`
	}
	s.Add(taskCall("mcp/task/isolation/list", "tasks/list", evidence.KindTask, list, ""))
	s.Add(taskCall("mcp/task/ttl/create", "tools/call", evidence.KindTask, strings.Replace(handle, `"ttl":60000`, `"ttl":3600000`, 1), ""))
	return s
}

func TestTaskJudges(t *testing.T) {
	good := taskStore(goodHandle, "completed", toolResult(productBody, false), false)
	direct := taskStore(toolResult(productBody, false), "completed", toolResult(productBody, false), false)
	honoured := evidence.NewStore(evidence.Target{})
	honoured.Add(taskCall("mcp/task/ttl/create", "tools/call", evidence.KindTask, strings.Replace(goodHandle, `"ttl":60000`, `"ttl":315360000000`, 1), ""))
	notRun := evidence.NewStore(evidence.Target{})
	notRun.Add(evidence.Call{ProbeID: "mcp/task/get_products/create", Transport: evidence.MCP, Kind: evidence.KindTask, NotRun: "the server does not declare the MCP tasks capability"})
	for _, tc := range []struct {
		name  string
		store *evidence.Store
		judge func(*evidence.Store, Options) Verdict
		want  Outcome
		msg   string
	}{
		{"handle", good, judgeTASK01, Pass, ""},
		{"direct result", direct, judgeTASK01, Fail, "the tool result itself answers"},
		{"handle without pollInterval (optional in MCP 2025-11-25)", taskStore(strings.Replace(goodHandle, `,"pollInterval":200`, "", 1), "completed", toolResult(productBody, false), false), judgeTASK01, Pass, ""},
		{"undeclared", notRun, judgeTASK01, Skip, "does not declare the MCP tasks capability"},
		{"terminal and result", good, judgeTASK02, Pass, ""},
		{"never terminal", taskStore(goodHandle, "working", toolResult(productBody, false), false), judgeTASK02, Fail, `still "working"`},
		{"result is an error", taskStore(goodHandle, "completed", notFound, false), judgeTASK02, Fail, `tasks/result of a "completed" task answers a JSON-RPC error`},
		{"mapping", good, judgeTASK03, Pass, ""},
		{"AdCP spelling", taskStore(goodHandle, "canceled", toolResult(productBody, false), false), judgeTASK03, Fail, `"canceled" is the AdCP status`},
		{"error task completed", taskStore(goodHandle, "completed", toolResult(`{"adcp_error":{"code":"INVALID_REQUEST","message":"m"}}`, true), false), judgeTASK03, Fail, `ended "completed" beside an isError result`},
		{"submitted body completed", taskStore(goodHandle, "completed", toolResult(`{"status":"submitted","task_id":"x"}`, false), false), judgeTASK03, Fail, `maps to "working"`},
		{"isolated", good, judgeTASK04, Pass, ""},
		{"leaky", taskStore(goodHandle, "completed", toolResult(productBody, false), true), judgeTASK04, Fail, "from a second session answers"},
		{"clamped", good, judgeTASK05, Pass, ""},
		{"honoured", honoured, judgeTASK05, Fail, "honours the requested ten-year TTL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.judge(tc.store.Only(evidence.MCP), Options{})
			if v.Outcome != tc.want || !strings.Contains(v.Message, tc.msg) {
				t.Fatalf("got %s %q, want %s containing %q", v.Outcome, v.Message, tc.want, tc.msg)
			}
		})
	}
}
