package storyboard

import (
	"testing"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Calls counts a step as one call and a rate-limit trip as its attempts
// (bounded as the trip bounds them) and its replay: the runner starts the
// longest storyboards first by it.
func TestCallsCountsStepsAndTripAttempts(t *testing.T) {
	trip := func(n int) spec.Step {
		return spec.Step{ID: "trip", RateLimitTrip: &spec.RateLimitTrip{MaxAttempts: n}}
	}
	for _, tc := range []struct {
		name  string
		steps []spec.Step
		want  int
	}{
		{"no steps", nil, 0},
		{"two steps", []spec.Step{{ID: "a"}, {ID: "b"}}, 2},
		{"a step and a trip of 200", []spec.Step{{ID: "a"}, trip(200)}, 202},
		{"a trip without max_attempts", []spec.Step{trip(0)}, 2},
		{"a trip past the bound", []spec.Step{trip(10000)}, 501},
	} {
		sb := &spec.Storyboard{ID: "t", Phases: []spec.Phase{{ID: "p", Steps: tc.steps}}}
		if got := Calls(sb); got != tc.want {
			t.Errorf("%s: Calls = %d, want %d", tc.name, got, tc.want)
		}
	}
}
