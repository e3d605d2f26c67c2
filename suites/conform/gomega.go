package conform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
)

// BeConformant succeeds when a run (the *report.Run Run returns) is
// conformant: every applicable MUST rule passed, or SHOULD rule too with
// Strict, every storyboard passed, each failure the baseline expects
// aside, and no harness error. Its failure message gives the verdict, the
// harness error, and each failing rule and storyboard step with its first
// finding:
//
//	Expected the seller to be conformant, but the run's verdict is non_conformant
//	  failing rules:
//	    CTX-01 (MCP): CTX-01: mcp/get_products/context: /result/context missing …
//	  failing storyboard steps:
//	    error_compliance/errors/unknown_id: error_code: expected REFERENCE_NOT_FOUND …
func BeConformant() types.GomegaMatcher { return conformant{} }

type conformant struct{}

func (conformant) Match(actual any) (bool, error) {
	run, err := runOf(actual)
	if err != nil {
		return false, err
	}
	return run.Verdict == report.Conformant, nil
}

func (conformant) FailureMessage(actual any) string {
	run, _ := runOf(actual)
	return fmt.Sprintf("Expected the seller to be conformant, but the run's verdict is %s\n%s", run.Verdict, failures(run))
}

func (conformant) NegatedFailureMessage(actual any) string {
	run, _ := runOf(actual)
	return fmt.Sprintf("Expected the seller not to be conformant, but the run against %s is", wire.Sanitize(run.Target, 200))
}

// FailExactly succeeds when what fails in a run is exactly what ids name,
// baseline-expected failures aside: a rule ("CTX-01"), a storyboard
// ("storyboard:error_compliance") or one of its steps
// ("storyboard:error_compliance/errors/unknown_id"). It is how a test
// proves a seller's known defect is caught and nothing else breaks. Its
// failure message names what fails that ids do not, and what ids name
// that does not fail.
func FailExactly(ids ...string) types.GomegaMatcher { return failExactly{ids: ids} }

type failExactly struct{ ids []string }

func (m failExactly) Match(actual any) (bool, error) {
	run, err := runOf(actual)
	if err != nil {
		return false, err
	}
	extra, missing := m.diff(run)
	return len(extra) == 0 && len(missing) == 0, nil
}

func (m failExactly) FailureMessage(actual any) string {
	run, _ := runOf(actual)
	extra, missing := m.diff(run)
	var b strings.Builder
	fmt.Fprintf(&b, "Expected the run to fail exactly %s (verdict %s)", strings.Join(m.ids, ", "), run.Verdict)
	if len(extra) > 0 {
		fmt.Fprintf(&b, "\n  failing, not expected: %s", strings.Join(extra, ", "))
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "\n  expected, not failing: %s", strings.Join(missing, ", "))
	}
	return b.String() + "\n" + failures(run)
}

func (m failExactly) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("Expected the run not to fail exactly %s, but it does", strings.Join(m.ids, ", "))
}

// diff is what fails that ids do not name, and what they name that does
// not fail: a storyboard named is failing when it or any of its steps
// is, a step named when it is.
func (m failExactly) diff(run *report.Run) (extra, missing []string) {
	failing := failingIDs(run)
	covered := func(id string) bool {
		return slices.ContainsFunc(m.ids, func(want string) bool { return id == want || strings.HasPrefix(id, want+"/") })
	}
	for _, id := range failing {
		if !covered(id) && !slices.ContainsFunc(failing, func(other string) bool { return other != id && strings.HasPrefix(other, id+"/") && covered(other) }) {
			extra = append(extra, id)
		}
	}
	for _, want := range m.ids {
		if !slices.ContainsFunc(failing, func(id string) bool { return id == want || strings.HasPrefix(id, want+"/") }) {
			missing = append(missing, want)
		}
	}
	return extra, missing
}

// failingIDs are the failures of a run, as FailExactly names them.
func failingIDs(run *report.Run) []string {
	var out []string
	for _, r := range run.Rules {
		if r.Failing() {
			out = append(out, r.ID)
		}
	}
	for _, sb := range run.Storyboards {
		if !sb.Failing() {
			continue
		}
		out = append(out, "storyboard:"+sb.ID)
		for _, st := range failingSteps(run, sb, report.Failed) {
			out = append(out, "storyboard:"+sb.ID+"/"+st.PhaseID+"/"+st.StepID)
		}
	}
	return out
}

// failingSteps are the steps of sb with one of the outcomes, but those
// its baseline expects to fail.
func failingSteps(run *report.Run, sb report.StoryboardResult, outcomes ...report.Outcome) []report.Step {
	var out []report.Step
	for _, st := range run.StoryboardSteps(sb.ID) {
		if !slices.Contains(outcomes, st.Outcome()) {
			continue
		}
		if m := sb.StepMark(st.PhaseID, st.StepID); m != nil && m.Status == report.ExpectedFailure {
			continue
		}
		out = append(out, st)
	}
	return out
}

// failures lists, one line each, the run's harness error, failing rules
// and failing storyboard steps, terminal-safe.
func failures(run *report.Run) string {
	var b strings.Builder
	if run.HarnessError != "" {
		fmt.Fprintf(&b, "  harness error: %s\n", wire.Sanitize(run.HarnessError, 500))
	}
	section := func(title string, lines []string) {
		if len(lines) > 0 {
			fmt.Fprintf(&b, "  %s:\n    %s\n", title, strings.Join(lines, "\n    "))
		}
	}
	var rules, errs []string
	for _, r := range run.Rules {
		for _, sp := range r.Specs {
			line := fmt.Sprintf("%s (%s): %s", r.ID, strings.ToUpper(sp.Transport), wire.Sanitize(sp.Message, 300))
			switch {
			case sp.Outcome == report.Failed && r.Failing():
				rules = append(rules, line)
			case sp.Outcome == report.Error && r.Level == report.Must:
				errs = append(errs, line)
			}
		}
	}
	section("failing rules", rules)
	var steps []string
	for _, sb := range run.Storyboards {
		if !sb.Failing() && sb.Outcome != report.Error {
			continue
		}
		for _, st := range failingSteps(run, sb, report.Failed, report.Error) {
			why := wire.Sanitize(st.Error, 300)
			if v := st.FirstFailure(); v != nil {
				why = wire.Sanitize(v.Check+": "+v.Message, 300)
			}
			steps = append(steps, fmt.Sprintf("%s/%s/%s: %s", sb.ID, st.PhaseID, st.StepID, why))
		}
	}
	section("failing storyboard steps", steps)
	section("rules not judged (harness errors)", errs)
	return b.String()
}

// runOf is the run a matcher is given.
func runOf(actual any) (*report.Run, error) {
	switch r := actual.(type) {
	case *report.Run:
		if r != nil {
			return r, nil
		}
	case report.Run:
		return &r, nil
	}
	return nil, fmt.Errorf("conform matchers expect the *report.Run conform.Run returns, got %#v", actual)
}
