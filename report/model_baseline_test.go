package report

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTheBaselineTurnsListedFailuresIntoExpectedOnes(t *testing.T) {
	cases := []struct {
		name     string
		rules    []RuleResult
		baseline []BaselineEntry
		verdict  Verdict
		code     int
	}{
		{"an expected failure passes the run",
			[]RuleResult{rule("CTX-01", Must, spec(Failed, "bad")), rule("ENV-01", Must, spec(Passed, ""))},
			[]BaselineEntry{{Rule: "CTX-01", Reason: "known"}}, Conformant, 0},
		{"a listed rule that passes is stale",
			[]RuleResult{rule("CTX-01", Must, spec(Passed, ""))},
			[]BaselineEntry{{Rule: "CTX-01", Reason: "known"}}, StaleBaseline, 1},
		{"a new failure fails the run",
			[]RuleResult{rule("CTX-01", Must, spec(Failed, "bad")), rule("ENV-01", Must, spec(Failed, "worse"))},
			[]BaselineEntry{{Rule: "CTX-01", Reason: "known"}}, NonConformant, 1},
		{"a new failure wins over a stale entry",
			[]RuleResult{rule("CTX-01", Must, spec(Passed, "")), rule("ENV-01", Must, spec(Failed, "worse"))},
			[]BaselineEntry{{Rule: "CTX-01", Reason: "known"}}, NonConformant, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Rules: tc.rules, Baseline: tc.baseline, AdcpRelease: "3.1.19"}
			r.Settle()
			if r.Verdict != tc.verdict || r.ExitCode() != tc.code {
				t.Fatalf("verdict %s exit %d, want %s %d", r.Verdict, r.ExitCode(), tc.verdict, tc.code)
			}
			if r.Rules[0].Baseline == nil || r.Rules[0].Baseline.Reason != "known" {
				t.Errorf("CTX-01 not marked: %+v", r.Rules[0].Baseline)
			}
		})
	}
}

func TestRunSummaryCountsStepsTracksAndNotSelectedJudges(t *testing.T) {
	r := &Run{AdcpRelease: "3.1.19", Rules: []RuleResult{
		rule("CTX-01", Must, spec(Failed, "bad")), rule("CTX-02", Must, spec(Passed, "")),
		rule("ENV-01", Must, SpecResult{Transport: "mcp", Outcome: Disabled, Message: "not selected by --label-filter"})},
		Steps: []Step{{Passed: true}, {Passed: false}, {Passed: false, Skip: &Skip{Reason: "not_applicable"}}}}
	r.Settle()
	s := r.RunSummary
	if s.TotalSteps != 3 || s.StepsPassed != 1 || s.StepsFailed != 1 || s.StepsSkipped != 1 || s.SkippedByReason["not_applicable"] != 1 {
		t.Errorf("steps: %+v", s)
	}
	if s.StepsNotSelected != 1 || s.NotSelected[0].StepID != "ENV-01/mcp" || s.NotSelected[0].Reason != NotSelectedReason {
		t.Errorf("not selected: %+v", s.NotSelected)
	}
	if len(s.Tracks) != 2 || s.Tracks[0].Track != "CTX" || s.Tracks[0].Status != "failed" || s.Tracks[0].Counts[Passed] != 1 ||
		s.Tracks[1].Status != "not_selected" || s.RunnerCapabilityVersion != "3.1.19" {
		t.Errorf("tracks: %+v", s.Tracks)
	}
}

func TestAFailedValidationCarriesItsDiagnosticMembersAsNull(t *testing.T) {
	b, err := json.Marshal([]Validation{{Check: "rule", Rule: "CTX-01", Description: "d"},
		{Check: "rule", Rule: "CTX-01", Passed: true, Description: "d"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"check":"rule","rule":"CTX-01","passed":false,"description":"d","json_pointer":null,"expected":null,` +
		`"actual":null,"schema_id":null,"schema_url":null},{"check":"rule","rule":"CTX-01","passed":true,"description":"d"}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var back []Validation
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 2 || !strings.Contains(string(b), `"passed":true`) {
		t.Errorf("round trip: %v", err)
	}
}
