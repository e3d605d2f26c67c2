package check

import (
	"fmt"
	"math"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

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
