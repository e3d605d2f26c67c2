package storyboard

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// crossChecks are the cross-step and cross-response check kinds.
var crossChecks = map[string]checkFunc{
	"any_of":                        checkAnyOf,
	"refs_resolve":                  checkRefsResolve,
	"a2a_submitted_artifact":        checkA2ASubmittedArtifact,
	"a2a_context_continuity":        checkA2AContextContinuity,
	"field_less_than":               checkFieldLessThan,
	"field_equals_context":          checkFieldEqualsContext,
	"field_in_context_array":        checkFieldInContextArray,
	"all_fields_in_context_array":   checkAllFieldsInContextArray,
	"upstream_traffic":              checkUpstreamTraffic,
	"canonical_format_satisfaction": checkCanonicalFormatSatisfaction,
	"cross_response_field_equal":    checkCrossResponseFieldEqual,
	"cross_response_count_distinct": checkCrossResponseCountDistinct,
	"replay_not_cached_rate_limit":  checkReplayNotCachedRateLimit,
	"oauth_metadata_graph":          checkOAuthMetadataGraph,
}

// Bounds on what a result carries, so a hostile reply cannot blow up a
// report: at most maxListed values in an expected/actual list, and
// strings cut at maxShown bytes in messages.
const (
	maxListed = 50
	maxShown  = 200
)

// newResult starts a result for v.
func newResult(v spec.Validation) spec.Result {
	return spec.Result{ID: v.ID, Check: v.Check, Description: v.Description}
}

// key is a canonical identity for a decoded JSON value (maps marshal with
// sorted keys), used to collapse duplicates and count distinct values.
func key(v any) string {
	b, err := json.Marshal(spec.Normalize(v))
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// sameJSON is JSON deep equality (numbers by value), linear in the size
// of its operands: path.go's Equal normalises again at every level, which
// is quadratic in the nesting depth an agent controls.
func sameJSON(a, b any) bool { return key(a) == key(b) }

// capList keeps at most maxListed values.
func capList(vs []any) []any {
	if len(vs) > maxListed {
		return vs[:maxListed]
	}
	return vs
}

// payloadOf is the step's decoded task result, with whether there is an
// observation to read at all.
func payloadOf(f Facts) (any, bool) {
	if f.Obs == nil {
		return nil, false
	}
	return f.Obs.Payload, true
}

// noObservation explains why a check that reads the step's response has
// nothing to read.
func noObservation(r spec.Result, f Facts) (spec.Result, bool) {
	if f.Obs == nil {
		return r.NA("the step sent nothing, so there is no response to read"), true
	}
	if f.Obs.Failure != "" {
		return r.NA("the call proves nothing about the agent: %s", f.Obs.Failure), true
	}
	return r, false
}

// ---------------------------------------------------------------------
// any_of

// checkAnyOf grades an assert_contribution step: it passes when any flag
// in allowed_values was contributed by an earlier step of the run.
//
// Spec: universal/storyboard-schema.yaml "Branch sets" defines any_of only
// as the assert_contribution grader over the contributed flags; every
// shipped any_of (3.1.19 and 3.2.0-beta.5) sits on an assert_contribution
// step. The contributions are run state, not step state, so an any_of on
// an ordinary step is graded the same way (decision: the schema gives it no
// other meaning; runner-output-contract.yaml expected "array of acceptable
// forms" is the allowed_values list).
func checkAnyOf(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	if len(v.AllowedValues) == 0 {
		return r.NA("any_of declares no allowed_values (an authoring error): nothing to grade")
	}
	want := make([]string, 0, len(v.AllowedValues))
	for _, a := range v.AllowedValues {
		s, ok := spec.Normalize(a).(string)
		if !ok {
			return r.NA("any_of allowed_values holds %s, not a branch-set flag name (an authoring error)", spec.Shown(a))
		}
		want = append(want, s)
	}
	for _, w := range want {
		if by, ok := f.Contributions[w]; ok {
			return r.Pass().Observe("flag %q contributed by %s", w, by)
		}
	}
	got := make([]string, 0, len(f.Contributions))
	for k := range f.Contributions {
		got = append(got, k)
	}
	sort.Strings(got)
	expected := make([]any, len(want))
	for i, w := range want {
		expected[i] = w
	}
	actual := make([]any, 0, len(got))
	for _, g := range got {
		actual = append(actual, g)
	}
	return r.Fail(nil, expected, capList(actual),
		"no branch contributed any of %s: no peer path of the branch set succeeded", strings.Join(quoteAll(want), ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// ---------------------------------------------------------------------
// Cross-step comparison: field_less_than, field_equals_context,
// field_in_context_array, all_fields_in_context_array
// (universal/storyboard-schema.yaml "Cross-step comparison";
// runner-output-contract.yaml notes.cross_step_comparison_checks).

// comparand returns the context value named by v.ContextKey. absent is
// true (with r carrying the context_key_absent observation, passed) when
// the key is set but missing from the accumulator.
func comparand(v spec.Validation, f Facts, r spec.Result) (val any, absent bool, out spec.Result) {
	c, ok := f.Context[v.ContextKey]
	if !ok {
		return nil, true, r.Pass().Observe("context_key_absent: %q is not in the context (the capturing step did not run on this path)", v.ContextKey)
	}
	return spec.Normalize(c), false, r
}

// observedAt looks path up in the step's payload; wildcard paths are an
// authoring error for the scalar checks.
func observedAt(payload any, path string) (val any, pointer string, ok bool, err error) {
	segs, err := spec.ParsePath(path)
	if err != nil {
		return nil, "", false, err
	}
	for _, s := range segs {
		if s.Wild {
			return nil, "", false, fmt.Errorf("path %q has a [*] wildcard; this check compares one value", path)
		}
	}
	if payload == nil {
		return nil, spec.Pointer(path), false, nil
	}
	val, pointer, ok = spec.Lookup(payload, path)
	if !ok {
		pointer = spec.Pointer(path)
	}
	return val, pointer, ok, nil
}

func finite(v any) (float64, bool) {
	x, ok := spec.Normalize(v).(float64)
	return x, ok && !math.IsNaN(x) && !math.IsInf(x, 0)
}

func checkFieldLessThan(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	if v.Path == nil {
		return r.NA("field_less_than declares no path (an authoring error)")
	}
	var limit any
	switch {
	case v.ContextKey != "":
		c, absent, out := comparand(v, f, r)
		if absent {
			return out
		}
		limit = c
	case v.Has("value"):
		limit = spec.Normalize(v.Value)
		if _, ok := finite(limit); !ok {
			return r.NA("field_less_than value %s is not a finite number (an authoring error)", spec.Shown(limit))
		}
	default:
		return r.NA("field_less_than declares neither context_key nor value (an authoring error)")
	}
	if out, done := noObservation(r, f); done {
		return out
	}
	payload, _ := payloadOf(f)
	got, pointer, ok, err := observedAt(payload, *v.Path)
	if err != nil {
		return r.NA("%v (an authoring error)", err)
	}
	lim, limOK := finite(limit)
	if !limOK {
		return r.Fail(ptr(pointer), limit, got, "type error: the comparand %s is not a finite number", spec.Shown(limit))
	}
	if !ok {
		return r.Fail(ptr(pointer), lim, nil, "%s is missing; expected a number less than %v", *v.Path, lim)
	}
	x, xOK := finite(got)
	if !xOK {
		return r.Fail(ptr(pointer), lim, got, "type error: %s is %s, not a finite number", *v.Path, spec.Shown(got))
	}
	if x < lim {
		return r.Pass()
	}
	return r.Fail(ptr(pointer), lim, x, "%s is %v, not less than %v", *v.Path, x, lim)
}

// contextOperands opens a comparison against a captured value: the
// validation's path and context_key are required, an absent key passes
// with its observation, a step without a reply is not applicable. done
// says out is the result already; else want is the captured comparand.
func contextOperands(v spec.Validation, f Facts, r spec.Result) (want any, out spec.Result, done bool) {
	if v.Path == nil || v.ContextKey == "" {
		return nil, r.NA("%s needs path and context_key (an authoring error)", v.Check), true
	}
	want, absent, out := comparand(v, f, r)
	if absent {
		return nil, out, true
	}
	if out, done := noObservation(r, f); done {
		return nil, out, true
	}
	return want, spec.Result{}, false
}

func checkFieldEqualsContext(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	want, out, done := contextOperands(v, f, r)
	if done {
		return out
	}
	payload, _ := payloadOf(f)
	got, pointer, ok, err := observedAt(payload, *v.Path)
	if err != nil {
		return r.NA("%v (an authoring error)", err)
	}
	if !ok {
		return r.Fail(ptr(pointer), want, nil, "%s is missing; expected %s", pathName(*v.Path), spec.Shown(want))
	}
	if sameJSON(got, want) {
		return r.Pass()
	}
	return r.Fail(ptr(pointer), want, got, "%s is %s, expected %s (captured as %q)", pathName(*v.Path), spec.Shown(got), spec.Shown(want), v.ContextKey)
}

func pathName(p string) string {
	if p == "" {
		return "the response"
	}
	return p
}

func checkFieldInContextArray(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	want, out, done := contextOperands(v, f, r)
	if done {
		return out
	}
	payload, _ := payloadOf(f)
	got, pointer, ok, err := observedAt(payload, *v.Path)
	if err != nil {
		return r.NA("%v (an authoring error)", err)
	}
	arr, isArr := want.([]any)
	if !isArr {
		return r.Fail(ptr(pointer), want, got, "type error: the captured %q is %s, not an array", v.ContextKey, spec.Shown(want))
	}
	if !ok {
		return r.Fail(ptr(pointer), capList(arr), nil, "%s is missing; expected one of the captured %q", *v.Path, v.ContextKey)
	}
	for _, m := range arr {
		if sameJSON(got, m) {
			return r.Pass()
		}
	}
	return r.Fail(ptr(pointer), capList(arr), got, "%s is %s, not a member of the captured %q", *v.Path, spec.Shown(got), v.ContextKey)
}

func checkAllFieldsInContextArray(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	want, out, done := contextOperands(v, f, r)
	if done {
		return out
	}
	if _, err := spec.ParsePath(*v.Path); err != nil {
		return r.NA("%v (an authoring error)", err)
	}
	arr, isArr := want.([]any)
	if !isArr {
		return r.Fail(ptr(spec.Pointer(*v.Path)), want, nil, "type error: the captured %q is %s, not an array", v.ContextKey, spec.Shown(want))
	}
	payload, _ := payloadOf(f)
	var ms []spec.Match
	if payload != nil {
		ms, _ = spec.Resolve(payload, *v.Path)
	}
	if len(ms) == 0 {
		// Spec: "A path resolving no terminal values passes vacuously".
		return r.Pass().Observe("%s resolved no values: passes vacuously", *v.Path)
	}
	set := make(map[string]bool, len(arr))
	for _, m := range arr {
		set[key(m)] = true
	}
	values := make([]any, 0, len(ms))
	var bad *spec.Match
	for i := range ms {
		values = append(values, ms[i].Value)
		if bad == nil && !set[key(ms[i].Value)] {
			bad = &ms[i]
		}
	}
	if bad == nil {
		return r.Pass()
	}
	return r.Fail(ptr(bad.Pointer), capList(arr), capList(values), "%s is %s, not a member of the captured %q", bad.Pointer, spec.Shown(bad.Value), v.ContextKey)
}

// ---------------------------------------------------------------------
// refs_resolve (universal/storyboard-schema.yaml "Cross-step integrity").

// refDoc is the document one side of refs_resolve reads: the step's task
// result (current_step) or the context accumulator (context). For context
// the first path segment names the captured key; when that key is absent
// the capturing step did not run, reported in absentKey.
func refDoc(side *spec.RefSet, f Facts) (doc any, absentKey string, err error) {
	switch side.From {
	case "current_step":
		if f.Obs == nil {
			return nil, "", fmt.Errorf("the step sent nothing, so there is no current_step response")
		}
		return f.Obs.Payload, "", nil
	case "context":
		segs, err := spec.ParsePath(side.Path)
		if err != nil {
			return nil, "", err
		}
		if len(segs) == 0 || segs[0].Key == "" {
			return nil, "", fmt.Errorf("a context path must start with the captured key name")
		}
		if _, ok := f.Context[segs[0].Key]; !ok {
			return nil, segs[0].Key, nil
		}
		ctx := make(map[string]any, len(f.Context))
		for k, v := range f.Context {
			ctx[k] = v
		}
		return ctx, "", nil
	}
	return nil, "", fmt.Errorf("unknown from %q (want current_step or context)", side.From)
}

// normURL is the scope comparison's normalisation of keys ending in
// "url": trailing slashes dropped, case folded.
func normURL(s string) string { return strings.ToLower(strings.TrimRight(s, "/")) }

// project returns ref's values at keys, or ok false when ref is not an
// object or lacks one of them (such a ref never matches). Values of keys
// ending in "url" are normalised as scope compares them (decision: the
// schema states the normalisation for scope only; applying it to matching
// as well keeps "https://a.example" and "https://a.example/" — one agent —
// from failing each other; it can only make more refs resolve).
func project(ref any, keys []string) (tuple map[string]any, ok bool) {
	obj, isObj := ref.(map[string]any)
	tuple = map[string]any{}
	ok = isObj
	for _, k := range keys {
		if !isObj {
			break
		}
		v, has := obj[k]
		if !has || v == nil {
			ok = false
			continue
		}
		if s, isStr := v.(string); isStr && strings.HasSuffix(k, "url") {
			v = normURL(s)
		}
		tuple[k] = v
	}
	return tuple, ok
}

func checkRefsResolve(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	if v.Source == nil || v.Target == nil || v.Source.Path == "" || v.Target.Path == "" {
		return r.NA("refs_resolve needs source and target, each with from and path (an authoring error)")
	}
	if len(v.MatchKeys) == 0 {
		return r.NA("refs_resolve declares no match_keys (an authoring error): nothing to match refs on")
	}
	mode := v.OnOutOfScope
	if mode == "" {
		mode = "warn"
	}
	if mode != "warn" && mode != "ignore" && mode != "fail" {
		return r.NA("on_out_of_scope %q is not warn, ignore or fail (an authoring error)", mode)
	}
	var scopeWant string
	if v.Scope != nil {
		if v.Scope.Key == "" {
			return r.NA("refs_resolve scope has no key (an authoring error)")
		}
		scopeWant = v.Scope.Equals
		if scopeWant == "$agent_url" {
			if f.AgentURL == "" {
				return r.NA("scope compares with $agent_url but the run has no agent URL")
			}
			scopeWant = f.AgentURL
		}
		if strings.HasSuffix(v.Scope.Key, "url") {
			scopeWant = normURL(scopeWant)
		}
	}
	if f.Obs != nil && (v.Source.From == "current_step" || v.Target.From == "current_step") {
		if f.Obs.Failure != "" {
			return r.NA("the call proves nothing about the agent: %s", f.Obs.Failure)
		}
		if f.Obs.IsError || f.Obs.Error != nil {
			// The error itself is graded by the step's other validations;
			// an error reply holds no refs to resolve or to resolve into.
			return r.NA("the step's reply is an error (%s): there are no task results to resolve refs against", codeOr(f.Obs))
		}
	}
	srcDoc, srcAbsent, err := refDoc(v.Source, f)
	if err != nil {
		return r.NA("source: %v", err)
	}
	tgtDoc, tgtAbsent, err := refDoc(v.Target, f)
	if err != nil {
		return r.NA("target: %v", err)
	}
	if k := srcAbsent + tgtAbsent; k != "" {
		// As for context_key_absent: the capturing step was skipped on
		// this path, which is not the agent's failure.
		return r.NA("context_key_absent: %q is not in the context (the capturing step did not run on this path)", k)
	}
	srcs, err := spec.Resolve(srcDoc, v.Source.Path)
	if err != nil {
		return r.NA("source: %v (an authoring error)", err)
	}
	tgts, err := spec.Resolve(tgtDoc, v.Target.Path)
	if err != nil {
		return r.NA("target: %v (an authoring error)", err)
	}
	if len(srcs) == 0 {
		return r.Pass().Observe("source %s resolved no refs: nothing to resolve", v.Source.Path)
	}
	targets := map[string]bool{}
	for _, t := range tgts {
		if tuple, ok := project(t.Value, v.MatchKeys); ok {
			targets[key(tuple)] = true
		}
	}
	var missing []any
	seenMissing := map[string]bool{}
	var outOfScope []string
	seenOut := map[string]bool{}
	addMissing := func(tuple map[string]any) {
		k := key(tuple)
		if !seenMissing[k] {
			seenMissing[k] = true
			missing = append(missing, tuple)
		}
	}
	var firstPointer string
	for _, s := range srcs {
		tuple, ok := project(s.Value, v.MatchKeys)
		if v.Scope != nil && !inScope(s.Value, v.Scope.Key, scopeWant) {
			switch mode {
			case "fail":
				addMissing(tuple)
				if firstPointer == "" {
					firstPointer = s.Pointer
				}
			case "warn":
				if k := key(tuple); !seenOut[k] && len(outOfScope) < maxListed {
					seenOut[k] = true
					outOfScope = append(outOfScope, spec.Shown(tuple))
				}
			}
			continue
		}
		if ok && targets[key(tuple)] {
			continue
		}
		addMissing(tuple)
		if firstPointer == "" {
			firstPointer = s.Pointer
		}
	}
	for _, o := range outOfScope {
		r = r.Observe("out of scope (%s != %s), not checked: %s", v.Scope.Key, v.Scope.Equals, o)
	}
	if len(missing) == 0 {
		return r.Pass()
	}
	expected := map[string]any{
		"target":     v.Target.From + ":" + v.Target.Path,
		"match_keys": toAny(v.MatchKeys),
	}
	actual := map[string]any{"missing": capList(missing), "missing_count": float64(len(missing))}
	return r.Fail(ptr(firstPointer), expected, actual,
		"%d ref(s) at %s do not resolve in %s on %s, e.g. %s",
		len(missing), v.Source.Path, v.Target.Path, strings.Join(v.MatchKeys, "+"), spec.Shown(missing[0]))
}

func inScope(ref any, k, want string) bool {
	obj, ok := ref.(map[string]any)
	if !ok {
		return false
	}
	s, ok := obj[k].(string)
	if !ok {
		return false
	}
	if strings.HasSuffix(k, "url") {
		s = normURL(s)
	}
	return s == want
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
