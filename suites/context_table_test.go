package suites

import (
	"encoding/json"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// eoCtx is the random nested context a CTX probe sends
// (L2/context-sessions: an opaque object echoed unchanged).
const eoCtx = `{"correlation_id":"c-7f3a","trace":{"hops":[1,2],"ok":true}}`

// withContext records that the call sent ctx.
func withContext(c evidence.Call, ctx string) evidence.Call {
	c.Context = json.RawMessage(ctx)
	return c
}

// eoDataPtr is where eoSuccess puts the body.
func eoDataPtr(tr catalogue.Transport) string {
	if tr == catalogue.A2A {
		return "/result/artifacts/0/parts/0/data"
	}
	return "/result/structuredContent"
}

// eoErrRoot is where eoError puts the error body.
func eoErrRoot(tr catalogue.Transport) string {
	if tr == catalogue.A2A {
		return "/result/artifacts/0/parts/1/data"
	}
	return "/result/structuredContent"
}

func TestCTX01Table(t *testing.T) {
	const none = "no success reply to a call with context observed"
	eoTables(t, "CTX-01", func(tr catalogue.Transport) []judgeCase {
		probe := eoProbe(tr, "get_products/context")
		ok := func(body string) evidence.Call {
			return withContext(eoSuccess(tr, probe, body, evidence.PurposeContext), eoCtx)
		}
		p := eoDataPtr(tr) + "/context"
		cases := []judgeCase{
			{name: "the context echoed passes", calls: []evidence.Call{ok(`{"status":"completed","products":[],"context":` + eoCtx + `}`)}, want: Pass},
			// JSON-equivalence (L2/context-sessions): member order and spacing are free.
			{name: "the context reordered passes", calls: []evidence.Call{ok(`{"status":"completed","products":[],"context":{"trace":{"ok":true,"hops":[1,2]},"correlation_id":"c-7f3a"}}`)}, want: Pass},
			{name: "an absent context fails", calls: []evidence.Call{ok(eoProducts)}, want: Fail, ptr: p, msg: "absent"},
			{name: "an added key fails", calls: []evidence.Call{ok(`{"status":"completed","context":{"correlation_id":"c-7f3a","trace":{"hops":[1,2],"ok":true},"session":"s"}}`)}, want: Fail, ptr: p, msg: "differs"},
			{name: "a removed key fails", calls: []evidence.Call{ok(`{"status":"completed","context":{"correlation_id":"c-7f3a"}}`)}, want: Fail, ptr: p},
			{name: "a retyped value fails", calls: []evidence.Call{ok(`{"status":"completed","context":{"correlation_id":"c-7f3a","trace":{"hops":["1","2"],"ok":true}}}`)}, want: Fail, ptr: p},
			// The error side is CTX-02's, the hidden error included (a client reads an error).
			{name: "an error reply is not judged", calls: []evidence.Call{withContext(eoError(tr, probe, eoRateLimited, "", evidence.PurposeContext), eoCtx)}, want: Skip, msg: none},
			{name: "an error read past the body is not a success", calls: []evidence.Call{withContext(eoHidden(tr, probe, eoRateLimited, evidence.PurposeContext), eoCtx)}, want: Skip, msg: none},
			{name: "no calls skip", want: Skip, msg: none},
			{name: "a context probe not run skips with its reason", calls: []evidence.Call{
				notRun(probe, eoEvT(tr), evidence.KindToolCall, "get_products needs a brief", evidence.PurposeContext)},
				want: Skip, msg: "get_products needs a brief"},
			{name: "a harness failure on a context probe is an error", calls: []evidence.Call{
				harnessFailed(probe, eoEvT(tr), evidence.KindToolCall, "connection reset", evidence.PurposeContext)},
				want: HarnessError, msg: "connection reset"},
		}
		if tr == catalogue.MCP {
			// mcp-response-extraction.mdx: without structuredContent the JSON text is the body.
			text := func(body string) evidence.Call {
				return withContext(mcpResult(probe, "get_products", `{"content":[{"type":"text","text":`+quoteJSON(body)+`}]}`, evidence.PurposeContext), eoCtx)
			}
			cases = append(cases,
				judgeCase{name: "the text body echoing it passes", calls: []evidence.Call{text(`{"status":"completed","context":` + eoCtx + `}`)}, want: Pass},
				judgeCase{name: "the text body without it fails inside the text", calls: []evidence.Call{text(eoProducts)}, want: Fail, ptr: "/result/content/0/text#/context"})
		}
		return cases
	})
}

func TestCTX02Table(t *testing.T) {
	const none = "no error result to a call with context observed"
	eoTables(t, "CTX-02", func(tr catalogue.Transport) []judgeCase {
		probe := eoProbe(tr, "get_products/error_version")
		errCall := func(extra string) evidence.Call {
			return withContext(eoError(tr, probe, eoVersion, extra, pVersion), eoCtx)
		}
		p := eoErrRoot(tr) + "/context"
		cases := []judgeCase{
			{name: "the context echoed beside adcp_error passes", calls: []evidence.Call{errCall(`,"context":` + eoCtx)}, want: Pass},
			{name: "a context probe's error is judged", calls: []evidence.Call{
				withContext(eoError(tr, eoProbe(tr, "get_products/context"), eoRateLimited, `,"context":`+eoCtx, evidence.PurposeContext), eoCtx)}, want: Pass},
			{name: "an absent context fails", calls: []evidence.Call{errCall("")}, want: Fail, ptr: p, msg: "absent"},
			{name: "a changed context fails", calls: []evidence.Call{errCall(`,"context":{"correlation_id":"c-7f3a"}`)}, want: Fail, ptr: p, msg: "differs"},
			{name: "an error read past the body without the context fails", calls: []evidence.Call{withContext(eoHidden(tr, probe, eoVersion, pVersion), eoCtx)},
				want: Fail, ptr: eoHiddenRoot(tr) + "/context"},
			// context-sessions.mdx §Normative echo contract: MCP transport-level errors are exempt; no body to echo in.
			{name: "a JSON-RPC error is not judged", calls: []evidence.Call{
				withContext(eoRPCProbe(tr, probe, `{"code":-32602,"message":"Invalid params"}`, pVersion), eoCtx)},
				want: Skip, msg: none},
			// A rate limit met outside the burst never reached the
			// application: no evidence, the rule is an error.
			{name: "a rate-limit refusal is no evidence", calls: []evidence.Call{
				withContext(eoRPCProbe(tr, probe, `{"code":-32029,"message":"Rate limit exceeded","data":{"adcp_error":`+eoRateLimited+`}}`, pVersion), eoCtx)},
				want: HarnessError, msg: "-32029 (rate limit)"},
			{name: "a success is not judged", calls: []evidence.Call{withContext(eoSuccess(tr, probe, eoProducts, pVersion), eoCtx)}, want: Skip, msg: none},
			{name: "an error to a call without context is not judged", calls: []evidence.Call{eoError(tr, probe, eoVersion, "", pVersion)}, want: Skip, msg: none},
			{name: "no calls skip", want: Skip, msg: none},
			{name: "a harness failure on an error probe is an error", calls: []evidence.Call{
				withContext(harnessFailed(probe, eoEvT(tr), evidence.KindToolCall, "connection reset", pVersion), eoCtx)},
				want: HarnessError},
		}
		if tr == catalogue.MCP {
			// An isError result with prose only (a framework's input
			// validation): no adcp_error (ERR-02's) and no context echoed.
			prose := mcpResult(probe, "get_products", `{"content":[{"type":"text","text":"MCP error -32602: Input validation error: brief"}],"isError":true}`, pVersion)
			cases = append(cases,
				judgeCase{name: "a prose-only error result echoes no context", calls: []evidence.Call{withContext(prose, eoCtx)},
					want: Fail, ptr: "/result", msg: "does not echo"},
				// The case: a client reads the text fallback's error (transport-errors.mdx step
				// 5) when structuredContent carries none, and the context beside it.
				judgeCase{name: "the context in the text fallback beside an empty structuredContent passes", calls: []evidence.Call{
					withContext(mcpResult(probe, "get_products",
						`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoVersion+`,"context":`+eoCtx+`}`)+`}],"isError":true,"structuredContent":{}}`, pVersion), eoCtx)},
					want: Pass},
				// transport-errors.mdx's text path carries {"adcp_error":…} alone; the body is structuredContent.
				judgeCase{name: "a text holding the error alone beside the echoing structuredContent passes", calls: []evidence.Call{
					withContext(mcpResult(probe, "get_products",
						`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoVersion+`}`)+`}],"isError":true,"structuredContent":{"adcp_error":`+eoVersion+`,"context":`+eoCtx+`}}`, pVersion), eoCtx)},
					want: Pass},
				judgeCase{name: "a structuredContent error without the context fails even when the text has it", calls: []evidence.Call{
					withContext(mcpResult(probe, "get_products",
						`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoVersion+`,"context":`+eoCtx+`}`)+`}],"isError":true,"structuredContent":{"adcp_error":`+eoVersion+`}}`, pVersion), eoCtx)},
					want: Fail, ptr: "/result/structuredContent/context"},
				judgeCase{name: "a result not flagged isError is not judged", calls: []evidence.Call{
					withContext(mcpResult(probe, "get_products", `{"content":[{"type":"text","text":"x"}],"structuredContent":{"adcp_error":`+eoVersion+`}}`, pVersion), eoCtx)},
					want: Skip, msg: none})
		} else {
			cases = append(cases,
				// A2A 1.0 face: {"task": …}, TASK_STATE_FAILED.
				judgeCase{name: "an A2A 1.0 failed task echoing it passes", calls: []evidence.Call{
					withContext(a2aResult(probe, "get_products", `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_FAILED"},"artifacts":[{"artifactId":"a1","parts":[{"data":{"adcp_error":`+eoVersion+`,"context":`+eoCtx+`}}]}]}}`, pVersion), eoCtx)},
					want: Pass},
				// The body beside the error DataPart echoes it: what a client reads as the body has it.
				judgeCase{name: "the context in the body DataPart after the error part passes", calls: []evidence.Call{
					withContext(a2aResult(probe, "get_products", eoA2ATask("completed", `{"adcp_error":`+eoVersion+`}`, `{"status":"completed","context":`+eoCtx+`}`), pVersion), eoCtx)},
					want: Pass})
		}
		return cases
	})
}

// eoHiddenRoot is the body holding eoHidden's adcp_error.
func eoHiddenRoot(tr catalogue.Transport) string {
	if tr == catalogue.A2A {
		return "/result/artifacts/0/parts/1/data"
	}
	return "/result/content/0/text#"
}

// eoRPCProbe is a JSON-RPC error answering probe.
func eoRPCProbe(tr catalogue.Transport, probe, rpcErr string, ps ...evidence.Purpose) evidence.Call {
	c := mcpRPCError(probe, "get_products", rpcErr, ps...)
	c.Transport = eoEvT(tr)
	return c
}

func TestCTX03Table(t *testing.T) {
	const none = "no tool result to a call without context observed"
	eoTables(t, "CTX-03", func(tr catalogue.Transport) []judgeCase {
		probe := eoProbe(tr, "get_products/no_context")
		succ := func(body string) evidence.Call { return eoSuccess(tr, probe, body, evidence.PurposeNoContext) }
		cases := []judgeCase{
			{name: "a body without context passes", calls: []evidence.Call{succ(eoProducts)}, want: Pass},
			// context_id is the A2A/MCP session id, an envelope field, not the caller's context.
			{name: "context_id is not a context", calls: []evidence.Call{succ(`{"status":"completed","context_id":"ctx_1"}`)}, want: Pass},
			{name: "an error without context passes", calls: []evidence.Call{eoError(tr, eoProbe(tr, "get_products/error_version"), eoVersion, "", pVersion)}, want: Pass},
			{name: "a synthesized context fails", calls: []evidence.Call{succ(`{"status":"completed","context":{"session":"srv-1"}}`)},
				want: Fail, ptr: eoDataPtr(tr) + "/context"},
			// context-sessions.mdx, No synthesis: "or emit it as null / absent per the
			// transport's normal serialization".
			{name: "a null context passes", calls: []evidence.Call{succ(`{"status":"completed","context":null,"products":[]}`)}, want: Pass},
			{name: "a null context on an error passes", calls: []evidence.Call{eoError(tr, eoProbe(tr, "get_products/error_version"), eoVersion, `,"context":null`, pVersion)}, want: Pass},
			{name: "an empty object is synthesized", calls: []evidence.Call{succ(`{"status":"completed","context":{}}`)}, want: Fail, ptr: eoDataPtr(tr) + "/context"},
			{name: "a synthesized string fails", calls: []evidence.Call{succ(`{"status":"completed","context":"srv-1"}`)}, want: Fail, ptr: eoDataPtr(tr) + "/context", msg: "a string"},
			{name: "a synthesized list fails", calls: []evidence.Call{succ(`{"status":"completed","context":[]}`)}, want: Fail, ptr: eoDataPtr(tr) + "/context"},
			{name: "false is synthesized", calls: []evidence.Call{succ(`{"status":"completed","context":false}`)}, want: Fail, ptr: eoDataPtr(tr) + "/context"},
			{name: "null repeated beside a synthesized context fails", calls: []evidence.Call{succ(`{"status":"completed","context":{"s":1},"context":null}`)},
				want: Fail, ptr: eoDataPtr(tr) + "/context"},
			{name: "a synthesized context on an error fails", calls: []evidence.Call{eoError(tr, eoProbe(tr, "get_products/error_version"), eoVersion, `,"context":{}`, pVersion)},
				want: Fail, ptr: eoErrRoot(tr) + "/context"},
			{name: "calls that sent a context are not judged", calls: []evidence.Call{
				withContext(eoSuccess(tr, eoProbe(tr, "get_products/context"), `{"status":"completed","context":`+eoCtx+`}`, evidence.PurposeContext), eoCtx)},
				want: Skip, msg: none},
			{name: "no calls skip", want: Skip, msg: none},
			{name: "a no-context probe not run skips with its reason", calls: []evidence.Call{
				notRun(probe, eoEvT(tr), evidence.KindToolCall, "get_products needs a brief", evidence.PurposeNoContext)},
				want: Skip, msg: "get_products needs a brief"},
			{name: "a harness failure on the no-context probe is an error", calls: []evidence.Call{
				harnessFailed(probe, eoEvT(tr), evidence.KindToolCall, "connection reset", evidence.PurposeNoContext)},
				want: HarnessError},
		}
		if tr == catalogue.A2A {
			cases = append(cases, judgeCase{name: "a context in the error DataPart before the body fails", calls: []evidence.Call{
				a2aResult(probe, "get_products", eoA2ATask("completed", `{"adcp_error":`+eoRateLimited+`,"context":{"s":1}}`, eoProducts), evidence.PurposeNoContext)},
				want: Fail, ptr: "/result/artifacts/0/parts/1/data/context"})
		} else {
			cases = append(cases, judgeCase{name: "a context in a second text item fails", calls: []evidence.Call{
				mcpResult(probe, "get_products", `{"content":[{"type":"text","text":`+quoteJSON(eoProducts)+`},{"type":"text","text":`+quoteJSON(`{"context":{"s":1}}`)+`}],"structuredContent":`+eoProducts+`}`, evidence.PurposeNoContext)},
				want: Fail, ptr: "/result/content/1/text#/context"})
		}
		return cases
	})
}
