package check

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// checkInvariant is the check name of an invariant's validation results;
// their ID is the invariant's.
const checkInvariant = "invariant"

// invariantJudges makes a fresh judge of each invariant the engine
// defines: a judge keeps what the earlier steps showed.
var invariantJudges = map[string]func() invariantJudge{
	spec.InvariantConflictNoPayloadLeak: func() invariantJudge { return &conflictLeak{byKey: map[string][]*spec.Observation{}} },
	spec.InvariantNoSecretEcho:          func() invariantJudge { return noSecretEcho{} },
	spec.InvariantStatusMonotonic:       func() invariantJudge { return &monotonic{last: map[string]statusSeen{}} },
	spec.InvariantImpairmentCoherence:   func() invariantJudge { return &impairment{state: map[string]resourceSeen{}} },
	spec.InvariantGovernanceDenial:      func() invariantJudge { return &denial{plans: map[string]string{}} },
}

// invariantJudge grades the steps of one run, in order.
type invariantJudge interface {
	// grade returns the step's result, or nil when the invariant says
	// nothing about it; it then remembers what the step showed.
	grade(s *stepView) *spec.Result
}

// stepView is a step that ran, as an invariant reads it.
type stepView struct {
	id          string // "phase.step"
	task        string
	expectError bool
	obs         *spec.Observation
	// body is the extracted payload when it is a JSON object, else nil.
	body map[string]any
}

// Ran is a step that ran, as the invariants read it: a step the engine
// skipped, or whose call proves nothing, is not one.
type Ran struct {
	// ID is the step's "phase.step".
	ID   string
	Task string
	// ExpectError is the step's expect_error.
	ExpectError bool
	Obs         *spec.Observation
}

// Invariants grades the invariants a storyboard declares over the steps
// that ran, in their order, once they have all run: out[i] are the
// validation results steps[i] gets, one for each invariant that applies to
// it (check "invariant", the invariant's id). An invariant this engine
// does not define is graded not_applicable on the first step.
func Invariants(declared []string, steps []Ran) [][]spec.Result {
	type judged struct {
		id    string
		judge invariantJudge
	}
	var judges []judged
	var unknown []string
	for _, id := range declared {
		if mk, ok := invariantJudges[id]; ok {
			judges = append(judges, judged{id, mk()})
		} else {
			unknown = append(unknown, id)
		}
	}
	out := make([][]spec.Result, len(steps))
	for i, s := range steps {
		if i == 0 {
			for _, id := range unknown {
				out[i] = append(out[i], spec.Result{Check: checkInvariant, ID: id, Passed: true, NotApplicable: true,
					Description: "invariant " + id, Note: "the storyboard declares an invariant this engine does not define"})
			}
		}
		v := &stepView{id: s.ID, task: s.Task, expectError: s.ExpectError, obs: s.Obs}
		v.body, _ = s.Obs.Payload.(map[string]any)
		for _, j := range judges {
			r := j.judge.grade(v)
			if r == nil {
				continue
			}
			r.Check, r.ID = checkInvariant, j.id
			if !r.Passed && r.Message == "" {
				r.Message = r.Description
			}
			out[i] = append(out[i], *r)
		}
	}
	return out
}

func failed(desc, format string, args ...any) *spec.Result {
	return &spec.Result{Passed: false, Description: desc, Message: fmt.Sprintf(format, args...)}
}

func passed(desc string) *spec.Result { return &spec.Result{Passed: true, Description: desc} }

// ---- idempotency.conflict_no_payload_leak -------------------------------

// conflictLeak: an IDEMPOTENCY_CONFLICT error "MUST NOT include the cached
// response, the original payload, a canonical-form diff, or any
// fingerprint derived from them", nor a `field` pointer
// (building/by-layer/L1/security.mdx, "IDEMPOTENCY_CONFLICT response
// shape"). The judge fails a `field` on the error, and any distinctive
// value of an earlier request or reply with the same idempotency_key that
// the conflict reply repeats outside its context echo — where the buyer
// did not send that value again itself. A fingerprint cannot be told from
// an opaque id, so it is not judged. The spec's own example carries
// `recovery`; any key core/error.json defines is allowed (the JavaScript
// runner's allowlist fails `recovery`).
type conflictLeak struct {
	byKey map[string][]*spec.Observation
}

const conflictDesc = "An IDEMPOTENCY_CONFLICT error carries neither the cached response nor the original payload"

func (c *conflictLeak) grade(s *stepView) *spec.Result {
	key, _ := s.obs.Request["idempotency_key"].(string)
	if s.obs.ErrorCode != "IDEMPOTENCY_CONFLICT" {
		if key != "" {
			c.byKey[key] = append(c.byKey[key], s.obs)
		}
		return nil
	}
	if f, ok := s.obs.Error["field"]; ok {
		return failed(conflictDesc, "the IDEMPOTENCY_CONFLICT error carries field %v: a pointer into the original payload reveals its shape, and the spec forbids it", f)
	}
	if key == "" {
		return passed(conflictDesc)
	}
	sentNow := map[string]bool{}
	leaves(s.obs.Request, func(_ string, v string) { sentNow[v] = true })
	var secrets []string
	seen := map[string]bool{}
	for _, o := range c.byKey[key] {
		for i, src := range []any{o.Request, o.Payload} {
			leaves(src, func(p string, v string) {
				if i == 1 && (envelopeValue(p) || dateTime.MatchString(v)) {
					return // the reply's own envelope, or a time: the conflict reply may say the same of itself
				}
				if distinctive(v) && !sentNow[v] && !seen[v] {
					seen[v] = true
					secrets = append(secrets, v)
				}
			})
		}
	}
	var hit, at string
	leaves(s.obs.Payload, func(p, v string) {
		if hit != "" {
			return
		}
		for _, sec := range secrets {
			if strings.Contains(v, sec) {
				hit, at = sec, p
				return
			}
		}
	})
	if hit != "" {
		r := failed(conflictDesc, "the conflict reply repeats %q, which only the earlier request or reply with this idempotency_key held", spec.Clip(hit, 80))
		r.JSONPointer = &at
		return r
	}
	return passed(conflictDesc)
}

// envelopeValue says a pointer into a reply names one of the envelope's
// own fields (the session, the release, the task's status), which every
// reply of the conversation may repeat.
func envelopeValue(p string) bool {
	root, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	switch root {
	case "context_id", "task_id", "timestamp", "adcp_version", "adcp_major_version", "status", "replayed", "message", "protocol_version":
		return true
	}
	return false
}

var dateTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}`)

// distinctive says a value identifies something (an id such as
// "mb_0001", a time, a domain): six characters or more, and not a bare
// word such as a status or enum value, which any reply may name.
func distinctive(v string) bool {
	if len(v) < 6 {
		return false
	}
	return strings.ContainsFunc(v, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '_' || r == ' ') })
}

// leaves calls fn with the JSON pointer and value of every string in x,
// leaving out `context` objects (the buyer's own echo).
func leaves(x any, fn func(pointer, v string)) {
	var walk func(p string, x any)
	walk = func(p string, x any) {
		switch t := x.(type) {
		case string:
			fn(p, t)
		case map[string]any:
			for k, v := range t {
				if k == "context" {
					continue
				}
				walk(p+"/"+rawjson.EscapeToken(k), v)
			}
		case []any:
			for i, v := range t {
				walk(fmt.Sprintf("%s/%d", p, i), v)
			}
		}
	}
	walk("", x)
}

// ---- context.no_secret_echo ---------------------------------------------

// noSecretEcho: a reply never echoes the caller's credential (the
// idempotency storyboard's header: "catches credential echo on any step's
// response"). It fails a reply the capture found the run's own credential
// in (the evidence holds it redacted), a bearer-token literal, and a
// credential-named property (api_key, apikey, x-api-key, bearer, or an
// `authorization` string: the spec's `authorization` objects on accounts
// and validation results are not credentials, and pass).
type noSecretEcho struct{}

const secretDesc = "The reply echoes no credential"

// hasBearerLiteral reports whether s holds a bearer-token literal: the
// word "bearer" in any case, after no ASCII letter, digit or underscore,
// then white space, then at least 10 token characters — what the regular
// expression (?i)\bbearer\s+[A-Za-z0-9._~+/=-]{10,} matches, in one pass
// over s. The regexp cannot skip ahead on a case-folded literal and took
// seconds over a seller's 1 MB strings; a reply is the seller's to size.
func hasBearerLiteral(s string) bool {
	const word = "bearer"
	for i := 0; i+len(word) < len(s); i++ {
		if s[i]|0x20 != 'b' || !strings.EqualFold(s[i:i+len(word)], word) || i > 0 && isWordByte(s[i-1]) {
			continue
		}
		j := i + len(word)
		for j < len(s) && isSpaceByte(s[j]) {
			j++
		}
		if j == i+len(word) {
			continue
		}
		n := 0
		for j+n < len(s) && n < 10 && isTokenByte(s[j+n]) {
			n++
		}
		if n == 10 {
			return true
		}
	}
	return false
}

// isWordByte is \w of RE2: an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// isSpaceByte is \s of RE2: tab, newline, form feed, carriage return, space.
func isSpaceByte(c byte) bool {
	return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

// isTokenByte is a character of a bearer token (RFC 6750 b64token).
func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~+/=-", c) >= 0
}

var credentialKeys = []string{"api_key", "apikey", "x-api-key", "bearer"}

func (noSecretEcho) grade(s *stepView) *spec.Result {
	if len(s.obs.Call.Exchanges) == 0 && s.obs.Payload == nil {
		return nil
	}
	if s.obs.Call.SecretEchoed() {
		return failed(secretDesc, "the reply holds the run's own credential (redacted in the evidence)")
	}
	var why, at string
	var walk func(p string, x any)
	walk = func(p string, x any) {
		if why != "" {
			return
		}
		switch t := x.(type) {
		case string:
			if hasBearerLiteral(t) {
				why, at = "a bearer-token literal", p
			}
		case map[string]any:
			for k, v := range t {
				lk := strings.ToLower(k)
				_, str := v.(string)
				if slices.Contains(credentialKeys, lk) || lk == "authorization" && str {
					why, at = "a credential property "+k, p+"/"+rawjson.EscapeToken(k)
					return
				}
				walk(p+"/"+rawjson.EscapeToken(k), v)
			}
		case []any:
			for i, v := range t {
				walk(fmt.Sprintf("%s/%d", p, i), v)
			}
		}
	}
	walk("", s.obs.Payload)
	if why != "" {
		r := failed(secretDesc, "the reply holds %s", why)
		r.JSONPointer = &at
		return r
	}
	return passed(secretDesc)
}
