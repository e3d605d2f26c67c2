package suites

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The JSON-type sweep: every judge that reads a number, a string, a boolean
// or a list is fed, at the member it reads, a value of each JSON type,
// null, the key repeated (RFC 8259 §4 leaves which occurrence counts to the
// receiver: a rule on a value holds for each occurrence) and a value no
// client can read as one of that type (an overflowing number, a lone
// surrogate); and it is given the evidence without any readable value,
// which is a skip, never a pass. The outcome of each is decided from the
// rule's text and the spec page it cites, written beside the row; the
// judges' own tables hold the rest of each rule.

// The JSON values a member is fed, by the kind a row names them with.
var sweepKinds = []struct{ kind, value string }{
	{"a string", `"x"`}, {"a number", `7`}, {"a boolean", `true`}, {"null", `null`}, {"an array", `[]`}, {"an object", `{}`},
}

// typeRow is one judge's member fed every JSON type.
type typeRow struct {
	rule  string
	on    []catalogue.Transport
	field string
	// at records the evidence with v, raw JSON text, as the member's value
	// (spliced in as text, so `a,"key":b` repeats the key).
	at func(on catalogue.Transport, v string) []evidence.Call
	// good are conformant values: each passes.
	good []string
	// kinds are the outcomes of sweepKinds' values, by kind; a kind not
	// listed must fail.
	kinds map[string]Outcome
	// more are further values (repeated keys, unreadable values) and their
	// outcomes.
	more map[string]Outcome
	// bare records the evidence with no readable value of the member; it
	// must skip with none in its message.
	bare func(on catalogue.Transport) []evidence.Call
	none string
}

func (row typeRow) run(t *testing.T) {
	t.Helper()
	for _, on := range row.on {
		var cases []judgeCase
		for _, g := range row.good {
			cases = append(cases, judgeCase{name: row.field + " " + g + " passes", calls: row.at(on, g), want: Pass})
		}
		for _, k := range sweepKinds {
			want, ok := row.kinds[k.kind]
			if !ok {
				want = Fail
			}
			cases = append(cases, judgeCase{name: row.field + " as " + k.kind, calls: row.at(on, k.value), want: want})
		}
		for v, want := range row.more {
			cases = append(cases, judgeCase{name: row.field + " " + v, calls: row.at(on, v), want: want})
		}
		cases = append(cases, judgeCase{name: "no readable " + row.field + " skips", calls: row.bare(on), want: Skip, msg: row.none})
		t.Run(row.rule+"/"+string(on)+"/"+row.field, func(t *testing.T) { runJudgeTable(t, row.rule, on, cases) })
	}
}

var (
	sweepMCP  = []catalogue.Transport{catalogue.MCP}
	sweepA2A  = []catalogue.Transport{catalogue.A2A}
	sweepBoth = []catalogue.Transport{catalogue.MCP, catalogue.A2A}
)

// sweepOK is a success reply whose body holds the member key with value v
// (spliced after the status).
func sweepOK(key string) func(on catalogue.Transport, v string) []evidence.Call {
	return func(on catalogue.Transport, v string) []evidence.Call {
		return []evidence.Call{cvOK(on, "get_products/valid", "get_products", `{"status":"completed","products":[],"`+key+`":`+v+`}`, evidence.PurposeValid)}
	}
}

// sweepBare is a success reply without the member.
func sweepBare(on catalogue.Transport) []evidence.Call {
	return []evidence.Call{cvOK(on, "get_products/valid", "get_products", `{"status":"completed","products":[]}`, evidence.PurposeValid)}
}

// sweepErr is an error reply whose adcp_error holds member key with value
// v, beside a code and a message (and recovery, unless key is one of
// them).
func sweepErr(key string) func(on catalogue.Transport, v string) []evidence.Call {
	return func(on catalogue.Transport, v string) []evidence.Call {
		obj := `{"code":"RATE_LIMITED","message":"Request rate exceeded","recovery":"transient","` + key + `":` + v + `}`
		switch key {
		case "code":
			obj = `{"message":"Request rate exceeded","recovery":"transient","code":` + v + `}`
		case "message":
			obj = `{"code":"RATE_LIMITED","recovery":"transient","message":` + v + `}`
		case "recovery":
			obj = `{"code":"RATE_LIMITED","message":"Request rate exceeded","recovery":` + v + `}`
		}
		return []evidence.Call{eoErr(on, obj)}
	}
}

// sweepErrBare is an error reply whose adcp_error is a JSON string: no
// member of it can be read (an SDK that double-encodes the error).
func sweepErrBare(on catalogue.Transport) []evidence.Call {
	return []evidence.Call{eoErr(on, quoteJSON(eoRateLimited))}
}

func TestJudgesAgainstJSONTypes(t *testing.T) {
	all := map[string]Outcome{"a string": Pass, "a number": Pass, "a boolean": Pass, "null": Pass, "an array": Pass, "an object": Pass}
	for _, row := range []typeRow{
		// enums/task-status.json: status is a string of the enum, on every
		// success body; a repeated key must hold one each time.
		{rule: "ENV-03", on: sweepBoth, field: "status",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{cvOK(on, "get_products/valid", "get_products", `{"status":`+v+`,"products":[]}`, evidence.PurposeValid)}
			},
			good: []string{`"completed"`, `"completed","status":"completed"`},
			more: map[string]Outcome{`"completed","status":7`: Fail, `"bogus","status":"completed"`: Fail, `"\ud800"`: Fail},
			bare: func(catalogue.Transport) []evidence.Call { return nil }, none: noStatus},
		// core/protocol-envelope.json: timestamp a date-time string, replayed
		// a boolean, when present; a body without either shows neither.
		{rule: "ENV-06", on: sweepBoth, field: "timestamp", at: sweepOK("timestamp"),
			good: []string{`"2026-11-22T12:00:00Z"`},
			more: map[string]Outcome{`"2026-11-22T12:00:00Z","timestamp":"noon"`: Fail, `"noon","timestamp":"2026-11-22T12:00:00Z"`: Fail, `"\ud800"`: Fail},
			bare: sweepBare, none: "no timestamp or replayed observed"},
		{rule: "ENV-06", on: sweepBoth, field: "replayed", at: sweepOK("replayed"),
			good:  []string{`false`, `true`},
			kinds: map[string]Outcome{"a boolean": Pass},
			more:  map[string]Outcome{`true,"replayed":"true"`: Fail, `"false","replayed":false`: Fail},
			bare:  sweepBare, none: "no timestamp or replayed observed"},
		// core/version-envelope.json: adcp_version a release-precision string.
		{rule: "ENV-08", on: sweepBoth, field: "adcp_version", at: sweepOK("adcp_version"),
			good: []string{`"3.1"`},
			more: map[string]Outcome{`"3.1","adcp_version":3.1`: Fail, `"3.1.0","adcp_version":"3.1"`: Fail, `"\ud800"`: Fail},
			bare: func(catalogue.Transport) []evidence.Call { return nil }, none: "no tool result observed"},
		// core/protocol-envelope.json (not.anyOf): task_status never at the
		// root, whatever its value.
		{rule: "ENV-04", on: sweepBoth, field: "task_status", at: sweepOK("task_status"),
			more: map[string]Outcome{`"completed","task_status":null`: Fail},
			bare: func(catalogue.Transport) []evidence.Call { return nil }, none: "no AdCP body observed"},
		// mcp-guide.mdx: body fields are never nested under payload; a payload
		// that is not an object nests nothing.
		{rule: "ENV-02", on: sweepMCP, field: "payload", at: sweepOK("payload"),
			kinds: map[string]Outcome{"a string": Pass, "a number": Pass, "a boolean": Pass, "null": Pass, "an array": Pass},
			more:  map[string]Outcome{`{"products":[]}`: Fail, `null,"payload":{"products":[]}`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: noSuccess},
		// MCP CallToolResult: isError a boolean, content an array,
		// structuredContent an object (null is none of them).
		{rule: "ENV-09", on: sweepMCP, field: "isError",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{mcpResult("mcp/get_products/valid", "get_products", `{"content":[{"type":"text","text":"{}"}],"structuredContent":{},"isError":`+v+`}`)}
			},
			good:  []string{`false`, `true`},
			kinds: map[string]Outcome{"a boolean": Pass},
			more:  map[string]Outcome{`false,"isError":"false"`: Fail, `"true","isError":true`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "no tool result observed"},
		{rule: "ENV-09", on: sweepMCP, field: "content",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{mcpResult("mcp/get_products/valid", "get_products", `{"structuredContent":{},"content":`+v+`}`)}
			},
			good:  []string{`[]`, `[{"type":"text","text":"{}"}]`},
			kinds: map[string]Outcome{"an array": Pass},
			more:  map[string]Outcome{`[{"type":"text","text":7}]`: Fail, `[{"type":7}]`: Fail, `[null]`: Fail, `[],"content":{}`: Fail, `{},"content":[]`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "no tool result observed"},
		{rule: "ENV-09", on: sweepMCP, field: "structuredContent",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{mcpResult("mcp/get_products/valid", "get_products", `{"content":[],"structuredContent":`+v+`}`)}
			},
			kinds: map[string]Outcome{"an object": Pass},
			more:  map[string]Outcome{`{},"structuredContent":[]`: Fail, `[],"structuredContent":{}`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "no tool result observed"},
		// mcp-response-extraction.mdx: the success payload is a JSON object; a text item holding
		// any other JSON value (or none) carries no payload.
		{rule: "ENV-01", on: sweepMCP, field: "the text payload",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{mcpResult("mcp/get_products/valid", "get_products", `{"content":[{"type":"text","text":`+quoteJSON(v)+`}]}`)}
			},
			kinds: map[string]Outcome{"an object": Pass},
			more:  map[string]Outcome{`{"status":"completed","status":"completed"}`: Pass, `{"status":`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: noSuccess},
		// transport-errors.mdx: an error result is isError true, a JSON boolean.
		{rule: "ERR-01", on: sweepMCP, field: "isError",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				body := `{"adcp_error":` + eoVersion + `}`
				return []evidence.Call{mcpResult("mcp/get_products/error_version", "get_products",
					`{"content":[{"type":"text","text":`+quoteJSON(body)+`}],"structuredContent":`+body+`,"isError":`+v+`}`, pVersion)}
			},
			good:  []string{`true`},
			kinds: map[string]Outcome{"a boolean": Pass},
			more:  map[string]Outcome{`false,"isError":true`: Fail, `true,"isError":false`: Fail, `"true"`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: noErrorReply},
		// transport-errors.mdx: adcp_error never on a result not flagged isError; a falsy
		// one (null, false, "", 0) is no error signal.
		{rule: "ERR-05", on: sweepBoth, field: "adcp_error", at: sweepOK("adcp_error"),
			kinds: map[string]Outcome{"null": Pass},
			more:  map[string]Outcome{`false`: Pass, `""`: Pass, `0`: Pass, `null,"adcp_error":{"code":"X"}`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: noSuccess},
		// transport-errors.mdx (Servers SHOULD support both paths): structuredContent's
		// adcp_error an error object.
		{rule: "ERR-03", on: sweepMCP, field: "adcp_error",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				text := `{"adcp_error":` + eoRateLimited + `}`
				return []evidence.Call{mcpResult("mcp/get_products/error_version", "get_products",
					`{"content":[{"type":"text","text":`+quoteJSON(text)+`}],"isError":true,"structuredContent":{"adcp_error":`+v+`}}`, pVersion)}
			},
			good: []string{eoRateLimited},
			more: map[string]Outcome{eoRateLimited + `,"adcp_error":7`: Fail},
			bare: func(catalogue.Transport) []evidence.Call { return nil }, none: "no isError result observed"},
		// transport-errors.mdx validate(): code a non-empty string of at most 64
		// characters, message a string.
		{rule: "EOBJ-01", on: sweepBoth, field: "code", at: sweepErr("code"),
			good:  []string{`"RATE_LIMITED"`, `"\ud800"`},
			kinds: map[string]Outcome{"a string": Pass},
			more:  map[string]Outcome{`"RATE_LIMITED","code":429`: Fail, `429,"code":"RATE_LIMITED"`: Fail},
			bare:  sweepErrBare, none: noErrorObject},
		{rule: "EOBJ-01", on: sweepBoth, field: "message", at: sweepErr("message"),
			good:  []string{`"m"`, `""`},
			kinds: map[string]Outcome{"a string": Pass},
			more:  map[string]Outcome{`"m","message":null`: Fail, `7,"message":"m"`: Fail},
			bare:  sweepErrBare, none: noErrorObject},
		// transport-errors.mdx Size Guidance: details under 500 bytes, whatever its type
		// (the type is SCHEMA-02's); an error without details shows no size.
		{rule: "EOBJ-03", on: sweepBoth, field: "details", at: sweepErr("details"), kinds: all,
			more: map[string]Outcome{`"` + strings.Repeat("a", 600) + `"`: Fail, `{},"details":{"n":"` + strings.Repeat("a", 600) + `"}`: Fail},
			bare: func(on catalogue.Transport) []evidence.Call { return []evidence.Call{eoErr(on, eoRateLimited)} }, none: noDetails},
		// L3/error-handling: recovery, when present, one of three strings.
		{rule: "EOBJ-04", on: sweepBoth, field: "recovery", at: sweepErr("recovery"),
			good: []string{`"transient"`, `"correctable"`, `"terminal"`},
			more: map[string]Outcome{`"transient","recovery":"fatal"`: Fail, `"fatal","recovery":"transient"`: Fail, `"\ud800"`: Fail},
			bare: func(on catalogue.Transport) []evidence.Call {
				return []evidence.Call{eoErr(on, `{"code":"RATE_LIMITED","message":"m"}`)}
			}, none: noRecovery},
		// transport-errors.mdx: a standard code or X_{VENDOR}_{CODE}; a code that is no
		// string is EOBJ-01's.
		{rule: "EOBJ-06", on: sweepBoth, field: "code", at: sweepErr("code"),
			good:  []string{`"RATE_LIMITED"`, `"X_ACME_FLOOR"`},
			kinds: map[string]Outcome{"a number": Skip, "a boolean": Skip, "null": Skip, "an array": Skip, "an object": Skip},
			more:  map[string]Outcome{`"RATE_LIMITED","code":"Oops"`: Fail, `"Oops","code":"RATE_LIMITED"`: Fail, `"\ud800"`: Fail},
			bare:  sweepErrBare, none: noStringCode},
		// transport-errors.mdx (details tables): RATE_LIMITED's limit is a number.
		{rule: "EOBJ-08", on: sweepBoth, field: "details.limit",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{eoErr(on, `{"code":"RATE_LIMITED","message":"m","recovery":"transient","retry_after":5,"details":{"limit":`+v+`}}`)}
			},
			good:  []string{`30`, `1e400`},
			kinds: map[string]Outcome{"a number": Pass},
			more:  map[string]Outcome{`30,"limit":"30"`: Fail, `"30","limit":30`: Fail},
			bare: func(on catalogue.Transport) []evidence.Call {
				return []evidence.Call{eoErr(on, `{"code":"RATE_LIMITED","message":"m","details":"limit 30"}`)}
			}, none: "no error with documented details observed"},
		// core/error.json: recovery SHOULD be present; any value is present
		// (its value is EOBJ-04's).
		{rule: "EOBJ-10", on: sweepBoth, field: "recovery", at: sweepErr("recovery"), kinds: all,
			bare: sweepErrBare, none: noErrorObject},
		// transport-errors.mdx retry_after bounds: a finite number from 1 to 3600.
		{rule: "RETRY-01", on: sweepBoth, field: "retry_after", at: sweepErr("retry_after"),
			good:  []string{`1`, `3600`, `5.5`},
			kinds: map[string]Outcome{"a number": Pass},
			more:  map[string]Outcome{`5,"retry_after":7200`: Fail, `7200,"retry_after":5`: Fail, `1e400`: Fail, `-1e400`: Fail},
			bare: func(on catalogue.Transport) []evidence.Call {
				return append(sweepErrBare(on), eoErr(on, eoRetry("")))
			}, none: noRetryAfter},
		// §4.21: retry_after an integer; an overflowing literal holds none.
		{rule: "RETRY-02", on: sweepBoth, field: "retry_after", at: sweepErr("retry_after"),
			good:  []string{`5`, `5.0`},
			kinds: map[string]Outcome{"a number": Pass},
			more:  map[string]Outcome{`5,"retry_after":"5"`: Fail, `2.5,"retry_after":5`: Fail, `1e400`: Skip},
			bare: func(on catalogue.Transport) []evidence.Call {
				return append(sweepErrBare(on), eoErr(on, eoRetry("")))
			}, none: noRetryAfter},
		// context-sessions.mdx: the caller's context echoed unchanged; each
		// occurrence of a repeated key must be it.
		{rule: "CTX-01", on: sweepBoth, field: "context",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{withContext(cvOK(on, "get_products/context", "get_products", `{"status":"completed","products":[],"context":`+v+`}`, evidence.PurposeContext), eoCtx)}
			},
			good: []string{eoCtx},
			more: map[string]Outcome{eoCtx + `,"context":null`: Fail, `null,"context":` + eoCtx: Fail},
			bare: func(on catalogue.Transport) []evidence.Call {
				return []evidence.Call{withContext(cvErr(on, "get_products/context", "get_products", `{"adcp_error":`+eoRateLimited+`}`, evidence.PurposeContext), eoCtx)}
			}, none: "no success reply to a call with context observed"},
		// context-sessions.mdx, No synthesis: omit context, or null.
		{rule: "CTX-03", on: sweepBoth, field: "context",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{cvOK(on, "get_products/no_context", "get_products", `{"status":"completed","products":[],"context":`+v+`}`, evidence.PurposeNoContext)}
			},
			kinds: map[string]Outcome{"null": Pass},
			more:  map[string]Outcome{`null,"context":{"s":1}`: Fail, `{"s":1},"context":null`: Fail, `null,"context":null`: Pass},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "no tool result to a call without context observed"},
		// §4.60–4.61: only additionalProperties false closes a schema.
		{rule: "TOL-02", on: sweepMCP, field: "additionalProperties",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{cvToolsList(`[{"name":"get_products","inputSchema":{"type":"object","properties":{"brief":{"type":"string"}},"additionalProperties":` + v + `}}]`)}
			},
			kinds: all,
			more:  map[string]Outcome{`false`: Fail, `"false"`: Pass, `true,"additionalProperties":false`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "tools/list was not fetched"},
		// a2a-response-extraction.mdx: a final task carries exactly one artifact in a list;
		// null artifacts is none (ProtoJSON reads null as the default).
		{rule: "A2A-01", on: sweepA2A, field: "artifacts",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"},"artifacts":`+v+`}`)}
			},
			good: []string{`[{"artifactId":"a1","parts":[{"kind":"data","data":` + products + `}]}]`},
			more: map[string]Outcome{`[{"artifactId":"a1","parts":[]},{"artifactId":"a1","parts":[]}]`: Fail, `[{"artifactId":"a1","parts":[]},7]`: Fail},
			bare: func(catalogue.Transport) []evidence.Call {
				return []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"working"}}`)}
			}, none: "no final task observed"},
		// a2a-response-extraction.mdx: the artifact holds a DataPart whose data is an object.
		{rule: "A2A-02", on: sweepA2A, field: "data",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"data","data":`+v+`}]}]}`)}
			},
			kinds: map[string]Outcome{"an object": Pass},
			bare: func(catalogue.Transport) []evidence.Call {
				return []evidence.Call{a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":"failed"}}`)}
			}, none: "no completed task with an artifact observed"},
		// a2a-response-extraction.mdx (Wire-Format Compatibility): status.state a known token.
		{rule: "A2A-04", on: sweepA2A, field: "status.state",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{a2aCard(card03), a2aResult(read, "get_products", `{"kind":"task","id":"t1","status":{"state":`+v+`},"artifacts":[]}`)}
			},
			good: []string{`"completed"`},
			more: map[string]Outcome{`"completed","state":"TASK_STATE_COMPLETED"`: Fail, `"TASK_STATE_COMPLETED","state":"completed"`: Fail, `"\ud800"`: Fail},
			bare: func(catalogue.Transport) []evidence.Call { return []evidence.Call{a2aCard(card03)} }, none: "no task state observed"},
		// a2a-profile-extension (Submitted AdCP work): task_id a string.
		{rule: "A2A-07", on: sweepA2A, field: "task_id",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", `{"status":"submitted","task_id":`+v+`}`))}
			},
			good:  []string{`"task_1"`},
			kinds: map[string]Outcome{"a string": Pass},
			more:  map[string]Outcome{`""`: Fail},
			bare: func(catalogue.Transport) []evidence.Call {
				return []evidence.Call{a2aResult(read, "get_products", a2aTask("completed", `{"status":7,"task_id":"t"}`))}
			}, none: "no submitted AdCP result observed"},
		// get-adcp-capabilities-response.json: adcp an object,
		// supported_protocols an array.
		{rule: "CAP-01", on: sweepBoth, field: "supported_protocols",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{capsCall(on, `{"status":"completed","adcp":{"major_versions":[3]},"supported_protocols":`+v+`}`)}
			},
			kinds: map[string]Outcome{"an array": Pass},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "not called"},
		// reference/versioning.mdx: major_versions a non-empty list of
		// positive integers.
		{rule: "VER-01", on: sweepBoth, field: "major_versions",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{capsCall(on, `{"status":"completed","adcp":{"major_versions":`+v+`},"supported_protocols":["media_buy"]}`)}
			},
			good: []string{`[3]`, `[2,3]`},
			more: map[string]Outcome{`[3],"major_versions":"3"`: Fail, `"3","major_versions":[3]`: Fail, `[3.5]`: Fail, `[1e400]`: Fail},
			bare: func(on catalogue.Transport) []evidence.Call {
				return []evidence.Call{cvErr(on, capabilitiesProbe, "get_adcp_capabilities", `{"adcp_error":`+eoRateLimited+`}`)}
			}, none: "CAP-01"},
		// §4.49: with supported true, replay_ttl_seconds an integer from
		// 3600 to 604800.
		{rule: "IDEM-01", on: sweepBoth, field: "replay_ttl_seconds",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{capsCall(on, `{"status":"completed","adcp":{"major_versions":[3],"idempotency":{"supported":true,"replay_ttl_seconds":`+v+`}},"supported_protocols":["media_buy"]}`)}
			},
			good: []string{`86400`, `86400.0`},
			more: map[string]Outcome{`86400,"replay_ttl_seconds":60`: Fail, `"86400"`: Fail, `1e400`: Fail},
			bare: func(on catalogue.Transport) []evidence.Call {
				return []evidence.Call{cvErr(on, capabilitiesProbe, "get_adcp_capabilities", `{"adcp_error":`+eoRateLimited+`}`)}
			}, none: "CAP-01"},
		{rule: "IDEM-01", on: sweepBoth, field: "supported",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{capsCall(on, `{"status":"completed","adcp":{"major_versions":[3],"idempotency":{"replay_ttl_seconds":86400,"supported":`+v+`}},"supported_protocols":["media_buy"]}`)}
			},
			good:  []string{`true`, `false`},
			kinds: map[string]Outcome{"a boolean": Pass},
			more:  map[string]Outcome{`true,"supported":"true"`: Fail},
			bare: func(on catalogue.Transport) []evidence.Call {
				return []evidence.Call{cvErr(on, capabilitiesProbe, "get_adcp_capabilities", `{"adcp_error":`+eoRateLimited+`}`)}
			}, none: "CAP-01"},
		// transport-errors.mdx (Reserved JSON-RPC Codes): a JSON-RPC error carrying
		// adcp_error uses a reserved integer code; -32029.0 is that integer.
		{rule: "ERR-06", on: sweepMCP, field: "error.code",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{eoRPC(catalogue.MCP, `{"message":"Rate limit exceeded","data":{"adcp_error":`+eoRateLimited+`},"code":`+v+`}`)}
			},
			good: []string{`-32029`, `-32029.0`, `-3.2029e4`},
			more: map[string]Outcome{`-32029,"code":-32000`: Fail, `-32029.5`: Fail, `"-32029"`: Fail, `-1e400`: Fail},
			bare: func(catalogue.Transport) []evidence.Call {
				return []evidence.Call{eoRPC(catalogue.MCP, `{"code":-32029,"message":"Rate limit exceeded","data":{"adcp_error":null}}`)}
			}, none: "no JSON-RPC error carrying data.adcp_error observed"},
		// §4.22: a RATE_LIMITED error carries retry_after, whatever its value
		// (its type and bounds are RETRY-01's and RETRY-02's); null is absent
		// (transport-errors.mdx's extraction keeps it only when != null).
		{rule: "RETRY-03", on: sweepBoth, field: "retry_after", at: sweepErr("retry_after"),
			kinds: map[string]Outcome{"a string": Pass, "a number": Pass, "a boolean": Pass, "an array": Pass, "an object": Pass},
			more:  map[string]Outcome{`5,"retry_after":null`: Fail},
			bare:  sweepErrBare, none: "no RATE_LIMITED observed"},
		// §4.43: the error response echoes the caller's context.
		{rule: "CTX-02", on: sweepBoth, field: "context",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{withContext(eoError(on, eoProbe(on, "get_products/error_version"), eoVersion, `,"context":`+v, pVersion), eoCtx)}
			},
			good: []string{eoCtx},
			more: map[string]Outcome{eoCtx + `,"context":{}`: Fail, `{},"context":` + eoCtx: Fail},
			bare: func(on catalogue.Transport) []evidence.Call {
				return []evidence.Call{withContext(eoSuccess(on, eoProbe(on, "get_products/error_version"), eoProducts, pVersion), eoCtx)}
			}, none: "no error result to a call with context observed"},
		// §4.39: every skill's id is a string.
		{rule: "A2A-09", on: sweepA2A, field: "skills[].id",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{a2aCard(strings.Replace(card03, `{"id":"get_products","name":"Discover products"}`, `{"name":"Discover products","id":`+v+`}`, 1))}
			},
			good:  []string{`"get_products"`},
			kinds: map[string]Outcome{"a string": Pass},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "the agent card was not fetched"},
		// a2a-profile-extension (Advertisement): the extension's params
		// omitted or empty.
		{rule: "A2A-10", on: sweepA2A, field: "params",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{a2aCard(strings.Replace(card03, `{"uri":"https://adcontextprotocol.org/extensions/adcp/v3"}`, `{"uri":"https://adcontextprotocol.org/extensions/adcp/v3","params":`+v+`}`, 1))}
			},
			kinds: map[string]Outcome{"null": Pass, "an array": Pass, "an object": Pass},
			more:  map[string]Outcome{`{"x":1}`: Fail, `[1]`: Fail},
			bare: func(catalogue.Transport) []evidence.Call {
				return []evidence.Call{httpGet("a2a/card", evidence.A2A, a2aCardURL, 200, `[]`, evidence.PurposeDiscovery)}
			}, none: "could not be read"},
		// get-adcp-capabilities-response.json: adcp an object.
		{rule: "CAP-01", on: sweepBoth, field: "adcp",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{capsCall(on, `{"status":"completed","supported_protocols":["media_buy"],"adcp":`+v+`}`)}
			},
			kinds: map[string]Outcome{"an object": Pass},
			more:  map[string]Outcome{`{},"adcp":[]`: Fail, `[],"adcp":{}`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "not called"},
		// mcp-guide.mdx's taskSupport table: get_adcp_capabilities "forbidden"
		// or absent, a string of MCP's enum.
		{rule: "CAP-03", on: sweepMCP, field: "taskSupport",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{initialize(`{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}}`),
					cvToolsList(`[{"name":"get_adcp_capabilities","inputSchema":{"type":"object"},"execution":{"taskSupport":` + v + `}}]`)}
			},
			good: []string{`"forbidden"`},
			more: map[string]Outcome{`"forbidden","taskSupport":"required"`: Fail, `"required","taskSupport":"forbidden"`: Fail},
			bare: func(catalogue.Transport) []evidence.Call {
				return []evidence.Call{initialize(`{"tools":{}}`)}
			}, none: "tasks capability"},
		// mcp-guide.mdx: the server card declares AdCP under
		// _meta["adcontextprotocol.org"], an object.
		{rule: "CAP-05", on: sweepMCP, field: "_meta",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{httpGet("mcp/card/mcp.json", evidence.MCP, "https://seller.example.com/.well-known/mcp.json", 200,
					`{"name":"seller","_meta":{"adcontextprotocol.org":`+v+`}}`, evidence.PurposeDiscovery)}
			},
			kinds: map[string]Outcome{"an object": Pass},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "not fetched"},
		// MCP 2025-11-25 Tasks: the handle's ttl a number or null.
		{rule: "TASK-01", on: sweepMCP, field: "ttl",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{tkCreate(tcCreate, handleWith("ttl", v))}
			},
			kinds: map[string]Outcome{"a number": Pass, "null": Pass},
			more:  map[string]Outcome{`60000,"ttl":"60000"`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "no task-augmented call was made"},
		{rule: "TASK-01", on: sweepMCP, field: "taskId",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{tkCreate(tcCreate, handleWith("taskId", v))}
			},
			kinds: map[string]Outcome{"a string": Pass},
			more:  map[string]Outcome{`""`: Fail, `"t1","taskId":1`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "no task-augmented call was made"},
		// mcp-guide.mdx: a TTL above the maximum is clamped: a number below the
		// ten years asked; null (unlimited) honours it; no readable ttl is
		// TASK-01's.
		{rule: "TASK-05", on: sweepMCP, field: "ttl",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{taskCall("mcp/task/ttl/create", "tools/call", evidence.KindTask, handleWith("ttl", v), "")}
			},
			kinds: map[string]Outcome{"a string": Skip, "a number": Pass, "a boolean": Skip, "an array": Skip, "an object": Skip},
			more:  map[string]Outcome{`1e400`: Fail, `3600000,"ttl":null`: Fail},
			bare: func(catalogue.Transport) []evidence.Call {
				return []evidence.Call{taskCall("mcp/task/ttl/create", "tools/call", evidence.KindTask, handleWith("ttl", ""), "")}
			}, none: "(TASK-01)"},
		// error-details/version-unsupported.json: supported_versions a
		// non-empty list of release-precision strings.
		{rule: "VER-02", on: sweepBoth, field: "details.supported_versions",
			at: func(on catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{cvPurposes(cvErr(on, "get_products/error_version", "get_products",
					`{"adcp_error":{"code":"VERSION_UNSUPPORTED","message":"no","details":{"supported_versions":`+v+`}}}`), evidence.PurposeErrorVersion)}
			},
			good: []string{`["3.0","3.1"]`},
			more: map[string]Outcome{`[3.1]`: Fail, `["3.1.0"]`: Fail},
			bare: func(catalogue.Transport) []evidence.Call { return nil }, none: "no call declaring an unsupported version"},
		// transport-errors.mdx (URL validation): a followable URL is an https string; a
		// value that is no string is no URL to follow (its type is the
		// schema's).
		{rule: "URL-01", on: sweepMCP, field: "policy_url",
			at: func(_ catalogue.Transport, v string) []evidence.Call {
				return []evidence.Call{mcpBody("mcp/get_products/error_version", "get_products",
					`{"adcp_error":{"code":"POLICY_VIOLATION","message":"m","details":{"policy_url":`+v+`}}}`, true, pVersion)}
			},
			good:  []string{`"https://seller.example.com/p"`},
			kinds: map[string]Outcome{"a number": Skip, "a boolean": Skip, "null": Skip, "an array": Skip, "an object": Skip},
			more:  map[string]Outcome{`"https://seller.example.com/p","policy_url":"http://seller.example.com/p"`: Fail},
			bare:  func(catalogue.Transport) []evidence.Call { return nil }, none: "no followable URL"},
	} {
		row.run(t)
	}
}

// TestHOOK03AgainstKeyTypes: a retry reuses the delivery's idempotency_key,
// a string (webhook-receiver-envelope.json); a first delivery without one
// gives no key to compare (HOOK-01's), a skip, and a retry whose key is no
// string, or another, fails.
func TestHOOK03AgainstKeyTypes(t *testing.T) {
	body := func(key string) string {
		return strings.Replace(hookBody("op-buy", "task_mb_1", "completed", "K"), `"idempotency_key":"K"`, `"idempotency_key":`+key, 1)
	}
	onTransports(t, "HOOK-03", func(h hookCases) []judgeCase {
		var cases []judgeCase
		for _, k := range sweepKinds {
			want := Skip
			if k.kind == "a string" {
				want = Pass
			}
			cases = append(cases, judgeCase{name: "the key as " + k.kind + " on both", want: want,
				calls: h.buyAsync(submittedBuy, dlv(body(k.value), 503), dlv(body(k.value), 200))})
			if k.kind != "a string" {
				cases = append(cases, judgeCase{name: "a retry's key as " + k.kind, want: Fail, ptr: "/idempotency_key",
					calls: h.buyAsync(submittedBuy, dlv(body(`"K"`), 503), dlv(body(k.value), 200))})
			}
		}
		return append(cases,
			judgeCase{name: "numeric keys that differ are no reuse to judge", calls: h.buyAsync(submittedBuy, dlv(body(`1`), 503), dlv(body(`2`), 200)),
				want: Skip, msg: "no idempotency_key string"},
			judgeCase{name: "a repeated key holding two values is no one key", calls: h.buyAsync(submittedBuy, dlv(body(`"K","idempotency_key":"L"`), 503),
				dlv(body(`"K","idempotency_key":"L"`), 200)), want: Skip},
		)
	})
}

// TestTLS02AgainstMaxAgeValues: max-age is delta-seconds, unbounded (RFC
// 6797 §6.1.1): a value too long for an integer is over a year.
func TestTLS02AgainstMaxAgeValues(t *testing.T) {
	const url = "https://seller.example.com/mcp"
	hsts := func(v string) []evidence.Call {
		return []evidence.Call{tlsResponse("mcp/get_products/valid", evidence.MCP, evidence.KindToolCall, url, "TLS 1.3", v)}
	}
	runJudgeTable(t, "TLS-02", catalogue.MCP, []judgeCase{
		{name: "a year passes", calls: hsts("max-age=31536000"), want: Pass},
		{name: "an overflowing max-age passes", calls: hsts("max-age=99999999999999999999999"), want: Pass},
		{name: "a quoted max-age passes", calls: hsts(`max-age="63072000"; includeSubDomains`), want: Pass},
		{name: "a day fails", calls: hsts("max-age=86400"), want: Fail},
		{name: "a negative max-age is no max-age", calls: hsts("max-age=-1"), want: Fail, msg: "without a max-age"},
		{name: "a word is no max-age", calls: hsts("max-age=forever"), want: Fail, msg: "without a max-age"},
		{name: "no HTTPS response skips", want: Skip, msg: "no HTTPS response"},
	})
}

// TestNoJudgePassesOnNoEvidence: every judge, given no calls, skips with a
// reason; given calls whose every reply is unreadable (bytes that are no
// JSON, or JSON of no shape the rule reads), none passes.
func TestNoJudgePassesOnNoEvidence(t *testing.T) {
	both := Options{Transports: []catalogue.Transport{catalogue.MCP, catalogue.A2A}}
	for _, v := range Judge(evidence.NewStore(tableTarget), both) {
		if v.Outcome != Skip || v.Message == "" {
			t.Errorf("%s %s on no calls: %s %q, want a skip with its reason", v.Rule, v.Transport, v.Outcome, v.Message)
		}
	}
	for _, reply := range []string{`not json`, `{"jsonrpc":"2.0","id":1,"result":"x"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`, `[]`, `null`} {
		s := evidence.NewStore(tableTarget)
		for _, c := range unreadableCalls(reply) {
			s.Add(c)
		}
		for _, v := range Judge(s, both) {
			// An empty JSON-RPC result is readable evidence for the rules
			// on refusals: it is no refusal (TOL-01, IDEM-05, AUTH-02: an
			// answer; its body is ENV-01's and CAP-01's), and TASK-04 reads
			// a second session's result without taskId and status as
			// revealing nothing of the task, which is its rule.
			if v.Outcome == Pass && !(refusalRules[v.Rule] && reply == `{"jsonrpc":"2.0","id":1,"result":{}}`) {
				t.Errorf("%s %s passes on replies %s: examined %v", v.Rule, v.Transport, reply, v.Examined)
			}
		}
	}
}

// refusalRules are the rules an empty result answers: it is no refusal.
var refusalRules = map[string]bool{"TOL-01": true, "IDEM-05": true, "AUTH-02": true, "TASK-04": true}

// unreadableCalls records the calls of probeShapes on both transports, each
// answered HTTP 200 with reply.
func unreadableCalls(reply string) []evidence.Call {
	var out []evidence.Call
	msg := json.RawMessage(reply)
	var result, rpcErr json.RawMessage
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) == nil {
		result, rpcErr = m["result"], m["error"]
	} else {
		msg = nil
	}
	for _, p := range probeShapes {
		for _, tr := range []evidence.Transport{evidence.MCP, evidence.A2A} {
			url := tableTarget.MCP
			if tr == evidence.A2A {
				url = tableTarget.A2A
			}
			out = append(out, evidence.Call{ProbeID: string(tr) + "/" + p.id, Transport: tr, Kind: p.kind, Tool: "get_products", Purposes: p.ps,
				Context: json.RawMessage(`{"c":1}`), Message: msg, Result: result, RPCError: rpcErr, Body: json.RawMessage(reply), HTTPStatus: 200,
				Credential: "configured", URL: url,
				Exchanges: []wire.Exchange{{Method: "POST", URL: url, Status: 200, ResponseBody: []byte(reply), Complete: true}}})
		}
	}
	return out
}
