package suites

import (
	"errors"
	"strconv"
	"strings"
	"unicode"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// reservedRPC maps the JSON-RPC codes reserved for infrastructure
// rejections before tool dispatch (transport-errors.mdx) to the AdCP codes they carry.
var reservedRPC = map[int64]bool{-32029: true, -32028: true, -32027: true}

// infraCodes are the AdCP codes the reserved JSON-RPC codes carry.
var infraCodes = map[string]bool{"RATE_LIMITED": true, "AUTH_MISSING": true, "AUTH_REQUIRED": true, "SERVICE_UNAVAILABLE": true}

const noErrorReply = "no error reply observed"

func errChecks() []Check {
	return []Check{
		// Rule: ERR-01 · Spec: transport-errors.mdx (Layer Separation, Tool-Level Errors); §4.9, §4.11 · Since: 0.1.0 ·
		// Description: an application error MUST come back as a tool result with isError: true,
		// not as a success result and not as a JSON-RPC error. isError is the JSON true on each
		// occurrence of a repeated key.
		// Policy: judged on the error probes and on every reply that carries an error in a
		// form a client reads as one. A probe whose error the spec makes mandatory (adcp_version
		// "99.0" or adcp_major_version 99 → VERSION_UNSUPPORTED; an unknown id on the
		// task-status tool → REFERENCE_NOT_FOUND) answered with a success fails; a lenient probe
		// (a wrong-typed argument a seller may coerce, an unknown id a list tool may answer with
		// an empty list) answered with a success is recorded, not judged. An error body without
		// isError (an adcp_error with no success body a client extracts, or beside status
		// "failed") fails on any call; a success body carrying a stray adcp_error besides is
		// ERR-05's (one defect, one rule), except on a mandatory probe. A JSON-RPC error without data.adcp_error is judged only on the error probes
		// (where the harness knows the cause is an application error); -32602 (invalid params)
		// to the wrong-typed-argument probe is accepted, since MCP up to 2025-06-18 lists
		// invalid arguments among protocol errors and the error-compliance storyboard exempts
		// malformed requests. A JSON-RPC error carrying an infrastructure AdCP code
		// (RATE_LIMITED, AUTH_*, SERVICE_UNAVAILABLE) is a rejection before dispatch, not the
		// application error the probe asked for: not judged here (ERR-06 judges its code).
		{ID: "ERR-01", Transport: catalogue.MCP, Text: "returns application errors as tool results flagged isError", Judge: judgeERR01},
		// Rule: ERR-02 · Spec: transport-errors.mdx (Client Detection Order) · Since: 0.1.0 ·
		// Description: an isError: true result MUST carry an AdCP error the detection order
		// extracts: structuredContent.adcp_error, or a content[] text object with adcp_error,
		// that passes validate().
		{ID: "ERR-02", Transport: catalogue.MCP, Text: "carries an extractable adcp_error on every isError result", Judge: judgeERR02},
		// Rule: ERR-03 · Spec: transport-errors.mdx (Servers SHOULD support both paths) · Since: 0.1.0 ·
		// Description: an error result SHOULD carry both structuredContent.adcp_error and
		// content[0].text holding the JSON {"adcp_error":{…}}, equal to each other.
		// Policy: other keys beside adcp_error in the text JSON (context, adcp_version) are
		// allowed; only the two adcp_error values are compared.
		{ID: "ERR-03", Transport: catalogue.MCP, Text: "carries the error in structuredContent and as JSON in the first text item", Judge: judgeERR03},
		// Rule: ERR-04 · Spec: transport-errors.mdx (Terse text) · Since: 0.1.0 ·
		// Description: human prose on an error result SHOULD be one terse sentence in a second
		// content item, not a repeat of the error.
		// Policy: terse means one item, one line, one sentence (see sentenceBreak), at most 256
		// bytes (the length buyers truncate an error message to); the position is judged only
		// when a JSON error text exists.
		{ID: "ERR-04", Transport: catalogue.MCP, Text: "keeps human prose on an error result to one terse second item", Judge: judgeERR04},
		// Rule: ERR-05 · Spec: mcp-response-extraction.mdx, 002 (Client Library Requirements #4); §4.10 · Since: 0.1.0 ·
		// Description: adcp_error MUST NOT appear in a result whose isError is absent or false.
		// Policy: a falsy adcp_error (null) is not an error signal and is not failed. A success
		// with no body a client reads (an empty result) has nowhere to carry one: not judged.
		{ID: "ERR-05", Transport: catalogue.MCP, Text: "never puts adcp_error in a result not flagged isError", Judge: judgeERR05},
		// Rule: ERR-06 · Spec: transport-errors.mdx (Reserved JSON-RPC Codes); §4.11 · Since: 0.1.0 ·
		// Description: a JSON-RPC error carrying data.adcp_error MUST use a reserved code
		// (-32029, -32028, -32027) with an infrastructure AdCP code; every other AdCP code uses
		// the tool-level path.
		// Policy: the transport-errors page lets implementations collapse the three reserved
		// codes into one to avoid fingerprinting, so any reserved code may carry any of
		// RATE_LIMITED, AUTH_MISSING, AUTH_REQUIRED (deprecated alias), SERVICE_UNAVAILABLE. A
		// code is an integer by value (-32029.0 is -32029, as JSON Schema and JavaScript read it).
		{ID: "ERR-06", Transport: catalogue.MCP, Text: "carries adcp_error in JSON-RPC errors only under the reserved codes", Judge: judgeERR06},
		// Rule: ERR-07 · Spec: transport-errors.mdx (A2A Binding); §4.17 · Since: 0.1.0 ·
		// Description: a fatal failure MUST be a task in state failed (or rejected) whose
		// artifacts[0] last DataPart is {"adcp_error":{…}}. Judged on the error probes'
		// replies carrying adcp_error in a task (a stray adcp_error on a success is
		// ERR-05's); a JSON-RPC error (a routing failure before the handler ran) is not a
		// task and is left to the EOBJ rules.
		{ID: "ERR-07", Transport: catalogue.A2A, Text: "returns a fatal failure as a failed task with adcp_error in its artifact", Judge: judgeERR07},
		// Rule: ERR-08 · Spec: L3/error-handling (Discriminated rejection arms); §4.15 · Since: 0.1.0 ·
		// Description: a business rejection (status "rejected") MUST be a successful invocation:
		// isError false and no adcp_error.
		{ID: "ERR-08", Transport: catalogue.MCP, Text: "returns business rejections as successful results without adcp_error", Judge: judgeERR08},
	}
}

// mandatoryError names the error a mandatory error probe expects.
func mandatoryError(c evidence.Call) string {
	if c.Has(evidence.PurposeErrorUnknownTask) {
		return "REFERENCE_NOT_FOUND"
	}
	return "VERSION_UNSUPPORTED"
}

func judgeERR01(s *evidence.Store, _ Options) Verdict {
	return eachReply("ERR-01", toolCalls(s), errorProbe, noErrorReply, func(r *reply) (bool, []finding) {
		if r.rpcErr != nil {
			code, _ := r.rpcCode()
			for _, c := range r.candidates() {
				if !c.jsonrpc {
					continue
				}
				if infraCodes[codeOf(c)] {
					return false, nil // an infrastructure rejection: its code is ERR-06's
				}
				return true, []finding{{"/error", "carries application error " + quote(codeOf(c)) + " as a JSON-RPC error"}}
			}
			if !errorProbe(r.call) {
				return false, nil
			}
			if code == -32602 && r.call.Has(evidence.PurposeErrorWrongType) {
				return true, nil
			}
			return true, []finding{{"/error/code", rpcCodeText(r) + " answers an application error as a JSON-RPC error"}}
		}
		if r.result == nil {
			return false, nil
		}
		if r.isErrorRaw != nil && r.isError {
			// Each occurrence of a repeated isError is true: a parser
			// keeping the first reads that one.
			for _, v := range values(r.result, "isError") {
				if string(trim(v)) != "true" {
					return true, []finding{{"/result/isError", "is " + wireText(v) + " (" + kindName(v) + "), not true"}}
				}
			}
			return true, nil
		}
		var inResult []candidate
		for _, c := range r.candidates() {
			if !c.jsonrpc {
				inResult = append(inResult, c)
			}
		}
		// An error body: nothing else a client extracts, or a body whose
		// status says it failed (not a success with a stray adcp_error).
		st, _ := str(r.data, "status")
		errorBody := r.data == nil || st == "failed"
		switch {
		case len(inResult) > 0 && (errorBody || mandatoryErrorProbe(r.call)):
			return true, []finding{{inResult[0].ptr, "is returned without isError: true"}}
		case mandatoryErrorProbe(r.call):
			what := "is absent"
			if r.isErrorRaw != nil {
				what = "is " + wireText(r.isErrorRaw)
			}
			return true, []finding{{"/result/isError", what + ": the call must fail with " + mandatoryError(r.call) + ", and it succeeds"}}
		}
		return false, nil
	})
}

func judgeERR02(s *evidence.Store, _ Options) Verdict {
	return eachReply("ERR-02", toolCalls(s), errorProbe, "no isError result observed", func(r *reply) (bool, []finding) {
		if r.result == nil || !r.isError {
			return false, nil
		}
		x, err := extract.MCPError(r.call.Result)
		switch {
		case err != nil:
			return true, []finding{{"/result", "is not a JSON object"}}
		case x.Error != nil:
			return true, nil
		case x.Rejected != nil:
			return true, []finding{discarded(r, x)}
		}
		return true, []finding{{"/result", "carries no adcp_error in structuredContent or content[]"}}
	})
}

// discarded locates the candidate the detection order read and validate()
// discarded: inside a parsed text item the pointer steps in with "#"
// (/result/content/0/text#/adcp_error/code), where extract can only name the
// text member.
func discarded(r *reply, x extract.ErrorExtraction) finding {
	for _, c := range r.candidates() {
		if c.jsonrpc {
			continue
		}
		var verr *extract.ValidationError
		if errors.As(extract.ValidateError(c.raw), &verr) {
			return finding{c.ptr + verr.Pointer, verr.Reason}
		}
		break
	}
	return finding{"/result" + x.Rejected.Pointer, x.Rejected.Reason}
}

func judgeERR03(s *evidence.Store, _ Options) Verdict {
	return eachReply("ERR-03", toolCalls(s), errorProbe, "no isError result observed", func(r *reply) (bool, []finding) {
		if r.result == nil || !r.isError {
			return false, nil
		}
		var scErr []byte
		scWhat := "is absent"
		if r.sc != nil {
			if v, ok := r.sc.Get("adcp_error"); ok && rawjson.KindOf(v) == rawjson.KindObject {
				scErr = v
			} else if ok {
				scWhat = "is " + kindName(v) + ", not an error object"
			}
		}
		var textErr []byte
		if len(r.texts) > 0 && r.texts[0].ptr == "/result/content/0/text" && r.texts[0].obj != nil {
			if v, ok := r.texts[0].obj.Get("adcp_error"); ok && rawjson.KindOf(v) == rawjson.KindObject {
				textErr = v
			}
		}
		var fs []finding
		if scErr == nil {
			fs = append(fs, finding{"/result/structuredContent/adcp_error", scWhat})
		}
		if textErr == nil {
			fs = append(fs, finding{"/result/content/0/text", `is not the JSON {"adcp_error":{…}}`})
		}
		if scErr != nil && textErr != nil && !jsonEqual(scErr, textErr) {
			fs = append(fs, finding{"/result/content/0/text#/adcp_error", "differs from structuredContent.adcp_error"})
		}
		return true, fs
	})
}

// maxProse bounds the terse human sentence of an error result, in bytes.
const maxProse = 256

func judgeERR04(s *evidence.Store, _ Options) Verdict {
	return eachReply("ERR-04", toolCalls(s), errorProbe, "no error result carried human prose", func(r *reply) (bool, []finding) {
		if r.result == nil || !r.isError {
			return false, nil
		}
		jsonAt, proseAt := -1, []int{}
		for i, t := range r.texts {
			if t.obj != nil {
				if v, ok := t.obj.Get("adcp_error"); ok && rawjson.TruthyValue(v) && jsonAt < 0 {
					jsonAt = i
				}
				continue
			}
			proseAt = append(proseAt, i)
		}
		if len(proseAt) == 0 {
			return false, nil
		}
		var fs []finding
		first := r.texts[proseAt[0]]
		if jsonAt >= 0 && proseAt[0] < jsonAt {
			fs = append(fs, finding{first.ptr, "comes before the JSON error text"})
		}
		if len(proseAt) > 1 {
			fs = append(fs, finding{r.texts[proseAt[1]].ptr, "is a further prose item; one terse sentence is expected"})
		}
		for _, i := range proseAt {
			t := r.texts[i]
			switch {
			case len(t.text) > maxProse:
				fs = append(fs, finding{t.ptr, "is " + strconv.Itoa(len(t.text)) + " bytes, not one terse sentence"})
			case strings.ContainsAny(strings.TrimSpace(t.text), "\n\r"):
				fs = append(fs, finding{t.ptr, "spans several lines, not one terse sentence"})
			case sentenceBreak(t.text) >= 0:
				fs = append(fs, finding{t.ptr, "holds more than one sentence (a second starts at byte " + strconv.Itoa(sentenceBreak(t.text)) + "), not one terse sentence"})
			}
		}
		return true, fs
	})
}

// abbreviations are words a full stop follows inside a sentence.
var abbreviations = map[string]bool{"e.g": true, "i.e": true, "etc": true, "vs": true, "approx": true, "mr": true, "mrs": true,
	"ms": true, "dr": true, "st": true, "no": true, "inc": true, "ltd": true, "min": true, "max": true, "est": true, "cf": true}

// sentenceBreak returns the byte offset where a second sentence of s
// starts, or -1 for one sentence. A sentence ends at a run of ., !, ? or …
// (closing quotes and brackets may follow) that whitespace and an
// upper-case letter or a digit follow, unless the run is one full stop
// after an abbreviation or a single letter (an initial: "U.S. Market");
// the CJK full stop, exclamation and question marks end one before any
// further text. Seed 002's "Rate limited — retry in 5s." is one sentence;
// transport-errors.mdx's A2A TextPart "Rate limit exceeded. Retry in 5 seconds." is two.
func sentenceBreak(s string) int {
	s = strings.TrimSpace(s)
	rs := []rune(s)
	at := func(i int) int { return len(string(rs[:i])) }
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == '。' || r == '！' || r == '？' {
			j := i + 1
			for j < len(rs) && strings.ContainsRune("」』）】\"'”’", rs[j]) {
				j++
			}
			for j < len(rs) && unicode.IsSpace(rs[j]) {
				j++
			}
			if j < len(rs) {
				return at(j)
			}
			continue
		}
		if r != '.' && r != '!' && r != '?' && r != '…' {
			continue
		}
		start := i
		for i+1 < len(rs) && strings.ContainsRune(".!?…", rs[i+1]) {
			i++
		}
		j := i + 1
		for j < len(rs) && strings.ContainsRune(")]}\"'”’»", rs[j]) {
			j++
		}
		k := j
		for k < len(rs) && unicode.IsSpace(rs[k]) {
			k++
		}
		if k == j || k == len(rs) || !(unicode.IsUpper(rs[k]) || unicode.IsDigit(rs[k])) {
			continue
		}
		if i == start && r == '.' {
			w := start
			for w > 0 && (unicode.IsLetter(rs[w-1]) || rs[w-1] == '.') {
				w--
			}
			word := strings.ToLower(string(rs[w:start]))
			if len([]rune(word)) == 1 || abbreviations[word] || strings.Contains(word, ".") {
				continue
			}
		}
		return at(k)
	}
	return -1
}

func judgeERR05(s *evidence.Store, _ Options) Verdict {
	return eachReply("ERR-05", toolCalls(s), nil, noSuccess, func(r *reply) (bool, []finding) {
		// A success with no body a client reads (an empty result, an A2A
		// task without a DataPart) has nowhere to carry adcp_error: no
		// evidence.
		if !r.success() || (len(r.roots()) == 0 && len(r.candidates()) == 0) {
			return false, nil
		}
		what := "appears on a result not flagged isError: true"
		if r.a2a != nil {
			what = "appears on a task in state " + quote(r.a2a.state) + ", not failed or rejected"
		}
		var fs []finding
		for _, c := range r.candidates() {
			fs = append(fs, finding{c.ptr, what})
		}
		return true, fs
	})
}

func judgeERR06(s *evidence.Store, _ Options) Verdict {
	calls := s.Calls()
	return eachReply("ERR-06", calls, errorProbe, "no JSON-RPC error carrying data.adcp_error observed", func(r *reply) (bool, []finding) {
		if r.rpcErr == nil {
			return false, nil
		}
		code, isInt := r.rpcCode()
		for _, c := range r.candidates() {
			if !c.jsonrpc {
				continue
			}
			switch {
			case !isInt || !reservedRPC[code]:
				return true, []finding{{"/error/code", rpcCodeText(r) + " is not a reserved code, yet carries data.adcp_error"}}
			case !infraCodes[codeOf(c)]:
				return true, []finding{{c.ptr + "/code", quote(codeOf(c)) + " may not travel as a JSON-RPC error"}}
			}
			return true, nil
		}
		return false, nil
	})
}

func judgeERR07(s *evidence.Store, _ Options) Verdict { return judgeERR07A2A(s) }

func judgeERR08(s *evidence.Store, _ Options) Verdict {
	return eachReply("ERR-08", toolCalls(s), nil, "no business rejection observed", func(r *reply) (bool, []finding) {
		rejected := false
		for _, rt := range r.roots() {
			if st, _ := str(rt.obj, "status"); st == "rejected" {
				rejected = true
			}
		}
		if !rejected {
			return false, nil
		}
		var fs []finding
		switch {
		case r.isError && r.a2a != nil:
			fs = append(fs, finding{r.a2a.taskPtr + "/status/state", quote(r.a2a.state) + " carries a rejected body; a business rejection is completed"})
		case r.isError:
			fs = append(fs, finding{"/result/isError", "is set on a rejected body"})
		}
		for _, c := range r.candidates() {
			fs = append(fs, finding{c.ptr, "appears on a rejected body"})
		}
		return true, fs
	})
}

// codeOf returns a candidate's code when it is a string.
func codeOf(c candidate) string {
	s, _ := str(c.obj, "code")
	return s
}

func rpcCodeText(r *reply) string {
	if v, ok := r.rpcErr.Get("code"); ok {
		return wireText(v)
	}
	return "an absent code"
}

// wireText renders a raw JSON value for a message, bounded.
func wireText(v []byte) string {
	t := string(trim(v))
	if len(t) > 40 {
		t = t[:40] + "…"
	}
	return quote(t)
}

func trim(b []byte) []byte { return []byte(strings.TrimSpace(string(b))) }
