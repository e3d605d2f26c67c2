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
			if !strings.Contains(stdout, "agree: every verdict judged again is the submitted one") {
				t.Errorf("judge does not say it agrees:\n%s", stdout)
			}
			// Without --out, the reports go beside the folder, never into it.
			if code, _, _ := run(t, nil, "", "judge", c.dir); code != c.want {
				t.Errorf("judge without --out: exit %d", code)
			}
			if _, err := os.Stat(filepath.Join(c.dir+"-judged", FileResults)); err != nil {
				t.Errorf("judge without --out wrote no %s-judged: %v", c.dir, err)
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
	judged := filepath.Join(t.TempDir(), "j")
	if code, so, se := run(t, nil, "", "judge", "--schemas", dir, "--out", judged, out); code != ExitOK {
		t.Fatalf("judge: exit %d\n%s%s", code, so, se)
	}
	again := readResults(t, judged)
	for i, r := range first.Rules {
		if r.ID[:3] == "SCH" && (again.Rules[i].Outcome != r.Outcome || r.Outcome != report.Passed) {
			t.Errorf("%s: %s, judged again %s", r.ID, r.Outcome, again.Rules[i].Outcome)
		}
	}
}

// snapshot reads every file of dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestJudgeNeverChangesTheFolderItJudges(t *testing.T) {
	dir, pub := signedRun(t)
	before := snapshot(t, dir)
	for _, args := range [][]string{
		{"judge", "--out", filepath.Join(t.TempDir(), "j"), dir},
		{"judge", dir}, // default: DIR-judged
	} {
		code, out, errOut := run(t, nil, "", args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	code, _, errOut := run(t, nil, "", "judge", "--out", dir+"/.", dir)
	if code != ExitUsage {
		t.Errorf("judge --out DIR DIR: exit %d, want %d", code, ExitUsage)
	}
	oneErrorLine(t, errOut, "is the folder being judged: judge never changes it")
	after := snapshot(t, dir)
	if len(after) != len(before) {
		t.Errorf("judge changed the folder's files: %d before, %d after", len(before), len(after))
	}
	for path, b := range before {
		if after[path] != b {
			t.Errorf("judge changed %s", path)
		}
	}
	if code, out, errOut := run(t, nil, "", "verify", "--pubkey", pub, dir); code != ExitOK {
		t.Errorf("verify after judge: exit %d\n%s%s", code, out, errOut)
	}
}

func TestJudgeSaysWhenItsVerdictsDisagreeWithTheSubmittedOnes(t *testing.T) {
	dir, _ := signedRun(t)
	// A submission that claims a rule it failed... here, one it passed,
	// reported as failed: results.json is not among the hashed files.
	flipByte(t, filepath.Join(dir, FileResults), `"outcome": "passed"`, `"outcome": "failed"`)
	code, out, errOut := run(t, nil, "", "judge", "--out", t.TempDir(), dir)
	if code != ExitNonConformant {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitNonConformant, out, errOut)
	}
	if !strings.Contains(out, "DISAGREE ") || !strings.Contains(out, ": submitted failed, judged passed") {
		t.Errorf("stdout does not name the disagreement:\n%s", out)
	}
	oneErrorLine(t, errOut, "adcp-conform judge: the verdicts judged again disagree with the submitted ones on 1 point (see above)")
}

func TestJudgeRefusesEvidenceThatDoesNotMatchItsHashes(t *testing.T) {
	dir, _ := signedRun(t)
	flipByte(t, filepath.Join(dir, FileEvidence), `"http_status": 200`, `"http_status": 201`)
	out := filepath.Join(t.TempDir(), "j")
	code, stdout, errOut := run(t, nil, "", "judge", "--out", out, dir)
	if code != ExitNonConformant {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitNonConformant, stdout, errOut)
	}
	if !strings.Contains(stdout, "FAIL ") || !strings.Contains(stdout, "evidence.json") {
		t.Errorf("stdout does not name the mismatch:\n%s", stdout)
	}
	oneErrorLine(t, errOut, "does not match the hashes its results.json embeds")
	if _, err := os.Stat(out); err == nil {
		t.Error("judge wrote reports for evidence that does not match its hashes")
	}
}
