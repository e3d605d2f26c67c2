package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/report"
)

// TestTheReferenceSandboxRunExpectsItsLedger: a sandbox run against the
// bundled seller takes the seller's ledger as its baseline: it exits 0,
// each storyboard step it fails is an expected failure shown with the
// ledger's reason (once, naming both faces), and results.json keeps the
// ledger's entries in the
// run's scope (3.1.19, --sandbox), on both faces. --baseline replaces the
// ledger: with an empty one the same failures fail the run.
func TestTheReferenceSandboxRunExpectsItsLedger(t *testing.T) {
	compliance, schemas := specDirs(t)
	args := []string{"run", "--sandbox", "--allow-mutations", "--storyboards", compliance, "--schemas", schemas, "--webhook-wait", "300ms"}
	dir := t.TempDir()
	code, out, errOut := run(t, nil, "", append(args, "--out", dir)...)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "the reference seller's ledger is the baseline (fixtures/seller/ledger.yaml)") {
		t.Errorf("the run does not say the ledger applies:\n%s", errOut)
	}
	// The two faces' summary lists each expected failure once, naming the
	// faces it is expected on.
	if n := strings.Count(out, "\nexpected failures (7, as the baseline lists them: they do not fail the run)\n"); n != 1 {
		t.Errorf("the 7 expected failures are listed %d times:\n%s", n, out)
	}
	if !strings.Contains(out, "  [MCP, A2A 0.3] media_buy_seller/create_buy/create_media_buy — the storyboard assigns creative video_30s_trail_pro") {
		t.Errorf("an expected failure without its reason:\n%s", out)
	}
	for _, face := range []string{dir, filepath.Join(dir, ReferenceA2A03Dir)} {
		r := readResults(t, face)
		if r.Verdict != report.Conformant || !r.Sandbox || len(r.Baseline) != 7 || r.RunSummary.ExpectedFailures != 7 {
			t.Errorf("%s: verdict %s, sandbox %v, %d entries, %d expected failures", face, r.Verdict, r.Sandbox, len(r.Baseline), r.RunSummary.ExpectedFailures)
		}
		for _, e := range r.Baseline {
			if !slices.Contains(e.Releases, "3.1.19") || e.Sandbox == nil || !*e.Sandbox {
				t.Errorf("%s: an entry out of the run's scope: %+v", face, e)
			}
		}
		for _, sb := range r.Storyboards {
			if sb.Outcome == report.Failed && (sb.Baseline == nil || sb.Baseline.Status != report.ExpectedFailure) {
				t.Errorf("%s: storyboard %s fails unexpectedly: %+v", face, sb.ID, sb.Baseline)
			}
		}
	}

	empty := filepath.Join(t.TempDir(), "baseline.yaml")
	if err := os.WriteFile(empty, []byte("expected_failures: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, nil, "", append(args, "--baseline", empty, "--out", t.TempDir())...)
	if code != ExitNonConformant || strings.Contains(errOut, "ledger") || !strings.Contains(out, "verdict: non_conformant (bundled reference seller, not a seller under test)") || !strings.Contains(out, "non_conformant — 5 storyboards failed") {
		t.Errorf("with --baseline: exit %d\n%s\n%s", code, out, errOut)
	}
}
