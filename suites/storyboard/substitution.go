package storyboard

import (
	"context"
	"fmt"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/observer"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// The substitution observer's runner task and the test-kit contract it
// satisfies (test-kits/substitution-observer-runner.yaml).
const (
	taskSubstitutionSafe = "expect_substitution_safe"
	substitutionContract = "substitution_observer_runner"
)

// substitutionStep runs expect_substitution_safe: the previous step's
// reply, graded by the observer (Prepare, Plan.Grade), its preview_url
// fetched through the dispatcher's PublicFetcher for a url_fetch source
// (judged by Preview); or why the step is skipped.
func (r *runner) substitutionStep(ctx context.Context, st *spec.Step, probeID string) ([]spec.Result, *spec.Skip) {
	plan, skip := observer.Prepare(st, r.env.MacroVectors)
	if skip != nil {
		return nil, skip
	}
	if len(r.steps) == 0 {
		return nil, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: "expect_substitution_safe reads the previous step's response, and no step ran before it"}
	}
	prev := r.steps[len(r.steps)-1]
	at := prev.PhaseID + "." + prev.StepID
	switch {
	case prev.Skip != nil:
		return nil, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: fmt.Sprintf("the previous step %s was skipped (%s): there is no preview to observe", at, prev.Skip.Reason)}
	case prev.Error != "" || prev.Obs == nil:
		return nil, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: fmt.Sprintf("the previous step %s has no reply to observe", at)}
	case !prev.Passed:
		return nil, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: fmt.Sprintf("the previous step %s did not pass: its preview is not observed", at)}
	}
	var fetch func(string) (string, *spec.Result)
	if pf, ok := r.d.(spec.PublicFetcher); ok {
		fetch = func(u string) (string, *spec.Result) {
			return observer.Preview(pf.FetchPublic(ctx, probeID+"#preview", u, observer.PreviewFetch()), u)
		}
	}
	return plan.Grade(prev.Obs.Payload, at, fetch)
}
