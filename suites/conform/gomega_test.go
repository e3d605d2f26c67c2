package conform

import (
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/report"
)

// failingRun fails CTX-01 on MCP (ENV-01 failed too, but the baseline
// expects it) and one step of error_compliance (another step of it fails
// too, expected by the baseline); TASK-01 could not be judged.
func failingRun() *report.Run {
	return &report.Run{Verdict: report.NonConformant, Target: "http://127.0.0.1:1/mcp", Rules: []report.RuleResult{
		{ID: "CTX-01", Level: report.Must, Outcome: report.Failed, Specs: []report.SpecResult{
			{Transport: "mcp", Outcome: report.Failed, Message: "CTX-01: mcp/get_products/context: /result/context missing"},
			{Transport: "a2a", Outcome: report.Passed}}},
		{ID: "ENV-01", Level: report.Must, Outcome: report.Failed, Baseline: &report.BaselineMark{Status: report.ExpectedFailure},
			Specs: []report.SpecResult{{Transport: "mcp", Outcome: report.Failed, Message: "ENV-01: expected"}}},
		{ID: "TASK-01", Level: report.Must, Outcome: report.Error, Specs: []report.SpecResult{
			{Transport: "mcp", Outcome: report.Error, Message: "TASK-01: harness error: mcp/task: call timeout"}}},
		{ID: "ENV-02", Level: report.Must, Outcome: report.Passed, Specs: []report.SpecResult{{Transport: "mcp", Outcome: report.Passed}}},
	}, Storyboards: []report.StoryboardResult{
		{ID: "error_compliance", Outcome: report.Failed, Baseline: &report.BaselineMark{Status: "unexpected", Steps: []report.StepBaselineMark{
			{Step: "errors/known", Status: report.ExpectedFailure}}}},
		{ID: "capability_discovery", Outcome: report.Passed},
	}, Steps: []report.Step{
		{StoryboardID: "error_compliance", PhaseID: "errors", StepID: "unknown_id", Validations: []report.Validation{
			{Check: "error_code", Message: "expected REFERENCE_NOT_FOUND, got INVALID_REQUEST"}}},
		{StoryboardID: "error_compliance", PhaseID: "errors", StepID: "known", Validations: []report.Validation{{Check: "field_present", Message: "expected"}}},
		{StoryboardID: "error_compliance", PhaseID: "errors", StepID: "fine", Passed: true},
		{StoryboardID: "capability_discovery", PhaseID: "p", StepID: "s", Passed: true},
	}}
}

func TestBeConformantNamesTheFailingRulesAndSteps(t *testing.T) {
	m := BeConformant()
	if ok, err := m.Match(&report.Run{Verdict: report.Conformant}); !ok || err != nil {
		t.Errorf("a conformant run: %v, %v", ok, err)
	}
	for _, v := range []report.Verdict{report.NonConformant, report.HarnessError, report.Incomplete, report.StaleBaseline} {
		if ok, _ := m.Match(report.Run{Verdict: v}); ok {
			t.Errorf("a run whose verdict is %s matched", v)
		}
	}
	if _, err := m.Match(nil); err == nil {
		t.Error("no run matched without an error")
	}
	if _, err := m.Match((*report.Run)(nil)); err == nil {
		t.Error("a nil run matched without an error")
	}
	const want = `Expected the seller to be conformant, but the run's verdict is non_conformant
  failing rules:
    CTX-01 (MCP): CTX-01: mcp/get_products/context: /result/context missing
  failing storyboard steps:
    error_compliance/errors/unknown_id: error_code: expected REFERENCE_NOT_FOUND, got INVALID_REQUEST
  rules not judged (harness errors):
    TASK-01 (MCP): TASK-01: harness error: mcp/task: call timeout
`
	if got := m.FailureMessage(failingRun()); got != want {
		t.Errorf("failure message:\n%s\nwant:\n%s", got, want)
	}
	harness := &report.Run{Verdict: report.HarnessError, HarnessError: "the run deadline (5m0s) was hit\x1b[2J"}
	if got := m.FailureMessage(harness); got != "Expected the seller to be conformant, but the run's verdict is error\n  harness error: the run deadline (5m0s) was hit?[2J\n" {
		t.Errorf("a harness error: %q", got)
	}
	if got := m.NegatedFailureMessage(failingRun()); got != "Expected the seller not to be conformant, but the run against http://127.0.0.1:1/mcp is" {
		t.Errorf("negated: %q", got)
	}
}

func TestFailExactlyNamesWhatFailsBeyondAndShortOfTheList(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ids     []string
		match   bool
		message string // its first line, and the lines of the difference
	}{
		{"the rule and the step", []string{"CTX-01", "storyboard:error_compliance/errors/unknown_id"}, true, ""},
		{"the rule and the storyboard", []string{"CTX-01", "storyboard:error_compliance"}, true, ""},
		{"the rule alone", []string{"CTX-01"}, false, "Expected the run to fail exactly CTX-01 (verdict non_conformant)\n" +
			"  failing, not expected: storyboard:error_compliance, storyboard:error_compliance/errors/unknown_id\n"},
		{"a rule that passes", []string{"CTX-01", "ENV-02", "storyboard:error_compliance"}, false,
			"Expected the run to fail exactly CTX-01, ENV-02, storyboard:error_compliance (verdict non_conformant)\n  expected, not failing: ENV-02\n"},
		{"an expected failure is no failure", []string{"CTX-01", "ENV-01", "storyboard:error_compliance"}, false, "  expected, not failing: ENV-01\n"},
		{"a step the baseline expects", []string{"CTX-01", "storyboard:error_compliance/errors/known"}, false,
			"  failing, not expected: storyboard:error_compliance, storyboard:error_compliance/errors/unknown_id\n  expected, not failing: storyboard:error_compliance/errors/known\n"},
	} {
		m := FailExactly(tc.ids...)
		ok, err := m.Match(failingRun())
		if err != nil || ok != tc.match {
			t.Errorf("%s: %v, %v; want %v", tc.name, ok, err, tc.match)
			continue
		}
		if msg := m.FailureMessage(failingRun()); !tc.match && !strings.Contains(msg, tc.message) {
			t.Errorf("%s: message\n%s\nlacks\n%s", tc.name, msg, tc.message)
		}
	}
	if ok, _ := FailExactly().Match(&report.Run{Verdict: report.Conformant}); !ok {
		t.Error("a conformant run does not fail exactly nothing")
	}
}
