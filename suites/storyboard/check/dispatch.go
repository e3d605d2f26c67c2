package check

import (
	"fmt"
	"math"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Cross-response kinds (universal/storyboard-schema.yaml "Cross-response
// assertions"; runner-output-contract.yaml cross_response_check_kinds and
// test-kits/rate-limit-trip-runner.yaml): they read the response set of a
// multi-dispatch step, f.Dispatches.

// dispatchGate grades not_applicable outside the declared contract: the
// step (when the engine supplies it) must declare requires_contract and
// its parameter block, and there must be dispatches.
func dispatchGate(r spec.Result, f Facts, contract string, block bool) (spec.Result, bool) {
	if f.Step != nil && (f.Step.RequiresContract != contract || !block) {
		return r.NA("%s applies only to a step declaring requires_contract: %s with its parameter block", r.Check, contract), true
	}
	if len(f.Dispatches) == 0 {
		return r.NA("%s applies only to a multi-dispatch step; this step has no dispatch set", r.Check), true
	}
	return r, false
}

// resolvedSet checks every dispatch proves something about the agent and
// was resolved (no IDEMPOTENCY_IN_FLIGHT left, which the runner resolves
// by retrying after retry_after; past its budget the step is a
// step_timeout, not a rule-9 violation).
func resolvedSet(r spec.Result, f Facts) (spec.Result, bool) {
	for i, d := range f.Dispatches {
		switch {
		case d == nil:
			return r.NA("dispatch %d was not made", i), true
		case d.Failure != "":
			return r.NA("dispatch %d proves nothing about the agent: %s", i, d.Failure), true
		case d.ErrorCode == "IDEMPOTENCY_IN_FLIGHT":
			return r.NA("dispatch %d is still IDEMPOTENCY_IN_FLIGHT: the response set was not resolved within the step budget (step_timeout)", i), true
		}
	}
	return r, false
}

func crossPath(v spec.Validation) (string, bool) {
	if v.Path == nil {
		return "", false
	}
	segs, err := spec.ParsePath(*v.Path)
	if err != nil {
		return "", false
	}
	for _, s := range segs {
		if s.Wild {
			return "", false
		}
	}
	return *v.Path, true
}

func checkCrossResponseFieldEqual(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	if out, done := dispatchGate(r, f, "parallel_dispatch_runner", f.Step != nil && f.Step.ParallelDispatch != nil); done {
		return out
	}
	path, ok := crossPath(v)
	if !ok {
		return r.NA("cross_response_field_equal needs a path without wildcards (an authoring error)")
	}
	if out, done := resolvedSet(r, f); done {
		return out
	}
	expected := map[string]any{"path": path}
	var observed []any
	var first any
	have := false
	for i, d := range f.Dispatches {
		val, _, found := spec.Lookup(d.Payload, path)
		if d.Payload == nil {
			found = false
		}
		if !found {
			// Spec: "A missing value on a response is treated as a
			// non-equal observation and fails the check."
			return r.Fail(ptr(spec.Pointer(path)), expected, map[string]any{"observed_values": capList(observed)},
				"dispatch %d carries no %s (error %s): the responses do not converge", i, path, codeOr(d))
		}
		if val == nil {
			continue // only non-null values must be equal
		}
		observed = append(observed, val)
		if !have {
			first, have = val, true
			continue
		}
		if !sameJSON(first, val) {
			return r.Fail(ptr(spec.Pointer(path)), expected, map[string]any{"observed_values": capList(observed)},
				"dispatch %d has %s = %s, dispatch 0's value was %s", i, path, spec.Shown(val), spec.Shown(first))
		}
	}
	return r.Pass()
}

func codeOr(d *spec.Observation) string {
	if d.ErrorCode != "" {
		return d.ErrorCode
	}
	return "none"
}

func checkCrossResponseCountDistinct(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	if out, done := dispatchGate(r, f, "parallel_dispatch_runner", f.Step != nil && f.Step.ParallelDispatch != nil); done {
		return out
	}
	path, ok := crossPath(v)
	if !ok {
		return r.NA("cross_response_count_distinct needs a path without wildcards (an authoring error)")
	}
	if len(v.AllowedValues) == 0 {
		return r.NA("cross_response_count_distinct declares no allowed_values (an authoring error)")
	}
	allowed := map[float64]bool{}
	for _, a := range v.AllowedValues {
		n, isNum := spec.Normalize(a).(float64)
		if !isNum || n < 0 || n != math.Trunc(n) {
			return r.NA("allowed_values holds %s, not a cardinality (an authoring error)", spec.Shown(a))
		}
		allowed[n] = true
	}
	if out, done := resolvedSet(r, f); done {
		return out
	}
	seen := map[string]bool{}
	var observed []any
	for _, d := range f.Dispatches {
		val, _, found := spec.Lookup(d.Payload, path)
		if d.Payload == nil || !found || val == nil {
			continue
		}
		observed = append(observed, val)
		seen[key(val)] = true
	}
	n := float64(len(seen))
	if allowed[n] {
		return r.Pass()
	}
	return r.Fail(ptr(spec.Pointer(path)),
		map[string]any{"path": path, "allowed_values": capList(spec.Normalize(v.AllowedValues).([]any))},
		map[string]any{"observed_cardinality": n, "observed_values": capList(observed)},
		"%d distinct value(s) at %s across %d dispatches; allowed %s", len(seen), path, len(f.Dispatches), spec.Shown(v.AllowedValues))
}

// defaultReplayWait is rate_limit_trip.replay_max_wait_seconds' default
// (universal/storyboard-schema.yaml "task: expect_rate_limit_not_replayed").
const defaultReplayWait = 30

// checkReplayNotCachedRateLimit grades the rate-limit replay invariant
// (test-kits/rate-limit-trip-runner.yaml): the trip response is the first
// RATE_LIMITED dispatch, the replay the dispatch after it (the last). It
// fails when the replay is RATE_LIMITED again (the cached rate-limit was
// served), when the trip carried no usable top-level error.retry_after
// (missing_retry_after), or when retry_after exceeded the step's wait
// budget so no replay could be made (replay_wait_exceeded).
func checkReplayNotCachedRateLimit(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	if out, done := dispatchGate(r, f, "rate_limit_trip_runner", f.Step != nil && f.Step.RateLimitTrip != nil); done {
		return out
	}
	trip := -1
	for i, d := range f.Dispatches {
		if d != nil && d.Failure == "" && d.ErrorCode == "RATE_LIMITED" {
			trip = i
			break
		}
	}
	if trip < 0 {
		return r.NA("rate_limit_not_triggered: %d attempt(s) without a RATE_LIMITED response", len(f.Dispatches))
	}
	t := f.Dispatches[trip]
	wait := defaultReplayWait
	if f.Step != nil && f.Step.RateLimitTrip != nil && f.Step.RateLimitTrip.ReplayMaxWaitSeconds > 0 {
		wait = f.Step.RateLimitTrip.ReplayMaxWaitSeconds
	}
	ra, raOK := finite(t.Error["retry_after"])
	if !raOK || ra <= 0 {
		return r.Fail(ptr("/error/retry_after"), "retry_after seconds > 0", t.Error["retry_after"],
			"missing_retry_after: the RATE_LIMITED response (attempt %d) carries no usable error.retry_after", trip)
	}
	if ra > float64(wait) {
		return r.Fail(ptr("/error/retry_after"), fmt.Sprintf("retry_after <= %d", wait), ra,
			"replay_wait_exceeded: retry_after %v exceeds the replay wait budget of %ds, so the invariant cannot be verified", ra, wait)
	}
	if trip == len(f.Dispatches)-1 {
		return r.NA("no replay of the rate-limited key was observed")
	}
	rep := f.Dispatches[len(f.Dispatches)-1]
	if rep == nil || rep.Failure != "" {
		why := "not made"
		if rep != nil {
			why = rep.Failure
		}
		return r.NA("the replay proves nothing about the agent: %s", why)
	}
	expected := map[string]any{"trip_error_code": "RATE_LIMITED", "replay_error_code": "not RATE_LIMITED"}
	if rep.ErrorCode == "RATE_LIMITED" {
		return r.Fail(ptr("/error/code"), expected, map[string]any{"replay_error_code": "RATE_LIMITED"},
			"rate_limit_response_cached_as_replay: the replay of the rate-limited idempotency_key after %vs returned RATE_LIMITED again", ra)
	}
	return r.Pass().Observe("replay after %vs returned %s", ra, replayShape(rep))
}

func replayShape(o *spec.Observation) string {
	if o.ErrorCode != "" {
		return "error " + o.ErrorCode
	}
	if o.IsError || o.Error != nil {
		return "an error"
	}
	return "a success"
}
