package suites

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The bounds of idempotency.replay_ttl_seconds (§4.49).
const (
	minReplayTTL = 3600
	maxReplayTTL = 604800
)

func idemChecks() []Check {
	return []Check{
		// Rule: IDEM-01 · Spec: §4.49 · Since: 0.1.0 ·
		// Description: capabilities MUST declare adcp.idempotency; with supported: true,
		// replay_ttl_seconds MUST be an integer from 3600 to 604800. A capabilities success
		// without an adcp object fails: the declaration is absent. Each occurrence of a
		// repeated key is judged (any supported true asks for the window).
		{ID: "IDEM-01", Transport: catalogue.MCP, Text: "declares its idempotency replay window in capabilities", Judge: judgeIDEM01},
		// Rule: IDEM-02 · Spec: §4.50 · Since: 0.1.0 ·
		// Description: a mutating request without idempotency_key MUST get INVALID_REQUEST
		// (or VALIDATION_ERROR). Mutating: judged with --allow-mutations only. A refusal
		// that does not name idempotency_key, when the keyed create was refused too, may be
		// of the other arguments: skipped, asking for --inputs.
		{ID: "IDEM-02", Transport: catalogue.MCP, Text: "refuses a mutating request without an idempotency_key", Judge: judgeIDEM02},
		// Rule: IDEM-03 · Spec: §4.51 · Since: 0.1.0 ·
		// Description: the same key with an equal payload MUST replay the cached response —
		// the same resource, never a new one — flagged replayed: true; the first use of the
		// run's fresh key is not flagged replayed (§4.51: false or absent). Mutating.
		// Policy: the resource is media_buy_id when the first response has one, else the
		// task_id of the task still in flight (protocol/calling-an-agent.mdx: "the replayed
		// response carries the same task_id"); an id absent from both responses is not the
		// same resource, and a different one means the replay re-executed, whatever it
		// flags. replayed: true is read at the body's root, or, as
		// building/by-layer/L1/security.mdx (Idempotency, seller rule 4) allows over MCP, in
		// a response metadata field: result._meta.replayed or result._meta.<namespace>.replayed
		// (over A2A: the task's or the artifact's metadata). IDEMPOTENCY_IN_FLIGHT on the
		// replay is the seller's to give while the first still runs (calling-an-agent.mdx):
		// skipped.
		{ID: "IDEM-03", Transport: catalogue.MCP, Text: "replays a repeated request with replayed true and the same resource", Judge: judgeIDEM03},
		// Rule: IDEM-04 · Spec: §4.53 · Since: 0.1.0 ·
		// Description: the same key with a different payload MUST get IDEMPOTENCY_CONFLICT
		// (or CONFLICT). Mutating.
		{ID: "IDEM-04", Transport: catalogue.MCP, Text: "refuses a reused key with a different payload as a conflict", Judge: judgeIDEM04},
		// Rule: IDEM-05 · Spec: §4.57 · Since: 0.1.0 ·
		// Description: read tools MUST accept an optional idempotency_key. Judged on the read
		// probes that carry every envelope field, idempotency_key among them: a rejection
		// naming idempotency_key fails; a rejection naming another field is TOL-01's; a tool
		// result that is no error is acceptance, whatever its body (ENV-01's).
		{ID: "IDEM-05", Transport: catalogue.MCP, Text: "accepts an idempotency_key on read tools", Judge: judgeIDEM05},
	}
}

func judgeIDEM01(s *evidence.Store, _ Options) Verdict {
	t := newTally("IDEM-01")
	call, r, adcp, skip := capabilitiesAdcp(s, t)
	if adcp == nil {
		return skip
	}
	base := ptr(r.dataPtr, "adcp", "idempotency")
	idem := child(adcp, "idempotency")
	var fs []finding
	switch {
	case idem == nil:
		fs = append(fs, finding{base, "is absent or not an object"})
	default:
		sups := values(idem, "supported")
		if len(sups) == 0 {
			fs = append(fs, finding{base + "/supported", "is absent or not a boolean"})
		}
		supported := false
		for _, sup := range sups {
			if rawjson.KindOf(sup) != rawjson.KindBool {
				fs = append(fs, finding{base + "/supported", "is absent or not a boolean"})
			}
			supported = supported || string(trim(sup)) == "true"
		}
		if len(fs) > 0 || !supported {
			break
		}
		ttls := values(idem, "replay_ttl_seconds")
		if len(ttls) == 0 {
			fs = append(fs, finding{base + "/replay_ttl_seconds", "is absent while supported is true"})
		}
		for _, v := range ttls {
			n, isNum := number(v)
			switch {
			case !isNum || math.IsInf(n, 0) || n != math.Trunc(n):
				fs = append(fs, finding{base + "/replay_ttl_seconds", "is " + wireText(v) + " (" + kindName(v) + "), not an integer"})
			case n < minReplayTTL || n > maxReplayTTL:
				fs = append(fs, finding{base + "/replay_ttl_seconds", wireText(v) + " is outside " + strconv.Itoa(minReplayTTL) + ".." + strconv.Itoa(maxReplayTTL)})
			}
		}
	}
	t.judged(call, fs)
	return t.verdict("")
}

func judgeIDEM05(s *evidence.Store, _ Options) Verdict {
	return eachReply("IDEM-05", toolCalls(s, evidence.WithPurpose(evidence.PurposeEnvelopeFields)), nil,
		"no read call with an idempotency_key was answered", func(r *reply) (bool, []finding) {
			if !r.isError && r.rpcErr == nil {
				return r.result != nil, nil // answered, not refused: accepted
			}
			if namesField(r, "idempotency_key") {
				where, _ := rejection(r)
				return true, []finding{{where, "the read call is rejected naming idempotency_key"}}
			}
			return false, nil // refused for another field: TOL-01's
		})
}

// idemCall returns the idempotency probe with purpose p, and a verdict when
// it cannot be judged (not run, a harness error, absent).
func idemCall(s *evidence.Store, t *tally, p evidence.Purpose) (evidence.Call, bool) {
	calls := toolCalls(s, evidence.WithPurpose(p))
	if len(calls) == 0 || !t.account(calls[0]) {
		return evidence.Call{}, false
	}
	return calls[0], true
}

// errorCode returns the code of the first adcp_error a reply carries, "" when
// it carries none.
func errorCode(r *reply) string {
	for _, c := range r.candidates() {
		if code, ok := str(c.obj, "code"); ok {
			return code
		}
	}
	return ""
}

const noCreate = "create_media_buy is not listed"

func judgeIDEM02(s *evidence.Store, _ Options) Verdict {
	t := newTally("IDEM-02")
	c, ok := idemCall(s, t, evidence.PurposeIdemMissingKey)
	if !ok {
		return t.verdict(noCreate)
	}
	r := parseReply(c)
	switch code := errorCode(r); {
	case code == "INVALID_REQUEST" || code == "VALIDATION_ERROR":
		if why := otherArguments(s, r); why != "" {
			return t.verdict(why)
		}
		t.judged(c, nil)
	case r.success() && !r.errorSignal():
		t.judged(c, []finding{{"/result", "create_media_buy without an idempotency_key succeeds"}})
	default:
		t.judged(c, []finding{{codePtr(r), "create_media_buy without an idempotency_key gets " + orNone(code) + ", not INVALID_REQUEST or VALIDATION_ERROR"}})
	}
	return t.verdict("")
}

// otherArguments says why a refusal of the keyless create proves nothing
// about the key, "" when it does: it does unless the keyed create failed as
// well and the refusal does not name idempotency_key, in which case the
// other arguments may be what was refused.
func otherArguments(s *evidence.Store, missing *reply) string {
	if namesField(missing, "idempotency_key") {
		return ""
	}
	calls := toolCalls(s, evidence.WithPurpose(evidence.PurposeIdemFirst))
	if len(calls) == 0 || calls[0].NotRun != "" || calls[0].HarnessError != "" {
		return ""
	}
	fr := parseReply(calls[0])
	if fr.success() && fr.data != nil && !fr.errorSignal() {
		return ""
	}
	return "the refusal of create_media_buy without a key does not name idempotency_key, and the create with a key was refused too (" +
		orNone(errorCode(fr)) + "); give its arguments with --inputs"
}

func judgeIDEM03(s *evidence.Store, _ Options) Verdict {
	t := newTally("IDEM-03")
	first, ok := idemCall(s, t, evidence.PurposeIdemFirst)
	if !ok {
		return t.verdict(noCreate)
	}
	fr := parseReply(first)
	if !fr.success() || fr.data == nil || fr.errorSignal() {
		return t.verdict("the first create_media_buy did not succeed (" + orNone(errorCode(fr)) + "); give its arguments with --inputs")
	}
	if p, ok := replayedFlag(fr); ok {
		// The key is new to this run: nothing can have been replayed.
		t.judged(first, []finding{{p, "is true on the first use of a fresh key"}})
	}
	replay, ok := idemCall(s, t, evidence.PurposeIdemReplay)
	if !ok {
		return t.verdict("the replay was not made")
	}
	r := parseReply(replay)
	if code := errorCode(r); code == "IDEMPOTENCY_IN_FLIGHT" {
		return t.verdict("the replay was answered IDEMPOTENCY_IN_FLIGHT: the first request still runs, the replay cannot be judged")
	}
	var fs []finding
	switch {
	case !r.success() || r.data == nil || r.errorSignal():
		fs = append(fs, finding{codePtr(r), "the replay of an identical request is not answered with the cached success (" + orNone(errorCode(r)) + ")"})
	default:
		if _, ok := replayedFlag(r); !ok {
			fs = append(fs, finding{ptr(r.dataPtr, "replayed"), "is not true on a replayed response"})
		}
		fs = append(fs, sameResource(fr, r)...)
	}
	t.judged(replay, fs)
	return t.verdict("")
}

// sameResource compares the resource of the first response and its replay:
// media_buy_id when the first has one, else the task_id of the task still
// in flight.
func sameResource(first, replay *reply) []finding {
	for _, key := range []string{"media_buy_id", "task_id"} {
		a, inFirst := str(first.data, key)
		if !inFirst || a == "" {
			continue
		}
		b, _ := str(replay.data, key)
		if b != a {
			what := quote(b) + " differs from the first response's " + quote(a) + ": the replay re-executed"
			if b == "" {
				what = "is absent, while the first response's is " + quote(a)
			}
			return []finding{{ptr(replay.dataPtr, key), what}}
		}
		return nil
	}
	if first.a2a != nil && replay.a2a != nil && interimStates[first.a2a.norm] {
		// A2A: the task in flight is the A2A Task itself.
		a, _ := str(first.a2a.task, "id")
		b, _ := str(replay.a2a.task, "id")
		if a != "" {
			if b != a {
				return []finding{{replay.a2a.taskPtr + "/id", quote(b) + " differs from the first response's task " + quote(a) + ": the replay re-executed"}}
			}
			return nil
		}
	}
	return []finding{{ptr(replay.dataPtr, "media_buy_id"), "is absent from both responses, as is task_id: the replay cannot be the same resource"}}
}

// replayedFlag returns where a reply flags replayed: true, if it does: the
// body's root, or a response metadata field (MCP result._meta, directly or
// under a namespace; A2A task or artifact metadata).
func replayedFlag(r *reply) (string, bool) {
	isTrue := func(o *rawjson.Object) bool {
		if o == nil {
			return false
		}
		v, ok := o.Get("replayed")
		return ok && string(trim(v)) == "true"
	}
	if isTrue(r.data) {
		return ptr(r.dataPtr, "replayed"), true
	}
	var metas []root
	if r.a2a != nil {
		metas = append(metas, root{r.a2a.taskPtr + "/metadata", child(r.a2a.task, "metadata")})
		if v, ok := r.a2a.task.Get("artifacts"); ok {
			var arts []json.RawMessage
			_ = json.Unmarshal(v, &arts)
			for i, a := range arts {
				if o, err := rawjson.ParseObject(a); err == nil {
					metas = append(metas, root{r.a2a.taskPtr + "/artifacts/" + strconv.Itoa(i) + "/metadata", child(o, "metadata")})
				}
			}
		}
	} else {
		metas = append(metas, root{"/result/_meta", child(r.result, "_meta")})
	}
	for _, m := range metas {
		if isTrue(m.obj) {
			return m.ptr + "/replayed", true
		}
		if m.obj == nil {
			continue
		}
		for _, mem := range m.obj.Members() {
			if isTrue(child(m.obj, mem.Key)) {
				return ptr(m.ptr, mem.Key, "replayed"), true
			}
		}
	}
	return "", false
}

func judgeIDEM04(s *evidence.Store, _ Options) Verdict {
	t := newTally("IDEM-04")
	// Only a successful first use binds the key to its payload (security.mdx,
	// idempotency: errors are not cached): after a refused first create, a
	// refusal of the second says nothing about conflict detection.
	if firsts := toolCalls(s, evidence.WithPurpose(evidence.PurposeIdemFirst)); len(firsts) > 0 && firsts[0].Answered() {
		if fr := parseReply(firsts[0]); !fr.success() || fr.data == nil || fr.errorSignal() {
			return Verdict{Rule: "IDEM-04", Outcome: Skip, Message: "the first create_media_buy did not succeed (" + orNone(errorCode(fr)) +
				"), so the key was never bound; give its arguments with --inputs"}
		}
	}
	c, ok := idemCall(s, t, evidence.PurposeIdemConflict)
	if !ok {
		return t.verdict(noCreate)
	}
	r := parseReply(c)
	switch code := errorCode(r); {
	case code == "IDEMPOTENCY_CONFLICT" || code == "CONFLICT":
		t.judged(c, nil)
	case r.success() && !r.errorSignal():
		t.judged(c, []finding{{"/result", "a reused idempotency_key with a different payload succeeds"}})
	default:
		t.judged(c, []finding{{codePtr(r), "a reused idempotency_key with a different payload gets " + orNone(code) + ", not IDEMPOTENCY_CONFLICT or CONFLICT"}})
	}
	return t.verdict("")
}

// codePtr locates the code of a reply's error: the first adcp_error's code,
// else the JSON-RPC error, else where the reply rejects its call.
func codePtr(r *reply) string {
	if cs := r.candidates(); len(cs) > 0 {
		return cs[0].ptr + "/code"
	}
	if r.call.Message == nil {
		return ""
	}
	where, _ := rejection(r)
	return where
}

func orNone(code string) string {
	if code == "" {
		return "no AdCP error"
	}
	return code
}
