package check

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dlclark/regexp2"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// fieldChecks are the single-response check kinds: each reads only the
// step's own observation (Facts.Obs) and its validation. Their semantics
// are storyboard-schema.yaml's "--- Validation ---" section and the
// expected/actual table of runner-output-contract.yaml > validation_result
// (3.1.19 and 3.2.0-beta.5 agree on every kind both define).
//
// Decisions the spec leaves open, taken once for every kind here:
//
//   - Paths resolve against Obs.Payload, the extracted task result. A
//     reply with no payload (nil) is an empty document: a field check on
//     it sees every field absent. That is what was observed, not a lack of
//     evidence; a call that proved nothing never reaches a check (Grade).
//   - Presence is "resolves to a non-null value". A field that is present
//     and null is absent for field_present, field_absent and
//     field_value_or_absent (and their envelope_ twins). The contract's
//     field_present actual is "null (the field was missing)", so a null
//     cannot be the evidence of presence, and storyboard-schema.yaml's
//     capture_path_not_resolvable treats a null as not resolvable; the
//     reference runner (@adcp/client) reads null the same way. field_value
//     compares a null like any other value.
//   - A wildcard ([*]) is graded only where the spec defines it
//     (field_contains). On another kind it is an authoring error that
//     says nothing about the seller: not_applicable with the reason. So is
//     a missing path, an invalid pattern, or a missing value/threshold.
//   - Failure output bounds what it echoes of the seller (strings,
//     arrays, nesting): the report must stay small on hostile replies.
var fieldChecks = map[string]checkFunc{
	"response_schema":           checkResponseSchema,
	"field_present":             checkFieldPresent,
	"envelope_field_present":    checkFieldPresent,
	"field_absent":              checkFieldAbsent,
	"envelope_field_absent":     checkFieldAbsent,
	"field_pattern":             checkFieldPattern,
	"envelope_field_pattern":    checkFieldPattern,
	"field_value":               checkFieldValue,
	"field_value_or_absent":     checkFieldValueOrAbsent,
	"field_contains":            checkFieldContains,
	"array_length":              checkArrayLength,
	"field_greater_than":        checkFieldGreaterThan,
	"status_code":               checkStatusCode,
	"http_status":               checkHTTPStatus,
	"http_status_in":            checkHTTPStatusIn,
	"error_code":                checkErrorCode,
	"on_401_require_header":     checkOn401RequireHeader,
	"resource_equals_agent_url": checkResourceEqualsAgentURL,
}

// The envelope_ kinds: storyboard-schema.yaml says they walk
// protocol-envelope.json / version-envelope.json instead of the step's
// response_schema_ref. protocol-envelope.json's normative transport
// serialization puts the envelope fields at the root of the extracted
// result on MCP (flattened siblings of the body fields in
// structuredContent) and inside the authoritative A2A DataPart, which is
// what Obs.Payload holds; version-envelope.json's adcp_version is "part
// of the payload itself". So the envelope is Obs.Payload's top-level
// object, and the envelope_ kinds grade exactly as their field_ twins.
// The distinct names matter only to static drift tooling.

// Bounds on what a failure echoes of the seller's reply.
const (
	maxEchoString = 1024
	maxEchoItems  = 100
	maxEchoDepth  = 8
	// regexTimeout bounds one pattern match: a storyboard pattern over a
	// seller string must not hang the run.
	regexTimeout = 2 * time.Second
)

// pathOf returns the validation's path, or a not_applicable result when it
// has none or the check does not grade wildcards and the path has one.
func pathOf(v spec.Validation, wildcards bool) (string, *spec.Result) {
	if v.Path == nil {
		r := notApplicable(fmt.Sprintf("the %s validation declares no path: an authoring error, not a seller fault", v.Check))
		return "", &r
	}
	p := *v.Path
	if _, err := spec.ParsePath(p); err != nil {
		r := notApplicable(fmt.Sprintf("the path %q is not a storyboard path (%v): an authoring error, not a seller fault", spec.Clip(p, 200), err))
		return "", &r
	}
	if !wildcards && strings.Contains(p, "[*]") {
		r := notApplicable(fmt.Sprintf("%s does not define wildcard paths (%q); only field_contains does: not graded", v.Check, spec.Clip(p, 200)))
		return "", &r
	}
	return p, nil
}

// lookup resolves a wildcard-free path in the payload: the value, its
// pointer (where it is, or where it would be) and whether it resolved.
func lookup(f Facts, p string) (any, string, bool) {
	v, ptr, ok := spec.Lookup(f.Obs.Payload, p)
	if !ok {
		return nil, spec.Pointer(p), false
	}
	return v, ptr, true
}

func ptr(s string) *string { return &s }

func pass() spec.Result { return spec.Result{Passed: true} }

func fail(pointer *string, expected, actual any, format string, a ...any) spec.Result {
	return spec.Result{Passed: false, JSONPointer: pointer, Expected: expected, Actual: actual, Message: fmt.Sprintf(format, a...)}
}

// --- presence ---

func checkFieldPresent(v spec.Validation, f Facts) spec.Result {
	p, na := pathOf(v, false)
	if na != nil {
		return *na
	}
	val, at, ok := lookup(f, p)
	if ok && val != nil {
		return pass()
	}
	if ok {
		return fail(ptr(at), p, nil, "%s is present but null", p)
	}
	// The contract's actual: null when the field is missing, or the
	// observed non-object value where the path could not descend.
	return fail(ptr(at), p, echo(blockingScalar(f.Obs.Payload, p)), "%s is missing", p)
}

// blockingScalar is the scalar value a path runs into before its end
// (the path descends into a string or a number), or nil.
func blockingScalar(doc any, p string) any {
	segs, err := spec.ParsePath(p)
	if err != nil {
		return nil
	}
	cur := doc
	for _, s := range segs {
		switch c := cur.(type) {
		case map[string]any:
			if s.Wild || s.Index >= 0 {
				return nil
			}
			x, ok := c[s.Key]
			if !ok {
				return nil
			}
			cur = x
		case []any:
			i := s.Index
			if s.Index < 0 {
				n, err := strconv.Atoi(s.Key)
				if err != nil {
					return nil
				}
				i = n
			}
			if s.Wild || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		case nil:
			return nil
		default:
			return cur
		}
	}
	return nil
}

func checkFieldAbsent(v spec.Validation, f Facts) spec.Result {
	p, na := pathOf(v, false)
	if na != nil {
		return *na
	}
	val, at, ok := lookup(f, p)
	if !ok || val == nil {
		return pass()
	}
	return fail(ptr(at), nil, echo(val), "%s is present and must not be", p)
}

// --- pattern ---

func checkFieldPattern(v spec.Validation, f Facts) spec.Result {
	p, na := pathOf(v, false)
	if na != nil {
		return *na
	}
	if v.Pattern == "" {
		return notApplicable(fmt.Sprintf("the %s validation declares no pattern: an authoring error, not a seller fault", v.Check))
	}
	// pattern is "a JavaScript regular expression source"
	// (storyboard-schema.yaml): ECMAScript syntax, unanchored like
	// RegExp.prototype.test.
	re, err := regexp2.Compile(v.Pattern, regexp2.ECMAScript)
	if err != nil {
		return notApplicable(fmt.Sprintf("the pattern %q does not compile as an ECMAScript regular expression (%v): an authoring error", spec.Clip(v.Pattern, 200), err))
	}
	re.MatchTimeout = regexTimeout
	expected := map[string]any{"pattern": v.Pattern}
	val, at, ok := lookup(f, p)
	if !ok {
		return fail(ptr(at), expected, nil, "%s is missing", p)
	}
	s, isStr := val.(string)
	if !isStr {
		return fail(ptr(at), expected, echo(val), "%s is a %s, not a string", p, rawjson.KindOfDecoded(val).String())
	}
	m, err := re.MatchString(s)
	if err != nil {
		return notApplicable(fmt.Sprintf("matching %s against the pattern did not finish within %v (%s): not judged", p, regexTimeout, spec.Clip(err.Error(), 200)))
	}
	if !m {
		return fail(ptr(at), expected, echo(val), "%s does not match the pattern", p)
	}
	return pass()
}

// --- values ---

// expectation is a validation's value or allowed_values, normalized: the
// allowed set, and what `expected` reports (the value itself, or the
// allowed_values array).
func expectation(v spec.Validation) (allowed []any, reported any, ok bool) {
	if v.Has("allowed_values") || len(v.AllowedValues) > 0 {
		n := spec.Normalize(v.AllowedValues)
		list, _ := n.([]any)
		return list, list, len(list) > 0
	}
	if v.Has("value") {
		n := spec.Normalize(v.Value)
		return []any{n}, n, true
	}
	return nil, nil, false
}

func member(val any, allowed []any) bool {
	n := spec.Normalize(val)
	for _, a := range allowed {
		if spec.Equal(n, a) {
			return true
		}
	}
	return false
}

func checkFieldValue(v spec.Validation, f Facts) spec.Result {
	p, na := pathOf(v, false)
	if na != nil {
		return *na
	}
	allowed, expected, ok := expectation(v)
	if !ok {
		return notApplicable("the field_value validation declares neither value nor allowed_values: an authoring error, not a seller fault")
	}
	val, at, present := lookup(f, p)
	if !present {
		return fail(ptr(at), expected, nil, "%s is missing", p)
	}
	if !member(val, allowed) {
		if val == nil { // the contract's actual null reads as absent: say it is there, null
			return fail(ptr(at), expected, nil, "%s is present but null", p)
		}
		return fail(ptr(at), expected, echo(val), "%s holds a value the validation does not allow", p)
	}
	return pass()
}

func checkFieldValueOrAbsent(v spec.Validation, f Facts) spec.Result {
	p, na := pathOf(v, false)
	if na != nil {
		return *na
	}
	allowed, expected, ok := expectation(v)
	if !ok {
		// storyboard-schema.yaml: a field_value_or_absent with neither is
		// a storyboard-load error the runner rejects before execution.
		return notApplicable("the field_value_or_absent validation declares neither value nor allowed_values: a storyboard-load error, not a seller fault")
	}
	val, at, present := lookup(f, p)
	if !present || val == nil {
		return pass()
	}
	if !member(val, allowed) {
		return fail(ptr(at), expected, echo(val), "%s is present with a value the validation does not allow", p)
	}
	return pass()
}

// checkFieldContains is the wildcard-aware membership check: it passes
// when any value resolved at path matches value or one of allowed_values,
// objects and arrays matched as deep subsets. A path that ends on an
// array without [*] (experimental_features, …impacts in the shipped
// storyboards, which expect an element) contains that array's elements,
// as `path[*]` would give.
func checkFieldContains(v spec.Validation, f Facts) spec.Result {
	p, na := pathOf(v, true)
	if na != nil {
		return *na
	}
	allowed, expected, ok := expectation(v)
	if !ok {
		return notApplicable("the field_contains validation declares neither value nor allowed_values: an authoring error, not a seller fault")
	}
	ms, err := spec.Resolve(f.Obs.Payload, p)
	if err != nil {
		return notApplicable(fmt.Sprintf("the path %q does not resolve: %v", spec.Clip(p, 200), err))
	}
	// The terminal values: each resolved value, and when the path does not
	// end in [*] and a value is an array, its elements (reported) — the
	// array itself is still matched, so an array expectation is a deep
	// subset of it.
	spread := !strings.HasSuffix(p, "[*]")
	var terms, wholes []any
	for _, m := range ms {
		if arr, isArr := m.Value.([]any); isArr && spread {
			terms = append(terms, arr...)
			wholes = append(wholes, m.Value)
			continue
		}
		terms = append(terms, m.Value)
	}
	for _, a := range allowed {
		for _, t := range append(wholes, terms...) {
			if spec.Subset(a, t) {
				return pass()
			}
		}
	}
	// The pointer names the array the wildcard walks (the path before its
	// first [*]), or the one value resolved.
	prefix, _, _ := strings.Cut(p, "[*]")
	at := spec.Pointer(prefix)
	if len(ms) == 1 {
		at = ms[0].Pointer
	}
	return fail(ptr(at), expected, echoList(terms), "no value at %s matches the expectation", p)
}

// --- numbers and cardinality ---

// count reads a non-negative integer bound from a validation value.
func count(v any) (int, bool) {
	n, ok := spec.Normalize(v).(float64)
	if !ok || n < 0 || n != math.Trunc(n) || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

// checkArrayLength: storyboard-schema.yaml (3.2) "array_length check".
func checkArrayLength(v spec.Validation, f Facts) spec.Result {
	p, na := pathOf(v, false)
	if na != nil {
		return *na
	}
	hasVal, hasRange := v.Has("value"), v.Min != nil || v.Max != nil
	var exact int
	switch {
	case hasVal == hasRange:
		return notApplicable("the array_length validation declares value, or min/max, but not both and not neither: an authoring error")
	case hasVal:
		n, ok := count(v.Value)
		if !ok {
			return notApplicable("the array_length value is not a non-negative integer: an authoring error")
		}
		exact = n
	default:
		if (v.Min != nil && *v.Min < 0) || (v.Max != nil && *v.Max < 0) || (v.Min != nil && v.Max != nil && *v.Min > *v.Max) {
			return notApplicable("the array_length bounds are negative or min exceeds max: an authoring error")
		}
	}
	val, at, ok := lookup(f, p)
	arr, isArr := val.([]any)
	if !ok || !isArr {
		// "For a missing/non-array path, failure output instead uses
		// expected: "array" and the observed value as actual (null when
		// absent)."
		return fail(ptr(at), "array", echo(val), "%s is not an array", p)
	}
	n := len(arr)
	if hasVal {
		if n != exact {
			return fail(ptr(at), float64(exact), float64(n), "%s holds %d items, not %d", p, n, exact)
		}
		return pass()
	}
	bounds := map[string]any{}
	if v.Min != nil {
		bounds["min"] = float64(*v.Min)
	}
	if v.Max != nil {
		bounds["max"] = float64(*v.Max)
	}
	if (v.Min != nil && n < *v.Min) || (v.Max != nil && n > *v.Max) {
		return fail(ptr(at), bounds, float64(n), "%s holds %d items, outside the bounds", p, n)
	}
	return pass()
}

// checkFieldGreaterThan: "Requires the value at path and the literal
// value threshold to be finite numbers, and passes only when the observed
// value is strictly greater" (storyboard-schema.yaml, 3.2).
func checkFieldGreaterThan(v spec.Validation, f Facts) spec.Result {
	p, na := pathOf(v, false)
	if na != nil {
		return *na
	}
	th, ok := spec.Normalize(v.Value).(float64)
	if !v.Has("value") || !ok || math.IsNaN(th) || math.IsInf(th, 0) {
		return notApplicable("the field_greater_than validation declares no finite-number value threshold: an authoring error")
	}
	val, at, present := lookup(f, p)
	if !present {
		return fail(ptr(at), th, nil, "%s is missing", p)
	}
	n, isNum := val.(float64)
	if !isNum || math.IsNaN(n) || math.IsInf(n, 0) {
		return fail(ptr(at), th, echo(val), "%s is a %s, not a finite number", p, rawjson.KindOfDecoded(val).String())
	}
	if !(n > th) {
		return fail(ptr(at), th, n, "%s is not greater than %v", p, th)
	}
	return pass()
}
