package check

import (
	"encoding/json"
	"fmt"
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
// of its operands: spec.Equal normalises again at every level, which
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
