package suites

import (
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The TASK tables. Shapes: mcp-guide.mdx (Async Operations via MCP Tasks: the
// CreateTaskResult {"task": {taskId, status, createdAt, ttl, pollInterval}},
// tasks/get, tasks/result returning the CallToolResult, tasks/cancel; AdCP
// Status Mapping; Production task isolation; clamping a client-provided
// TTL) and MCP 2025-11-25 Tasks (ttl a number or null; a cancelled task
// stays cancelled; cancelling a terminal task is refused with -32602).

const (
	tcCreate = "mcp/task/get_products/create"
	tcPoll   = "mcp/task/get_products/get/01"
	tcResult = "mcp/task/get_products/result"
)

func tkCreate(id, result string) evidence.Call {
	return taskCall(id, "tools/call", evidence.KindTask, result, "")
}

func tkGet(id, result string) evidence.Call {
	return taskCall(id, "tasks/get", evidence.KindTask, result, "")
}

func tkGetErr(id, rpcErr string) evidence.Call {
	return taskCall(id, "tasks/get", evidence.KindTask, "", rpcErr)
}

func tkResult(id, result string) evidence.Call {
	return taskCall(id, "tasks/result", evidence.KindToolCall, result, "")
}

func tkResultErr(id, rpcErr string) evidence.Call {
	return taskCall(id, "tasks/result", evidence.KindToolCall, "", rpcErr)
}

// tkStatus is a tasks/get result for task t1 in status.
func tkStatus(status string) string {
	return `{"taskId":"t1","status":"` + status + `","createdAt":"2026-11-22T10:00:00Z","lastUpdatedAt":"2026-11-22T10:00:01Z","ttl":60000,"pollInterval":200}`
}

// handleWith is goodHandle with one member's value replaced (or, with
// value "", removed).
func handleWith(key, value string) string {
	m := map[string]string{"taskId": `"t1"`, "status": `"working"`, "createdAt": `"2026-11-22T10:00:00Z"`, "lastUpdatedAt": `"2026-11-22T10:00:00Z"`, "ttl": "60000", "pollInterval": "200"}
	var b strings.Builder
	b.WriteString(`{"task":{`)
	first := true
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"} {
		v := m[k]
		if k == key {
			v = value
		}
		if v == "" {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(`"` + k + `":` + v)
	}
	b.WriteString(`}}`)
	return b.String()
}

// goodRun is a conformant task run: handle, one poll ending completed, the
// result.
func goodRun() []evidence.Call {
	return []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, tkStatus("completed")), tkResult(tcResult, toolResult(productBody, false))}
}

var (
	tasksUndeclared = notRun(tcCreate, evidence.MCP, evidence.KindTask, "the server does not declare the MCP tasks capability", evidence.PurposeTask)
	taskHarness     = harnessFailed(tcCreate, evidence.MCP, evidence.KindTask, "mcp/task#initialize: connection refused", evidence.PurposeTask)
)

func TestTASK01Table(t *testing.T) {
	h := "/result/task/"
	one := func(result string) []evidence.Call { return []evidence.Call{tkCreate(tcCreate, result)} }
	noReply := tkCreate(tcCreate, "")
	noReply.Message, noReply.HTTPStatus = nil, 500
	runJudgeTable(t, "TASK-01", catalogue.MCP, []judgeCase{
		{name: "a full handle passes", calls: one(goodHandle), want: Pass},
		{name: "ttl null (unlimited) passes", calls: one(handleWith("ttl", "null")), want: Pass},
		{name: "input_required passes", calls: one(handleWith("status", `"input_required"`)), want: Pass},
		{name: "a fractional, offset createdAt passes", calls: one(handleWith("createdAt", `"2026-11-22T10:00:00.123+01:00"`)), want: Pass},
		{name: "lower-case t and z pass (RFC 3339 §5.6)", calls: one(handleWith("createdAt", `"2026-11-22t10:00:00z"`)), want: Pass},
		{name: "pollInterval 0 passes", calls: one(handleWith("pollInterval", "0")), want: Pass},
		{name: "the tool result itself fails", calls: one(toolResult(productBody, false)), want: Fail, ptr: "/result", msg: "the tool result itself"},
		{name: "a JSON-RPC error fails", calls: []evidence.Call{taskCall(tcCreate, "tools/call", evidence.KindTask, "", `{"code":-32601,"message":"no tasks"}`)}, want: Fail, ptr: "/error"},
		{name: "no JSON-RPC reply fails", calls: []evidence.Call{noReply}, want: Fail, msg: "HTTP 500"},
		{name: "task not an object fails", calls: one(`{"task":"t1"}`), want: Fail, ptr: "/result/task"},
		{name: "taskId absent fails", calls: one(handleWith("taskId", "")), want: Fail, ptr: h + "taskId"},
		{name: "taskId empty fails", calls: one(handleWith("taskId", `""`)), want: Fail, ptr: h + "taskId"},
		{name: "status absent fails", calls: one(handleWith("status", "")), want: Fail, ptr: h + "status"},
		{name: "an AdCP status fails", calls: one(handleWith("status", `"submitted"`)), want: Fail, ptr: h + "status", msg: "not an MCP task status"},
		{name: "createdAt not RFC 3339 fails", calls: one(handleWith("createdAt", `"22/11/2026 10:00"`)), want: Fail, ptr: h + "createdAt"},
		{name: "createdAt a number fails", calls: one(handleWith("createdAt", `1763805600`)), want: Fail, ptr: h + "createdAt"},
		{name: "ttl absent fails", calls: one(handleWith("ttl", "")), want: Fail, ptr: h + "ttl"},
		{name: "ttl a string fails", calls: one(handleWith("ttl", `"60000"`)), want: Fail, ptr: h + "ttl"},
		{name: "pollInterval absent passes (optional in MCP 2025-11-25's Task)", calls: one(handleWith("pollInterval", "")), want: Pass},
		{name: "pollInterval a string fails", calls: one(handleWith("pollInterval", `"200"`)), want: Fail, ptr: h + "pollInterval"},
		{name: "pollInterval null fails", calls: one(handleWith("pollInterval", "null")), want: Fail, ptr: h + "pollInterval"},
		{name: "pollInterval negative fails", calls: one(handleWith("pollInterval", "-1")), want: Fail, ptr: h + "pollInterval"},
		{name: "no task-augmented call skips", want: Skip, msg: "no task-augmented call was made"},
		{name: "tasks undeclared skips with the reason", calls: []evidence.Call{tasksUndeclared}, want: Skip, msg: "does not declare the MCP tasks capability"},
		{name: "a harness error is the harness's", calls: []evidence.Call{taskHarness}, want: HarnessError, msg: "connection refused"},
	})
}

func TestTASK02Table(t *testing.T) {
	errFlow := func(status, result string, rpc bool) []evidence.Call {
		out := []evidence.Call{tkCreate("mcp/task/get_products_error/create", goodHandle), tkGet("mcp/task/get_products_error/get/01", tkStatus(status))}
		if rpc {
			return append(out, tkResultErr("mcp/task/get_products_error/result", result))
		}
		return append(out, tkResult("mcp/task/get_products_error/result", result))
	}
	late := goodRun()
	late[1].Started = late[0].Started.Add(3 * time.Minute) // past the 60 s ttl
	noReply := tkResult(tcResult, "")
	noReply.Message, noReply.HTTPStatus = nil, 500
	gateway := tkResult(tcResult, "")
	gateway.Message, gateway.HTTPStatus = nil, 502
	runJudgeTable(t, "TASK-02", catalogue.MCP, []judgeCase{
		{name: "terminal, then the CallToolResult, passes", calls: goodRun(), want: Pass},
		{name: "a working poll before the terminal one passes", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, tkStatus("working")),
			tkGet("mcp/task/get_products/get/02", tkStatus("completed")), tkResult(tcResult, toolResult(productBody, false))}, want: Pass},
		{name: "a failed task's result may be a JSON-RPC error", calls: errFlow("failed", notFound, true), want: Pass},
		{name: "a failed task's isError result passes", calls: errFlow("failed", toolResult(`{"adcp_error":{"code":"INVALID_REQUEST","message":"m"}}`, true), false), want: Pass},
		{name: "a cancelled task's result is not judged", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, tkStatus("cancelled")), tkResultErr(tcResult, notFound)}, want: Pass},
		{name: "ttl null (unlimited) puts no bound on the wait", calls: []evidence.Call{tkCreate(tcCreate, handleWith("ttl", "null")), late[1], late[2]}, want: Pass},
		{name: "never terminal fails", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, tkStatus("working"))}, want: Fail, ptr: "/result/status", msg: `still "working"`},
		{name: "terminal past the ttl fails", calls: late, want: Fail, ptr: "/result/status", msg: "past the task's ttl"},
		{name: "tasks/get answering an error fails", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGetErr(tcPoll, notFound)}, want: Fail, ptr: "/error"},
		{name: "tasks/get answering another task fails", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, strings.Replace(tkStatus("completed"), `"t1"`, `"t2"`, 1))},
			want: Fail, ptr: "/result/taskId"},
		{name: "tasks/get without a status fails", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, `{"taskId":"t1"}`)}, want: Fail, ptr: "/result/status"},
		{name: "tasks/get answering no object fails", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, `[]`)}, want: Fail, ptr: "/result"},
		{name: "no tasks/get answered fails", calls: []evidence.Call{tkCreate(tcCreate, goodHandle)}, want: Fail, msg: "no tasks/get answered"},
		{name: "a completed task's result as a JSON-RPC error fails", calls: []evidence.Call{goodRun()[0], goodRun()[1], tkResultErr(tcResult, notFound)}, want: Fail, ptr: "/error"},
		{name: "a result without content fails", calls: []evidence.Call{goodRun()[0], goodRun()[1], tkResult(tcResult, `{"structuredContent":`+productBody+`}`)}, want: Fail, ptr: "/result/content"},
		{name: "a result that is no object fails", calls: []evidence.Call{goodRun()[0], goodRun()[1], tkResult(tcResult, `"done"`)}, want: Fail, ptr: "/result"},
		{name: "a result with no JSON-RPC reply fails", calls: []evidence.Call{goodRun()[0], goodRun()[1], noReply}, want: Fail, msg: "HTTP 500"},
		{name: "a gateway's 502 on the result is no evidence", calls: []evidence.Call{goodRun()[0], goodRun()[1], gateway}, want: HarnessError, msg: "HTTP 502 Bad Gateway (gateway)"},
		{name: "no task-augmented call skips", want: Skip, msg: "no task-augmented call was made"},
		{name: "tasks undeclared skips with the reason", calls: []evidence.Call{tasksUndeclared}, want: Skip, msg: "does not declare"},
		{name: "a handle-less create is TASK-01's", calls: []evidence.Call{tkCreate(tcCreate, toolResult(productBody, false))}, want: Skip, msg: "no task handle (TASK-01)"},
		{name: "a harness error on a poll is the harness's", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), harnessFailed(tcPoll, evidence.MCP, evidence.KindTask, "EOF", evidence.PurposeTask)},
			want: HarnessError},
	})
}

func TestTASK03Table(t *testing.T) {
	const (
		cCreate = "mcp/task/cancel/create"
		cCancel = "mcp/task/cancel/cancel"
		cGet    = "mcp/task/cancel/get"
	)
	cancelled := func(cancelReply, getReply string) []evidence.Call {
		out := []evidence.Call{tkCreate(cCreate, goodHandle)}
		if strings.HasPrefix(cancelReply, `{"code"`) {
			out = append(out, taskCall(cCancel, "tasks/cancel", evidence.KindTask, "", cancelReply))
		} else {
			out = append(out, taskCall(cCancel, "tasks/cancel", evidence.KindTask, cancelReply, ""))
		}
		return append(out, tkGet(cGet, getReply))
	}
	refused := `{"code":-32602,"message":"Cannot cancel task: already in terminal status completed"}`
	errBody := toolResult(`{"adcp_error":{"code":"INVALID_REQUEST","message":"m"}}`, true)
	runJudgeTable(t, "TASK-03", catalogue.MCP, []judgeCase{
		{name: "MCP statuses throughout pass", calls: goodRun(), want: Pass},
		{name: "an isError result beside failed passes", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, tkStatus("failed")), tkResult(tcResult, errBody)}, want: Pass},
		{name: "an accepted cancel reporting cancelled passes", calls: cancelled(tkStatus("cancelled"), tkStatus("cancelled")), want: Pass},
		{name: "a refused cancel (the task was terminal) is not judged", calls: cancelled(refused, tkStatus("completed")), want: Pass},
		{name: "an AdCP spelling in a poll fails", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, tkStatus("canceled"))}, want: Fail, ptr: "/result/status", msg: `"canceled" is the AdCP status`},
		{name: "submitted in the handle fails", calls: []evidence.Call{tkCreate(tcCreate, handleWith("status", `"submitted"`))}, want: Fail, ptr: "/result/task/status", msg: `MCP Tasks say "working"`},
		{name: "an unknown status fails", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, tkStatus("done"))}, want: Fail, ptr: "/result/status", msg: "not an MCP task status"},
		{name: "an isError result beside completed fails", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, tkStatus("completed")), tkResult(tcResult, errBody)},
			want: Fail, ptr: "/result", msg: `ended "completed" beside an isError result`},
		{name: "a rejected body beside completed fails", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), tkGet(tcPoll, tkStatus("completed")), tkResult(tcResult, toolResult(`{"status":"rejected","message":"no"}`, false))},
			want: Fail, ptr: "/result", msg: `maps to "failed"`},
		{name: "the cancel reply spelling canceled fails", calls: cancelled(tkStatus("canceled"), tkStatus("cancelled")), want: Fail, ptr: "/result/status", msg: `"canceled" is the AdCP status`},
		{name: "a cancelled task read back as canceled fails", calls: cancelled(tkStatus("cancelled"), tkStatus("canceled")), want: Fail, ptr: "/result/status"},
		{name: "a cancelled task read back as completed fails", calls: cancelled(tkStatus("cancelled"), tkStatus("completed")), want: Fail, ptr: "/result/status", msg: "tasks/cancel was accepted"},
		{name: "an accepted cancel still working fails", calls: cancelled(tkStatus("working"), tkStatus("working")), want: Fail, ptr: "/result/status"},
		{name: "no task-augmented call skips", want: Skip, msg: "no task-augmented call was made"},
		{name: "tasks undeclared skips with the reason", calls: []evidence.Call{tasksUndeclared}, want: Skip, msg: "does not declare"},
		{name: "a harness error on the cancel is the harness's", calls: []evidence.Call{tkCreate(cCreate, goodHandle), harnessFailed(cCancel, evidence.MCP, evidence.KindTask, "EOF", evidence.PurposeTask)},
			want: HarnessError},
	})
}

func TestTASK04Table(t *testing.T) {
	iso := func(name, result, rpcErr string) evidence.Call {
		return taskCall("mcp/task/isolation/"+name, "tasks/"+name, evidence.KindTask, result, rpcErr)
	}
	refused := func() []evidence.Call {
		return []evidence.Call{tkCreate(tcCreate, goodHandle), iso("get", "", notFound), iso("result", "", notFound), iso("cancel", "", notFound),
			iso("list", `{"tasks":[]}`, ""), taskCall("mcp/task/isolation/owner_get", "tasks/get", evidence.KindTask, tkStatus("completed"), "")}
	}
	with := func(i int, c evidence.Call) []evidence.Call {
		cs := refused()
		cs[i] = c
		return cs
	}
	noReply := iso("get", "", "")
	noReply.Message, noReply.Result, noReply.HTTPStatus = nil, nil, 404
	runJudgeTable(t, "TASK-04", catalogue.MCP, []judgeCase{
		{name: "every request of a second session refused passes", calls: refused(), want: Pass},
		{name: "a refusal without a JSON-RPC reply passes", calls: with(1, noReply), want: Pass},
		// A 200 no client can read shows neither a refusal nor a leak (ENV-10's): no evidence.
		{name: "an unreadable 200 alone skips", calls: []evidence.Call{tkCreate(tcCreate, goodHandle), func() evidence.Call {
			c := iso("get", "", "")
			c.Message, c.Result, c.HTTPStatus = nil, nil, 200
			return c
		}()}, want: Skip, msg: "session-isolation probes were not made"},
		{name: "a list of the second session's own tasks passes", calls: with(4, iso("list", `{"tasks":[{"taskId":"t9","status":"working"}]}`, "")), want: Pass},
		{name: "an isError tasks/result (not the succeeded task's result) is a refusal", calls: with(2, iso("result",
			`{"content":[{"type":"text","text":"Task not found"}],"isError":true}`, "")), want: Pass},
		{name: "an empty tasks/get result reveals nothing", calls: with(1, iso("get", `{}`, "")), want: Pass},
		{name: "tasks/get answering for the first session's task fails", calls: with(1, iso("get", tkStatus("completed"), "")), want: Fail, ptr: "/result", msg: "from a second session answers"},
		{name: "tasks/result answering fails", calls: with(2, iso("result", toolResult(productBody, false), "")), want: Fail, ptr: "/result"},
		{name: "tasks/cancel answering fails", calls: with(3, iso("cancel", tkStatus("cancelled"), "")), want: Fail, ptr: "/result"},
		{name: "tasks/list showing the task fails", calls: with(4, iso("list", `{"tasks":[{"taskId":"t9","status":"working"},`+tkStatus("working")+`]}`, "")), want: Fail, ptr: "/result/tasks/1", msg: "shows the first session's task"},
		{name: "a listed task whose id merely contains the first's is another task", calls: with(4, iso("list", `{"tasks":[{"taskId":"t10","status":"working","statusMessage":"t1"}]}`, "")), want: Pass},
		{name: "the owner's task cancelled by the second session fails", calls: with(5, taskCall("mcp/task/isolation/owner_get", "tasks/get", evidence.KindTask, tkStatus("cancelled"), "")),
			want: Fail, ptr: "/result/status"},
		{name: "no probes skips", want: Skip, msg: "session-isolation probes were not made"},
		{name: "no handle skips with the reason", calls: []evidence.Call{notRun("mcp/task/isolation/get", evidence.MCP, evidence.KindTask, "the first session got no task handle", evidence.PurposeTaskIsolation)},
			want: Skip, msg: "the first session got no task handle"},
		{name: "a second session that could not connect is the harness's", calls: []evidence.Call{tkCreate(tcCreate, goodHandle),
			harnessFailed("mcp/task/isolation/get", evidence.MCP, evidence.KindTask, "initialize: EOF", evidence.PurposeTaskIsolation)}, want: HarnessError},
	})
}

func TestTASK05Table(t *testing.T) {
	ttl := func(result string) []evidence.Call {
		return []evidence.Call{taskCall("mcp/task/ttl/create", "tools/call", evidence.KindTask, result, "")}
	}
	p := "/result/task/ttl"
	runJudgeTable(t, "TASK-05", catalogue.MCP, []judgeCase{
		{name: "a clamped ttl passes", calls: ttl(handleWith("ttl", "3600000")), want: Pass},
		{name: "a refused call passes (not honoured)", calls: []evidence.Call{taskCall("mcp/task/ttl/create", "tools/call", evidence.KindTask, "", `{"code":-32602,"message":"ttl too long"}`)}, want: Pass},
		{name: "the ten-year ttl honoured fails", calls: ttl(handleWith("ttl", "315360000000")), want: Fail, ptr: p, msg: "honours the requested ten-year TTL"},
		{name: "more than asked fails", calls: ttl(handleWith("ttl", "1e13")), want: Fail, ptr: p},
		{name: "null (unlimited) fails", calls: ttl(handleWith("ttl", "null")), want: Fail, ptr: p, msg: "is null"},
		// No readable ttl shows nothing of the clamp: TASK-01's.
		{name: "ttl absent skips", calls: ttl(handleWith("ttl", "")), want: Skip, msg: "(TASK-01)"},
		{name: "ttl a string skips", calls: ttl(handleWith("ttl", `"3600000"`)), want: Skip, msg: "(TASK-01)"},
		{name: "a repeated ttl, one honouring, fails", calls: ttl(handleWith("ttl", `3600000,"ttl":315360000000`)), want: Fail, ptr: p},
		{name: "no call skips", want: Skip, msg: "no task-augmented call was made"},
		{name: "no handle skips (TASK-01's)", calls: ttl(toolResult(productBody, false)), want: Skip, msg: "(TASK-01)"},
		{name: "tasks undeclared skips with the reason", calls: []evidence.Call{notRun("mcp/task/ttl/create", evidence.MCP, evidence.KindTask, "the server does not declare the MCP tasks capability", evidence.PurposeTaskTTL)},
			want: Skip, msg: "does not declare"},
		{name: "a harness error is the harness's", calls: []evidence.Call{harnessFailed("mcp/task/ttl/create", evidence.MCP, evidence.KindTask, "EOF", evidence.PurposeTaskTTL)}, want: HarnessError},
	})
}
