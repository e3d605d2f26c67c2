package suites

import (
	"net/http"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The ENV family's judge tables. Shapes come from the spec:
//   - mcp-response-extraction.mdx (MCP extraction) and spec/vectors/mcp-response-extraction.json
//     (structured-content-products, text-fallback-json, multiple-text-items,
//     plain-text-no-json, text-parses-as-array, is-error-true, …);
//   - mcp-guide.mdx's Producer rule (flat envelope) and core/protocol-envelope.json
//     (status, timestamp, replayed; not.anyOf task_status/response_status);
//   - transport-errors.mdx's canonical error result (adcp_error alone in structuredContent);
//   - L0/a2a-response-format.mdx and spec/vectors/a2a-response-extraction.json
//     (completed-single-datapart, working-status-message, failed-adcp-error);
//   - reference/versioning.mdx (adcp_version in release precision);
//   - RFC 8259 §8.1 and JSON-RPC 2.0 §5 (ENV-10).

const (
	// envOK is a conformant success body: flat envelope fields and body
	// fields at the root (mcp-guide.mdx; vector structured-content-products).
	envOK = `{"status":"completed","message":"Found 1 product","context_id":"ctx_abc123","timestamp":"2025-10-14T14:25:30Z","adcp_version":"3.1","replayed":false,"products":[{"product_id":"ctv_premium","name":"Premium CTV"}]}`
	// envError is transport-errors.mdx's canonical error body: adcp_error alone.
	envError = `{"adcp_error":{"code":"RATE_LIMITED","message":"Request rate exceeded","recovery":"transient","retry_after":30}}`
)

// textOnly is an MCP result carrying body only as content[0].text (vector
// text-fallback-json).
func textOnly(body string) string {
	return `{"content":[{"type":"text","text":` + quoteJSON(body) + `}]}`
}

// a2aInterimTask is an A2A 0.3 task in an interim state whose progress data
// rides in status.message.parts (L0/a2a-response-format, "Interim A2A
// Responses"; vector working-status-message).
func a2aInterimTask(state, data string) string {
	return `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"` + state + `","message":{"role":"agent","kind":"message","messageId":"m1","parts":[{"kind":"text","text":"Processing..."},{"kind":"data","data":` + data + `}]}}}`
}

// a2aTask10 is an A2A 1.0 task answer ({"task": …}, no part kinds, states
// spelled TASK_STATE_*; vector a2a-1.0-stream-wrapped-task-final).
func a2aTask10(state, data string) string {
	return `{"task":{"id":"t1","contextId":"c1","status":{"state":"` + state + `"},"artifacts":[{"artifactId":"a1","parts":[{"text":"Done."},{"data":` + data + `}]}]}}`
}

const (
	mcpSC     = "/result/structuredContent"
	mcpText0  = "/result/content/0/text#"
	a2aData   = "/result/artifacts/0/parts/0/data"
	a2aData10 = "/result/task/artifacts/0/parts/1/data"
)

func TestENV01Table(t *testing.T) {
	runJudgeTable(t, "ENV-01", catalogue.MCP, []judgeCase{
		{name: "structuredContent object", calls: []evidence.Call{mcpBody("mcp/p", "get_products", envOK, false)}, want: Pass},
		{name: "text fallback only (vector text-fallback-json)", calls: []evidence.Call{mcpResult("mcp/p", "get_products", textOnly(envOK))}, want: Pass},
		{name: "prose first, JSON second (vector multiple-text-items)", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"Found products."},{"type":"text","text":`+quoteJSON(envOK)+`}]}`)}, want: Pass},
		{name: "empty structuredContent object (vector empty-structured-content)", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"No data available."}],"structuredContent":{}}`)}, want: Pass},
		{name: "prose only (vector plain-text-no-json)", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"Found 3 products matching your brief."}]}`)}, want: Fail, ptr: "/result"},
		{name: "text parses to an array (vector text-parses-as-array)", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"[{\"product_id\":\"ctv_001\"}]"}]}`)}, want: Fail, ptr: "/result"},
		{name: "structuredContent an array, prose text", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"Found."}],"structuredContent":[{"product_id":"x"}]}`)}, want: Fail, ptr: "/result"},
		{name: "a failure among passes", calls: []evidence.Call{mcpBody("mcp/a", "get_products", envOK, false),
			mcpResult("mcp/b", "get_products", `{"content":[]}`)}, want: Fail, ptr: "/result", msg: "mcp/b"},
		{name: "adcp_error-only success is ERR-05's", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"Error occurred."}],"structuredContent":`+envError+`}`)}, want: Skip, msg: noSuccess},
		{name: "error results are not judged", calls: []evidence.Call{mcpBody("mcp/e", "get_products", envError, true)}, want: Skip, msg: noSuccess},
		{name: "JSON-RPC error only", calls: []evidence.Call{mcpRPCError("mcp/e", "get_products", `{"code":-32602,"message":"bad"}`)}, want: Skip, msg: noSuccess},
		{name: "no evidence", want: Skip, msg: noSuccess},
		{name: "not run", calls: []evidence.Call{notRun("mcp/p", evidence.MCP, evidence.KindToolCall, "no read tool")}, want: Skip, msg: "mcp/p not run: no read tool"},
		{name: "harness error", calls: []evidence.Call{harnessFailed("mcp/p", evidence.MCP, evidence.KindToolCall, "connection refused")}, want: HarnessError, msg: "connection refused"},
	})
}

func TestENV02Table(t *testing.T) {
	nested := `{"status":"completed","adcp_version":"3.1","payload":{"products":[]}}`
	runJudgeTable(t, "ENV-02", catalogue.MCP, []judgeCase{
		{name: "flat", calls: []evidence.Call{mcpBody("mcp/p", "get_products", envOK, false)}, want: Pass},
		{name: "payload nested in structuredContent", calls: []evidence.Call{mcpBody("mcp/p", "get_products", nested, false)}, want: Fail, ptr: mcpSC + "/payload"},
		{name: "payload nested in the text fallback", calls: []evidence.Call{mcpResult("mcp/p", "get_products", textOnly(nested))}, want: Fail, ptr: mcpText0 + "/payload"},
		{name: "a scalar field named payload is a body field", calls: []evidence.Call{mcpBody("mcp/p", "get_products",
			`{"status":"completed","payload":"opaque"}`, false)}, want: Pass},
		{name: "error results may nest payload.errors (error-handling.mdx, the MCP error example: structuredContent.payload.errors)", calls: []evidence.Call{mcpBody("mcp/e", "create_media_buy",
			`{"adcp_error":{"code":"INVALID_REQUEST","message":"m","recovery":"correctable"},"payload":{"errors":[]}}`, true)}, want: Skip, msg: noSuccess},
		{name: "no evidence", want: Skip, msg: noSuccess},
		{name: "not run", calls: []evidence.Call{notRun("mcp/p", evidence.MCP, evidence.KindToolCall, "no read tool")}, want: Skip, msg: "not run"},
		{name: "harness error", calls: []evidence.Call{harnessFailed("mcp/p", evidence.MCP, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
	runJudgeTable(t, "ENV-02", catalogue.A2A, []judgeCase{
		{name: "flat DataPart (vector completed-single-datapart)", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", envOK))}, want: Pass},
		{name: "A2A 1.0 task", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask10("TASK_STATE_COMPLETED", envOK))}, want: Pass},
		{name: "payload nested", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", nested))}, want: Fail, ptr: a2aData + "/payload"},
		{name: "payload nested, A2A 1.0", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask10("TASK_STATE_COMPLETED", nested))}, want: Fail, ptr: a2aData10 + "/payload"},
		{name: "failed task is an error result", calls: []evidence.Call{a2aResult("a2a/e", "get_products", a2aTask("failed",
			`{"adcp_error":{"code":"INVALID_REQUEST","message":"m","recovery":"correctable"},"payload":{"errors":[]}}`))}, want: Skip, msg: noSuccess},
		{name: "MCP evidence is not A2A's", calls: []evidence.Call{mcpBody("mcp/p", "get_products", nested, false)}, want: Skip, msg: noSuccess},
		{name: "no evidence", want: Skip, msg: noSuccess},
		{name: "harness error", calls: []evidence.Call{harnessFailed("a2a/p", evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

func TestENV03Table(t *testing.T) {
	const none = noStatus
	noStatus := `{"adcp_version":"3.1","products":[]}`
	runJudgeTable(t, "ENV-03", catalogue.MCP, []judgeCase{
		{name: "completed", calls: []evidence.Call{mcpBody("mcp/p", "get_products", envOK, false)}, want: Pass},
		{name: "working (vector working-status)", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"Processing your request..."}],"structuredContent":{"status":"working","percentage":45}}`)}, want: Pass},
		{name: "every task-status value", calls: func() []evidence.Call {
			var cs []evidence.Call
			for st := range taskStatuses {
				cs = append(cs, mcpBody("mcp/"+st, "get_products", `{"status":"`+st+`"}`, false))
			}
			return cs
		}(), want: Pass},
		// transport-errors.mdx: an error result may omit status; without it, it shows nothing of status.
		{name: "error result without status (transport-errors.mdx) skips", calls: []evidence.Call{mcpBody("mcp/e", "get_products", envError, true)}, want: Skip, msg: none},
		{name: "error result without status beside a success passes", calls: []evidence.Call{mcpBody("mcp/e", "get_products", envError, true),
			mcpBody("mcp/p", "get_products", `{"status":"completed","products":[]}`, false)}, want: Pass},
		{name: "error result with a task status", calls: []evidence.Call{mcpBody("mcp/e", "get_products", `{"status":"failed","adcp_error":{"code":"X","message":"m"}}`, true)}, want: Pass},
		{name: "status absent", calls: []evidence.Call{mcpBody("mcp/p", "get_products", noStatus, false)}, want: Fail, ptr: mcpSC + "/status"},
		{name: "status absent from the text fallback a client extracts", calls: []evidence.Call{mcpResult("mcp/p", "get_products", textOnly(noStatus))}, want: Fail, ptr: mcpText0 + "/status"},
		{name: "status not a task status", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"success"}`, false)}, want: Fail, ptr: mcpSC + "/status", msg: `"success" is not a task status`},
		{name: "status case differs", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"Completed"}`, false)}, want: Fail, ptr: mcpSC + "/status"},
		{name: "status not a string", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":1}`, false)}, want: Fail, ptr: mcpSC + "/status", msg: "is a number, not a string"},
		{name: "Status is not status", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"Status":"completed"}`, false)}, want: Fail, ptr: mcpSC + "/status"},
		{name: "error result with a bad status", calls: []evidence.Call{mcpBody("mcp/e", "get_products", `{"status":"error","adcp_error":{"code":"X","message":"m"}}`, true)}, want: Fail, ptr: mcpSC + "/status"},
		{name: "error text item with a bad status", calls: []evidence.Call{mcpResult("mcp/e", "get_products",
			`{"isError":true,"content":[{"type":"text","text":`+quoteJSON(`{"status":"error","adcp_error":{"code":"X","message":"m"}}`)+`}]}`)}, want: Fail, ptr: mcpText0 + "/status"},
		{name: "a text fallback beside structuredContent is ENV-05's", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":`+quoteJSON(noStatus)+`}],"structuredContent":`+envOK+`}`)}, want: Pass},
		{name: "JSON-RPC error only", calls: []evidence.Call{mcpRPCError("mcp/e", "get_products", `{"code":-32602,"message":"bad"}`)}, want: Skip, msg: none},
		{name: "no evidence", want: Skip, msg: none},
		{name: "not run", calls: []evidence.Call{notRun("mcp/p", evidence.MCP, evidence.KindToolCall, "no read tool")}, want: Skip, msg: "not run"},
		{name: "harness error", calls: []evidence.Call{harnessFailed("mcp/p", evidence.MCP, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
	runJudgeTable(t, "ENV-03", catalogue.A2A, []judgeCase{
		{name: "completed", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", envOK))}, want: Pass},
		{name: "AdCP submitted inside a completed task (L0/a2a-response-format)", calls: []evidence.Call{a2aResult("a2a/p", "create_media_buy",
			a2aTask("completed", `{"status":"submitted","task_id":"adcp-task-9a21"}`))}, want: Pass},
		{name: "A2A 1.0", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask10("TASK_STATE_COMPLETED", envOK))}, want: Pass},
		{name: "interim progress data without status (vector working-status-message)", calls: []evidence.Call{a2aResult("a2a/p", "get_products",
			a2aInterimTask("working", `{"percentage":45,"current_step":"analyzing_inventory"}`))}, want: Pass},
		{name: "interim progress data with a bad status", calls: []evidence.Call{a2aResult("a2a/p", "get_products",
			a2aInterimTask("input-required", `{"status":"waiting"}`))}, want: Fail, ptr: "/result/status/message/parts/1/data/status"},
		{name: "failed task without status (vector failed-adcp-error) skips", calls: []evidence.Call{a2aResult("a2a/e", "get_products", a2aTask("failed", envError))}, want: Skip},
		{name: "status absent", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", noStatus))}, want: Fail, ptr: a2aData + "/status"},
		{name: "status absent, A2A 1.0", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask10("TASK_STATE_COMPLETED", noStatus))}, want: Fail, ptr: a2aData10 + "/status"},
		{name: "status is the A2A spelling", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", `{"status":"TASK_STATE_COMPLETED"}`))}, want: Fail, ptr: a2aData + "/status"},
		{name: "no evidence", want: Skip, msg: none},
		{name: "harness error", calls: []evidence.Call{harnessFailed("a2a/p", evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

func TestENV04Table(t *testing.T) {
	const none = "no AdCP body observed"
	runJudgeTable(t, "ENV-04", catalogue.MCP, []judgeCase{
		{name: "neither", calls: []evidence.Call{mcpBody("mcp/p", "get_products", envOK, false)}, want: Pass},
		{name: "error result", calls: []evidence.Call{mcpBody("mcp/e", "get_products", envError, true)}, want: Pass},
		{name: "nested task_status is a body field", calls: []evidence.Call{mcpBody("mcp/p", "get_products",
			`{"status":"completed","media_buys":[{"task_status":"x"}]}`, false)}, want: Pass},
		{name: "task_status at the root", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"completed","task_status":"completed"}`, false)}, want: Fail, ptr: mcpSC + "/task_status"},
		{name: "response_status at the root", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"completed","response_status":"ok"}`, false)}, want: Fail, ptr: mcpSC + "/response_status"},
		{name: "in the text fallback a client extracts", calls: []evidence.Call{mcpResult("mcp/p", "get_products", textOnly(`{"status":"completed","task_status":"completed"}`))}, want: Fail, ptr: mcpText0 + "/task_status"},
		{name: "in an error result", calls: []evidence.Call{mcpBody("mcp/e", "get_products", `{"task_status":"failed","adcp_error":{"code":"X","message":"m"}}`, true)}, want: Fail, ptr: mcpSC + "/task_status"},
		{name: "a JSON text item no client reads", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":`+quoteJSON(envOK)+`},{"type":"text","text":"{\"task_status\":\"completed\"}"}]}`)}, want: Pass},
		{name: "prose only: no body", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[{"type":"text","text":"Done."}]}`)}, want: Skip, msg: none},
		{name: "no evidence", want: Skip, msg: none},
		{name: "harness error", calls: []evidence.Call{harnessFailed("mcp/p", evidence.MCP, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
	runJudgeTable(t, "ENV-04", catalogue.A2A, []judgeCase{
		{name: "neither", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", envOK))}, want: Pass},
		{name: "task_status at the root", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", `{"status":"completed","task_status":"completed"}`))}, want: Fail, ptr: a2aData + "/task_status"},
		{name: "response_status, A2A 1.0", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask10("TASK_STATE_COMPLETED", `{"status":"completed","response_status":"ok"}`))}, want: Fail, ptr: a2aData10 + "/response_status"},
		{name: "text-only artifact: no body", calls: []evidence.Call{a2aResult("a2a/p", "get_products",
			`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"Done."}]}]}`)}, want: Skip, msg: none},
		{name: "no evidence", want: Skip, msg: none},
		{name: "harness error", calls: []evidence.Call{harnessFailed("a2a/p", evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

func TestENV05Table(t *testing.T) {
	reordered := `{"products":[{"name":"Premium CTV","product_id":"ctv_premium"}],"replayed":false,"adcp_version":"3.1","timestamp":"2025-10-14T14:25:30Z","context_id":"ctx_abc123","message":"Found 1 product","status":"completed"}`
	deep := `{"status":"completed","x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`
	runJudgeTable(t, "ENV-05", catalogue.MCP, []judgeCase{
		{name: "both, equal", calls: []evidence.Call{mcpBody("mcp/p", "get_products", envOK, false)}, want: Pass},
		{name: "both, equal up to key order and number spelling", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":`+quoteJSON(strings.Replace(reordered, `"status":"completed"`, `"status":"completed","n":1.0`, 1))+`}],"structuredContent":`+strings.Replace(envOK, `"status":"completed"`, `"status":"completed","n":1`, 1)+`}`)}, want: Pass},
		{name: "prose first, then the JSON fallback (mcp-response-extraction.mdx)", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"Found 1 product."},{"type":"text","text":`+quoteJSON(envOK)+`}],"structuredContent":`+envOK+`}`)}, want: Pass},
		{name: "equal documents 10 001 levels deep", calls: []evidence.Call{mcpBody("mcp/p", "get_products", deep, false)}, want: Pass},
		{name: "structuredContent absent (vector text-fallback-json)", calls: []evidence.Call{mcpResult("mcp/p", "get_products", textOnly(envOK))}, want: Fail, ptr: mcpSC},
		{name: "no JSON text fallback (vector structured-content-products)", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"Found 3 products matching your brief."}],"structuredContent":`+envOK+`}`)}, want: Fail, ptr: "/result/content"},
		{name: "fallback differs (vector structured-content-wins-over-text)", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"{\"status\":\"completed\",\"products\":[{\"product_id\":\"old_data\"}]}"}],"structuredContent":`+envOK+`}`)}, want: Fail, ptr: "/result/content/0/text"},
		{name: "fallback differs deep down", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":`+quoteJSON(strings.Replace(deep, "[]", "[1]", 1))+`}],"structuredContent":`+deep+`}`)}, want: Fail, ptr: "/result/content/0/text"},
		{name: "error results are not judged", calls: []evidence.Call{mcpResult("mcp/e", "get_products", `{"isError":true,"content":[{"type":"text","text":"Rate limit exceeded."}],"structuredContent":`+envError+`}`)}, want: Skip, msg: noSuccess},
		{name: "no evidence", want: Skip, msg: noSuccess},
		{name: "harness error", calls: []evidence.Call{harnessFailed("mcp/p", evidence.MCP, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

func TestENV06Table(t *testing.T) {
	const none = "no timestamp or replayed observed"
	with := func(ts string) string { return `{"status":"completed","timestamp":` + ts + `}` }
	runJudgeTable(t, "ENV-06", catalogue.MCP, []judgeCase{
		{name: "timestamp and replayed", calls: []evidence.Call{mcpBody("mcp/p", "get_products", envOK, false)}, want: Pass},
		// core/protocol-envelope.json: both optional; a body without them shows
		// nothing of their types.
		{name: "neither present skips", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"completed"}`, false)}, want: Skip, msg: none},
		{name: "neither present beside a timestamp passes", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"completed"}`, false),
			mcpBody("mcp/q", "get_products", with(`"2025-10-14T14:25:30Z"`), false)}, want: Pass},
		{name: "RFC 3339 variants: offset, fraction, lower-case t and z, leap second", calls: []evidence.Call{
			mcpBody("mcp/a", "get_products", with(`"2025-10-14T14:25:30+02:00"`), false),
			mcpBody("mcp/b", "get_products", with(`"2025-10-14T14:25:30.123456Z"`), false),
			mcpBody("mcp/c", "get_products", with(`"2025-10-14t14:25:30z"`), false),
			mcpBody("mcp/d", "get_products", with(`"2016-12-31T23:59:60Z"`), false),
			mcpBody("mcp/e", "get_products", with(`"2024-02-29T00:00:00-00:00"`), false),
			mcpBody("mcp/f", "get_products", `{"status":"completed","replayed":true}`, false),
		}, want: Pass},
		{name: "not RFC 3339", calls: []evidence.Call{mcpBody("mcp/p", "get_products", with(`"22/11/2026 12:00:00"`), false)}, want: Fail, ptr: mcpSC + "/timestamp", msg: "is not an RFC 3339 date-time"},
		{name: "no offset", calls: []evidence.Call{mcpBody("mcp/p", "get_products", with(`"2025-10-14T14:25:30"`), false)}, want: Fail, ptr: mcpSC + "/timestamp"},
		{name: "date only", calls: []evidence.Call{mcpBody("mcp/p", "get_products", with(`"2025-10-14"`), false)}, want: Fail, ptr: mcpSC + "/timestamp"},
		{name: "day out of range", calls: []evidence.Call{mcpBody("mcp/p", "get_products", with(`"2025-02-29T00:00:00Z"`), false)}, want: Fail, ptr: mcpSC + "/timestamp"},
		{name: "epoch number", calls: []evidence.Call{mcpBody("mcp/p", "get_products", with(`1760451930`), false)}, want: Fail, ptr: mcpSC + "/timestamp", msg: "is a number, not a string"},
		{name: "replayed as a string", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"completed","replayed":"false"}`, false)}, want: Fail, ptr: mcpSC + "/replayed"},
		{name: "replayed null", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"completed","replayed":null}`, false)}, want: Fail, ptr: mcpSC + "/replayed"},
		{name: "in the text fallback a client extracts", calls: []evidence.Call{mcpResult("mcp/p", "get_products", textOnly(with(`"yesterday"`)))}, want: Fail, ptr: mcpText0 + "/timestamp"},
		{name: "in an error result", calls: []evidence.Call{mcpBody("mcp/e", "get_products", `{"timestamp":"now","adcp_error":{"code":"X","message":"m"}}`, true)}, want: Fail, ptr: mcpSC + "/timestamp"},
		{name: "a timestamp nested in the body is not the envelope's", calls: []evidence.Call{mcpBody("mcp/p", "get_products",
			`{"status":"completed","products":[{"timestamp":"soon"}]}`, false)}, want: Skip, msg: none},
		{name: "no body", calls: []evidence.Call{mcpRPCError("mcp/e", "get_products", `{"code":-32602,"message":"bad"}`)}, want: Skip, msg: none},
		{name: "no evidence", want: Skip, msg: none},
		{name: "harness error", calls: []evidence.Call{harnessFailed("mcp/p", evidence.MCP, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
	runJudgeTable(t, "ENV-06", catalogue.A2A, []judgeCase{
		{name: "timestamp and replayed", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", envOK))}, want: Pass},
		{name: "not RFC 3339", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", with(`"22/11/2026 12:00:00"`)))}, want: Fail, ptr: a2aData + "/timestamp"},
		{name: "replayed as a number, A2A 1.0", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask10("TASK_STATE_COMPLETED", `{"status":"completed","replayed":0}`))}, want: Fail, ptr: a2aData10 + "/replayed"},
		{name: "no evidence", want: Skip, msg: none},
		{name: "harness error", calls: []evidence.Call{harnessFailed("a2a/p", evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

func TestENV07Table(t *testing.T) {
	const none = "no AdCP body observed"
	bridged := `{"status":"completed","_bridge":{"source":"legacy"},"products":[]}`
	runJudgeTable(t, "ENV-07", catalogue.MCP, []judgeCase{
		{name: "none", calls: []evidence.Call{mcpBody("mcp/p", "get_products", envOK, false)}, want: Pass},
		{name: "nested underscore keys are body data", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"completed","ext":{"_vendor":1}}`, false)}, want: Pass},
		{name: "__proto__ is a body key a client keeps (vector proto-pollution-structured)", calls: []evidence.Call{mcpResult("mcp/p", "get_products",
			`{"content":[{"type":"text","text":"OK"}],"structuredContent":{"status":"completed","products":[],"__proto__":{"isAdmin":true}}}`)}, want: Fail, ptr: mcpSC + "/__proto__"},
		{name: "_bridge", calls: []evidence.Call{mcpBody("mcp/p", "get_products", bridged, false)}, want: Fail, ptr: mcpSC + "/_bridge"},
		{name: "_bridge in the text fallback a client extracts", calls: []evidence.Call{mcpResult("mcp/p", "get_products", textOnly(bridged))}, want: Fail, ptr: mcpText0 + "/_bridge"},
		{name: "a key with slash and tilde is escaped", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"completed","_a/b~c":1}`, false)}, want: Fail, ptr: mcpSC + "/_a~1b~0c"},
		{name: "prose only: no body", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[{"type":"text","text":"Done."}]}`)}, want: Skip, msg: none},
		{name: "no evidence", want: Skip, msg: none},
		{name: "harness error", calls: []evidence.Call{harnessFailed("mcp/p", evidence.MCP, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
	runJudgeTable(t, "ENV-07", catalogue.A2A, []judgeCase{
		{name: "none", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", envOK))}, want: Pass},
		{name: "_bridge", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", bridged))}, want: Fail, ptr: a2aData + "/_bridge"},
		{name: "_bridge, A2A 1.0", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask10("TASK_STATE_COMPLETED", bridged))}, want: Fail, ptr: a2aData10 + "/_bridge"},
		{name: "no evidence", want: Skip, msg: none},
		{name: "harness error", calls: []evidence.Call{harnessFailed("a2a/p", evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

func TestENV08Table(t *testing.T) {
	const none = "no tool result observed"
	ver := func(v string) string { return `{"status":"completed","adcp_version":` + v + `}` }
	runJudgeTable(t, "ENV-08", catalogue.MCP, []judgeCase{
		{name: "release precision", calls: []evidence.Call{mcpBody("mcp/p", "get_products", envOK, false)}, want: Pass},
		{name: "pre-release tag", calls: []evidence.Call{mcpBody("mcp/p", "get_products", ver(`"3.1-beta.2"`), false)}, want: Pass},
		{name: "error result without adcp_version (transport-errors.mdx)", calls: []evidence.Call{mcpBody("mcp/e", "get_products", envError, true)}, want: Skip, msg: none},
		{name: "absent", calls: []evidence.Call{mcpBody("mcp/p", "get_products", `{"status":"completed"}`, false)}, want: Fail, ptr: mcpSC + "/adcp_version"},
		{name: "patch precision", calls: []evidence.Call{mcpBody("mcp/p", "get_products", ver(`"3.1.19"`), false)}, want: Fail, ptr: mcpSC + "/adcp_version", msg: "is not release precision"},
		{name: "major only", calls: []evidence.Call{mcpBody("mcp/p", "get_products", ver(`"3"`), false)}, want: Fail, ptr: mcpSC + "/adcp_version"},
		{name: "v prefix", calls: []evidence.Call{mcpBody("mcp/p", "get_products", ver(`"v3.1"`), false)}, want: Fail, ptr: mcpSC + "/adcp_version"},
		{name: "a number", calls: []evidence.Call{mcpBody("mcp/p", "get_products", ver(`3.1`), false)}, want: Fail, ptr: mcpSC + "/adcp_version", msg: "is a number, not a string"},
		{name: "absent from the text fallback a client extracts", calls: []evidence.Call{mcpResult("mcp/p", "get_products", textOnly(`{"status":"completed"}`))}, want: Fail, ptr: mcpText0 + "/adcp_version"},
		{name: "error result with a bad adcp_version", calls: []evidence.Call{mcpBody("mcp/e", "get_products", `{"adcp_version":"3.1.0","adcp_error":{"code":"X","message":"m"}}`, true)}, want: Fail, ptr: mcpSC + "/adcp_version"},
		{name: "no evidence", want: Skip, msg: none},
		{name: "harness error", calls: []evidence.Call{harnessFailed("mcp/p", evidence.MCP, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
	runJudgeTable(t, "ENV-08", catalogue.A2A, []judgeCase{
		{name: "release precision", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", envOK))}, want: Pass},
		{name: "interim progress data without it", calls: []evidence.Call{a2aResult("a2a/p", "get_products",
			a2aInterimTask("working", `{"percentage":45}`))}, want: Pass},
		{name: "absent", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask("completed", `{"status":"completed"}`))}, want: Fail, ptr: a2aData + "/adcp_version"},
		{name: "patch precision, A2A 1.0", calls: []evidence.Call{a2aResult("a2a/p", "get_products", a2aTask10("TASK_STATE_COMPLETED", ver(`"3.1.19"`)))}, want: Fail, ptr: a2aData10 + "/adcp_version"},
		{name: "failed task without it (vector failed-adcp-error)", calls: []evidence.Call{a2aResult("a2a/e", "get_products", a2aTask("failed", envError))}, want: Skip, msg: none},
		{name: "no evidence", want: Skip, msg: none},
		{name: "harness error", calls: []evidence.Call{harnessFailed("a2a/p", evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

func TestENV09Table(t *testing.T) {
	const none = "no tool result observed"
	sc := `,"structuredContent":` + envOK
	runJudgeTable(t, "ENV-09", catalogue.MCP, []judgeCase{
		{name: "text item", calls: []evidence.Call{mcpBody("mcp/p", "get_products", envOK, false)}, want: Pass},
		{name: "every content type", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[`+
			`{"type":"text","text":"t"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},`+
			`{"type":"resource_link","uri":"https://seller.example.com/r","name":"r"},{"type":"resource","resource":{"uri":"https://seller.example.com/r","text":"x"}}]`+sc+`}`)}, want: Pass},
		{name: "empty content, isError false", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[],"isError":false`+sc+`}`)}, want: Pass},
		{name: "error result", calls: []evidence.Call{mcpBody("mcp/e", "get_products", envError, true)}, want: Pass},
		{name: "result not an object", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `[]`)}, want: Fail, ptr: "/result"},
		{name: "content absent", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"structuredContent":`+envOK+`}`)}, want: Fail, ptr: "/result/content"},
		{name: "content an object", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":{"type":"text","text":"t"}`+sc+`}`)}, want: Fail, ptr: "/result/content"},
		{name: "unknown content type", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[{"type":"markdown","text":"t"}]`+sc+`}`)}, want: Fail, ptr: "/result/content/0/type"},
		{name: "type not a string", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[{"type":1}]`+sc+`}`)}, want: Fail, ptr: "/result/content/0/type"},
		{name: "item not an object", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[{"type":"text","text":"t"},"t"]`+sc+`}`)}, want: Fail, ptr: "/result/content/1"},
		{name: "text not a string", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[{"type":"text","text":{"a":1}}]`+sc+`}`)}, want: Fail, ptr: "/result/content/0/text"},
		{name: "isError a string", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[],"isError":"false"`+sc+`}`)}, want: Fail, ptr: "/result/isError"},
		{name: "structuredContent an array", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[],"structuredContent":[]}`)}, want: Fail, ptr: "/result/structuredContent"},
		{name: "IsError is not isError", calls: []evidence.Call{mcpResult("mcp/p", "get_products", `{"content":[],"IsError":"yes"`+sc+`}`)}, want: Pass},
		{name: "JSON-RPC error only", calls: []evidence.Call{mcpRPCError("mcp/e", "get_products", `{"code":-32602,"message":"bad"}`)}, want: Skip, msg: none},
		{name: "no evidence", want: Skip, msg: none},
		{name: "harness error", calls: []evidence.Call{harnessFailed("mcp/p", evidence.MCP, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

// exchanged gives a call the HTTP exchange that carried it: the JSON-RPC
// request with id 1 and a response of status, content type and body (or,
// for text/event-stream, the events given).
func exchanged(c evidence.Call, status int, contentType, body string, events ...wire.Event) evidence.Call {
	x := wire.Exchange{Method: "POST", URL: "https://seller.example.com/" + string(c.Transport), Status: status, Finished: true, Complete: true,
		RequestBody:     wire.Bytes(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{}}}`),
		ResponseHeaders: http.Header{"Content-Type": {contentType}}, ResponseBody: wire.Bytes(body)}
	if contentType == "text/event-stream" {
		x.SSE, x.Events, x.ResponseBody = true, events, nil
	}
	c.Exchanges = append(c.Exchanges, x)
	return c
}

// sseEvent is a dispatched SSE message event with data.
func sseEvent(data string) wire.Event {
	return wire.Event{Data: data, HasData: true, Dispatch: true, Complete: true, Raw: wire.Bytes("data: " + data + "\n\n")}
}

// unread is a call whose reply the harness recorded no JSON-RPC message
// for.
func unread(probeID string, t evidence.Transport) evidence.Call {
	return evidence.Call{ProbeID: probeID, Transport: t, Kind: evidence.KindToolCall, Tool: "get_products", HTTPStatus: 200, Credential: "configured"}
}

func TestENV10Table(t *testing.T) {
	const none = "no JSON-RPC reply observed"
	okMsg := `{"jsonrpc":"2.0","id":1,"result":` + `{"content":[{"type":"text","text":"ok"}],"structuredContent":` + envOK + `}}`
	deepMsg := `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}}`
	ok := func(id string) evidence.Call {
		return exchanged(mcpBody(id, "get_products", envOK, false), 200, "application/json", okMsg)
	}
	for _, on := range []catalogue.Transport{catalogue.MCP, catalogue.A2A} {
		tr := evidence.Transport(on)
		p := string(on) + "/p"
		answered := func(string) evidence.Call {
			c := mcpResult(p, "get_products", `{}`)
			if on == catalogue.A2A {
				c = a2aResult(p, "get_products", a2aTask("completed", envOK))
			}
			return c
		}
		okCall := func() evidence.Call {
			if on == catalogue.A2A {
				msg := `{"jsonrpc":"2.0","id":1,"result":` + a2aTask("completed", envOK) + `}`
				return exchanged(a2aResult(p, "get_products", a2aTask("completed", envOK)), 200, "application/json", msg)
			}
			return ok(p)
		}
		runJudgeTable(t, "ENV-10", on, []judgeCase{
			{name: "JSON body", calls: []evidence.Call{okCall()}, want: Pass},
			{name: "JSON body with a charset parameter", calls: []evidence.Call{exchanged(answered(okMsg), 200, "application/json; charset=utf-8", okMsg)}, want: Pass},
			{name: "SSE: a notification, then the response", calls: []evidence.Call{exchanged(answered(okMsg), 200, "text/event-stream", "",
				sseEvent(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`), sseEvent(okMsg))}, want: Pass},
			{name: "SSE: a priming event with empty data and other event types are not messages", calls: []evidence.Call{exchanged(answered(okMsg), 200, "text/event-stream", "",
				wire.Event{ID: "1", HasID: true, Complete: true, Raw: wire.Bytes("id: 1\ndata:\n\n")},
				wire.Event{Type: "ping", Data: "ping", HasData: true, Dispatch: true, Complete: true, Raw: wire.Bytes("event: ping\ndata: ping\n\n")},
				sseEvent(okMsg))}, want: Pass},
			{name: "a valid reply 10 001 levels deep", calls: []evidence.Call{exchanged(answered(deepMsg), 200, "application/json", deepMsg)}, want: Pass},
			{name: "UTF-8 text and a lone surrogate escape (RFC 8259 §8.2)", calls: []evidence.Call{exchanged(answered(okMsg), 200, "application/json",
				`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Café \ud800"}]}}`)}, want: Pass},
			{name: "a 401 in text/plain is the HTTP layer's", calls: []evidence.Call{okCall(), exchanged(unread(string(on)+"/auth", tr), 401, "text/plain", "Unauthorized")}, want: Pass},
			{name: "a 202 without a body answers a notification", calls: []evidence.Call{okCall(), func() evidence.Call {
				c := exchanged(unread(string(on)+"/n", tr), 202, "", "")
				c.Kind, c.Exchanges[0].RequestBody = evidence.KindInitialize, wire.Bytes(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				return c
			}()}, want: Pass},
			{name: "recorded without exchanges: the message", calls: []evidence.Call{answered(okMsg)}, want: Pass},
			{name: "Latin-1 byte in the body", calls: []evidence.Call{exchanged(unread(p, tr), 200, "application/json",
				"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Caf\xe9\"}]}}")}, want: Fail, msg: "is not UTF-8"},
			{name: "truncated body", calls: []evidence.Call{exchanged(unread(p, tr), 200, "application/json", okMsg[:40])}, want: Fail, msg: "the response body is not JSON: unterminated string at byte 34"},
			{name: "HTML page answering the request", calls: []evidence.Call{exchanged(unread(p, tr), 200, "text/html", "<html>Sign in</html>")}, want: Fail, msg: "is not JSON"},
			{name: "empty 200 answering the request", calls: []evidence.Call{exchanged(unread(p, tr), 200, "application/json", "")}, want: Fail, msg: "the response body is empty"},
			{name: "byte order mark", calls: []evidence.Call{exchanged(unread(p, tr), 200, "application/json", "\xef\xbb\xbf"+okMsg)}, want: Fail, msg: "byte order mark"},
			{name: "malformed JSON error body on a 500", calls: []evidence.Call{exchanged(unread(p, tr), 500, "application/json", `{"error":`)}, want: Fail, msg: "is not JSON"},
			{name: "SSE event data not JSON", calls: []evidence.Call{exchanged(unread(p, tr), 200, "text/event-stream", "",
				sseEvent(`{"jsonrpc":"2.0","method":"notifications/progress"}`), sseEvent(`{"jsonrpc":"2.0","id":1,"result":`))}, want: Fail, ptr: "/events/1"},
			{name: "SSE event not UTF-8", calls: []evidence.Call{exchanged(unread(p, tr), 200, "text/event-stream", "",
				wire.Event{Data: "{\"a\":\"\uFFFD\"}", HasData: true, Dispatch: true, Complete: true, Raw: wire.Bytes("data: {\"a\":\"\xe9\"}\n\n")})}, want: Fail, ptr: "/events/0", msg: "is not UTF-8"},
			{name: "a JSON body under text/event-stream: no event, no id", calls: []evidence.Call{exchanged(unread(p, tr), 200, "text/event-stream", "",
				wire.Event{Complete: true, Raw: wire.Bytes(okMsg + "\n\n")})}, want: Fail, msg: "carries no message event and no event id"},
			{name: "a stream closed before the response, with an id to resume from (MCP resumability)", calls: []evidence.Call{exchanged(unread(p, tr), 200, "text/event-stream", "",
				wire.Event{ID: "e1", HasID: true, Complete: true, Raw: wire.Bytes("id: e1\ndata:\n\n")})}, want: Skip, msg: none},
			{name: "a JSON body without the response to the request", calls: []evidence.Call{exchanged(unread(p, tr), 200, "application/json", `{"jsonrpc":"2.0","id":2,"result":{}}`)}, want: Fail, msg: "holds no JSON-RPC response to the request (id 1)"},
			{name: "a response with neither result nor error", calls: []evidence.Call{exchanged(unread(p, tr), 200, "application/json", `{"jsonrpc":"2.0","id":1}`)}, want: Fail, msg: "holds neither result nor error"},
			{name: "a failure among passes", calls: []evidence.Call{okCall(), exchanged(unread(string(on)+"/b", tr), 200, "application/json", "{")}, want: Fail, msg: string(on) + "/b"},
			{name: "cut at the harness's size limit", calls: []evidence.Call{func() evidence.Call {
				c := exchanged(unread(p, tr), 200, "application/json", okMsg[:40])
				c.Exchanges[0].Truncated, c.Exchanges[0].Error = true, "wire: response body exceeds the limit of 8388608 bytes"
				return c
			}()}, want: HarnessError, msg: "size limit"},
			{name: "broken off by the network", calls: []evidence.Call{func() evidence.Call {
				c := exchanged(unread(p, tr), 200, "application/json", okMsg[:40])
				c.Exchanges[0].Complete, c.Exchanges[0].Error = false, "unexpected EOF"
				return c
			}()}, want: HarnessError, msg: "broken off"},
			{name: "a reply the harness failed to read", calls: []evidence.Call{exchanged(unread(p, tr), 200, "application/json", okMsg)}, want: HarnessError, msg: "the harness did not read the reply"},
			{name: "card fetches are not judged", calls: []evidence.Call{httpGet(string(on)+"/card", tr, "https://seller.example.com/.well-known/agent-card.json", 200, "{")}, want: Skip, msg: none},
			{name: "no evidence", want: Skip, msg: none},
			{name: "not run", calls: []evidence.Call{notRun(p, tr, evidence.KindToolCall, "no read skill")}, want: Skip, msg: "not run"},
			{name: "harness error", calls: []evidence.Call{harnessFailed(p, tr, evidence.KindToolCall, "connection refused")}, want: HarnessError, msg: "connection refused"},
		})
	}
}
