package suites

import (
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The shapes of the ERR, EOBJ, RETRY and CTX tables. The error object and
// its two MCP paths are transport-errors.mdx's (MCP Binding, "Servers SHOULD support
// both paths"; the terse second item "Rate limited — retry in 5s."); the A2A
// failed task is transport-errors.mdx's A2A Binding example (a TextPart, then the
// DataPart {"adcp_error":…} in artifacts[0]).

// eoRateLimited is transport-errors.mdx's example error object.
const eoRateLimited = `{"code":"RATE_LIMITED","message":"Request rate exceeded","retry_after":5,"recovery":"transient"}`

// eoVersion is the VERSION_UNSUPPORTED error the version probes ask for
// (reference/versioning.mdx: details.supported_versions).
const eoVersion = `{"code":"VERSION_UNSUPPORTED","message":"adcp_version 99.0 is not supported","recovery":"correctable","details":{"supported_versions":["3.0","3.1"]}}`

// eoProse is transport-errors.mdx's terse second content item.
const eoProse = `Rate limited — retry in 5s.`

// eoMCPError is an MCP isError result carrying adcpErr on both paths, with
// the terse prose as a second item; extra holds more members of the body
// (",\"context\":{…}"), in structuredContent and in the text alike.
func eoMCPError(probeID, adcpErr, extra string, ps ...evidence.Purpose) evidence.Call {
	body := `{"adcp_error":` + adcpErr + extra + `}`
	result := `{"content":[{"type":"text","text":` + quoteJSON(body) + `},{"type":"text","text":` + quoteJSON(eoProse) + `}],"isError":true,"structuredContent":` + body + `}`
	return mcpResult(probeID, "get_products", result, ps...)
}

// eoA2ATask is an A2A 0.3 task in state whose artifacts[0] holds seed
// 002's TextPart and then one DataPart per data.
func eoA2ATask(state string, data ...string) string {
	parts := []string{`{"kind":"text","text":"Rate limit exceeded. Retry in 5 seconds."}`}
	for _, d := range data {
		parts = append(parts, `{"kind":"data","data":`+d+`}`)
	}
	return `{"kind":"task","id":"task_456","contextId":"c1","status":{"state":"` + state + `","timestamp":"2025-01-22T10:30:00Z"},"artifacts":[{"artifactId":"error-result","parts":[` + strings.Join(parts, ",") + `]}]}`
}

// eoA2AError is transport-errors.mdx's failed task carrying adcpErr (extra as in
// eoMCPError).
func eoA2AError(probeID, adcpErr, extra string, ps ...evidence.Purpose) evidence.Call {
	return a2aResult(probeID, "get_products", eoA2ATask("failed", `{"adcp_error":`+adcpErr+extra+`}`), ps...)
}

// eoError is the error reply of transport t carrying adcpErr.
func eoError(t catalogue.Transport, probeID, adcpErr, extra string, ps ...evidence.Purpose) evidence.Call {
	if t == catalogue.A2A {
		return eoA2AError(probeID, adcpErr, extra, ps...)
	}
	return eoMCPError(probeID, adcpErr, extra, ps...)
}

// eoErrPtr is where eoError puts the adcp_error a client extracts.
func eoErrPtr(t catalogue.Transport) string {
	if t == catalogue.A2A {
		return "/result/artifacts/0/parts/1/data/adcp_error"
	}
	return "/result/structuredContent/adcp_error"
}

// eoSuccess is a success reply of transport t with body.
func eoSuccess(t catalogue.Transport, probeID, body string, ps ...evidence.Purpose) evidence.Call {
	if t == catalogue.A2A {
		return a2aResult(probeID, "get_products", a2aTask("completed", body), ps...)
	}
	return mcpBody(probeID, "get_products", body, false, ps...)
}

// eoProbe is a probe ID of transport t.
func eoProbe(t catalogue.Transport, rest string) string { return string(t) + "/" + rest }

// eoEvT is the evidence transport of t.
func eoEvT(t catalogue.Transport) evidence.Transport { return evidence.Transport(t) }

const (
	pVersion   = evidence.PurposeErrorVersion
	pMajor     = evidence.PurposeErrorMajorVersion
	pTask      = evidence.PurposeErrorUnknownTask
	pWrongType = evidence.PurposeErrorWrongType
	pUnknownID = evidence.PurposeErrorUnknownID
)

const eoProducts = `{"status":"completed","products":[]}`

func TestERR01Table(t *testing.T) {
	ok := eoMCPError("mcp/get_products/error_version", eoVersion, "", pVersion)
	runJudgeTable(t, "ERR-01", catalogue.MCP, []judgeCase{
		{name: "a VERSION_UNSUPPORTED isError result on both paths passes", calls: []evidence.Call{ok}, want: Pass},
		// transport-errors.mdx: servers on older MCP versions omit structuredContent; the text is enough.
		{name: "a text-only isError result passes", calls: []evidence.Call{
			mcpResult("mcp/get_task_status/error_unknown_task", "get_task_status",
				`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":{"code":"REFERENCE_NOT_FOUND","message":"No such task","recovery":"correctable"}}`)+`}],"isError":true}`, pTask)},
			want: Pass},
		// RULES ERR-01: an unknown id a list tool answers with an empty list is recorded, not judged.
		{name: "a lenient probe answered with a success is not judged", calls: []evidence.Call{
			mcpBody("mcp/get_media_buys/error_unknown_id", "get_media_buys", `{"status":"completed","media_buys":[]}`, false, pUnknownID)},
			want: Skip, msg: noErrorReply},
		{name: "a lenient success beside an error result passes", calls: []evidence.Call{
			mcpBody("mcp/get_products/error_wrong_type", "get_products", eoProducts, false, pWrongType), ok},
			want: Pass},
		// MCP 2025-06-18 lists invalid arguments among protocol errors (-32602).
		{name: "-32602 to the wrong-typed argument passes", calls: []evidence.Call{
			mcpRPCError("mcp/get_products/error_wrong_type", "get_products", `{"code":-32602,"message":"Invalid params"}`, pWrongType)},
			want: Pass},
		// transport-errors.mdx Transport-Level Errors: a rejection before dispatch, ERR-06's.
		// A rate limit met outside the burst never reached the application:
		// no evidence for the probe, the rule is an error (ERR-06 judges the
		// refusal itself).
		{name: "an infrastructure JSON-RPC rejection is no evidence", calls: []evidence.Call{
			mcpRPCError("mcp/get_products/error_version", "get_products", `{"code":-32029,"message":"Rate limit exceeded","data":{"adcp_error":`+eoRateLimited+`}}`, pVersion)},
			want: HarnessError, msg: "-32029 (rate limit)"},
		{name: "the version probe answered with a success fails", calls: []evidence.Call{
			mcpBody("mcp/get_products/error_version", "get_products", eoProducts, false, pVersion)},
			want: Fail, ptr: "/result/isError", msg: "VERSION_UNSUPPORTED"},
		{name: "the major-version probe answered with a success fails", calls: []evidence.Call{
			mcpBody("mcp/get_products/error_major_version", "get_products", eoProducts, false, pMajor)},
			want: Fail, ptr: "/result/isError"},
		{name: "the unknown-task probe answered with isError false fails", calls: []evidence.Call{
			mcpResult("mcp/get_task_status/error_unknown_task", "get_task_status",
				`{"content":[{"type":"text","text":"{\"status\":\"completed\"}"}],"structuredContent":{"status":"completed"},"isError":false}`, pTask)},
			want: Fail, ptr: "/result/isError", msg: "REFERENCE_NOT_FOUND"},
		{name: "a mandatory probe answered with a body and a stray adcp_error fails", calls: []evidence.Call{
			mcpBody("mcp/get_products/error_version", "get_products", `{"status":"completed","products":[],"adcp_error":`+eoVersion+`}`, false, pVersion)},
			want: Fail, ptr: "/result/structuredContent/adcp_error"},
		// vector mcp-structured-content-no-iserror: an error-only payload without its flag.
		{name: "an error-only structuredContent without isError fails on any call", calls: []evidence.Call{
			mcpResult("mcp/get_products/valid", "get_products",
				`{"content":[{"type":"text","text":"Some result."}],"structuredContent":{"adcp_error":`+eoRateLimited+`}}`)},
			want: Fail, ptr: "/result/structuredContent/adcp_error"},
		// vector mcp-success-with-adcp-error-json.
		{name: "an error-only text without isError fails", calls: []evidence.Call{
			mcpResult("mcp/get_products/valid", "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoRateLimited+`}`)+`}]}`)},
			want: Fail, ptr: "/result/content/0/text#/adcp_error"},
		{name: "a failed body without isError fails on any call", calls: []evidence.Call{
			mcpBody("mcp/get_products/valid", "get_products", `{"status":"failed","adcp_error":`+eoRateLimited+`,"context":{"k":1}}`, false)},
			want: Fail, ptr: "/result/structuredContent/adcp_error"},
		// A success body carrying a stray adcp_error is ERR-05's (one defect, one rule).
		{name: "a success body with a stray adcp_error on a valid call is not judged", calls: []evidence.Call{
			mcpBody("mcp/get_products/valid", "get_products", `{"status":"completed","products":[],"adcp_error":`+eoRateLimited+`}`, false)},
			want: Skip, msg: noErrorReply},
		{name: "an application code as a JSON-RPC error fails", calls: []evidence.Call{
			mcpRPCError("mcp/get_products/valid", "get_products", `{"code":-32000,"message":"bad","data":{"adcp_error":{"code":"INVALID_REQUEST","message":"bad","recovery":"correctable"}}}`)},
			want: Fail, ptr: "/error", msg: `"INVALID_REQUEST"`},
		{name: "a bare JSON-RPC error to an error probe fails", calls: []evidence.Call{
			mcpRPCError("mcp/get_products/error_version", "get_products", `{"code":-32000,"message":"unsupported"}`, pVersion)},
			want: Fail, ptr: "/error/code"},
		{name: "-32602 to the version probe fails", calls: []evidence.Call{
			mcpRPCError("mcp/get_products/error_version", "get_products", `{"code":-32602,"message":"Invalid params"}`, pVersion)},
			want: Fail, ptr: "/error/code"},
		{name: "a bare JSON-RPC error to a valid call is not judged", calls: []evidence.Call{
			mcpRPCError("mcp/get_products/valid", "get_products", `{"code":-32603,"message":"internal"}`)},
			want: Skip},
		{name: "isError as a string fails", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoVersion+`}`)+`}],"isError":"true"}`, pVersion)},
			want: Fail, ptr: "/result/isError"},
		{name: "no calls skip", want: Skip, msg: noErrorReply},
		{name: "a probe not run skips with its reason", calls: []evidence.Call{
			notRun("mcp/get_task_status/error_unknown_task", evidence.MCP, evidence.KindToolCall, "get_task_status is not listed", pTask)},
			want: Skip, msg: "get_task_status is not listed"},
		{name: "a harness failure on a probe is an error", calls: []evidence.Call{
			harnessFailed("mcp/get_products/error_version", evidence.MCP, evidence.KindToolCall, "connection reset", pVersion)},
			want: HarnessError, msg: "connection reset"},
		{name: "a failure outweighs a harness error", calls: []evidence.Call{
			harnessFailed("mcp/get_products/error_wrong_type", evidence.MCP, evidence.KindToolCall, "timeout", pWrongType),
			mcpBody("mcp/get_products/error_version", "get_products", eoProducts, false, pVersion)},
			want: Fail, ptr: "/result/isError"},
	})
}

func TestERR02Table(t *testing.T) {
	runJudgeTable(t, "ERR-02", catalogue.MCP, []judgeCase{
		{name: "both paths pass", calls: []evidence.Call{eoMCPError("mcp/get_products/error_version", eoVersion, "", pVersion)}, want: Pass},
		// vector mcp-text-fallback.
		{name: "the text fallback alone passes", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoRateLimited+`}`)+`}],"isError":true}`, pVersion)},
			want: Pass},
		// transport-errors.mdx's detection reads every text item in order.
		{name: "the JSON text after a prose item passes", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":"Rate limited."},{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoRateLimited+`}`)+`}],"isError":true}`, pVersion)},
			want: Pass},
		// validate() counts JSON.stringify(error).length: 3000 × "é" are 6000 bytes, 3000 units.
		{name: "a non-ASCII error within 4096 UTF-16 units passes", calls: []evidence.Call{
			eoMCPError("mcp/get_products/error_version", `{"code":"INVALID_REQUEST","message":"`+strings.Repeat("é", 3000)+`","recovery":"correctable"}`, "", pVersion)},
			want: Pass},
		{name: "prose only fails", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products", `{"content":[{"type":"text","text":"Rate limited."}],"isError":true}`, pVersion)},
			want: Fail, ptr: "/result"},
		// vector mcp-missing-code-field.
		{name: "an error without code fails at the code", calls: []evidence.Call{
			eoMCPError("mcp/get_products/error_version", `{"message":"x","recovery":"terminal"}`, "", pVersion)},
			want: Fail, ptr: "/result/structuredContent/adcp_error/code"},
		// vector mcp-invalid-code-type, on the text path: the pointer steps into the text.
		{name: "a numeric code in the text fallback fails inside the text", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":{"code":429,"message":"x"}}`)+`}],"isError":true}`, pVersion)},
			want: Fail, ptr: "/result/content/0/text#/adcp_error/code"},
		{name: "an error over 4096 units fails", calls: []evidence.Call{
			eoMCPError("mcp/get_products/error_version", `{"code":"INVALID_REQUEST","message":"`+strings.Repeat("a", 4100)+`"}`, "", pVersion)},
			want: Fail, ptr: "/result/structuredContent/adcp_error", msg: "UTF-16 code units"},
		{name: "success results only skip", calls: []evidence.Call{mcpBody("mcp/get_products/valid", "get_products", eoProducts, false)},
			want: Skip, msg: "no isError result observed"},
		{name: "no calls skip", want: Skip},
		{name: "a harness failure on a probe is an error", calls: []evidence.Call{
			harnessFailed("mcp/get_products/error_version", evidence.MCP, evidence.KindToolCall, "EOF", pVersion)},
			want: HarnessError},
	})
}

func TestERR03Table(t *testing.T) {
	runJudgeTable(t, "ERR-03", catalogue.MCP, []judgeCase{
		{name: "both paths, equal, pass", calls: []evidence.Call{eoMCPError("mcp/get_products/error_version", eoVersion, "", pVersion)}, want: Pass},
		// Policy: other keys beside adcp_error in the text JSON are allowed.
		{name: "the whole body as the text passes", calls: []evidence.Call{
			eoMCPError("mcp/get_products/error_version", eoVersion, `,"status":"failed","context":{"k":1}`, pVersion)},
			want: Pass},
		{name: "text only fails at structuredContent", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoRateLimited+`}`)+`}],"isError":true}`, pVersion)},
			want: Fail, ptr: "/result/structuredContent/adcp_error"},
		{name: "a non-object structuredContent.adcp_error fails", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoRateLimited+`}`)+`}],"isError":true,"structuredContent":{"adcp_error":"RATE_LIMITED"}}`, pVersion)},
			want: Fail, ptr: "/result/structuredContent/adcp_error", msg: "not an error object"},
		// vector unknown-recovery-value's shape: structuredContent and a prose text.
		{name: "structuredContent with prose only fails at the first text", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":"Rate limited."}],"isError":true,"structuredContent":{"adcp_error":`+eoRateLimited+`}}`, pVersion)},
			want: Fail, ptr: "/result/content/0/text"},
		{name: "paths that differ fail inside the text", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":{"code":"RATE_LIMITED","message":"other","recovery":"transient"}}`)+`}],"isError":true,"structuredContent":{"adcp_error":`+eoRateLimited+`}}`, pVersion)},
			want: Fail, ptr: "/result/content/0/text#/adcp_error"},
		{name: "no isError result skips", calls: []evidence.Call{mcpBody("mcp/get_products/valid", "get_products", eoProducts, false)},
			want: Skip, msg: "no isError result observed"},
		{name: "a harness failure on a probe is an error", calls: []evidence.Call{
			harnessFailed("mcp/get_products/error_version", evidence.MCP, evidence.KindToolCall, "EOF", pVersion)},
			want: HarnessError},
	})
}

func TestERR04Table(t *testing.T) {
	errText := quoteJSON(`{"adcp_error":` + eoRateLimited + `}`)
	sc := `"isError":true,"structuredContent":{"adcp_error":` + eoRateLimited + `}}`
	runJudgeTable(t, "ERR-04", catalogue.MCP, []judgeCase{
		{name: "transport-errors.mdx's terse second item passes", calls: []evidence.Call{eoMCPError("mcp/get_products/error_version", eoRateLimited, "", pVersion)}, want: Pass},
		// transport-errors.mdx: a server without structuredContent may answer with prose alone.
		{name: "one terse prose item alone passes", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products", `{"content":[{"type":"text","text":"Rate limited."}],`+sc, pVersion)},
			want: Pass},
		{name: "prose before the JSON text fails", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products", `{"content":[{"type":"text","text":"Rate limited."},{"type":"text","text":`+errText+`}],`+sc, pVersion)},
			want: Fail, ptr: "/result/content/0/text"},
		{name: "a second prose item fails", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products", `{"content":[{"type":"text","text":`+errText+`},{"type":"text","text":"Rate limited."},{"type":"text","text":"Again."}],`+sc, pVersion)},
			want: Fail, ptr: "/result/content/2/text"},
		{name: "a multi-line paragraph fails", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products", `{"content":[{"type":"text","text":`+errText+`},{"type":"text","text":"Rate limited.\nRetry later."}],`+sc, pVersion)},
			want: Fail, ptr: "/result/content/1/text", msg: "several lines"},
		{name: "prose over 256 bytes fails", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products", `{"content":[{"type":"text","text":`+errText+`},{"type":"text","text":"`+strings.Repeat("a", 257)+`"}],`+sc, pVersion)},
			want: Fail, ptr: "/result/content/1/text", msg: "257 bytes"},
		// transport-errors.mdx, Terse text: "a single terse sentence".
		{name: "two sentences fail", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products", `{"content":[{"type":"text","text":`+errText+`},{"type":"text","text":"Rate limit exceeded. Retry in 5 seconds."}],`+sc, pVersion)},
			want: Fail, ptr: "/result/content/1/text", msg: "more than one sentence"},
		{name: "a sentence with an abbreviation and a decimal passes", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products", `{"content":[{"type":"text","text":`+errText+`},{"type":"text","text":"Budget below the floor, e.g. 2.5 USD CPM (approx. 3 EUR)."}],`+sc, pVersion)},
			want: Pass},
		{name: "an error without prose skips", calls: []evidence.Call{
			mcpResult("mcp/get_products/error_version", "get_products", `{"content":[{"type":"text","text":`+errText+`}],`+sc, pVersion)},
			want: Skip, msg: "no error result carried human prose"},
		{name: "a harness failure on a probe is an error", calls: []evidence.Call{
			harnessFailed("mcp/get_products/error_version", evidence.MCP, evidence.KindToolCall, "EOF", pVersion)},
			want: HarnessError},
	})
}

func TestSentenceBreak(t *testing.T) {
	for in, want := range map[string]int{
		"Rate limited — retry in 5s.":              -1,
		"Rate limited.":                            -1,
		"No media buy \"mb_1\".":                   -1,
		"Retry after 2.5 s.":                       -1,
		"Not supported, e.g. Version 2 calls.":     -1,
		"Contact U.S. Sales for access.":           -1,
		"Wait. really?":                            -1,
		"Is it? Yes.":                              7,
		"Rate limit exceeded. Retry in 5 seconds.": 21,
		"Budget too low! Minimum is 500 USD.":      16,
		"Done (see docs). Then retry.":             17,
		"Unsupported version… 3.1 is served.":      23,
		"速率受限。请在5秒后重试。":                            15,
		"速率受限。":                                    -1,
		"  Trailing space is trimmed.  ":           -1,
	} {
		if got := sentenceBreak(in); got != want {
			t.Errorf("sentenceBreak(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestERR05Table(t *testing.T) {
	runJudgeTable(t, "ERR-05", catalogue.MCP, []judgeCase{
		{name: "a success without adcp_error passes", calls: []evidence.Call{mcpBody("mcp/get_products/valid", "get_products", eoProducts, false)}, want: Pass},
		// Policy: a null adcp_error is not an error signal (transport-errors.mdx tests truthiness).
		{name: "a null adcp_error on a success passes", calls: []evidence.Call{
			mcpBody("mcp/get_products/valid", "get_products", `{"status":"completed","products":[],"adcp_error":null}`, false)},
			want: Pass},
		{name: "an error result is not judged", calls: []evidence.Call{eoMCPError("mcp/get_products/error_version", eoVersion, "", pVersion)},
			want: Skip, msg: noSuccess},
		// An empty result has nowhere to carry adcp_error: no evidence.
		{name: "an empty success result is not judged", calls: []evidence.Call{mcpResult("mcp/get_products/valid", "get_products", `{"content":[]}`)},
			want: Skip, msg: noSuccess},
		// vector mcp-structured-content-no-iserror.
		{name: "an error-only structuredContent without isError fails", calls: []evidence.Call{
			mcpResult("mcp/get_products/valid", "get_products", `{"content":[{"type":"text","text":"Some result."}],"structuredContent":{"adcp_error":`+eoRateLimited+`}}`)},
			want: Fail, ptr: "/result/structuredContent/adcp_error"},
		{name: "a success body with a stray adcp_error fails", calls: []evidence.Call{
			mcpBody("mcp/get_products/valid", "get_products", `{"status":"completed","products":[],"adcp_error":`+eoRateLimited+`}`, false)},
			want: Fail, ptr: "/result/structuredContent/adcp_error"},
		// vector mcp-success-with-adcp-error-json: isError false, the error in the text.
		{name: "an adcp_error in the text of a result with isError false fails", calls: []evidence.Call{
			mcpResult("mcp/get_products/valid", "get_products", `{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoRateLimited+`}`)+`}],"isError":false}`)},
			want: Fail, ptr: "/result/content/0/text#/adcp_error"},
		{name: "no calls skip", want: Skip, msg: noSuccess},
		// Judged on every response: any call's harness failure counts.
		{name: "a harness failure is an error", calls: []evidence.Call{
			harnessFailed("mcp/get_products/valid", evidence.MCP, evidence.KindToolCall, "connection reset")},
			want: HarnessError, msg: "connection reset"},
	})
	runJudgeTable(t, "ERR-05", catalogue.A2A, []judgeCase{
		{name: "a completed task with its body passes", calls: []evidence.Call{eoSuccess(catalogue.A2A, "a2a/get_products/valid", eoProducts)}, want: Pass},
		// transport-errors.mdx A2A Binding: the failed task carries the error; not a success.
		{name: "a failed task is not judged", calls: []evidence.Call{eoA2AError("a2a/get_products/error_version", eoVersion, "", pVersion)},
			want: Skip, msg: noSuccess},
		{name: "a completed task whose DataPart is the error fails", calls: []evidence.Call{
			a2aResult("a2a/get_products/error_version", "get_products", eoA2ATask("completed", `{"adcp_error":`+eoVersion+`}`), pVersion)},
			want: Fail, ptr: "/result/artifacts/0/parts/1/data/adcp_error"},
		// The client detection (transport-errors.mdx step 2, extract.A2AError) reads every
		// DataPart of every artifact, whatever the state: a completed task whose
		// error part precedes the body is read as an error.
		{name: "a completed task with an error DataPart before the body fails", calls: []evidence.Call{
			a2aResult("a2a/get_products/valid", "get_products", eoA2ATask("completed", `{"adcp_error":`+eoRateLimited+`}`, eoProducts))},
			want: Fail, ptr: "/result/artifacts/0/parts/1/data/adcp_error", msg: `"completed"`},
		// transport-errors.mdx step 3: status.message.parts[].data.adcp_error.
		{name: "an adcp_error in a working task's status message fails", calls: []evidence.Call{
			a2aResult("a2a/get_products/valid", "get_products", `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working","message":{"role":"agent","messageId":"m1","parts":[{"kind":"data","data":{"adcp_error":`+eoRateLimited+`}}]}}}`)},
			want: Fail, ptr: "/result/status/message/parts/0/data/adcp_error"},
		// A2A 1.0: {"task": …}, TASK_STATE_ spelling.
		{name: "an A2A 1.0 completed task with an error part fails inside the envelope", calls: []evidence.Call{
			a2aResult("a2a/get_products/valid", "get_products", `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a1","parts":[{"data":{"adcp_error":`+eoRateLimited+`}},{"data":`+eoProducts+`}]}]}}`)},
			want: Fail, ptr: "/result/task/artifacts/0/parts/0/data/adcp_error"},
		{name: "no calls skip", want: Skip, msg: noSuccess},
		{name: "a harness failure is an error", calls: []evidence.Call{
			harnessFailed("a2a/get_products/valid", evidence.A2A, evidence.KindToolCall, "connection reset")},
			want: HarnessError, msg: "connection reset"},
	})
}

func TestERR06Table(t *testing.T) {
	rpc := func(code, adcp string) evidence.Call {
		return mcpRPCError("mcp/get_products/valid", "get_products", `{"code":`+code+`,"message":"rejected","data":{"adcp_error":`+adcp+`}}`)
	}
	runJudgeTable(t, "ERR-06", catalogue.MCP, []judgeCase{
		// vector mcp-jsonrpc-rate-limit.
		{name: "-32029 with RATE_LIMITED passes", calls: []evidence.Call{rpc("-32029", eoRateLimited)}, want: Pass},
		// vector mcp-jsonrpc-auth-required-deprecated.
		{name: "-32028 with the deprecated AUTH_REQUIRED passes", calls: []evidence.Call{rpc("-32028", `{"code":"AUTH_REQUIRED","message":"auth","recovery":"correctable"}`)}, want: Pass},
		// transport-errors.mdx Security Considerations: the reserved codes MAY be collapsed into one.
		{name: "a collapsed reserved code carrying SERVICE_UNAVAILABLE passes", calls: []evidence.Call{rpc("-32029", `{"code":"SERVICE_UNAVAILABLE","message":"down","recovery":"transient"}`)}, want: Pass},
		{name: "a non-reserved code carrying adcp_error fails", calls: []evidence.Call{rpc("-32001", `{"code":"AUTH_MISSING","message":"auth","recovery":"correctable"}`)},
			want: Fail, ptr: "/error/code"},
		{name: "a reserved code carrying an application error fails", calls: []evidence.Call{rpc("-32029", `{"code":"INVALID_REQUEST","message":"bad","recovery":"correctable"}`)},
			want: Fail, ptr: "/error/data/adcp_error/code"},
		// vector mcp-jsonrpc-error-no-adcp-data: nothing carried, nothing to judge.
		{name: "a JSON-RPC error without data skips", calls: []evidence.Call{
			mcpRPCError("mcp/get_products/valid", "get_products", `{"code":-32603,"message":"Internal error"}`)},
			want: Skip, msg: "no JSON-RPC error carrying data.adcp_error observed"},
		{name: "a harness failure on a probe is an error", calls: []evidence.Call{
			harnessFailed("mcp/get_products/error_version", evidence.MCP, evidence.KindToolCall, "EOF", pVersion)},
			want: HarnessError},
	})
}

func TestERR08Table(t *testing.T) {
	// L3/error-handling (Discriminated rejection arms): GetProductsRejected.
	rejected := `{"status":"rejected","reason":"Brief violates policy"}`
	runJudgeTable(t, "ERR-08", catalogue.MCP, []judgeCase{
		{name: "a rejected body as a success passes", calls: []evidence.Call{mcpBody("mcp/get_products/valid", "get_products", rejected, false)}, want: Pass},
		{name: "a rejected body flagged isError fails", calls: []evidence.Call{mcpBody("mcp/get_products/valid", "get_products", rejected, true)},
			want: Fail, ptr: "/result/isError"},
		{name: "a rejected body carrying adcp_error fails", calls: []evidence.Call{
			mcpBody("mcp/get_products/valid", "get_products", `{"status":"rejected","adcp_error":`+eoRateLimited+`}`, false)},
			want: Fail, ptr: "/result/structuredContent/adcp_error"},
		{name: "no rejection skips", calls: []evidence.Call{mcpBody("mcp/get_products/valid", "get_products", eoProducts, false)},
			want: Skip, msg: "no business rejection observed"},
		{name: "a harness failure is an error", calls: []evidence.Call{
			harnessFailed("mcp/get_products/valid", evidence.MCP, evidence.KindToolCall, "connection reset")},
			want: HarnessError},
	})
	runJudgeTable(t, "ERR-08", catalogue.A2A, []judgeCase{
		// a2a-response-extraction.mdx §Status-Based Extraction: business rejection → A2A completed + DataPart status "rejected".
		{name: "a rejected body in a completed task passes", calls: []evidence.Call{eoSuccess(catalogue.A2A, "a2a/get_products/valid", rejected)}, want: Pass},
		{name: "a rejected body in a failed task fails at the state", calls: []evidence.Call{
			a2aResult("a2a/get_products/valid", "get_products", a2aTask("failed", rejected))},
			want: Fail, ptr: "/result/status/state"},
		{name: "an A2A 1.0 rejected state fails inside the envelope", calls: []evidence.Call{
			a2aResult("a2a/get_products/valid", "get_products", `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_REJECTED"},"artifacts":[{"artifactId":"a1","parts":[{"data":`+rejected+`}]}]}}`)},
			want: Fail, ptr: "/result/task/status/state"},
		{name: "a rejected body carrying adcp_error fails", calls: []evidence.Call{
			eoSuccess(catalogue.A2A, "a2a/get_products/valid", `{"status":"rejected","adcp_error":`+eoRateLimited+`}`)},
			want: Fail, ptr: "/result/artifacts/0/parts/0/data/adcp_error"},
		{name: "no rejection skips", calls: []evidence.Call{eoSuccess(catalogue.A2A, "a2a/get_products/valid", eoProducts)},
			want: Skip, msg: "no business rejection observed"},
		{name: "a harness failure is an error", calls: []evidence.Call{
			harnessFailed("a2a/get_products/valid", evidence.A2A, evidence.KindToolCall, "connection reset")},
			want: HarnessError},
	})
}
