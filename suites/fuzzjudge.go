package suites

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The rules of adcp-conform fuzz. They judge only the calls that command
// makes (the evidence.PurposeFuzz* purposes), and only a fuzz run judges
// them (Options.Fuzz). A fuzz turn is judged by the two-path oracle: a
// schema-valid request is either accepted, with a reply its response schema
// takes (FUZZ-01), or rejected, with a well-formed AdCP error (FUZZ-02);
// anything else at the transport is FUZZ-04. FUZZ-03 and FUZZ-05 judge
// the pairs the command makes for them.

func fuzzChecks() []Check {
	return []Check{
		// Rule: FUZZ-01 · Spec: transport-errors.mdx §Layer Separation; §4.5 ·
		// Since: 0.1.0 · Description: a schema-valid request the seller
		// accepts MUST get a reply whose AdCP payload validates against the
		// task's response schema.
		{ID: "FUZZ-01", Transport: catalogue.MCP, Text: "answers an accepted schema-valid request with a reply its response schema takes", Judge: judgeFUZZ01},
		// Rule: FUZZ-02 · Spec: transport-errors.mdx §Layer Separation,
		// §Seller-Specific Error Codes; core/error.json · Since: 0.1.0 ·
		// Description: a rejection MUST be a well-formed AdCP error on the
		// task's reply, its code uppercase snake case.
		{ID: "FUZZ-02", Transport: catalogue.MCP, Text: "rejects a schema-valid request with a well-formed AdCP error", Judge: judgeFUZZ02},
		// Rule: FUZZ-03 · Spec: error-handling.mdx §Not-found precedence ·
		// Since: 0.1.0 · Description: an unknown id MUST be rejected with a
		// standard not-found code, never a minted *_NOT_FOUND code.
		{ID: "FUZZ-03", Transport: catalogue.MCP, Text: "rejects an unknown id with a standard not-found code", Judge: judgeFUZZ03},
		// Rule: FUZZ-04 · Spec: transport-errors.mdx §Layer Separation ·
		// Since: 0.1.0 · Description: a schema-valid request MUST NOT meet
		// a transport-level fault (5xx or JSON-RPC error without an AdCP
		// error, a reply that is no JSON-RPC response, a timeout).
		{ID: "FUZZ-04", Transport: catalogue.MCP, Text: "answers every schema-valid request without a transport-level fault", Judge: judgeFUZZ04},
		// Rule: FUZZ-05 · Spec: error-handling.mdx §Uniform response for
		// inaccessible references · Since: 0.1.0 · Description: another
		// tenant's id and an unknown id MUST get the same response on every
		// observable channel.
		{ID: "FUZZ-05", Transport: catalogue.MCP, Text: "answers another tenant's id as it answers an unknown id", Judge: judgeFUZZ05},
	}
}

// The probe IDs of a fuzz run. A turn is FuzzPrefix + "s<seed>/<tool>/t<NNN>"
// (over A2A, "a2a/" first); its shrink calls add FuzzShrinkInfix + "<NNN>",
// its unknown-id repeat FuzzUnknownSuffix; the cross-tenant pair of a tool
// is FuzzPrefix + "s<seed>/<tool>/tenant2" + FuzzOtherSuffix or
// FuzzUnknownSuffix.
const (
	FuzzPrefix        = "fuzz/"
	FuzzShrinkInfix   = "/shrink/"
	FuzzUnknownSuffix = "/unknown"
	FuzzOtherSuffix   = "/other"
)

// FuzzClass is what the two-path oracle makes of one reply.
type FuzzClass string

// The classes of a reply.
const (
	// FuzzAccepted: a success whose payload validates.
	FuzzAccepted FuzzClass = "accepted"
	// FuzzRejected: a well-formed AdCP error.
	FuzzRejected FuzzClass = "rejected"
	// FuzzFailed: neither; FuzzOutcome.Rule names the rule it breaks.
	FuzzFailed FuzzClass = "failed"
	// FuzzUnjudged: nothing to judge (not run, a harness error, a refusal
	// before the application, another release's reply); Why says which.
	FuzzUnjudged FuzzClass = "unjudged"
)

// FuzzOutcome is the oracle's verdict on one call.
type FuzzOutcome struct {
	Class FuzzClass
	// Rule is the rule a failed reply breaks (FUZZ-01, FUZZ-02, FUZZ-04).
	Rule string
	// Findings say where and how, the first one first.
	Findings []Finding
	// Code is a rejection's error code.
	Code string
	// Timeout: the call had no reply within its timeout (FUZZ-04 once the
	// same request times out again).
	Timeout bool
	// Why is the reason a call is unjudged.
	Why string
	// RetryAfter is a rejection's retry_after in seconds, when a number.
	RetryAfter float64
}

// Same reports whether two outcomes fail the same way: the same class,
// rule and, for a rejection, code. A shrink keeps a smaller request only
// while it fails as the turn did.
func (o FuzzOutcome) Same(p FuzzOutcome) bool {
	return o.Class == p.Class && o.Rule == p.Rule && o.Timeout == p.Timeout
}

// timeoutPrefixes start the harness error of a call the seller did not
// answer within its timeout (probes/mcp, probes/a2a).
var timeoutPrefixes = []string{"no response within the call timeout", "no JSON-RPC response within the call timeout"}

// IsTimeout reports whether a call went unanswered within its timeout.
func IsTimeout(c evidence.Call) bool {
	for _, p := range timeoutPrefixes {
		if strings.HasPrefix(c.HarnessError, p) {
			return true
		}
	}
	return false
}

// upperSnake is the shape of every AdCP error code: the standard codes and
// the vendor codes X_{VENDOR}_{CODE} (transport-errors.mdx §Seller-Specific
// Error Codes).
var upperSnake = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// FuzzOracle judges one call of a fuzz run by the two-path oracle, from its
// raw reply: accepted (a success whose payload the task's response schema
// takes), rejected (a well-formed AdCP error), failed (the rule it breaks),
// or unjudged. set is the release the requests were generated from.
// It parses the reply afresh (the engine judges each call once, as it
// lands); the judges read the replies they share through the memo.
func FuzzOracle(c evidence.Call, set *schemas.Set) FuzzOutcome {
	return fuzzOracle(c, set, parseReplyOnce)
}

func fuzzOracle(c evidence.Call, set *schemas.Set, parse func(evidence.Call) *reply) FuzzOutcome {
	fail := func(rule, ptr, what string) FuzzOutcome {
		return FuzzOutcome{Class: FuzzFailed, Rule: rule, Findings: []Finding{{ProbeID: c.ProbeID, Pointer: ptr, What: what}}}
	}
	switch {
	case c.NotRun != "":
		return FuzzOutcome{Class: FuzzUnjudged, Why: "not run: " + c.NotRun}
	case IsTimeout(c):
		o := fail("FUZZ-04", "", "no reply within the call timeout")
		o.Timeout = true
		return o
	case c.HarnessError != "":
		return FuzzOutcome{Class: FuzzUnjudged, Why: "harness error: " + c.HarnessError}
	case c.Unreached() != "":
		return FuzzOutcome{Class: FuzzUnjudged, Why: c.Unreached()}
	case c.Message == nil:
		return fail("FUZZ-04", "", fmt.Sprintf("HTTP %d %s with no JSON-RPC response", c.HTTPStatus, http.StatusText(c.HTTPStatus)))
	}
	r := parse(c)
	var cand *candidate
	for _, k := range r.candidates() {
		if k.obj != nil {
			cand = &k
			break
		}
	}
	if r.rpcErr != nil {
		code, _ := r.rpcCode()
		if cand == nil {
			return fail("FUZZ-04", "/error", fmt.Sprintf("JSON-RPC error %d (HTTP %d) without an AdCP error", code, c.HTTPStatus))
		}
		return fail("FUZZ-02", "/error", fmt.Sprintf("the AdCP error comes as JSON-RPC error %d, not on the task's reply", code))
	}
	if r.result == nil {
		return fail("FUZZ-04", "", fmt.Sprintf("HTTP %d: a JSON-RPC response with neither a result object nor an error object", c.HTTPStatus))
	}
	if r.success() && cand == nil {
		return acceptedOrNot(c, r, set)
	}
	if cand == nil {
		what := "isError is true but no adcp_error is extracted"
		if r.a2a != nil {
			what = "the task failed but no adcp_error is extracted"
		}
		return fail("FUZZ-02", "/result", what)
	}
	if set != nil {
		vs, err := set.Error(cand.raw)
		if err != nil {
			return FuzzOutcome{Class: FuzzUnjudged, Why: "core/error.json could not be applied: " + wire.Sanitize(err.Error(), 200)}
		}
		if len(vs) > 0 {
			fs := violations(cand.ptr, vs)
			o := fail("FUZZ-02", fs[0].ptr, fs[0].what)
			for _, f := range fs[1:] {
				o.Findings = append(o.Findings, Finding{ProbeID: c.ProbeID, Pointer: f.ptr, What: f.what})
			}
			return o
		}
	}
	code, ok := str(cand.obj, "code")
	if !ok || !upperSnake.MatchString(code) {
		return fail("FUZZ-02", cand.ptr+"/code", fmt.Sprintf("%s is not an uppercase snake case code", quote(code)))
	}
	if strings.HasSuffix(code, "_NOT_FOUND") && !notFoundCodes(set)[code] {
		return FuzzOutcome{Class: FuzzFailed, Rule: "FUZZ-03", Code: code, Findings: []Finding{{ProbeID: c.ProbeID, Pointer: cand.ptr + "/code",
			What: fmt.Sprintf("rejected with %s, a not-found code the release does not define: an unknown id takes the resource's standard *_NOT_FOUND code or REFERENCE_NOT_FOUND", quote(code))}}}
	}
	out := FuzzOutcome{Class: FuzzRejected, Code: code}
	if v, ok := cand.obj.Get("retry_after"); ok {
		out.RetryAfter, _ = number(v)
	}
	return out
}

// acceptedOrNot validates a success's payload against the task's response
// schema.
func acceptedOrNot(c evidence.Call, r *reply, set *schemas.Set) FuzzOutcome {
	if r.data == nil {
		return FuzzOutcome{Class: FuzzFailed, Rule: "FUZZ-01", Findings: []Finding{{ProbeID: c.ProbeID, Pointer: "/result", What: "a success with no AdCP payload a client extracts"}}}
	}
	if set == nil {
		return FuzzOutcome{Class: FuzzUnjudged, Why: noSchemas}
	}
	if v, ok := str(r.data, "adcp_version"); ok && !set.Serves(v) {
		return FuzzOutcome{Class: FuzzUnjudged, Why: "the reply is of release " + quote(v) + ", not the schemas' " + set.Release()}
	}
	vs, err := set.Response(c.Tool, r.data.Raw())
	switch {
	case errors.Is(err, schemas.ErrNoSchema):
		return FuzzOutcome{Class: FuzzUnjudged, Why: "the release has no response schema for " + quote(c.Tool)}
	case err != nil:
		return FuzzOutcome{Class: FuzzUnjudged, Why: "the response schema could not be applied: " + wire.Sanitize(err.Error(), 200)}
	case len(vs) > 0:
		o := FuzzOutcome{Class: FuzzFailed, Rule: "FUZZ-01"}
		for _, f := range violations(r.dataPtr, vs) {
			o.Findings = append(o.Findings, Finding{ProbeID: c.ProbeID, Pointer: f.ptr, What: f.what})
		}
		return o
	}
	return FuzzOutcome{Class: FuzzAccepted}
}

// fuzzTurns are the calls the two-path oracle judges: every turn and every
// shrink call, in probe-ID order.
func fuzzTurns(s *evidence.Store) []evidence.Call {
	var out []evidence.Call
	for _, c := range toolCalls(s) {
		if c.Has(evidence.PurposeFuzz) || c.Has(evidence.PurposeFuzzShrink) {
			out = append(out, c)
		}
	}
	return out
}

// FuzzTurnOf returns the probe ID of the turn a shrink call or an
// unknown-id repeat belongs to (the ID itself for a turn).
func FuzzTurnOf(probeID string) string {
	if i := strings.LastIndex(probeID, FuzzShrinkInfix); i >= 0 {
		return probeID[:i]
	}
	return strings.TrimSuffix(withoutRetry(probeID), FuzzUnknownSuffix)
}

// FuzzRetryInfix comes before the number of a repeat of a call the seller
// refused with RATE_LIMITED ("…/t003/retry/1").
const FuzzRetryInfix = "/retry/"

// withoutRetry drops a trailing retry number from a probe ID.
func withoutRetry(id string) string {
	if i := strings.LastIndex(id, FuzzRetryInfix); i >= 0 && !strings.Contains(id[i+len(FuzzRetryInfix):], "/") {
		return id[:i]
	}
	return id
}

// transient reports whether a rejection says nothing about the request:
// the seller asks to be called again later (its recovery is transient:
// RATE_LIMITED, SERVICE_UNAVAILABLE).
func transient(r *reply) bool {
	c := firstError(r)
	if c == nil {
		return false
	}
	rec, _ := str(c.obj, "recovery")
	code, _ := str(c.obj, "code")
	return rec == "transient" || code == "RATE_LIMITED" || code == "SERVICE_UNAVAILABLE"
}

// Shrunk is the smallest request found that fails as a turn did: the last
// shrink call of the turn that still failed the same way.
type Shrunk struct {
	Turn  evidence.Call
	Last  evidence.Call // the turn itself when no shrink call failed
	Calls int           // the shrink calls made
}

// FuzzShrunk returns, per failed turn's probe ID (or unknown-id repeat's),
// its shrink: the last shrink call that fails as the turn does. It is what the reports print as
// a reproduction, read from the evidence alone.
func FuzzShrunk(s *evidence.Store, set *schemas.Set) map[string]Shrunk {
	turns := map[string]evidence.Call{}
	outcomes := map[string]FuzzOutcome{}
	out := map[string]Shrunk{}
	for _, c := range toolCalls(s) {
		if !c.Has(evidence.PurposeFuzz) && !c.Has(evidence.PurposeFuzzShrink) && !c.Has(evidence.PurposeFuzzUnknownID) {
			continue
		}
		o := fuzzOracle(c, set, parseReply)
		if c.Has(evidence.PurposeFuzz) || c.Has(evidence.PurposeFuzzUnknownID) {
			turns[c.ProbeID], outcomes[c.ProbeID] = c, o
			if o.Class == FuzzFailed {
				out[c.ProbeID] = Shrunk{Turn: c, Last: c}
			}
			continue
		}
		id := FuzzTurnOf(c.ProbeID)
		sh, ok := out[id]
		if !ok {
			continue
		}
		sh.Calls++
		if o.Same(outcomes[id]) {
			sh.Last = c
		}
		out[id] = sh
	}
	return out
}

// shrinkNote says where a failed turn's shrink ended.
func shrinkNote(sh Shrunk) string {
	if sh.Last.ProbeID == sh.Turn.ProbeID {
		return ""
	}
	return fmt.Sprintf(" (shrunk in %d calls from %d to %d bytes: %s)", sh.Calls, len(sh.Turn.Arguments), len(sh.Last.Arguments), sh.Last.ProbeID)
}

// judgeTwoPath judges rule over every turn and shrink call: a call the
// oracle fails on rule is a finding (a shrink call only when its turn did
// not fail that way: otherwise it is the turn's reproduction, noted on the
// turn's finding); a call pass takes is examined and passes.
func judgeTwoPath(id string, s *evidence.Store, o Options, pass func(FuzzOutcome) bool, none string) Verdict {
	if o.Schemas == nil {
		return schemasSkip(o)
	}
	t := newTally(id)
	shrunk := FuzzShrunk(s, o.Schemas)
	turnFailed := map[string]string{}
	for _, c := range fuzzTurns(s) {
		if why := stopping(); why != "" {
			c.HarnessError = why + " before this reply was judged"
			t.errored = append(t.errored, c)
			continue
		}
		out := fuzzOracle(c, o.Schemas, parseReply)
		if c.Has(evidence.PurposeFuzz) && out.Class == FuzzFailed {
			turnFailed[c.ProbeID] = out.Rule
		}
		switch {
		case pass(out):
			t.judged(c, nil)
		case out.Class == FuzzFailed && out.Rule == id:
			if c.Has(evidence.PurposeFuzzShrink) && turnFailed[FuzzTurnOf(c.ProbeID)] == id {
				t.judged(c, nil) // the turn's reproduction: its finding says so
				continue
			}
			fs := make([]finding, len(out.Findings))
			for i, f := range out.Findings {
				fs[i] = finding{f.Pointer, f.What}
			}
			fs[0].what += shrinkNote(shrunk[c.ProbeID])
			t.judged(c, fs)
		case out.Class == FuzzUnjudged && id == "FUZZ-04" && !strings.HasPrefix(out.Why, "not run"):
			t.account(c) // no reply to judge: a harness error unless a failure is found
		}
	}
	return t.verdict(none)
}

func judgeFUZZ01(s *evidence.Store, o Options) Verdict {
	return judgeTwoPath("FUZZ-01", s, o, func(out FuzzOutcome) bool { return out.Class == FuzzAccepted }, "no fuzz turn was accepted: the accepted path was not exercised (every turn was rejected or faulted)")
}

func judgeFUZZ02(s *evidence.Store, o Options) Verdict {
	return judgeTwoPath("FUZZ-02", s, o, func(out FuzzOutcome) bool { return out.Class == FuzzRejected }, "no fuzz turn was rejected: the rejected path was not exercised")
}

// judgeFUZZ04 fails a transport-level fault. A timeout counts only when
// the same request, sent once more (the turn's first shrink call), timed
// out again: one slow reply on a busy machine is no verdict.
func judgeFUZZ04(s *evidence.Store, o Options) Verdict {
	confirmed := map[string]bool{}
	for _, c := range fuzzTurns(s) {
		if c.Has(evidence.PurposeFuzzShrink) && IsTimeout(c) {
			confirmed[FuzzTurnOf(c.ProbeID)] = true
		}
	}
	view := s.View(func(c evidence.Call) evidence.Call {
		if IsTimeout(c) && c.Has(evidence.PurposeFuzz) && !confirmed[c.ProbeID] {
			c.HarnessError = "timed out once, and the same request sent again was answered or not sent: " + c.HarnessError
		}
		if IsTimeout(c) && c.Has(evidence.PurposeFuzzShrink) {
			c.NotRun = "the repeat of a timed-out turn" // its turn carries the verdict
		}
		return c
	})
	answered := func(out FuzzOutcome) bool {
		return out.Class == FuzzAccepted || out.Class == FuzzRejected || (out.Class == FuzzFailed && out.Rule != "FUZZ-04")
	}
	return judgeTwoPath("FUZZ-04", view, o, answered, "no fuzz turn was answered")
}

// notFoundCodes are the standard not-found codes of the release
// (enums/error-code.json), or the error-handling page's list without one.
func notFoundCodes(set *schemas.Set) map[string]bool {
	out := map[string]bool{}
	if set != nil {
		if doc, err := set.Document(set.Location("enums/error-code.json")); err == nil {
			if m, ok := doc.(map[string]any); ok {
				if enum, ok := m["enum"].([]any); ok {
					for _, v := range enum {
						if s, ok := v.(string); ok && strings.HasSuffix(s, "_NOT_FOUND") {
							out[s] = true
						}
					}
				}
			}
		}
	}
	if len(out) == 0 {
		for _, s := range []string{"REFERENCE_NOT_FOUND", "SIGNAL_NOT_FOUND", "CREATIVE_NOT_FOUND", "MEDIA_BUY_NOT_FOUND",
			"PACKAGE_NOT_FOUND", "SESSION_NOT_FOUND", "ACCOUNT_NOT_FOUND", "PLAN_NOT_FOUND", "PRODUCT_NOT_FOUND"} {
			out[s] = true
		}
	}
	return out
}

// judgeFUZZ03 judges each unknown-id repeat against its turn (accepted with
// an existing id, the repeat differs only by the id: a rejection must carry
// a standard not-found code; a success is a filter's empty answer, allowed),
// and every rejection of a fuzz call whose code claims a not-found: it must
// be a standard one.
func judgeFUZZ03(s *evidence.Store, o Options) Verdict {
	if o.Schemas == nil {
		return schemasSkip(o)
	}
	std := notFoundCodes(o.Schemas)
	names := make([]string, 0, len(std))
	for c := range std {
		names = append(names, c)
	}
	sort.Strings(names)
	t := newTally("FUZZ-03")
	byID := map[string]evidence.Call{}
	for _, c := range toolCalls(s) {
		byID[c.ProbeID] = c
	}
	shrunk := FuzzShrunk(s, o.Schemas)
	turnFailed := map[string]bool{}
	for _, c := range toolCalls(s) {
		isRepeat := c.Has(evidence.PurposeFuzzUnknownID)
		if !isRepeat && !c.Has(evidence.PurposeFuzz) && !c.Has(evidence.PurposeFuzzShrink) {
			continue
		}
		out := fuzzOracle(c, o.Schemas, parseReply)
		switch {
		case out.Class == FuzzFailed && out.Rule == "FUZZ-03":
			if c.Has(evidence.PurposeFuzz) || isRepeat {
				turnFailed[c.ProbeID] = true
			}
			if c.Has(evidence.PurposeFuzzShrink) && turnFailed[FuzzTurnOf(c.ProbeID)] {
				t.judged(c, nil) // the turn's reproduction: its finding says so
				continue
			}
			t.judged(c, []finding{{out.Findings[0].Pointer, out.Findings[0].What + shrinkNote(shrunk[c.ProbeID])}})
			continue
		case out.Class == FuzzRejected && strings.HasSuffix(out.Code, "_NOT_FOUND"):
			t.judged(c, nil) // a standard not-found code
			continue
		}
		if !isRepeat {
			continue
		}
		base, ok := byID[FuzzTurnOf(c.ProbeID)]
		if !ok || fuzzOracle(base, o.Schemas, parseReply).Class != FuzzAccepted {
			continue // the request with the existing id was not accepted: nothing to compare
		}
		switch {
		case out.Class == FuzzAccepted:
			t.judged(c, nil) // a filter that matches nothing may answer with an empty success
		case out.Class == FuzzRejected && transient(parseReply(c)):
			// "call again later" says nothing about the id: its repeat is judged
		case out.Class == FuzzRejected:
			t.judged(c, []finding{{"", fmt.Sprintf("rejected with %s where %s, the same request with an existing id, was accepted: an unknown id takes a not-found code (%s)",
				quote(out.Code), base.ProbeID, strings.Join(names, ", "))}})
		case out.Class == FuzzFailed:
			t.judged(c, []finding{{"", fmt.Sprintf("an unknown id, where %s with an existing id was accepted, met %s: %s", base.ProbeID, out.Rule, out.Findings[0].What)}})
		default:
			t.account(c)
		}
	}
	return t.verdict("no fuzz request referenced an existing id (give --sandbox to create some, or --pool ENTITY=ID) and no rejection carried a not-found code")
}

// perRequestHeaders may differ between two requests whatever they ask
// (timing, tracing, edge and rate-limit counters, framing): only their
// presence is compared.
var perRequestHeaders = map[string]bool{
	"date": true, "server": true, "server-timing": true, "age": true, "via": true,
	"x-request-id": true, "x-correlation-id": true, "x-trace-id": true, "traceparent": true, "tracestate": true,
	"cf-ray": true, "x-amz-cf-id": true, "x-amz-request-id": true, "x-amzn-trace-id": true, "fly-request-id": true,
	"ratelimit": true, "ratelimit-limit": true, "ratelimit-policy": true, "ratelimit-remaining": true, "ratelimit-reset": true,
	"x-ratelimit-limit": true, "x-ratelimit-remaining": true, "x-ratelimit-reset": true,
	"content-length": true, "mcp-session-id": true, "set-cookie": true,
}

// perRequestMembers are the envelope members of a reply that vary per
// request.
var perRequestMembers = map[string]bool{"timestamp": true, "context_id": true, "task_id": true}

// judgeFUZZ05 compares each cross-tenant pair: the first tenant's id and
// an unknown id of the same shape, both asked for with the second tenant's
// credential.
func judgeFUZZ05(s *evidence.Store, _ Options) Verdict {
	t := newTally("FUZZ-05")
	// A pair's findings wait for the pass over its shrinks, which come
	// after it: the finding names the smallest pair that still differs.
	type pendingFinding struct {
		call  evidence.Call
		diffs []string
		key   string
	}
	var pending []pendingFinding
	failed := map[string]FuzzPair{} // a failed pair by key, then its smallest failing shrink pair
	for _, p := range FuzzPairs(s) {
		a, b := p.Other, p.Unknown
		if !t.account(a) || !t.account(b) {
			continue
		}
		if a.Message != nil && b.Message != nil && (transient(parseReply(a)) || transient(parseReply(b))) {
			continue // "call again later" on a side: nothing to compare
		}
		diffs := FuzzUniformDiffs(a, b)
		base := FuzzTurnOf(p.Key)
		if _, ok := failed[base]; ok && base != p.Key {
			if len(diffs) > 0 {
				failed[base] = p
			}
			t.judged(a, nil) // a shrink of a failed pair: the pair's finding names the smallest
			t.judged(b, nil)
			continue
		}
		if len(diffs) > 0 {
			failed[p.Key] = p
		}
		t.judged(b, nil)
		pending = append(pending, pendingFinding{a, diffs, p.Key})
	}
	for _, pf := range pending {
		fs := make([]finding, 0, len(pf.diffs))
		for _, d := range pf.diffs {
			fs = append(fs, finding{"", d})
		}
		if len(fs) > 0 {
			if sm := failed[pf.key]; sm.Key != pf.key {
				fs[0].what += fmt.Sprintf(" (shrunk to the pair %s: %d bytes, from %d)", sm.Key, len(sm.Other.Arguments), len(pf.call.Arguments))
			}
		}
		t.judged(pf.call, fs)
	}
	return t.verdict("no cross-tenant probe was made: give a second tenant's token with --tenant2-bearer-env and ids of the first tenant's resources (--sandbox creates some, --pool names them)")
}

// FuzzPair is one cross-tenant pair: as the second tenant, the first
// tenant's id (Other) and an unknown id of the same shape (Unknown).
// Key is the probe ID both share before /other and /unknown.
type FuzzPair struct {
	Key            string
	Other, Unknown evidence.Call
}

// FuzzPairs returns the cross-tenant pairs of the store, by key, each side
// its last call (a RATE_LIMITED one is repeated, later in probe-ID order).
func FuzzPairs(s *evidence.Store) []FuzzPair {
	pairs := map[string]*FuzzPair{}
	var keys []string
	side := func(id, suffix string) (*FuzzPair, bool) {
		if !strings.HasSuffix(id, suffix) {
			return nil, false
		}
		k := strings.TrimSuffix(id, suffix)
		if pairs[k] == nil {
			pairs[k] = &FuzzPair{Key: k}
			keys = append(keys, k)
		}
		return pairs[k], true
	}
	for _, c := range toolCalls(s) {
		if !c.Has(evidence.PurposeFuzzTenant2) {
			continue
		}
		id := withoutRetry(c.ProbeID)
		if p, ok := side(id, FuzzOtherSuffix); ok {
			p.Other = c
		} else if p, ok := side(id, FuzzUnknownSuffix); ok {
			p.Unknown = c
		}
	}
	sort.Strings(keys)
	var out []FuzzPair
	for _, k := range keys {
		if p := pairs[k]; p.Other.ProbeID != "" && p.Unknown.ProbeID != "" {
			out = append(out, *p)
		}
	}
	return out
}

// FuzzUniformDiffs lists how the replies to another tenant's id (a) and
// an unknown id (b) differ on a channel the uniform-response rule names;
// the ids supplied read as the same in error details, a success payload
// and headers, never in an error's code, message or field. None: the pair
// is uniform.
func FuzzUniformDiffs(a, b evidence.Call) []string {
	var out []string
	if a.HTTPStatus != b.HTTPStatus {
		out = append(out, fmt.Sprintf("HTTP status %d for the other tenant's id, %d for an unknown one", a.HTTPStatus, b.HTTPStatus))
	}
	idA, idB := suppliedIDs(a.Arguments, b.Arguments)
	norm := func(raw []byte, ids []string) string {
		s := string(raw)
		for _, id := range ids {
			s = replaceID(s, id)
		}
		return s
	}
	ra, rb := parseReply(a), parseReply(b)
	if ra.isError != rb.isError {
		out = append(out, fmt.Sprintf("isError %t for the other tenant's id, %t for an unknown one", ra.isError, rb.isError))
	}
	if ra.a2a != nil && rb.a2a != nil && ra.a2a.norm != rb.a2a.norm {
		out = append(out, fmt.Sprintf("task state %s for the other tenant's id, %s for an unknown one", quote(ra.a2a.state), quote(rb.a2a.state)))
	}
	ca, cb := firstError(ra), firstError(rb)
	switch {
	case (ca == nil) != (cb == nil):
		out = append(out, "an error for one id and none for the other")
	case ca != nil:
		for _, key := range []string{"code", "message", "field", "details"} {
			va, oka := ca.obj.Get(key)
			vb, okb := cb.obj.Get(key)
			// code, message and field are byte-equivalent between the two
			// cases: a message echoing the id supplied tells them apart
			// (validate-your-agent.mdx: baseline mode "catches id-echo in
			// error bodies"); details MAY enumerate the elements the caller
			// supplied verbatim (error-handling.mdx §Uniform response for
			// inaccessible references), so there they read as one.
			ia, ib := []string(nil), []string(nil)
			if key == "details" {
				ia, ib = idA, idB
			}
			if oka != okb || (oka && !sameModuloIDs(va, vb, ia, ib)) {
				shown := func(v []byte, ok bool, ids []string) string { // JSON text already: not quoted again
					if !ok {
						return "absent"
					}
					return wire.Sanitize(norm(v, ids), 64)
				}
				out = append(out, fmt.Sprintf("error.%s differs: %s for the other tenant's id, %s for an unknown one", key,
					shown(va, oka, ia), shown(vb, okb, ib)))
			}
		}
	default:
		if ra.data != nil && rb.data != nil && !sameModuloIDs(stripMembers(ra.data), stripMembers(rb.data), idA, idB) {
			out = append(out, "the success payloads differ")
		}
	}
	ha, hb := lastHeaders(a), lastHeaders(b)
	names := map[string]bool{}
	for k := range ha {
		names[strings.ToLower(k)] = true
	}
	for k := range hb {
		names[strings.ToLower(k)] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		va, vb := ha.Values(k), hb.Values(k)
		switch {
		case (len(va) == 0) != (len(vb) == 0):
			out = append(out, fmt.Sprintf("header %s is sent for one id only", k))
		case !perRequestHeaders[k] && norm([]byte(strings.Join(va, ", ")), idA) != norm([]byte(strings.Join(vb, ", ")), idB):
			out = append(out, fmt.Sprintf("header %s differs: %s vs %s", k, quote(strings.Join(va, ", ")), quote(strings.Join(vb, ", "))))
		}
	}
	return out
}

// sameModuloIDs reports whether two JSON texts hold the same value once
// the ids each request supplied read as one: a string equal to, or
// holding standing alone, a supplied id is compared with the id replaced;
// numbers, keys and the rest are compared as they are.
func sameModuloIDs(a, b []byte, idsA, idsB []string) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	norm := func(s string, ids []string) string {
		for _, id := range ids {
			s = replaceID(s, id)
		}
		return s
	}
	var same func(x, y any) bool
	same = func(x, y any) bool {
		switch xv := x.(type) {
		case map[string]any:
			yv, ok := y.(map[string]any)
			if !ok || len(xv) != len(yv) {
				return false
			}
			for k, v := range xv {
				w, ok := yv[k]
				if !ok || !same(v, w) {
					return false
				}
			}
			return true
		case []any:
			yv, ok := y.([]any)
			if !ok || len(xv) != len(yv) {
				return false
			}
			for i := range xv {
				if !same(xv[i], yv[i]) {
					return false
				}
			}
			return true
		case string:
			ys, ok := y.(string)
			return ok && (xv == ys || norm(xv, idsA) == norm(ys, idsB))
		}
		return x == y
	}
	return same(va, vb)
}

// replaceID replaces each occurrence of id in s that stands alone (no
// letter or digit just before or after it: "uy" is not in "media-buy") by
// "<id>".
func replaceID(s, id string) string {
	if id == "" {
		return s
	}
	alnum := func(b byte) bool { return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
	var b strings.Builder
	for {
		i := strings.Index(s, id)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(id)
		if (i > 0 && alnum(s[i-1])) || (end < len(s) && alnum(s[end])) {
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString("<id>")
		s = s[end:]
	}
}

// firstError is the AdCP error a client extracts first, when an object.
func firstError(r *reply) *candidate {
	for _, c := range r.candidates() {
		if c.obj != nil {
			return &c
		}
	}
	return nil
}

// stripMembers is a payload without its per-request envelope members.
func stripMembers(o *rawjson.Object) []byte {
	var b strings.Builder
	b.WriteByte('{')
	first := true
	for _, m := range o.Members() {
		if perRequestMembers[m.Key] {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%q:%s", m.Key, m.Value)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// lastHeaders are the response headers of a call's last exchange.
func lastHeaders(c evidence.Call) http.Header {
	for i := len(c.Exchanges) - 1; i >= 0; i-- {
		if c.Exchanges[i].Status != 0 {
			return c.Exchanges[i].ResponseHeaders
		}
	}
	return http.Header{}
}

// suppliedIDs are the string values that differ between two requests of
// the same shape: the ids each supplied.
func suppliedIDs(a, b []byte) (ia, ib []string) {
	var va, vb any // the harness's own requests: encoding/json reads them
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return nil, nil
	}
	var walk func(x, y any)
	walk = func(x, y any) {
		switch xv := x.(type) {
		case map[string]any:
			yv, ok := y.(map[string]any)
			if !ok {
				return
			}
			for k, v := range xv {
				walk(v, yv[k])
			}
		case []any:
			yv, ok := y.([]any)
			if !ok {
				return
			}
			for i := range min(len(xv), len(yv)) {
				walk(xv[i], yv[i])
			}
		case string:
			if ys, ok := y.(string); ok && ys != xv {
				ia, ib = append(ia, xv), append(ib, ys)
			}
		}
	}
	walk(va, vb)
	return ia, ib
}

// FuzzPayload returns the AdCP payload a client extracts from a call's
// success reply, nil when there is none.
func FuzzPayload(c evidence.Call) []byte {
	if c.Message == nil {
		return nil
	}
	r := parseReplyOnce(c)
	if !r.success() || r.data == nil {
		return nil
	}
	return r.data.Raw()
}
