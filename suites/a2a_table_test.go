package suites

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The judge tables of the A2A family (A2A-01..A2A-11) and of ERR-07, the
// A2A fatal-failure rule. Shapes come from the spec: the A2A 1.0 examples of
// docs/building/by-layer/L0/a2a-response-format.mdx, a2a-guide.mdx and
// a2a-profile-extension.mdx (TASK_STATE_*, parts without kind, the
// {"task":…} branch, {statusUpdate}/{artifactUpdate} stream envelopes), the
// A2A 0.3 shapes of transport-errors.mdx and 004 (kind "task"/"data"/"text", lowercase
// states; stream kinds "status-update" and "artifact-update" with append,
// lastChunk and final, as A2A 0.3 defines them), and the vectors of
// a2a-profile-extension-v3.json and transport-error-mapping.json.

// a2aCardURL is where the table's agent card is fetched.
const a2aCardURL = "https://seller.example.com/a2a/.well-known/agent-card.json"

// The cards of the tables.
const (
	// card10 is the A2A 1.0 card of a2a-profile-extension-v3.json's
	// agent-card-capabilities-extension vector.
	card10 = `{"name":"StreamHaus sales agent","description":"Advertising sales agent","version":"3.2.0",
		"supportedInterfaces":[{"url":"https://seller.example.com/a2a/jsonrpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		"capabilities":{"streaming":true,"extensions":[{"uri":"https://adcontextprotocol.org/extensions/adcp/v3","description":"AdCP structured task invocation profile","required":true}]},
		"defaultInputModes":["application/json"],"defaultOutputModes":["application/json"],
		"skills":[{"id":"get_adcp_capabilities","name":"Discover AdCP capabilities","tags":["adcp"]},{"id":"get_task_status","name":"Get AdCP task status","tags":["adcp"]},{"id":"get_products","name":"Discover advertising products","tags":["adcp"]}]}`
	// card03 is an A2A 0.3 card: url and protocolVersion at the root
	// (a2a-guide, "A2A Protocol Versions").
	card03 = `{"name":"Seller","url":"https://seller.example.com/a2a","preferredTransport":"JSONRPC","protocolVersion":"0.3.0","version":"1.0.0",
		"capabilities":{"streaming":true,"extensions":[{"uri":"https://adcontextprotocol.org/extensions/adcp/v3"}]},
		"skills":[{"id":"get_adcp_capabilities","name":"Discover AdCP capabilities"},{"id":"get_products","name":"Discover products"}]}`
	// card03Interface advertises its one interface as 0.3 through
	// supportedInterfaces[] (a2a-guide, "Dual-Advertising for v0.3
	// Compatibility"): a 0.3 interface.
	card03Interface = `{"name":"Seller","supportedInterfaces":[{"url":"https://seller.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],
		"capabilities":{"streaming":true},"skills":[{"id":"get_adcp_capabilities"},{"id":"get_products"}]}`
)

// a2aCard records the fetch of the agent card answered with body.
func a2aCard(body string) evidence.Call {
	return httpGet("a2a/card", evidence.A2A, a2aCardURL, 200, body, evidence.PurposeDiscovery)
}

// task10 is an A2A 1.0 SendMessage result: the task branch of a task in
// state (TASK_STATE_*) whose one artifact holds the DataPart data (the
// "Recommended non-streaming SendMessageResponse pattern").
func task10(state, data string) string {
	return `{"task":{"id":"t1","contextId":"c1","status":{"state":"` + state + `"},"artifacts":[{"artifactId":"adcp-result","parts":[{"text":"Found products"},{"data":` + data + `}]}]}}`
}

// products is a get_products response body.
const products = `{"status":"completed","cache_scope":"account","products":[]}`

// a2aStream records an A2A streaming call of skill whose SSE events carry
// the JSON-RPC results given, in order.
func a2aStream(probeID, skill string, results ...string) evidence.Call {
	msgs := make([]string, len(results))
	for i, r := range results {
		msgs[i] = `{"jsonrpc":"2.0","id":1,"result":` + r + `}`
	}
	return a2aStreamMessages(probeID, skill, msgs...)
}

// a2aStreamMessages records an A2A streaming call whose SSE events carry
// the JSON-RPC messages given.
func a2aStreamMessages(probeID, skill string, msgs ...string) evidence.Call {
	x := wire.Exchange{Method: "POST", URL: "https://seller.example.com/a2a/jsonrpc", Status: 200, SSE: true}
	for _, m := range msgs {
		x.Events = append(x.Events, wire.Event{Data: m, HasData: true, Dispatch: true, Complete: true})
	}
	c := evidence.Call{ProbeID: probeID, Transport: evidence.A2A, Kind: evidence.KindToolCall, Tool: skill, Method: "message/stream",
		Purposes: []evidence.Purpose{evidence.PurposeStream, evidence.PurposeNoContext}, HTTPStatus: 200, Credential: "configured",
		Exchanges: []wire.Exchange{x}}
	if len(msgs) > 0 {
		last := msgs[len(msgs)-1]
		c.Message = json.RawMessage(last)
		c.Result, c.RPCError, _, _ = splitResponse(c.Message)
	}
	return c
}

// The events of A2A 1.0 streams (a2a-guide, "A2A Webhook Payload Types":
// {statusUpdate}, {artifactUpdate} with append/lastChunk, {task}).
const (
	working10 = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m1","taskId":"t1","contextId":"c1","role":"ROLE_AGENT",` +
		`"parts":[{"text":"Analyzing inventory"},{"data":{"percentage":45,"current_step":"analyzing_inventory"}}]}}}}`
	artifact10  = `{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"adcp-result","parts":[{"data":` + products + `}]},"lastChunk":true}}`
	completed10 = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`
)

// The events of A2A 0.3 streams: kind task, status-update (final),
// artifact-update (append, lastChunk).
const (
	submitted03 = `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"submitted"}}`
	working03   = `{"kind":"status-update","taskId":"t1","contextId":"c1","final":false,"status":{"state":"working","message":{"kind":"message","messageId":"m1","role":"agent",` +
		`"parts":[{"kind":"data","data":{"status":"working","message":"Searching"}}]}}}`
	chunk03a    = `{"kind":"artifact-update","taskId":"t1","contextId":"c1","append":false,"lastChunk":false,"artifact":{"artifactId":"a1","parts":[{"kind":"text","text":"Found products"}]}}`
	chunk03b    = `{"kind":"artifact-update","taskId":"t1","contextId":"c1","append":true,"lastChunk":true,"artifact":{"artifactId":"a1","parts":[{"kind":"data","data":` + products + `}]}}`
	completed03 = `{"kind":"status-update","taskId":"t1","contextId":"c1","final":true,"status":{"state":"completed"}}`
)

// read is the probe of a valid read call.
const read = "a2a/get_products/valid"

func a2aSkip() []judgeCase {
	return []judgeCase{
		{name: "no A2A call recorded", want: Skip},
		{name: "an MCP call only", calls: []evidence.Call{mcpBody("mcp/get_products/valid", "get_products", products, false)}, want: Skip},
	}
}

func TestA2A01Table(t *testing.T) {
	runJudgeTable(t, "A2A-01", catalogue.A2A, append(a2aSkip(),
		judgeCase{name: "0.3 completed task with one artifact", calls: []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", products))}, want: Pass},
		judgeCase{name: "1.0 task branch with one artifact", calls: []evidence.Call{a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products))}, want: Pass},
		judgeCase{name: "1.0 stream: artifactUpdate, then a final statusUpdate with no artifacts",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working10, artifact10, completed10)}, want: Pass},
		judgeCase{name: "0.3 stream: an artifact in two chunks (append), then final status-update",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", submitted03, working03, chunk03a, chunk03b, completed03)}, want: Pass},
		judgeCase{name: "0.3 stream: the same artifactId sent again without append replaces it",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", submitted03, chunk03a,
				strings.Replace(chunk03b, `"append":true`, `"append":false`, 1), completed03)}, want: Pass},
		judgeCase{name: "1.0 stream appending chunks to an artifact without artifactId",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products",
				`{"artifactUpdate":{"taskId":"t1","artifact":{"parts":[{"text":"Found"}]}}}`,
				`{"artifactUpdate":{"taskId":"t1","artifact":{"parts":[{"data":`+products+`}]},"append":true,"lastChunk":true}}`, completed10)}, want: Pass},
		judgeCase{name: "1.0 stream ending with a {task} snapshot that repeats no artifacts",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working10, artifact10,
				`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`)}, want: Pass},
		judgeCase{name: "1.0 stream ending with a full {task} snapshot",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working10, task10("TASK_STATE_COMPLETED", products))}, want: Pass},
		judgeCase{name: "failed task with only a text status message (vector a2a-failed-task-no-structure)",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"id":"task_101","status":{"state":"failed","message":{"role":"agent","parts":[{"kind":"text","text":"Authentication failed"}]}}}`)}, want: Pass},
		judgeCase{name: "canceled task with no artifact",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_CANCELED"}}}`)}, want: Pass},
		judgeCase{name: "0.3 task with two artifacts",
			calls: []evidence.Call{a2aResult(read, "get_products", strings.Replace(a2aTask("completed", products), `]}]}`, `]},{"artifactId":"a2","parts":[{"kind":"text","text":"Summary"}]}]}`, 1))},
			want:  Fail, ptr: "/result/artifacts", msg: "holds 2 artifacts"},
		// Outside stream reconstruction two entries are two artifacts, whatever their artifactId.
		judgeCase{name: "0.3 task with two artifacts sharing an artifactId",
			calls: []evidence.Call{a2aResult(read, "get_products", strings.Replace(a2aTask("completed", products), `]}]}`, `]},{"artifactId":"a1","parts":[{"kind":"text","text":"Summary"}]}]}`, 1))},
			want:  Fail, ptr: "/result/artifacts", msg: "holds 2 artifacts"},
		judgeCase{name: "1.0 task with two artifacts sharing an artifactId",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"data":`+products+`}]},{"artifactId":"a","parts":[{"data":`+products+`}]}]}}`)},
			want:  Fail, ptr: "/result/task/artifacts"},
		judgeCase{name: "1.0 task with two artifacts without artifactId",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"parts":[{"data":`+products+`}]},{"parts":[{"text":"x"}]}]}}`)},
			want:  Fail, ptr: "/result/task/artifacts"},
		judgeCase{name: "0.3 stream whose final snapshot repeats an artifactId",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working03,
				`{"kind":"task","id":"t1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[]},{"artifactId":"a1","parts":[]}]}`)},
			want: Fail, ptr: "/events/1/result/artifacts"},
		judgeCase{name: "an artifact beside a null entry",
			calls: []evidence.Call{a2aResult(read, "get_products", strings.Replace(a2aTask("completed", products), `]}]}`, `]},null]}`, 1))},
			want:  Fail, ptr: "/result/artifacts/1", msg: "null, not an artifact object"},
		// A null artifacts member is an absent one: a canceled task may carry none.
		judgeCase{name: "canceled 0.3 task with artifacts null",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"canceled"},"artifacts":null}`)}, want: Pass},
		judgeCase{name: "completed 0.3 task with artifacts null",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"completed"},"artifacts":null}`)},
			want:  Fail, ptr: "/result/status/state", msg: "carries no artifact"},
		judgeCase{name: "1.0 failed task with two artifacts",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"task":{"id":"t1","status":{"state":"TASK_STATE_FAILED"},"artifacts":[{"artifactId":"a","parts":[{"data":{"adcp_error":{"code":"X"}}}]},{"artifactId":"b","parts":[{"text":"x"}]}]}}`)},
			want:  Fail, ptr: "/result/task/artifacts"},
		judgeCase{name: "1.0 stream building two artifacts",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working10, artifact10,
				`{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"adcp-summary","parts":[{"text":"Summary"}]},"lastChunk":true}}`, completed10)},
			want: Fail, ptr: "/events/2/result/artifactUpdate/artifact", msg: "second artifact"},
		judgeCase{name: "0.3 stream whose final snapshot carries two artifacts",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working03,
				`{"kind":"task","id":"t1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[]},{"artifactId":"a2","parts":[]}]}`)},
			want: Fail, ptr: "/events/1/result/artifacts"},
		judgeCase{name: "completed task with no artifact",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"completed","message":{"kind":"message","role":"agent","parts":[{"kind":"data","data":`+products+`}]}}}`)},
			want:  Fail, ptr: "/result/status/state", msg: "carries no artifact"},
		judgeCase{name: "completed task with an empty artifacts list",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[]}}`)},
			want:  Fail, ptr: "/result/task/artifacts"},
		judgeCase{name: "stream completing a task no artifact was streamed for",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working10, completed10)},
			want:  Fail, ptr: "/events/1/result/statusUpdate/status/state"},
		judgeCase{name: "artifacts is not a list",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"completed"},"artifacts":{"artifactId":"a1"}}`)},
			want:  Fail, ptr: "/result/artifacts", msg: "not a list"},
		judgeCase{name: "interim task only", calls: []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"working"}}`)},
			want: Skip, msg: "no final task observed"},
		judgeCase{name: "JSON-RPC error only", calls: []evidence.Call{a2aRPCError(read, "get_products", `{"code":-32602,"message":"Invalid params"}`)}, want: Skip},
		judgeCase{name: "not run", calls: []evidence.Call{notRun(read, evidence.A2A, evidence.KindToolCall, "no such skill")}, want: Skip, msg: "not run"},
		judgeCase{name: "harness failed", calls: []evidence.Call{harnessFailed(read, evidence.A2A, evidence.KindToolCall, "connection refused")}, want: HarnessError},
	))
}

// a2aRPCError records an A2A message/send answered with the JSON-RPC error
// rpcErr.
func a2aRPCError(probeID, skill, rpcErr string, ps ...evidence.Purpose) evidence.Call {
	msg := `{"jsonrpc":"2.0","id":1,"error":` + rpcErr + `}`
	return evidence.Call{ProbeID: probeID, Transport: evidence.A2A, Kind: evidence.KindToolCall, Tool: skill, Purposes: ps,
		Message: json.RawMessage(msg), RPCError: json.RawMessage(rpcErr), HTTPStatus: 200, Credential: "configured"}
}

func TestA2A02Table(t *testing.T) {
	failedText := `{"kind":"task","id":"t2","status":{"state":"failed"},"artifacts":[{"artifactId":"e","parts":[{"kind":"text","text":"Internal failure"}]}]}`
	runJudgeTable(t, "A2A-02", catalogue.A2A, append(a2aSkip(),
		judgeCase{name: "0.3 DataPart", calls: []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", products))}, want: Pass},
		judgeCase{name: "1.0 DataPart after a TextPart", calls: []evidence.Call{a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products))}, want: Pass},
		judgeCase{name: "several DataParts, the last authoritative (a2a-response-extraction.mdx, Last-DataPart Authority)",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"r","parts":[{"text":"Found products"},{"data":{"progress":25}},{"data":`+products+`}]}]}}`)}, want: Pass},
		judgeCase{name: "1.0 stream: the DataPart arrives in an artifactUpdate",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working10, artifact10, completed10)}, want: Pass},
		judgeCase{name: "0.3 stream: the DataPart arrives in an appended chunk",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", submitted03, chunk03a, chunk03b, completed03)}, want: Pass},
		judgeCase{name: "a failed task with a text-only artifact is not judged",
			calls: []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", products)), a2aResult("a2a/get_products/error", "get_products", failedText)}, want: Pass},
		judgeCase{name: "text-only artifact", calls: []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"{\"products\":[]}"}]}]}`)},
			want: Fail, ptr: "/result/artifacts/0/parts", msg: "no DataPart"},
		judgeCase{name: "DataPart data null", calls: []evidence.Call{a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", "null"))},
			want: Fail, ptr: "/result/task/artifacts/0/parts"},
		judgeCase{name: "DataPart data an array", calls: []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", "[1]"))},
			want: Fail, ptr: "/result/artifacts/0/parts"},
		judgeCase{name: "the data is in a second artifact, artifacts[0] has none",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"s","parts":[{"text":"Summary"}]},{"artifactId":"r","parts":[{"data":`+products+`}]}]}}`)},
			want:  Fail, ptr: "/result/task/artifacts/0/parts"},
		judgeCase{name: "stream whose artifact holds only text",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working10,
				`{"artifactUpdate":{"taskId":"t1","artifact":{"artifactId":"r","parts":[{"text":"done"}]},"lastChunk":true}}`, completed10)},
			want: Fail, ptr: "/events/1/result/artifactUpdate/artifact/parts"},
		judgeCase{name: "failed task only", calls: []evidence.Call{a2aResult(read, "get_products", failedText)}, want: Skip, msg: "no completed task"},
		judgeCase{name: "completed task with no artifact is A2A-01's",
			calls: []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"completed"}}`)}, want: Skip},
		judgeCase{name: "harness failed", calls: []evidence.Call{harnessFailed(read, evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	))
}

func TestA2A03Table(t *testing.T) {
	runJudgeTable(t, "A2A-03", catalogue.A2A, append(a2aSkip(),
		judgeCase{name: "direct payload", calls: []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", products))}, want: Pass},
		judgeCase{name: "response alongside other keys is not a wrapper (a2a-response-extraction.mdx, Wrapper Rejection)",
			calls: []evidence.Call{a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", `{"response":{"a":1},"status":"completed","errors":[]}`))}, want: Pass},
		judgeCase{name: "response holding a string is not a wrapper",
			calls: []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", `{"response":"ok"}`))}, want: Pass},
		judgeCase{name: "a stream of direct payloads", calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working10, artifact10, completed10)}, want: Pass},
		judgeCase{name: "0.3 wrapper (vector wrapper-rejected)", calls: []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", `{"response":`+products+`}`))},
			want: Fail, ptr: "/result/artifacts/0/parts/0/data", msg: "wrapper"},
		judgeCase{name: "1.0 wrapper (vector a2a-1.0-wrapper-rejected)", calls: []evidence.Call{a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", `{"response":`+products+`}`))},
			want: Fail, ptr: "/result/task/artifacts/0/parts/1/data"},
		judgeCase{name: "wrapper streamed in an artifactUpdate",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products", working10,
				`{"artifactUpdate":{"taskId":"t1","artifact":{"artifactId":"r","parts":[{"data":{"response":`+products+`}}]}}}`, completed10)},
			want: Fail, ptr: "/events/1/result/artifactUpdate/artifact/parts/0/data"},
		judgeCase{name: "wrapper in a status message",
			calls: []evidence.Call{a2aStream("a2a/get_products/stream", "get_products",
				`{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"response":{"status":"working"}}}]}}}}`, artifact10, completed10)},
			want: Fail, ptr: "/events/0/result/statusUpdate/status/message/parts/0/data"},
		judgeCase{name: "text parts only", calls: []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"failed","message":{"role":"agent","parts":[{"kind":"text","text":"no"}]}}}`)},
			want: Skip, msg: "no DataPart observed"},
		judgeCase{name: "harness failed", calls: []evidence.Call{harnessFailed(read, evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	))
}

func TestA2A04Table(t *testing.T) {
	c10, c03, c03i := a2aCard(card10), a2aCard(card03), a2aCard(card03Interface)
	runJudgeTable(t, "A2A-04", catalogue.A2A, []judgeCase{
		{name: "0.3 card, lowercase states", calls: []evidence.Call{c03, a2aResult(read, "get_products", a2aTask("completed", products))}, want: Pass},
		{name: "1.0 card, TASK_STATE_* states", calls: []evidence.Call{c10, a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products))}, want: Pass},
		{name: "a supportedInterfaces entry advertising 0.3: lowercase states are right",
			calls: []evidence.Call{c03i, a2aResult(read, "get_products", a2aTask("completed", products))}, want: Pass},
		{name: "0.3 stream, every state lowercase",
			calls: []evidence.Call{c03, a2aStream("a2a/get_products/stream", "get_products", submitted03, working03, chunk03a, chunk03b, completed03)}, want: Pass},
		{name: "1.0 stream, every state TASK_STATE_*",
			calls: []evidence.Call{c10, a2aStream("a2a/get_products/stream", "get_products", working10, artifact10, completed10)}, want: Pass},
		{name: "0.3 unknown and 1.0 TASK_STATE_UNSPECIFIED are tokens of their versions",
			calls: []evidence.Call{c03, a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"unknown"}}`)}, want: Pass},
		{name: "a message result carries no state and is not judged",
			calls: []evidence.Call{c10, a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products)),
				a2aResult("a2a/get_products/message", "get_products", `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`)}, want: Pass},
		{name: "0.3 card, 1.0 state", calls: []evidence.Call{c03, a2aResult(read, "get_products", a2aTask("TASK_STATE_COMPLETED", products))},
			want: Fail, ptr: "/result/status/state", msg: "not an A2A 0.3 task state"},
		{name: "0.3 supportedInterfaces card, 1.0 state", calls: []evidence.Call{c03i, a2aResult(read, "get_products", a2aTask("TASK_STATE_COMPLETED", products))},
			want: Fail, ptr: "/result/status/state"},
		{name: "1.0 card, lowercase state", calls: []evidence.Call{c10, a2aResult(read, "get_products", task10("completed", products))},
			want: Fail, ptr: "/result/task/status/state", msg: "not an A2A 1.0 task state"},
		{name: "a mix within one stream", calls: []evidence.Call{c10, a2aStream("a2a/get_products/stream", "get_products", working10, artifact10,
			`{"statusUpdate":{"taskId":"t1","status":{"state":"completed"}}}`)},
			want: Fail, ptr: "/events/2/result/statusUpdate/status/state"},
		{name: "a state that is a number does not vanish", calls: []evidence.Call{c10, a2aResult(read, "get_products", `{"task":{"id":"t1","status":{"state":3},"artifacts":[]}}`)},
			want: Fail, ptr: "/result/task/status/state", msg: "a number, not a string"},
		{name: "a misspelt state", calls: []evidence.Call{c03, a2aResult(read, "get_products", a2aTask("Completed", products))},
			want: Fail, ptr: "/result/status/state"},
		{name: "a task without status", calls: []evidence.Call{c10, a2aResult(read, "get_products", `{"task":{"id":"t1","artifacts":[]}}`)},
			want: Fail, ptr: "/result/task/status", msg: "absent"},
		{name: "a status without state", calls: []evidence.Call{c03, a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"timestamp":"2026-01-01T00:00:00Z"}}`)},
			want: Fail, ptr: "/result/status/state", msg: "absent"},
		{name: "a status that is a string", calls: []evidence.Call{c03, a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":"completed"}`)},
			want: Fail, ptr: "/result/status", msg: "a string, not an object"},
		{name: "no card: no version", calls: []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", products))}, want: Skip, msg: "no A2A version"},
		{name: "a version the harness does not judge",
			calls: []evidence.Call{a2aCard(`{"url":"https://seller.example.com/a2a","protocolVersion":"0.2.5","skills":[]}`), a2aResult(read, "get_products", a2aTask("completed", products))},
			want:  Skip, msg: `"0.2.5"`},
		{name: "no task state", calls: []evidence.Call{c10, a2aRPCError(read, "get_products", `{"code":-32602,"message":"Invalid params"}`)}, want: Skip, msg: "no task state observed"},
		{name: "harness failed", calls: []evidence.Call{c10, harnessFailed(read, evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

func TestA2A05Table(t *testing.T) {
	c10 := a2aCard(card10)
	runJudgeTable(t, "A2A-05", catalogue.A2A, []judgeCase{
		{name: "text and data parts, each a oneof", calls: []evidence.Call{c10, a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products))}, want: Pass},
		{name: "url and raw parts", calls: []evidence.Call{c10, a2aResult(read, "get_products",
			`{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"r","parts":[{"url":"https://seller.example.com/p.png","mediaType":"image/png"},{"raw":"aGk=","filename":"a.txt"},{"data":`+products+`,"metadata":{"mimeType":"application/json"}}]}]}}`)},
			want: Pass},
		{name: "a stream's parts, in status messages and artifact updates",
			calls: []evidence.Call{c10, a2aStream("a2a/get_products/stream", "get_products", working10, artifact10, completed10)}, want: Pass},
		{name: "a part with text and data", calls: []evidence.Call{c10, a2aResult(read, "get_products",
			`{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"r","parts":[{"text":"AdCP result","data":`+products+`}]}]}}`)},
			want: Fail, ptr: "/result/task/artifacts/0/parts/0", msg: "has 2 of text, raw, url, data"},
		{name: "a 0.3-style part with kind and no content", calls: []evidence.Call{c10, a2aResult(read, "get_products",
			`{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"r","parts":[{"kind":"file","file":{"uri":"https://x"}},{"data":{}}]}]}}`)},
			want: Fail, ptr: "/result/task/artifacts/0/parts/0", msg: "has 0"},
		{name: "a streamed artifact part with url and raw", calls: []evidence.Call{c10, a2aStream("a2a/get_products/stream", "get_products", working10,
			`{"artifactUpdate":{"taskId":"t1","artifact":{"artifactId":"r","parts":[{"url":"https://x","raw":"aGk="}]}}}`, completed10)},
			want: Fail, ptr: "/events/1/result/artifactUpdate/artifact/parts/0"},
		{name: "a status message part with text and data", calls: []evidence.Call{c10, a2aStream("a2a/get_products/stream", "get_products",
			`{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x","data":{}}]}}}}`, artifact10, completed10)},
			want: Fail, ptr: "/events/0/result/statusUpdate/status/message/parts/0"},
		{name: "a null part fails", calls: []evidence.Call{c10, a2aResult(read, "get_products",
			`{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"r","parts":[null,{"data":`+products+`}]}]}}`)},
			want: Fail, ptr: "/result/task/artifacts/0/parts/0", msg: "is null, not a Part"},
		{name: "a string part fails", calls: []evidence.Call{c10, a2aResult(read, "get_products",
			`{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"r","parts":["Found products",{"data":`+products+`}]}]}}`)},
			want: Fail, ptr: "/result/task/artifacts/0/parts/0", msg: "is a string"},
		{name: "0.3 card", calls: []evidence.Call{a2aCard(card03), a2aResult(read, "get_products", a2aTask("completed", products))}, want: Skip, msg: "applies to A2A 1.0"},
		{name: "0.3 supportedInterfaces card", calls: []evidence.Call{a2aCard(card03Interface), a2aResult(read, "get_products", a2aTask("completed", products))}, want: Skip, msg: "A2A 0.3"},
		{name: "no card", calls: []evidence.Call{a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products))}, want: Skip},
		{name: "no part", calls: []evidence.Call{c10, a2aRPCError(read, "get_products", `{"code":-32602,"message":"Invalid params"}`)}, want: Skip, msg: "no part observed"},
		{name: "harness failed", calls: []evidence.Call{c10, harnessFailed(read, evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

func TestA2A06Table(t *testing.T) {
	c10 := a2aCard(card10)
	runJudgeTable(t, "A2A-06", catalogue.A2A, []judgeCase{
		{name: "the task branch (a2a-profile-extension, Response mapping)", calls: []evidence.Call{c10, a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products))}, want: Pass},
		{name: "a failed task in the task branch", calls: []evidence.Call{c10, a2aResult("a2a/get_products/error", "get_products",
			`{"task":{"id":"t1","status":{"state":"TASK_STATE_FAILED"},"artifacts":[{"artifactId":"e","parts":[{"data":{"adcp_error":{"code":"INVALID_REQUEST","message":"bad"}}}]}]}}`)}, want: Pass},
		{name: "streams are not SendMessage replies", calls: []evidence.Call{c10, a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products)),
			a2aStream("a2a/get_products/stream", "get_products", completed10)}, want: Pass},
		{name: "a bare Task (vector bare-send-message-task-invalid)", calls: []evidence.Call{c10, a2aResult(read, "get_products",
			`{"id":"a2a-task-bare-001","contextId":"ctx-bare-001","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"adcp-result","parts":[{"data":{"status":"completed","products":[]}}]}]}`)},
			want: Fail, ptr: "/result", msg: "bare Task"},
		{name: "the message branch", calls: []evidence.Call{c10, a2aResult(read, "get_products", `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":`+products+`}]}}`)},
			want: Fail, ptr: "/result", msg: "message branch"},
		{name: "0.3 card: the bare Task is 0.3's shape", calls: []evidence.Call{a2aCard(card03), a2aResult(read, "get_products", a2aTask("completed", products))}, want: Skip, msg: "applies to A2A 1.0"},
		{name: "only a stream", calls: []evidence.Call{c10, a2aStream("a2a/get_products/stream", "get_products", working10, artifact10, completed10)}, want: Skip, msg: "no SendMessage reply"},
		{name: "no card", calls: []evidence.Call{a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products))}, want: Skip},
		{name: "harness failed", calls: []evidence.Call{c10, harnessFailed(read, evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	})
}

func TestA2A07Table(t *testing.T) {
	submitted := `{"status":"submitted","task_id":"adcp-task-9a21","message":"Awaiting IO signature"}`
	runJudgeTable(t, "A2A-07", catalogue.A2A, append(a2aSkip(),
		judgeCase{name: "submitted inside a completed A2A task (vector submitted-inside-completed-a2a-task)",
			calls: []evidence.Call{a2aResult(read, "create_media_buy", task10("TASK_STATE_COMPLETED", submitted))}, want: Pass},
		judgeCase{name: "0.3 submitted inside a completed task", calls: []evidence.Call{a2aResult(read, "create_media_buy", a2aTask("completed", submitted))}, want: Pass},
		judgeCase{name: "a stream streaming the submitted body, then completing",
			calls: []evidence.Call{a2aStream("a2a/create_media_buy/stream", "create_media_buy", working10,
				`{"artifactUpdate":{"taskId":"t1","artifact":{"artifactId":"adcp-result","parts":[{"data":`+submitted+`}]},"lastChunk":true}}`, completed10)}, want: Pass},
		judgeCase{name: "other artifact metadata is allowed",
			calls: []evidence.Call{a2aResult(read, "create_media_buy", `{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"r","metadata":{"mimeType":"application/json"},"parts":[{"data":`+submitted+`}]}]}}`)}, want: Pass},
		judgeCase{name: "native A2A submitted (vector submitted-native-a2a-state-invalid)",
			calls: []evidence.Call{a2aResult(read, "create_media_buy", `{"task":{"id":"a2a-task-create-43","contextId":"ctx-create-43","status":{"state":"TASK_STATE_SUBMITTED"},"artifacts":[{"artifactId":"adcp-result","parts":[{"data":{"status":"submitted","task_id":"adcp-task-9a22"}}]}]}}`)},
			want:  Fail, ptr: "/result/task/status/state", msg: "must be completed"},
		judgeCase{name: "task_id duplicated in artifact metadata (vector duplicated-adcp-task-id-invalid)",
			calls: []evidence.Call{a2aResult(read, "create_media_buy", `{"task":{"id":"a2a-task-create-44","contextId":"ctx-create-44","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"adcp-result","metadata":{"adcp_task_id":"adcp-task-9a23"},"parts":[{"data":{"status":"submitted","task_id":"adcp-task-9a23"}}]}]}}`)},
			want:  Fail, ptr: "/result/task/artifacts/0/metadata/adcp_task_id", msg: "duplicates"},
		judgeCase{name: "a submitted body without task_id",
			calls: []evidence.Call{a2aResult(read, "create_media_buy", a2aTask("completed", `{"status":"submitted","message":"queued"}`))},
			want:  Fail, ptr: "/result/artifacts/0/parts/0/data/task_id"},
		judgeCase{name: "a stream whose artifact chunk carries the duplicate",
			calls: []evidence.Call{a2aStream("a2a/create_media_buy/stream", "create_media_buy", working10,
				`{"artifactUpdate":{"taskId":"t1","artifact":{"artifactId":"adcp-result","metadata":{"adcp_task_id":"adcp-task-9a21"},"parts":[{"data":`+submitted+`}]}}}`, completed10)},
			want: Fail, ptr: "/events/1/result/artifactUpdate/artifact/metadata/adcp_task_id"},
		judgeCase{name: "a stream ending its submitted work in native submitted",
			calls: []evidence.Call{a2aStream("a2a/create_media_buy/stream", "create_media_buy",
				`{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_SUBMITTED","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":`+submitted+`}]}}}}`)},
			want: Fail, ptr: "/events/0/result/statusUpdate/status/state"},
		judgeCase{name: "no submitted result", calls: []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", products))}, want: Skip, msg: "no submitted AdCP result"},
		judgeCase{name: "a get_task_status poll is not submitted work",
			calls: []evidence.Call{a2aResult(read, "get_task_status", task10("TASK_STATE_COMPLETED", `{"task_id":"adcp-task-9a21","task_type":"create_media_buy","status":"completed"}`))}, want: Skip},
		judgeCase{name: "harness failed", calls: []evidence.Call{harnessFailed(read, evidence.A2A, evidence.KindToolCall, "timeout")}, want: HarnessError},
	))
}

func TestA2A08Table(t *testing.T) {
	stream := "a2a/get_products/stream"
	workingTaskArtifact := func(data string) string {
		return `{"task":{"id":"t1","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"adcp-progress","parts":[{"data":` + data + `}]}]}}`
	}
	runJudgeTable(t, "A2A-08", catalogue.A2A, []judgeCase{
		{name: "1.0 working statusUpdate with its data in status.message", calls: []evidence.Call{a2aStream(stream, "get_products", working10, artifact10, completed10)}, want: Pass},
		{name: "0.3 working status-update with its data in status.message", calls: []evidence.Call{a2aStream(stream, "get_products", submitted03, working03, chunk03a, chunk03b, completed03)}, want: Pass},
		{name: "a working update with no data at all", calls: []evidence.Call{a2aStream(stream, "get_products",
			`{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_WORKING"}}}`, artifact10, completed10)}, want: Pass},
		{name: "a working snapshot carrying the artifact accumulated so far",
			calls: []evidence.Call{a2aStream(stream, "get_products", workingTaskArtifact(products), completed10)}, want: Pass},
		{name: "interim data in an artifact and in status.message",
			calls: []evidence.Call{a2aStream(stream, "get_products", `{"task":{"id":"t1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"status":"working"}}]}},"artifacts":[{"artifactId":"p","parts":[{"data":{"status":"working"}}]}]}}`, completed10)},
			want:  Pass},
		{name: "1.0 working task whose interim body sits in an artifact",
			calls: []evidence.Call{a2aStream(stream, "get_products", workingTaskArtifact(`{"status":"working","message":"Working on get_products."}`), task10("TASK_STATE_COMPLETED", products))},
			want:  Fail, ptr: "/events/0/result/task/artifacts/0/parts/0/data", msg: "not in status.message.parts"},
		{name: "0.3 input-required task whose interim body sits in an artifact",
			calls: []evidence.Call{a2aStream(stream, "get_products", `{"kind":"task","id":"t1","status":{"state":"input-required"},"artifacts":[{"artifactId":"p","parts":[{"kind":"data","data":{"status":"input-required","message":"Approve"}}]}]}`)},
			want:  Fail, ptr: "/events/0/result/artifacts/0/parts/0/data"},
		{name: "a stream with no interim state", calls: []evidence.Call{a2aStream(stream, "get_products", task10("TASK_STATE_COMPLETED", products))}, want: Skip, msg: "no interim state"},
		{name: "interim tasks outside streams are not judged", calls: []evidence.Call{a2aResult(read, "get_products", workingTaskArtifact(`{"status":"working"}`))}, want: Skip},
		{name: "no call", want: Skip},
		{name: "stream not run", calls: []evidence.Call{notRun(stream, evidence.A2A, evidence.KindToolCall, "the card declares no streaming", evidence.PurposeStream)}, want: Skip, msg: "not run"},
		{name: "stream harness failed", calls: []evidence.Call{harnessFailed(stream, evidence.A2A, evidence.KindToolCall, "timeout", evidence.PurposeStream)}, want: HarnessError},
	})
}

func TestA2A09Table(t *testing.T) {
	submittedReply := a2aResult("a2a/create_media_buy/valid", "create_media_buy", task10("TASK_STATE_COMPLETED", `{"status":"submitted","task_id":"adcp-task-1"}`))
	noStatusSkill := strings.Replace(card10, `{"id":"get_task_status","name":"Get AdCP task status","tags":["adcp"]},`, "", 1)
	runJudgeTable(t, "A2A-09", catalogue.A2A, []judgeCase{
		{name: "1.0 card (vector agent-card-capabilities-extension)", calls: []evidence.Call{a2aCard(card10)}, want: Pass},
		{name: "0.3 card", calls: []evidence.Call{a2aCard(card03)}, want: Pass},
		{name: "a 0.3 interface in supportedInterfaces", calls: []evidence.Call{a2aCard(card03Interface)}, want: Pass},
		{name: "a relative interface URL", calls: []evidence.Call{a2aCard(`{"supportedInterfaces":[{"url":"/a2a/jsonrpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"skills":[{"id":"get_adcp_capabilities"}]}`)}, want: Pass},
		{name: "only a gRPC interface: named, not drivable", calls: []evidence.Call{a2aCard(`{"supportedInterfaces":[{"url":"https://seller.example.com/grpc","protocolBinding":"GRPC","protocolVersion":"1.0"}],"skills":[{"id":"get_adcp_capabilities"}]}`)}, want: Pass},
		{name: "no get_task_status while no submitted work is seen", calls: []evidence.Call{a2aCard(noStatusSkill), a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products))}, want: Pass},
		{name: "no get_adcp_capabilities skill", calls: []evidence.Call{a2aCard(`{"url":"https://seller.example.com/a2a","skills":[{"id":"get_products"}]}`)},
			want: Fail, ptr: "/skills", msg: "get_adcp_capabilities"},
		{name: "the task name in name, not id (vector agent-card-skill-name-not-id-invalid)",
			calls: []evidence.Call{a2aCard(`{"url":"https://seller.example.com/a2a","skills":[{"id":"capability-discovery","name":"get_adcp_capabilities"}]}`)},
			want:  Fail, ptr: "/skills", msg: "no skill with id get_adcp_capabilities"}, // the vector's missing_get_adcp_capabilities_skill_id
		// A skill id that is no task name is CAP-02's: one defect, one rule.
		{name: "a conversational skill beside the tasks is CAP-02's",
			calls: []evidence.Call{a2aCard(`{"url":"https://seller.example.com/a2a","skills":[{"id":"get_adcp_capabilities"},{"id":"chat"}]}`)},
			want:  Pass},
		{name: "Skills is not skills", calls: []evidence.Call{a2aCard(`{"url":"https://seller.example.com/a2a","Skills":[{"id":"get_adcp_capabilities"}]}`)},
			want: Fail, ptr: "/skills", msg: "absent"},
		{name: "ID is not id", calls: []evidence.Call{a2aCard(`{"url":"https://seller.example.com/a2a","skills":[{"ID":"get_adcp_capabilities"}]}`)},
			want: Fail, ptr: "/skills/0/id"},
		{name: "URL is not url", calls: []evidence.Call{a2aCard(`{"URL":"https://seller.example.com/a2a","skills":[{"id":"get_adcp_capabilities"}]}`)},
			want: Fail, ptr: "", msg: "no interface URL"},
		{name: "a skill id that is not a string", calls: []evidence.Call{a2aCard(`{"url":"https://seller.example.com/a2a","skills":[{"id":"get_adcp_capabilities"},{"id":7}]}`)},
			want: Fail, ptr: "/skills/1/id"},
		{name: "a skill that is not an object", calls: []evidence.Call{a2aCard(`{"url":"https://seller.example.com/a2a","skills":[{"id":"get_adcp_capabilities"},"get_products"]}`)},
			want: Fail, ptr: "/skills/1"},
		{name: "no get_task_status on a profile card while submitted work is returned", calls: []evidence.Call{a2aCard(noStatusSkill), submittedReply},
			want: Fail, ptr: "/skills", msg: "get_task_status"},
		{name: "the card answers 404", calls: []evidence.Call{httpGet("a2a/card", evidence.A2A, a2aCardURL, 404, `{"error":"not found"}`)}, want: Fail, msg: "HTTP 404"},
		{name: "the card is a JSON array", calls: []evidence.Call{a2aCard(`[]`)}, want: Fail, msg: "not a JSON object"},
		{name: "no card fetched", want: Skip, msg: "was not fetched"},
		{name: "card not run", calls: []evidence.Call{notRun("a2a/card", evidence.A2A, evidence.KindHTTPGet, "no --a2a")}, want: Skip, msg: "not run"},
		{name: "card fetch failed", calls: []evidence.Call{harnessFailed("a2a/card", evidence.A2A, evidence.KindHTTPGet, "connection refused")}, want: HarnessError},
	})
}

func TestA2A10Table(t *testing.T) {
	runJudgeTable(t, "A2A-10", catalogue.A2A, []judgeCase{
		{name: "declared under capabilities.extensions", calls: []evidence.Call{a2aCard(card10)}, want: Pass},
		{name: "0.3 card declaring it without required", calls: []evidence.Call{a2aCard(card03)}, want: Pass},
		{name: "empty params", calls: []evidence.Call{a2aCard(`{"capabilities":{"extensions":[{"uri":"https://example.com/other"},{"uri":"https://adcontextprotocol.org/extensions/adcp/v3","params":{}}]}}`)}, want: Pass},
		{name: "not declared", calls: []evidence.Call{a2aCard(card03Interface)}, want: Fail, ptr: "/capabilities/extensions", msg: "does not declare"},
		{name: "a top-level extensions array (vector agent-card-top-level-extension-invalid)",
			calls: []evidence.Call{a2aCard(`{"capabilities":{},"extensions":[{"uri":"https://adcontextprotocol.org/extensions/adcp/v3","required":true}]}`)},
			want:  Fail, ptr: "/capabilities/extensions"},
		{name: "capability params (vector agent-card-capability-params-invalid)",
			calls: []evidence.Call{a2aCard(`{"capabilities":{"extensions":[{"uri":"https://adcontextprotocol.org/extensions/adcp/v3","required":true,"params":{"adcp_version":"3.2","protocols_supported":["media_buy"]}}]}}`)},
			want:  Fail, ptr: "/capabilities/extensions/0/params"},
		{name: "URI is not uri", calls: []evidence.Call{a2aCard(`{"capabilities":{"extensions":[{"URI":"https://adcontextprotocol.org/extensions/adcp/v3"}]}}`)},
			want: Fail, ptr: "/capabilities/extensions"},
		{name: "no card fetched", want: Skip, msg: "was not fetched"},
		{name: "the card answers 404", calls: []evidence.Call{httpGet("a2a/card", evidence.A2A, a2aCardURL, 404, `{}`)}, want: Skip, msg: "could not be read"},
		{name: "the card is not a JSON object (A2A-09's)", calls: []evidence.Call{a2aCard(`["not","a","card"]`)}, want: Skip, msg: "could not be read"},
		{name: "card fetch failed", calls: []evidence.Call{harnessFailed("a2a/card", evidence.A2A, evidence.KindHTTPGet, "connection refused")}, want: HarnessError},
	})
}

func TestA2A11Table(t *testing.T) {
	stream := "a2a/get_products/stream"
	c10, c03 := a2aCard(card10), a2aCard(card03)
	truncated := a2aStream(stream, "get_products", working10)
	truncated.Exchanges[0].Truncated, truncated.Exchanges[0].Error = true, "response over 4 MiB"
	runJudgeTable(t, "A2A-11", catalogue.A2A, []judgeCase{
		{name: "1.0 envelopes ending with a final statusUpdate", calls: []evidence.Call{c10, a2aStream(stream, "get_products", working10, artifact10, completed10)}, want: Pass},
		{name: "1.0 stream ending with a final {task}", calls: []evidence.Call{c10, a2aStream(stream, "get_products", working10, task10("TASK_STATE_COMPLETED", products))}, want: Pass},
		{name: "0.3 kinds ending with final status-update", calls: []evidence.Call{c03, a2aStream(stream, "get_products", submitted03, working03, chunk03a, chunk03b, completed03)}, want: Pass},
		{name: "a stream interrupted in input-required (0.3 final: true)",
			calls: []evidence.Call{c03, a2aStream(stream, "get_products", submitted03, `{"kind":"status-update","taskId":"t1","final":true,"status":{"state":"input-required"}}`)}, want: Pass},
		{name: "a stream answered with a message", calls: []evidence.Call{c10, a2aStream(stream, "get_products", `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`)}, want: Pass},
		{name: "a stream ended by a JSON-RPC error", calls: []evidence.Call{c10, a2aStreamMessages(stream, "get_products",
			`{"jsonrpc":"2.0","id":1,"result":`+working10+`}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`)}, want: Pass},
		{name: "no final status (1.0)", calls: []evidence.Call{c10, a2aStream(stream, "get_products", working10, artifact10)},
			want: Fail, ptr: "/events/1", msg: "ends without a final task status"},
		{name: "no final status (0.3)", calls: []evidence.Call{c03, a2aStream(stream, "get_products", submitted03, working03)}, want: Fail, ptr: "/events/1"},
		{name: "a 1.0 event that is a bare status update", calls: []evidence.Call{c10, a2aStream(stream, "get_products",
			`{"taskId":"t1","status":{"state":"TASK_STATE_WORKING"}}`, completed10)}, want: Fail, ptr: "/events/0/result", msg: "single-key"},
		{name: "a 1.0 envelope with a second key", calls: []evidence.Call{c10, a2aStream(stream, "get_products", working10,
			`{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_COMPLETED"}},"kind":"status-update"}`)}, want: Fail, ptr: "/events/1/result"},
		{name: "a nested envelope", calls: []evidence.Call{c10, a2aStream(stream, "get_products", working10,
			`{"task":{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"}}}}`, completed10)}, want: Fail, ptr: "/events/1/result/task/task", msg: "nests"},
		{name: "an envelope key beside task fields", calls: []evidence.Call{c10, a2aStream(stream, "get_products",
			`{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_WORKING"},"artifactUpdate":{}}}`, completed10)}, want: Fail, ptr: "/events/0/result/statusUpdate/artifactUpdate"},
		{name: "a 0.3 event of an unknown kind", calls: []evidence.Call{c03, a2aStream(stream, "get_products", `{"kind":"progress","taskId":"t1"}`, completed03)},
			want: Fail, ptr: "/events/0/result/kind"},
		{name: "an event that is not JSON-RPC", calls: []evidence.Call{c10, a2aStreamMessages(stream, "get_products", `{"hello":1}`, `{"jsonrpc":"2.0","id":1,"result":`+completed10+`}`)},
			want: Fail, ptr: "/events/0"},
		{name: "a stream cut at the size limit", calls: []evidence.Call{c10, truncated}, want: Fail, msg: "size limit"},
		{name: "a stream with no event", calls: []evidence.Call{c10, a2aStreamMessages(stream, "get_products")}, want: Fail, msg: "no event"},
		{name: "no stream", calls: []evidence.Call{c10, a2aResult(read, "get_products", task10("TASK_STATE_COMPLETED", products))}, want: Skip, msg: "no streaming call"},
		{name: "stream not run", calls: []evidence.Call{c10, notRun(stream, evidence.A2A, evidence.KindToolCall, "no streaming", evidence.PurposeStream)}, want: Skip, msg: "not run"},
		{name: "stream harness failed", calls: []evidence.Call{c10, harnessFailed(stream, evidence.A2A, evidence.KindToolCall, "timeout", evidence.PurposeStream)}, want: HarnessError},
	})
}

func TestERR07Table(t *testing.T) {
	probe := "a2a/get_products/error_unknown_id"
	errProbe := func(result string) evidence.Call {
		return a2aResult(probe, "get_products", result, evidence.PurposeErrorUnknownID)
	}
	adcpErr := `{"adcp_error":{"code":"REFERENCE_NOT_FOUND","message":"Not found","recovery":"correctable"}}`
	runJudgeTable(t, "ERR-07", catalogue.A2A, []judgeCase{
		{name: "0.3 failed task, TextPart then the adcp_error DataPart (vector a2a-failed-task)", calls: []evidence.Call{errProbe(
			`{"id":"task_456","status":{"state":"failed","timestamp":"2025-01-22T10:30:00Z"},"artifacts":[{"artifactId":"error-result","parts":[{"kind":"text","text":"Rate limit exceeded."},{"kind":"data","data":{"adcp_error":{"code":"RATE_LIMITED","message":"Request rate exceeded","retry_after":5,"recovery":"transient"}}}]}]}`)},
			want: Pass},
		{name: "1.0 failed task in the task branch", calls: []evidence.Call{errProbe(task10("TASK_STATE_FAILED", adcpErr))}, want: Pass},
		{name: "1.0 rejected task (a2a-response-extraction.mdx: rejected carries adcp_error)", calls: []evidence.Call{errProbe(task10("TASK_STATE_REJECTED", adcpErr))}, want: Pass},
		{name: "the error DataPart with metadata.mimeType (transport-errors.mdx, Error MIME Type)", calls: []evidence.Call{errProbe(
			`{"kind":"task","id":"t","status":{"state":"failed"},"artifacts":[{"artifactId":"e","parts":[{"kind":"data","data":` + adcpErr + `,"metadata":{"mimeType":"application/vnd.adcp.error+json"}}]}]}`)}, want: Pass},
		{name: "a JSON-RPC error is not a task", calls: []evidence.Call{errProbe(task10("TASK_STATE_FAILED", adcpErr)),
			a2aRPCError("a2a/get_products/error_wrong_type", "get_products", `{"code":-32602,"message":"Invalid params"}`, evidence.PurposeErrorWrongType)}, want: Pass},
		{name: "a completed task carrying adcp_error", calls: []evidence.Call{errProbe(a2aTask("completed", adcpErr))},
			want: Fail, ptr: "/result/status/state", msg: "failed or rejected"},
		{name: "a canceled task carrying adcp_error", calls: []evidence.Call{errProbe(task10("TASK_STATE_CANCELED", adcpErr))},
			want: Fail, ptr: "/result/task/status/state"},
		{name: "adcp_error only in the status message (vector a2a-error-in-status-message)", calls: []evidence.Call{errProbe(
			`{"id":"task_303","status":{"state":"failed","message":{"role":"agent","parts":[{"kind":"text","text":"Service temporarily unavailable."},{"kind":"data","data":{"adcp_error":{"code":"SERVICE_UNAVAILABLE","message":"Seller service is temporarily unavailable","recovery":"transient","retry_after":15}}}]}}}`)},
			want: Fail, ptr: "/result/artifacts/0", msg: "belongs in artifacts[0]"},
		{name: "adcp_error in a second artifact", calls: []evidence.Call{errProbe(
			`{"task":{"id":"t","status":{"state":"TASK_STATE_FAILED"},"artifacts":[{"artifactId":"s","parts":[{"text":"failed"}]},{"artifactId":"e","parts":[{"data":` + adcpErr + `}]}]}}`)},
			want: Fail, ptr: "/result/task/artifacts/0", msg: "does not end with the adcp_error DataPart"},
		{name: "adcp_error followed by another DataPart", calls: []evidence.Call{errProbe(
			`{"task":{"id":"t","status":{"state":"TASK_STATE_FAILED"},"artifacts":[{"artifactId":"e","parts":[{"data":` + adcpErr + `},{"data":{"note":"x"}}]}]}}`)},
			want: Fail, ptr: "/result/task/artifacts/0/parts/1/data", msg: "is not {\"adcp_error\""},
		// error-handling.mdx's A2A example: the payload's errors[] in a sibling DataPart.
		{name: "adcp_error followed by the payload's errors[] DataPart passes", calls: []evidence.Call{errProbe(eoA2ATask("failed", adcpErr,
			`{"errors":[{"code":"REFERENCE_NOT_FOUND","message":"Not found","field":"media_buy_id"}]}`))}, want: Pass},
		{name: "a DataPart after the payload sibling fails", calls: []evidence.Call{errProbe(eoA2ATask("failed", adcpErr,
			`{"errors":[]}`, `{"note":1}`))}, want: Fail, ptr: "/result/artifacts/0/parts/3/data"},
		// transport-errors.mdx: a fatal task surfacing its errors only in the payload is a conformance gap.
		{name: "a failed task carrying errors[] without adcp_error fails", calls: []evidence.Call{errProbe(eoA2ATask("failed",
			`{"errors":[{"code":"REFERENCE_NOT_FOUND","message":"Not found","recovery":"correctable"}]}`))},
			want: Fail, ptr: "/result/artifacts/0/parts/1/data", msg: "carries no adcp_error"},
		{name: "a 1.0 rejected task carrying errors[] without adcp_error fails", calls: []evidence.Call{errProbe(task10("TASK_STATE_REJECTED",
			`{"errors":[{"code":"REFERENCE_NOT_FOUND","message":"Not found"}]}`))},
			want: Fail, ptr: "/result/task/artifacts/0/parts/1/data"},
		// a2a-guide: a free-text fatal message MAY fall back to status.message.parts[].
		{name: "a failed task with a free-text message only is not judged", calls: []evidence.Call{errProbe(
			`{"kind":"task","id":"t","status":{"state":"failed","message":{"role":"agent","messageId":"m","parts":[{"kind":"text","text":"Not found."}]}}}`)},
			want: Skip, msg: "no failed A2A task"},
		// A rejection body on a failed task is ERR-08's.
		{name: "a failed task carrying a business rejection body is ERR-08's", calls: []evidence.Call{errProbe(a2aTask("failed", `{"status":"rejected","reason":"no"}`))},
			want: Skip},
		{name: "a success answer carries no adcp_error", calls: []evidence.Call{errProbe(a2aTask("completed", products))}, want: Skip, msg: "no A2A task carrying adcp_error"},
		{name: "adcp_error on a read probe is not ERR-07's", calls: []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", adcpErr))}, want: Skip},
		{name: "only a JSON-RPC error", calls: []evidence.Call{a2aRPCError(probe, "get_products", `{"code":-32602,"message":"bad","data":`+adcpErr+`}`, evidence.PurposeErrorUnknownID)}, want: Skip},
		{name: "MCP error replies are not A2A's", calls: []evidence.Call{mcpBody("mcp/get_products/error_unknown_id", "get_products", adcpErr, true, evidence.PurposeErrorUnknownID)}, want: Skip},
		{name: "error probe not run", calls: []evidence.Call{notRun(probe, evidence.A2A, evidence.KindToolCall, "no readable id", evidence.PurposeErrorUnknownID)}, want: Skip},
		{name: "error probe harness failed", calls: []evidence.Call{harnessFailed(probe, evidence.A2A, evidence.KindToolCall, "timeout", evidence.PurposeErrorUnknownID)}, want: HarnessError},
	})
}

// TestA2AStreamIsReadAsTheTaskItBuilds: every judge reads a stream's body
// from the task its events build, not from its last event, so a stream
// that sends its artifact in an artifactUpdate and ends with a bare final
// statusUpdate has the artifact's DataPart as its body.
func TestA2AStreamIsReadAsTheTaskItBuilds(t *testing.T) {
	for _, c := range []struct {
		name, ptr string
		events    []string
		isError   bool
	}{
		{"1.0 artifactUpdate then final statusUpdate", "/events/1/result/artifactUpdate/artifact/parts/0/data", []string{working10, artifact10, completed10}, false},
		{"0.3 appended chunks then final status-update", "/events/3/result/artifact/parts/0/data", []string{submitted03, working03, chunk03a, chunk03b, completed03}, false},
		{"interim only: the first status message DataPart", "/events/0/result/statusUpdate/status/message/parts/1/data", []string{working10}, false},
		{"a failed final status after a streamed adcp_error", "/events/0/result/artifactUpdate/artifact/parts/0/data",
			[]string{`{"artifactUpdate":{"taskId":"t1","artifact":{"artifactId":"e","parts":[{"data":{"adcp_error":{"code":"X"}}}]}}}`,
				`{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_FAILED"}}}`}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			forgetReplies()
			r := parseReply(a2aStream("a2a/get_products/stream", "get_products", c.events...))
			if r.data == nil || r.dataPtr != c.ptr || r.isError != c.isError {
				t.Fatalf("data %v at %q, isError %v; want %q, %v", r.data != nil, r.dataPtr, r.isError, c.ptr, c.isError)
			}
		})
	}
}

// TestURLRulesReadEveryStreamEvent: the URL rules walk every event of an
// A2A stream, so a URL in a streamed artifact is judged although the
// stream's last event, a final status update, carries none.
func TestURLRulesReadEveryStreamEvent(t *testing.T) {
	art := `{"artifactUpdate":{"taskId":"t1","artifact":{"artifactId":"r","parts":[{"data":{"status":"completed","products":[],"preview_url":"https://[2001:db8::1/p"}}]}}}`
	s := evidence.NewStore(tableTarget)
	s.Add(a2aStream("a2a/get_products/stream", "get_products", working10, art, completed10))
	forgetReplies()
	v := judgeURL03(s.Only(evidence.A2A), Options{})
	if v.Outcome != Fail || len(v.Findings) == 0 || v.Findings[0].Pointer != "/events/1/result/artifactUpdate/artifact/parts/0/data/preview_url" {
		t.Fatalf("URL-03 %s %q %v", v.Outcome, v.Message, v.Findings)
	}
}
