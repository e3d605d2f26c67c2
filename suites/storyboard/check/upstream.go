package check

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// upstream_traffic (universal/storyboard-schema.yaml "Upstream
// side-effects"; runner-output-contract.yaml upstream_traffic_check,
// upstream_traffic_timestamp_boundary, upstream_traffic_digest_mode;
// schemas compliance/comply-test-controller-response.json
// UpstreamTrafficSuccess).

const (
	// maxRecordedCalls bounds the calls read from one controller reply
	// (the controller's default window is 100).
	maxRecordedCalls = 1000
	// maxIdentifiers is the request-side cap on identifier digests
	// (params.identifier_value_digests maxItems 64).
	maxIdentifiers = 64
	// clockSkew is subtracted from the runner's request time before
	// calls are attributed to a step (the contract: 50ms minimum, 250ms
	// recommended).
	clockSkew = 250 * time.Millisecond
	// maxPayloadBytes bounds a string payload decoded as JSON (the
	// schema's payload maxLength).
	maxPayloadBytes = 65536
)

// upstreamCall is one recorded_calls entry, read defensively.
type upstreamCall struct {
	index    int
	endpoint string
	purpose  string
	ctype    string
	digest   bool
	payload  any  // decoded JSON payload (raw JSON calls only)
	jsonOK   bool // payload is evaluable JSON
	rawText  string
	proofs   map[string]bool // identifier sha256 → found
	at       time.Time
	atOK     bool
}

func readCall(i int, v any) upstreamCall {
	m, _ := v.(map[string]any)
	c := upstreamCall{index: i}
	c.endpoint, _ = m["endpoint"].(string)
	if c.endpoint == "" {
		meth, _ := m["method"].(string)
		u, _ := m["url"].(string)
		if meth != "" && u != "" {
			c.endpoint = meth + " " + u
		}
	}
	c.purpose, _ = m["purpose"].(string)
	if c.purpose == "" {
		// Spec: calls without a purpose are treated as purpose "other".
		c.purpose = "other"
	}
	c.ctype, _ = m["content_type"].(string)
	mode, _ := m["attestation_mode"].(string)
	c.digest = mode == "digest"
	if ts, ok := m["timestamp"].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			c.at, c.atOK = t, true
		}
	}
	if c.digest {
		c.proofs = map[string]bool{}
		proofs, _ := m["identifier_match_proofs"].([]any)
		for j, p := range proofs {
			if j >= maxIdentifiers*4 {
				break
			}
			pm, _ := p.(map[string]any)
			h, _ := pm["identifier_value_sha256"].(string)
			found, _ := pm["found"].(bool)
			if h != "" {
				c.proofs[strings.ToLower(h)] = c.proofs[strings.ToLower(h)] || found
			}
		}
		return c
	}
	p, has := m["payload"]
	if !has {
		return c
	}
	if s, isStr := p.(string); isStr {
		c.rawText = s
		if jsonShaped(c.ctype) && len(s) <= maxPayloadBytes {
			if d, err := spec.DecodeJSON([]byte(s)); err == nil {
				c.payload, c.jsonOK = d, true
			}
		}
		return c
	}
	if jsonShaped(c.ctype) {
		c.payload, c.jsonOK = p, true
	}
	if b, err := json.Marshal(p); err == nil {
		c.rawText = string(b)
	}
	return c
}

// jsonShaped is the spec's JSON-shaped content type: application/json or
// any */*+json structured-syntax suffix (RFC 6839), parameters ignored.
// application/json-seq and application/jsonl are not.
func jsonShaped(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	}
	return mt == "application/json" || (strings.Contains(mt, "/") && strings.HasSuffix(mt, "+json"))
}

// glob matches s against a pattern where * is any run of characters
// (slashes included: "POST */audience/upload") and ? one character;
// everything else is literal. Linear-time two-pointer matching.
func glob(pattern, s string) bool {
	p, t := []rune(pattern), []rune(s)
	pi, ti := 0, 0
	star, mark := -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// stepStart is when the runner issued the request that opens the window:
// this step's, or the `since` step's.
func stepStart(v spec.Validation, f Facts) (time.Time, error) {
	if v.Since == "" {
		if f.Obs == nil {
			return time.Time{}, nil
		}
		return f.Obs.Call.Started, nil
	}
	for i := len(f.Prior) - 1; i >= 0; i-- {
		o := f.Prior[i]
		if o == nil {
			continue
		}
		id := o.Call.ProbeID
		if j := strings.LastIndexByte(id, '/'); j >= 0 {
			id = id[j+1:]
		}
		if id == v.Since {
			return o.Call.Started, nil
		}
	}
	return time.Time{}, fmt.Errorf("since names step %q, which was not observed earlier in this run", v.Since)
}

func upstreamExpected(v spec.Validation, minCount int) map[string]any {
	e := map[string]any{"min_count": float64(minCount)}
	if v.EndpointPattern != "" {
		e["endpoint_pattern"] = v.EndpointPattern
	}
	if len(v.PayloadMustContain) > 0 {
		var ps []any
		for _, m := range v.PayloadMustContain {
			e := map[string]any{"path": m.Path, "match": m.Match}
			if m.Value != nil {
				e["value"] = spec.Normalize(m.Value)
			}
			if len(m.AllowedValues) > 0 {
				e["allowed_values"] = spec.Normalize(m.AllowedValues)
			}
			ps = append(ps, e)
		}
		e["payload_must_contain"] = ps
	}
	if len(v.IdentifierPaths) > 0 {
		e["identifier_paths"] = toAny(v.IdentifierPaths)
	}
	if len(v.PurposeFilter) > 0 {
		e["purpose_filter"] = toAny(v.PurposeFilter)
	}
	if v.Since != "" {
		e["since"] = v.Since
	}
	if v.AttestationModeRequired != "" {
		e["attestation_mode_required"] = v.AttestationModeRequired
	}
	return e
}

func checkUpstreamTraffic(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	minCount := 1
	if v.MinCount != nil {
		minCount = *v.MinCount
	}
	if minCount < 0 {
		return r.NA("min_count %d is negative (an authoring error)", minCount)
	}
	for _, m := range v.PayloadMustContain {
		switch m.Match {
		case "present", "equals", "contains_any":
		default:
			return r.NA("payload_must_contain match %q is not present, equals or contains_any (an authoring error)", m.Match)
		}
		if _, err := spec.ParsePath(m.Path); err != nil || m.Path == "" {
			return r.NA("payload_must_contain path %q is not a JSONPath-lite path (an authoring error)", m.Path)
		}
	}
	if f.Upstream == nil {
		return r.NA("no query_upstream_traffic (needs the test controller, --sandbox)")
	}
	if f.Upstream.Failure != "" {
		return r.NA("the query_upstream_traffic call proves nothing about the agent: %s", f.Upstream.Failure)
	}
	reply, _ := f.Upstream.Payload.(map[string]any)
	if reply == nil {
		return r.NA("the query_upstream_traffic reply carried no result object")
	}
	if ok, _ := reply["success"].(bool); !ok {
		code, _ := reply["error"].(string)
		if code == "" {
			code = f.Upstream.ErrorCode
		}
		if code == "JCS_NON_FINITE_NUMBER" {
			return r.NA("the controller could not produce a digest: the recorded payload holds a non-finite number, which RFC 8785 (JCS) cannot canonicalise")
		}
		return r.NA("the controller did not answer query_upstream_traffic (error %q): nothing to grade", code)
	}
	list, isList := reply["recorded_calls"].([]any)
	if !isList {
		return r.NA("the query_upstream_traffic reply has no recorded_calls array")
	}
	if len(list) > maxRecordedCalls {
		r = r.Observe("only the first %d of %d recorded calls were read", maxRecordedCalls, len(list))
		list = list[:maxRecordedCalls]
	}
	start, err := stepStart(v, f)
	if err != nil {
		return r.NA("%v", err)
	}
	purposes := map[string]bool{}
	for _, p := range v.PurposeFilter {
		purposes[p] = true
	}
	var matched []upstreamCall
	unclassified, undated, early := 0, 0, 0
	malformed := 0
	for i, e := range list {
		m, isObj := e.(map[string]any)
		if !isObj {
			malformed++ // not a recorded call: never counted
			continue
		}
		c := readCall(i, e)
		if m["purpose"] == nil {
			unclassified++
		}
		// Attribute calls to the step by the runner's own clock: the
		// bound is inclusive, less a skew tolerance. A call whose
		// timestamp does not parse is kept (the controller already
		// windowed the query; dropping it could fail a conformant agent).
		if !start.IsZero() {
			if !c.atOK {
				undated++
			} else if c.at.Before(start.Add(-clockSkew)) {
				early++
				continue
			}
		}
		if len(purposes) > 0 && !purposes[c.purpose] {
			continue
		}
		if v.EndpointPattern != "" && !glob(v.EndpointPattern, c.endpoint) {
			continue
		}
		matched = append(matched, c)
	}
	if malformed > 0 {
		r = r.Observe("%d recorded_calls entr(y/ies) are not objects and were not counted", malformed)
	}
	if early > 0 {
		r = r.Observe("%d recorded call(s) are timestamped before this step's request (less %v of clock-skew tolerance) and were not counted", early, clockSkew)
	}
	if undated > 0 {
		r = r.Observe("%d recorded call(s) had no parseable timestamp and were counted in the window", undated)
	}
	expected := upstreamExpected(v, minCount)
	actual := map[string]any{
		"matched_count":             float64(len(matched)),
		"total_calls":               float64(len(list)),
		"missing_payload_paths":     []any{},
		"missing_identifier_values": []any{},
	}
	if len(v.PurposeFilter) > 0 && len(matched) == 0 {
		actual["unclassified_calls"] = float64(unclassified)
	}
	if minCount == 0 {
		// Spec: "Use 0 only for negative assertions (e.g., a step MUST
		// NOT cause upstream traffic)"; test-kits/single-side-trust-runner
		// .yaml: "The runner asserts NONE of these fire". Decision:
		// min_count 0 means no matching call may be recorded.
		if len(matched) == 0 {
			return r.Pass()
		}
		return r.Fail(ptr("/recorded_calls/"+strconv.Itoa(matched[0].index)), expected, actual,
			"%d recorded call(s) match %q where none may: e.g. %s", len(matched), v.EndpointPattern, spec.Shown(matched[0].endpoint))
	}
	if len(matched) < minCount {
		return r.Fail(nil, expected, actual, "%d recorded upstream call(s) match (of %d in the window); at least %d required",
			len(matched), len(list), minCount)
	}
	if v.AttestationModeRequired == "raw" {
		for _, c := range matched {
			if c.digest {
				return r.NA("the storyboard requires raw payload introspection and recorded call %d came back in digest mode", c.index)
			}
		}
	}
	var missingPaths, missingIDs []any
	var failPointer *string
	for _, m := range v.PayloadMustContain {
		evaluable := 0
		hit := false
		for _, c := range matched {
			if c.digest || !c.jsonOK {
				continue
			}
			evaluable++
			if payloadMatches(c.payload, m) {
				hit = true
				break
			}
		}
		switch {
		case hit:
		case evaluable == 0:
			r = r.Observe("payload_must_contain %s: not applicable — no matching call has a raw JSON payload (digest mode or a non-JSON content type)", m.Path)
		default:
			missingPaths = append(missingPaths, m.Path)
			if failPointer == nil {
				for _, c := range matched {
					if !c.digest && c.jsonOK {
						failPointer = ptr("/recorded_calls/" + strconv.Itoa(c.index) + "/payload")
						break
					}
				}
			}
		}
	}
	ids, idNotes := identifierValues(v.IdentifierPaths, f)
	for _, n := range idNotes {
		r = r.Observe("%s", n)
	}
	for _, id := range ids {
		sum := sha256.Sum256([]byte(id))
		digest := hex.EncodeToString(sum[:])
		evaluable := 0
		hit := false
		for _, c := range matched {
			if c.digest {
				found, proven := c.proofs[digest]
				if !proven {
					continue
				}
				evaluable++
				if found {
					hit = true
				}
			} else if c.rawText != "" || c.payload != nil {
				evaluable++
				if carries(c, id) {
					hit = true
				}
			}
			if hit {
				break
			}
		}
		switch {
		case hit:
		case evaluable == 0:
			r = r.Observe("identifier %s: not applicable — no matching call carries a payload or a digest proof for it", spec.Shown(id))
		default:
			missingIDs = append(missingIDs, id)
		}
	}
	if len(missingPaths) == 0 && len(missingIDs) == 0 {
		return r.Pass()
	}
	if missingPaths != nil {
		actual["missing_payload_paths"] = capList(missingPaths)
	}
	if missingIDs != nil {
		actual["missing_identifier_values"] = capList(missingIDs)
	}
	return r.Fail(failPointer, expected, actual,
		"%d matching upstream call(s), but %d payload assertion(s) and %d supplied identifier(s) are not carried upstream",
		len(matched), len(missingPaths), len(missingIDs))
}

// payloadMatches applies one payload_must_contain entry to a decoded
// payload.
//
// contains_any is read leniently (decision: the schema names the mode
// without defining it): a resolved value passes when it equals one of
// allowed_values, holds one as an array element, or — for strings —
// contains one as a substring.
func payloadMatches(payload any, m spec.MatchSpec) bool {
	ms, err := spec.Resolve(payload, m.Path)
	if err != nil {
		return false
	}
	for _, x := range ms {
		switch m.Match {
		case "present":
			return true
		case "equals":
			if sameJSON(x.Value, m.Value) {
				return true
			}
		case "contains_any":
			for _, a := range m.AllowedValues {
				if containsValue(x.Value, spec.Normalize(a)) {
					return true
				}
			}
		}
	}
	return false
}

func containsValue(v, a any) bool {
	if sameJSON(v, a) {
		return true
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if sameJSON(e, a) {
				return true
			}
		}
	case string:
		if s, ok := a.(string); ok && s != "" {
			return strings.Contains(x, s)
		}
	}
	return false
}

// identifierValues resolves identifier_paths against the step's request:
// every scalar value (arrays flattened), as a string, at most
// maxIdentifiers.
func identifierValues(paths []string, f Facts) (ids []string, notes []string) {
	if len(paths) == 0 {
		return nil, nil
	}
	if f.Obs == nil || f.Obs.Request == nil {
		return nil, []string{"identifier_paths: the step's request is not available; not applicable"}
	}
	seen := map[string]bool{}
	add := func(x any) {
		var s string
		switch t := x.(type) {
		case string:
			s = t
		case float64:
			s = strconv.FormatFloat(t, 'f', -1, 64)
		case bool:
			s = strconv.FormatBool(t)
		default:
			return
		}
		if s == "" || seen[s] {
			return
		}
		if len(ids) >= maxIdentifiers {
			return
		}
		seen[s] = true
		ids = append(ids, s)
	}
	for _, p := range paths {
		ms, err := spec.Resolve(spec.Normalize(f.Obs.Request), p)
		if err != nil {
			notes = append(notes, fmt.Sprintf("identifier path %q is not a JSONPath-lite path (an authoring error); skipped", p))
			continue
		}
		if len(ms) == 0 {
			notes = append(notes, fmt.Sprintf("identifier path %q resolved nothing in the step's request; skipped", p))
			continue
		}
		for _, m := range ms {
			if arr, ok := m.Value.([]any); ok {
				for _, e := range arr {
					add(e)
				}
				continue
			}
			add(m.Value)
		}
	}
	return ids, notes
}

// carries reports whether a raw call's payload holds the identifier at
// any depth: a string or number leaf equal to it or containing it, or —
// for non-JSON bodies — a substring of the body (the spec: identifier
// echo "substring-searches storyboard-supplied VALUES", encoding-agnostic).
func carries(c upstreamCall, id string) bool {
	if c.jsonOK && leafHas(c.payload, id, 0) {
		return true
	}
	return strings.Contains(c.rawText, id)
}

func leafHas(v any, id string, depth int) bool {
	if depth > 64 {
		return false
	}
	switch x := v.(type) {
	case string:
		return strings.Contains(x, id)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64) == id
	case bool:
		return strconv.FormatBool(x) == id
	case []any:
		for _, e := range x {
			if leafHas(e, id, depth+1) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if leafHas(e, id, depth+1) {
				return true
			}
		}
	}
	return false
}
