package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/schema"
)

// faultyRun runs against the reference seller with one fault and returns
// the report folder and the exit code.
func faultyRun(t *testing.T, fault seller.Fault, args ...string) (string, ExitCode) {
	t.Helper()
	url, stop, err := seller.Start(t.Context(), seller.Options{Faults: []seller.Fault{fault}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	dir := t.TempDir()
	code, _, _ := run(t, nil, "", append([]string{"run", "--mcp", url, "--out", dir}, args...)...)
	return dir, code
}

func validateResults(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileResults))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(b); err != nil {
		t.Errorf("%s: %v", dir, err)
	}
}

func TestResultsMatchTheirSchema(t *testing.T) {
	ref := t.TempDir()
	if code, out, errOut := run(t, nil, "", "run", "--out", ref); code != ExitOK {
		t.Fatalf("reference: exit %d\n%s%s", code, out, errOut)
	}
	validateResults(t, ref)
	broken, code := faultyRun(t, "ENV-02/nested-payload")
	if code != ExitNonConformant {
		t.Fatalf("fault: exit %d", code)
	}
	validateResults(t, broken)
	url, stop := hostile.Silent()
	defer stop()
	silent := t.TempDir()
	if code, _, _ := run(t, nil, "", "run", "--mcp", url+"/mcp", "--out", silent, "--timeout", "300ms"); code != ExitHarness {
		t.Fatalf("silent seller: exit %d", code)
	}
	validateResults(t, silent)
	filtered, _ := faultyRun(t, "ENV-02/nested-payload", "--label-filter", "family:env")
	validateResults(t, filtered)
	r := readResults(t, filtered)
	if r.RunSummary.StepsNotSelected == 0 || r.RunSummary.NotSelectedByReason[report.NotSelectedReason] != r.RunSummary.StepsNotSelected {
		t.Errorf("a filtered run reports no not-selected judges: %+v", r.RunSummary)
	}
	s := readResults(t, broken).RunSummary
	if s.TotalSteps == 0 || s.StepsFailed == 0 || s.TotalSteps != s.StepsPassed+s.StepsFailed+s.StepsSkipped || len(s.Tracks) == 0 {
		t.Errorf("run_summary of a failing run: %+v", s)
	}
}

// verdicts are a run's rules as judge must reproduce them.
func verdicts(r report.Run) map[string][2]string {
	m := map[string][2]string{}
	for _, rule := range r.Rules {
		m[rule.ID] = [2]string{string(rule.Outcome), rule.Message}
	}
	return m
}

func TestJudgeReproducesARecordedRunOffline(t *testing.T) {
	ref := t.TempDir()
	if code, _, _ := run(t, nil, "", "run", "--out", ref); code != ExitOK {
		t.Fatalf("reference: exit %d", code)
	}
	broken, _ := faultyRun(t, "ENV-02/nested-payload")
	for name, c := range map[string]struct {
		dir  string
		want ExitCode
	}{"reference": {ref, ExitOK}, "fault": {broken, ExitNonConformant}} {
		t.Run(name, func(t *testing.T) {
			// The seller of the fault run is stopped by now: judging is offline.
			out := t.TempDir()
			code, stdout, errOut := run(t, nil, "", "judge", "--out", out, c.dir)
			if code != c.want {
				t.Fatalf("judge: exit %d, want %d\n%s%s", code, c.want, stdout, errOut)
			}
			before, after := readResults(t, c.dir), readResults(t, out)
			want, got := verdicts(before), verdicts(after)
			if len(got) != len(want) {
				t.Fatalf("%d rules judged, %d recorded", len(got), len(want))
			}
			for id, w := range want {
				if got[id] != w {
					t.Errorf("%s: judged %v, recorded %v", id, got[id], w)
				}
			}
			if after.Verdict != before.Verdict || !after.JudgedOffline || len(after.Steps) != len(before.Steps) {
				t.Errorf("verdict %s (recorded %s), judged_offline %v", after.Verdict, before.Verdict, after.JudgedOffline)
			}
			validateResults(t, out)
			a, _ := os.ReadFile(filepath.Join(c.dir, FileEvidence))
			b, _ := os.ReadFile(filepath.Join(out, FileEvidence))
			if string(a) != string(b) {
				t.Error("judge rewrote the evidence differently")
			}
			// Judging in place works too and keeps the verdicts.
			if code, _, _ := run(t, nil, "", "judge", c.dir); code != c.want {
				t.Errorf("judge in place: exit %d", code)
			}
		})
	}
}

func TestJudgeNeedsTheSchemasARunValidatedAgainst(t *testing.T) {
	dir := shared.File(t, "spec/schemas/3.1.19")
	out := filepath.Join(t.TempDir(), "r")
	if code, so, se := run(t, nil, "", "run", "--out", out, "--schemas", dir, "--label-filter", "family:schema"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s%s", code, so, se)
	}
	first := readResults(t, out)
	if first.SchemasRelease != "3.1.19" {
		t.Fatalf("schemas_release = %q", first.SchemasRelease)
	}
	if code, _, se := run(t, nil, "", "judge", out); code != ExitUsage || !strings.Contains(se, "--schemas") {
		t.Errorf("judge without --schemas: exit %d, %q", code, se)
	}
	if code, so, se := run(t, nil, "", "judge", "--schemas", dir, out); code != ExitOK {
		t.Fatalf("judge: exit %d\n%s%s", code, so, se)
	}
	again := readResults(t, out)
	for i, r := range first.Rules {
		if r.ID[:3] == "SCH" && (again.Rules[i].Outcome != r.Outcome || r.Outcome != report.Passed) {
			t.Errorf("%s: %s, judged again %s", r.ID, r.Outcome, again.Rules[i].Outcome)
		}
	}
}
