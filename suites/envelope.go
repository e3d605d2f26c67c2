package suites

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// taskStatuses is enums/task-status.json.
var taskStatuses = map[string]bool{
	"submitted": true, "working": true, "input-required": true, "completed": true, "canceled": true,
	"failed": true, "rejected": true, "auth-required": true, "unknown": true,
}

// releasePattern is core/version-envelope.json's adcp_version pattern:
// release precision, an optional pre-release tag.
var releasePattern = regexp.MustCompile(`^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?)?$`)

const noSuccess = "no success tool result observed"

// noStatus is ENV-03's skip reason: no success body, and no error body
// carrying status (optional there).
const noStatus = "no success body and no error body carrying status observed"

func envChecks() []Check {
	return []Check{
		// Rule: ENV-01 · Spec: mcp-response-extraction.mdx (Extraction Algorithm); L0/mcp-response-extraction · Since: 0.1.0 ·
		// Description: a success tool result MUST carry its AdCP payload as a JSON object, in
		// structuredContent or a content[] text item that parses to a non-array object.
		// Policy: a success result whose only payload is adcp_error is left to ERR-05.
		{ID: "ENV-01", Transport: catalogue.MCP, Text: "carries a success payload as a JSON object", Judge: judgeENV01},
		// Rule: ENV-02 · Spec: mcp-guide.mdx (Producer rule) · Since: 0.1.0 ·
		// Description: envelope and body fields MUST be flat siblings at the root; body fields
		// are never nested under payload.
		// Policy: payload nesting fails on success results only; the
		// error-handling page's own MCP error example nests payload.errors, so error results
		// are not failed for it.
		{ID: "ENV-02", Transport: catalogue.MCP, Text: "keeps envelope and body fields flat at the root", Judge: judgeENV02},
		// Rule: ENV-03 · Spec: core/protocol-envelope.json, enums/task-status.json; §4.2–4.3 · Since: 0.1.0 ·
		// Description: status MUST be present at the root of every task response and be a
		// task-status value.
		// Policy: on error results status is judged only when present: transport-errors.mdx's canonical
		// error result carries adcp_error alone, and mcp-guide.mdx tells receivers to read such
		// envelopes by adcp_error. On A2A, the progress data of an interim state (working,
		// submitted, input-required, auth-required: status.message.parts) is judged only when
		// it carries status: L0/a2a-response-format's own interim example is
		// {"percentage":45,"current_step":…}, and the A2A state is the task's status.state.
		// An error body without status is no evidence; each occurrence of a repeated status
		// is judged.
		{ID: "ENV-03", Transport: catalogue.MCP, Text: "puts a task-status value in status at the root", Judge: judgeENV03},
		// Rule: ENV-04 · Spec: L3/task-lifecycle; core/protocol-envelope.json (not.anyOf) · Since: 0.1.0 ·
		// Description: task_status and response_status MUST NOT appear at the root.
		// Policy: the root is the body a client reads (clientRoots): structuredContent, or
		// without it the text item a client extracts.
		{ID: "ENV-04", Transport: catalogue.MCP, Text: "never emits task_status or response_status at the root", Judge: judgeENV04},
		// Rule: ENV-05 · Spec: mcp-response-extraction.mdx, 002; §4.6 · Since: 0.1.0 ·
		// Description: a success result SHOULD carry structuredContent and a JSON text fallback
		// in content[], JSON-equal when both are present. The fallback compared is the one a
		// client reads: the first text item that parses to an object.
		{ID: "ENV-05", Transport: catalogue.MCP, Text: "carries structuredContent and an equal JSON text fallback", Judge: judgeENV05},
		// Rule: ENV-06 · Spec: core/protocol-envelope.json; §4.7 · Since: 0.1.0 ·
		// Description: timestamp, when present, MUST be an RFC 3339 date-time; replayed, when
		// present, MUST be a boolean.
		// Policy: judged on the body a client reads (clientRoots), as ENV-04, on the bodies
		// that carry either member (each occurrence of a repeated key); a run whose bodies
		// carry neither shows nothing of their types and skips. null is no date-time and no
		// boolean (core/protocol-envelope.json types them string and boolean).
		{ID: "ENV-06", Transport: catalogue.MCP, Text: "types timestamp as an RFC 3339 date-time and replayed as a boolean", Judge: judgeENV06},
		// Rule: ENV-07 · Spec: verification/conformance (fixture-merged responses); §4.8 · Since: 0.1.0 ·
		// Description: reserved _-prefixed marker keys such as _bridge MUST NOT appear at the root.
		// Policy: judged on the body a client reads (clientRoots), as ENV-04.
		{ID: "ENV-07", Transport: catalogue.MCP, Text: "emits no reserved underscore-prefixed keys at the root", Judge: judgeENV07},
		// Rule: ENV-08 · Spec: reference/versioning; §4.46 · Since: 0.1.0 ·
		// Description: adcp_version SHOULD be echoed at the root of every response, in release
		// precision.
		// Policy: each occurrence of a repeated key is judged. The pattern is
		// core/version-envelope.json's (the normative one); error
		// results are judged only when they carry adcp_version, since transport-errors.mdx's canonical
		// error result has none; A2A interim progress data likewise (see ENV-03).
		{ID: "ENV-08", Transport: catalogue.MCP, Text: "echoes adcp_version at the root in release precision", Judge: judgeENV08},
		// Rule: ENV-09 · Spec: MCP CallToolResult; ADR 002 (MCP Response Format) · Since: 0.1.0 ·
		// Description: the tool result MUST be a valid CallToolResult: content an array of
		// items of a known type (a text item's text a string), isError a JSON boolean when
		// present, structuredContent an object when present (null is none of them). Judged
		// on the raw bytes, each occurrence of a repeated member.
		{ID: "ENV-09", Transport: catalogue.MCP, Text: "returns a valid CallToolResult", Judge: judgeENV09},
		// Rule: ENV-10 · Spec: RFC 8259 §2, §8.1; JSON-RPC 2.0 §5; MCP basic/transports (Streamable
		// HTTP) · Since: 0.2.0 ·
		// Description: every response body and SSE event data MUST be well-formed JSON in UTF-8;
		// a reply the harness cannot read fails with the reason, and depth alone never makes a
		// reply unreadable (the harness reads 100 000 levels, as JSON.parse does).
		// Policy: judged on the raw bytes of every exchange of every JSON-RPC call (initialize,
		// tools/list, tools/call, A2A messages, MCP Tasks); card fetches and webhook deliveries
		// are other rules'. A body is judged when it answers a JSON-RPC request with an id with a
		// 2xx status, or when its Content-Type says JSON; a 401 in text/plain is the HTTP layer's
		// (AUTH). An SSE event is judged when it is dispatched and of type "message" (the events a
		// JSON-RPC client parses; the MCP SDKs ignore other types), its data as JSON and its raw
		// block as UTF-8. A 2xx JSON body holding no response to the request fails (the reply is
		// unreadable); a stream that ends without one does not (MCP lets a client resume it),
		// unless it dispatched no message and gave no event id to resume from. A
		// response with neither result nor error fails (JSON-RPC 2.0 §5). A body the harness cut at
		// its size limit, or that the network broke off before the end, is a harness error: the
		// seller is not failed for bytes the harness never read. Lone surrogate escapes are
		// well-formed (RFC 8259 §8.2 leaves their meaning open) and pass.
		{ID: "ENV-10", Transport: catalogue.MCP, Text: "sends every reply as well-formed JSON in UTF-8", Judge: judgeENV10},
	}
}

func judgeENV01(s *evidence.Store, _ Options) Verdict {
	return eachReply("ENV-01", toolCalls(s), nil, noSuccess, func(r *reply) (bool, []finding) {
		if !r.success() {
			return false, nil
		}
		if r.data == nil && len(r.candidates()) > 0 {
			return false, nil // an error missing its isError flag: ERR-05
		}
		if r.data == nil {
			return true, []finding{{"/result", "carries no AdCP JSON object in structuredContent or content[]"}}
		}
		return true, nil
	})
}

func judgeENV02(s *evidence.Store, _ Options) Verdict {
	return eachReply("ENV-02", toolCalls(s), nil, noSuccess, func(r *reply) (bool, []finding) {
		if !r.success() || r.data == nil {
			return false, nil
		}
		if v, ok := r.data.Get("payload"); ok && rawjson.KindOf(v) == rawjson.KindObject {
			return true, []finding{{ptr(r.dataPtr, "payload"), "nests body fields"}}
		}
		return true, nil
	})
}

func judgeENV03(s *evidence.Store, _ Options) Verdict {
	return eachReply("ENV-03", toolCalls(s), nil, noStatus, func(r *reply) (bool, []finding) {
		check := func(rt root, required bool) []finding {
			return stringMember(rt, "status", required, func(st string) string {
				if !taskStatuses[st] {
					return quote(st) + " is not a task status"
				}
				return ""
			})
		}
		if r.success() && r.data != nil {
			return true, check(root{r.dataPtr, r.data}, !a2aInterim(r))
		}
		if r.isError {
			// An error body without status shows nothing of it (it is
			// optional there): only one carrying status is evidence.
			if rt, ok := r.errorRoot(); ok && len(values(rt.obj, "status")) > 0 {
				return true, check(rt, false)
			}
		}
		return false, nil
	})
}

// stringMember judges the member key of a body: absent (a finding when
// required), else each occurrence a string about which bad says nothing
// ("" when it is good).
func stringMember(rt root, key string, required bool, bad func(string) string) []finding {
	vs := values(rt.obj, key)
	if len(vs) == 0 && required {
		return []finding{{ptr(rt.ptr, key), "is absent"}}
	}
	var fs []finding
	for _, v := range vs {
		s, isStr := rawjson.StringValue(v)
		if !isStr {
			fs = append(fs, finding{ptr(rt.ptr, key), "is " + kindName(v) + ", not a string"})
		} else if what := bad(s); what != "" {
			fs = append(fs, finding{ptr(rt.ptr, key), what})
		}
	}
	return fs
}

// clientRoots returns the body a client reads from a reply. On MCP:
// structuredContent when it is an object (mcp-response-extraction.mdx, step 2); without it,
// the one text item a client extracts — on a success, the first that
// parses to an object other than an adcp_error-only one (mcp-response-extraction.mdx, step
// 3); on an error result, the first whose adcp_error is truthy (transport-errors.mdx).
// A text fallback beside structuredContent is ENV-05's to compare, and
// JSON text items after the extracted one are read by no client: the
// envelope rules do not judge them. On A2A: the body the extraction
// selects.
func clientRoots(r *reply) []root {
	if r.a2a != nil {
		return r.roots()
	}
	if r.sc != nil {
		return []root{{"/result/structuredContent", r.sc}}
	}
	for _, t := range r.texts {
		if t.obj == nil {
			continue
		}
		v, has := t.obj.Get("adcp_error")
		if r.isError && (!has || !rawjson.TruthyValue(v)) {
			continue
		}
		if !r.isError && has && t.obj.Len() == 1 {
			continue
		}
		return []root{{t.ptr + "#", t.obj}}
	}
	return nil
}

func judgeENV04(s *evidence.Store, _ Options) Verdict {
	return eachReply("ENV-04", toolCalls(s), nil, "no AdCP body observed", func(r *reply) (bool, []finding) {
		rts := clientRoots(r)
		var fs []finding
		for _, rt := range rts {
			for _, k := range []string{"task_status", "response_status"} {
				if _, ok := rt.obj.Get(k); ok {
					fs = append(fs, finding{ptr(rt.ptr, k), "is present"})
				}
			}
		}
		return len(rts) > 0, fs
	})
}

func judgeENV05(s *evidence.Store, _ Options) Verdict {
	return eachReply("ENV-05", toolCalls(s), nil, noSuccess, func(r *reply) (bool, []finding) {
		if !r.success() || r.data == nil {
			return false, nil
		}
		if r.sc == nil {
			return true, []finding{{"/result/structuredContent", "is absent"}}
		}
		for _, t := range r.texts {
			if t.obj == nil {
				continue
			}
			if !jsonEqual(r.sc.Raw(), t.obj.Raw()) {
				return true, []finding{{t.ptr, "differs from structuredContent"}}
			}
			return true, nil
		}
		return true, []finding{{"/result/content", "has no JSON text fallback"}}
	})
}

func judgeENV06(s *evidence.Store, _ Options) Verdict {
	return eachReply("ENV-06", toolCalls(s), nil, "no timestamp or replayed observed", func(r *reply) (bool, []finding) {
		seen := false
		var fs []finding
		for _, rt := range clientRoots(r) {
			for _, v := range values(rt.obj, "timestamp") {
				seen = true
				if ts, isStr := rawjson.StringValue(v); !isStr {
					fs = append(fs, finding{ptr(rt.ptr, "timestamp"), "is " + kindName(v) + ", not a string"})
				} else if !isRFC3339(ts) {
					fs = append(fs, finding{ptr(rt.ptr, "timestamp"), quote(ts) + " is not an RFC 3339 date-time"})
				}
			}
			for _, v := range values(rt.obj, "replayed") {
				seen = true
				if rawjson.KindOf(v) != rawjson.KindBool {
					fs = append(fs, finding{ptr(rt.ptr, "replayed"), "is " + kindName(v) + ", not a boolean"})
				}
			}
		}
		return seen, fs
	})
}

func judgeENV07(s *evidence.Store, _ Options) Verdict {
	return eachReply("ENV-07", toolCalls(s), nil, "no AdCP body observed", func(r *reply) (bool, []finding) {
		rts := clientRoots(r)
		var fs []finding
		for _, rt := range rts {
			seen := map[string]bool{}
			for _, m := range rt.obj.Members() {
				if strings.HasPrefix(m.Key, "_") && !seen[m.Key] {
					seen[m.Key] = true
					fs = append(fs, finding{ptr(rt.ptr, m.Key), "is a reserved underscore-prefixed key"})
				}
			}
		}
		return len(rts) > 0, fs
	})
}

func judgeENV08(s *evidence.Store, _ Options) Verdict {
	return eachReply("ENV-08", toolCalls(s), nil, "no tool result observed", func(r *reply) (bool, []finding) {
		check := func(rt root, required bool) []finding {
			return stringMember(rt, "adcp_version", required, func(ver string) string {
				if !releasePattern.MatchString(ver) {
					return quote(ver) + " is not release precision"
				}
				return ""
			})
		}
		if r.success() && r.data != nil {
			return true, check(root{r.dataPtr, r.data}, !a2aInterim(r))
		}
		if r.isError {
			if rt, ok := r.errorRoot(); ok {
				if _, has := rt.obj.Get("adcp_version"); has {
					return true, check(rt, false)
				}
			}
		}
		return false, nil
	})
}

// a2aInterimStates are the A2A task states whose data is progress data in
// status.message.parts (L0/a2a-response-format, "Interim A2A Responses").
var a2aInterimStates = map[string]bool{"working": true, "submitted": true, "input-required": true, "auth-required": true}

// a2aInterim reports whether r is an A2A task in an interim state.
func a2aInterim(r *reply) bool { return r.a2a != nil && a2aInterimStates[r.a2a.norm] }

// contentTypes are the MCP content block types (2025-06-18 and later).
var contentTypes = map[string]bool{"text": true, "image": true, "audio": true, "resource_link": true, "resource": true}

func judgeENV09(s *evidence.Store, _ Options) Verdict {
	return eachReply("ENV-09", toolCalls(s), nil, "no tool result observed", func(r *reply) (bool, []finding) {
		if r.call.Result == nil {
			return false, nil
		}
		if r.result == nil {
			return true, []finding{{"/result", "is " + kindName(r.call.Result) + ", not an object"}}
		}
		var fs []finding
		for _, v := range values(r.result, "isError") {
			if rawjson.KindOf(v) != rawjson.KindBool {
				fs = append(fs, finding{"/result/isError", "is " + kindName(v) + ", not a boolean"})
			}
		}
		for _, v := range values(r.result, "structuredContent") {
			if rawjson.KindOf(v) != rawjson.KindObject {
				fs = append(fs, finding{"/result/structuredContent", "is " + kindName(v) + ", not an object"})
			}
		}
		contents := values(r.result, "content")
		if len(contents) == 0 {
			fs = append(fs, finding{"/result/content", "is absent"})
		}
		for _, v := range contents {
			var items [][]byte
			if !rawjson.EachElement(v, func(_ int, it []byte) bool { items = append(items, it); return true }) {
				fs = append(fs, finding{"/result/content", "is " + kindName(v) + ", not an array"})
			}
			fs = append(fs, contentItems(items)...)
		}
		return true, fs
	})
}

// contentItems is ENV-09 on the items of one content array: objects of a
// known type, a text item's text a string.
func contentItems(items [][]byte) []finding {
	var fs []finding
	for i, it := range items {
		p := "/result/content/" + strconv.Itoa(i)
		o, err := rawjson.ParseObject(it)
		if err != nil {
			fs = append(fs, finding{p, "is " + kindName(it) + ", not an object"})
			continue
		}
		for _, tv := range values(o, "type") {
			t, isStr := rawjson.StringValue(tv)
			switch {
			case !isStr:
				fs = append(fs, finding{p + "/type", "is not a string"})
			case !contentTypes[t]:
				fs = append(fs, finding{p + "/type", quote(t) + " is not a known content type"})
			case t == "text":
				texts := values(o, "text")
				if len(texts) == 0 {
					fs = append(fs, finding{p + "/text", "is not a string"})
				}
				for _, v := range texts {
					if rawjson.KindOf(v) != rawjson.KindString {
						fs = append(fs, finding{p + "/text", "is not a string"})
					}
				}
			}
		}
		if len(values(o, "type")) == 0 {
			fs = append(fs, finding{p + "/type", "is not a string"})
		}
	}
	return fs
}

var rfc3339 = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$`)

// isRFC3339 reports whether s is an RFC 3339 date-time (section 5.6),
// lower-case t and z and a leap second included, with field ranges checked.
func isRFC3339(s string) bool {
	m := rfc3339.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	year, month, day := n(1), n(2), n(3)
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || n(4) > 23 || n(5) > 59 || n(6) > 60 {
		return false
	}
	if m[9] != "" && (n(9) > 23 || n(10) > 59) {
		return false
	}
	return true
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// rpcKinds are the calls that carry JSON-RPC messages (ENV-10).
var rpcKinds = map[evidence.Kind]bool{
	evidence.KindInitialize: true, evidence.KindToolsList: true, evidence.KindToolCall: true, evidence.KindTask: true,
}

func judgeENV10(s *evidence.Store, _ Options) Verdict {
	t := newTally("ENV-10")
	for _, c := range s.Calls(func(c evidence.Call) bool { return rpcKinds[c.Kind] }) {
		if !t.account(c) {
			continue
		}
		fs, harness, seen := readable(c)
		switch {
		case len(fs) > 0 || (seen && harness == ""):
			t.judged(c, fs)
		case harness != "":
			c.HarnessError = harness
			t.errored = append(t.errored, c)
		}
	}
	return t.verdict("no JSON-RPC reply observed")
}

// readable is ENV-10 on one call: the findings, a harness error when a
// reply could not be read through no fault of the seller, and whether any
// reply was examined.
func readable(c evidence.Call) (fs []finding, harness string, seen bool) {
	if len(c.Exchanges) == 0 && c.Message != nil {
		// A call recorded without its exchanges: the message is all there is.
		if err := rawjson.CheckText(c.Message); err != nil {
			return []finding{{"", "the reply " + err.Error()}}, "", true
		}
		return rpcShape(c), "", true
	}
	event := 0
	for _, x := range c.Exchanges {
		if x.Status == 0 {
			continue
		}
		if x.Truncated {
			harness = "the reply was cut at the harness's size limit (" + wire.Sanitize(x.Error, 120) + ")"
			continue
		}
		if x.SSE || len(x.Events) > 0 {
			dispatched, resumable := false, false
			for _, ev := range x.Events {
				i := event
				event++
				resumable = resumable || ev.HasID
				if !ev.Dispatch || (ev.Type != "" && ev.Type != "message") {
					continue
				}
				dispatched = true
				seen = true
				p := "/events/" + strconv.Itoa(i)
				if !utf8.Valid(ev.Raw) {
					fs = append(fs, finding{p, "is not UTF-8"})
					continue
				}
				if err := rawjson.CheckText([]byte(ev.Data)); err != nil {
					fs = append(fs, finding{p, "data " + err.Error()})
				}
			}
			if _, request := wire.RequestID(x.RequestBody); request && !dispatched && !resumable && c.Message == nil &&
				x.Status >= 200 && x.Status < 300 && x.Complete {
				// Nothing a client can read, nor an event id to resume
				// from: the reply is lost (a JSON body under
				// text/event-stream, say).
				seen = true
				fs = append(fs, finding{"", "the text/event-stream body carries no message event and no event id to resume from"})
			}
			continue
		}
		id, request := wire.RequestID(x.RequestBody)
		ok2xx := x.Status >= 200 && x.Status < 300
		if !(request && ok2xx) && !jsonContentType(x.ResponseHeaders.Get("Content-Type")) {
			continue
		}
		if len(x.ResponseBody) == 0 && !ok2xx {
			continue
		}
		seen = true
		if err := rawjson.CheckText(x.ResponseBody); err != nil {
			if !x.Complete && x.Error != "" {
				harness = "the reply was broken off before its end (" + wire.Sanitize(x.Error, 120) + ")"
				continue
			}
			fs = append(fs, finding{"", "the response body " + err.Error()})
			continue
		}
		if request && ok2xx && c.Message == nil {
			if m, found := wire.ResponseIn(x.ResponseBody, id); found {
				if more := rpcShape(evidence.Call{Message: m}); len(more) > 0 {
					fs = append(fs, more...)
				} else {
					harness = "the harness did not read the reply the body holds"
				}
			} else {
				fs = append(fs, finding{"", "the response body holds no JSON-RPC response to the request (id " + wire.Sanitize(string(id), 32) + ")"})
			}
		}
	}
	if c.Message != nil {
		fs = append(fs, rpcShape(c)...)
	}
	return fs, harness, seen
}

// rpcShape fails a JSON-RPC response with neither result nor error (JSON-RPC
// 2.0 §5: exactly one of them is included); the judges would read nothing.
func rpcShape(c evidence.Call) []finding {
	if c.Result != nil || c.RPCError != nil {
		return nil
	}
	if result, rpcErr, _, err := wire.SplitResponse(c.Message); err == nil && (result != nil || rpcErr != nil) {
		return nil
	}
	if o, err := rawjson.ParseObject(c.Message); err != nil || o == nil {
		return []finding{{"", "the reply is not a JSON object"}}
	}
	return []finding{{"", "the response holds neither result nor error"}}
}

// jsonContentType reports whether a Content-Type names JSON
// (application/json or a +json type).
func jsonContentType(ct string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(ct), ";")
	mt = strings.TrimSpace(mt)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
