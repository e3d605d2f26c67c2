package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/report"
)

// readResults reads the results.json a run wrote.
func readResults(t *testing.T, dir string) report.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileResults))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	return r
}

func TestRunWithoutTargetPassesTheReferenceSeller(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := run(t, nil, "", "run", "--out", dir)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, f := range []string{FileJUnit, FileHTML, FileResults, FileEvidence} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	r := readResults(t, dir)
	if r.Verdict != report.Conformant || r.Counts[report.Failed] != 0 || r.Counts[report.Passed] < 40 {
		t.Errorf("verdict %s, counts %v", r.Verdict, r.Counts)
	}
	if len(r.Steps) == 0 || r.Target == "" || r.AdcpRelease != AdcpRelease || r.MCPProtocolVersion != MCPProtocolVersion {
		t.Errorf("results.json lacks the run's facts: target %q, %d steps", r.Target, len(r.Steps))
	}
	if !strings.Contains(out, "verdict: conformant") {
		t.Errorf("summary: %s", out)
	}
	// The A2A 0.3 face has a report of its own.
	v03 := readResults(t, filepath.Join(dir, ReferenceA2A03Dir))
	if v03.Verdict != report.Conformant || v03.Counts[report.Failed] != 0 || !strings.Contains(v03.Target, "/a2a/v0.3") {
		t.Errorf("A2A 0.3 face: verdict %s, counts %v, target %q", v03.Verdict, v03.Counts, v03.Target)
	}
}

func TestRunAgainstABrokenSellerFailsAndSaysWhy(t *testing.T) {
	ctx := t.Context()
	url, stop, err := seller.Start(ctx, seller.Options{Faults: []seller.Fault{"ENV-02/nested-payload"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	dir := t.TempDir()
	code, out, _ := run(t, nil, "", "run", "--mcp", url, "--out", dir, "--label-filter", "family:env")
	if code != ExitNonConformant {
		t.Fatalf("exit %d, want %d\n%s", code, ExitNonConformant, out)
	}
	r := readResults(t, dir)
	for _, rule := range r.Rules {
		if rule.ID != "ENV-02" {
			continue
		}
		if rule.Outcome != report.Failed || len(rule.Findings) == 0 || len(rule.Evidence) == 0 {
			t.Fatalf("ENV-02: %s, %d findings, %d pieces of evidence", rule.Outcome, len(rule.Findings), len(rule.Evidence))
		}
		if !strings.HasSuffix(rule.Findings[0].JSONPointer, "/payload") {
			t.Errorf("finding points at %q", rule.Findings[0].JSONPointer)
		}
	}
	failedStep := false
	for _, st := range r.Steps {
		for _, v := range st.Validations {
			if !v.Passed && v.Rule == "ENV-02" && v.JSONPointer != nil && len(v.Actual) > 0 {
				failedStep = true
			}
		}
	}
	if !failedStep {
		t.Error("no step carries the failed ENV-02 validation with its pointer and actual value")
	}
}

func TestRunAgainstASilentSellerIsAHarnessError(t *testing.T) {
	url, stop := hostile.Silent()
	defer stop()
	dir := t.TempDir()
	code, out, errOut := run(t, nil, "", "run", "--mcp", url+"/mcp", "--out", dir, "--timeout", "300ms")
	if code != ExitHarness {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitHarness, out, errOut)
	}
	if r := readResults(t, dir); r.Verdict != report.HarnessError || r.HarnessError == "" {
		t.Errorf("verdict %s, harness error %q", r.Verdict, r.HarnessError)
	}
}

func TestRunRejectsBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"bad filter":                  {"--label-filter", "rule:ENV-02 &&"},
		"empty filter":                {"--label-filter", "rule:NOPE-1"},
		"unset token env":             {"--bearer-env", "ADCP_CONFORM_TEST_NO_SUCH_VAR"},
		"bad header":                  {"--header", "no colon"},
		"header CRLF":                 {"--header", "X-A: b\r\nX-B: c"},
		"bad URL":                     {"--mcp", "ftp://seller.example.com/mcp"},
		"userinfo URL":                {"--mcp", "https://u:p@seller.example.com/mcp"},
		"bad timeout":                 {"--timeout", "-1s"},
		"too big a burst":             {"--rate-burst", "100000"},
		"stray argument":              {"extra"},
		"bad brand.json":              {"--brand-json", "ftp://op.example/brand.json"},
		"brand.json with credentials": {"--brand-json", "https://u:p@op.example/brand.json"},
		"no release":                  {"--release", "latest"},
		"not a version":               {"--release", "v3.1"},
		"an absent mirror":            {"--release-mirror", "/nonexistent/adcp-mirror"},
		"a mirror with credentials":   {"--release-mirror", "https://u:p@mirror.example"},
	} {
		code, _, errOut := run(t, nil, "", append([]string{"run", "--out", dir}, args...)...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 with one line", name, code, errOut)
		}
	}
}

func TestRunReadsTheTokenFromTheEnvironmentOnly(t *testing.T) {
	const token = "cli-test-token-0123456789abcdef"
	url, stop, err := seller.Start(t.Context(), seller.Options{BearerToken: token})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	dir := t.TempDir()
	code, out, _ := run(t, map[string]string{"SELLER_TOKEN": token}, "", "run", "--mcp", url, "--out", dir,
		"--bearer-env", "SELLER_TOKEN", "--label-filter", "family:auth")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, f := range []string{FileJUnit, FileHTML, FileResults, FileEvidence} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), token) {
			t.Errorf("%s holds the bearer token", f)
		}
	}
}

func TestRunTakesItsFlagsFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"ADCP_CONFORM_OUT": dir, "ADCP_CONFORM_LABEL_FILTER": "rule:ENV-02", "ADCP_CONFORM_V": "true"}
	code, out, errOut := run(t, env, "", "run")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := readResults(t, dir)
	if r.LabelFilter != "rule:ENV-02" || r.Counts[report.Passed] != 1 {
		t.Errorf("label filter %q, counts %v", r.LabelFilter, r.Counts)
	}
	if !strings.Contains(errOut, "mcp/get_products/valid") || !strings.Contains(errOut, "POST ") {
		t.Errorf("-v from the environment printed no exchanges:\n%s", errOut)
	}
}

func TestRunAppendsTheStepSummaryWhenGitHubAsksForIt(t *testing.T) {
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.md")
	if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, map[string]string{"GITHUB_STEP_SUMMARY": summary}, "", "run", "--out", filepath.Join(dir, "r"), "--label-filter", "family:ctx")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "earlier step\n") || !strings.Contains(string(b), "conformant") {
		t.Errorf("summary file:\n%s", b)
	}
}

// A seller that wants a credential the run was not given is the user's
// mistake, not the seller's failure: the run is a harness error (exit 3)
// that says how to pass the credential, and no rule fails on the 401s.
func TestRunWithoutTheCredentialASellerWantsSaysHowToGiveIt(t *testing.T) {
	const token = "cli-test-token-0123456789abcdef"
	url, stop, err := seller.Start(t.Context(), seller.Options{BearerToken: token})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	dir := t.TempDir()
	code, out, errOut := run(t, nil, "", "run", "--mcp", url, "--out", dir, "--schemas", "off")
	if code != ExitHarness {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitHarness, out, errOut)
	}
	if !strings.Contains(errOut, "the seller wants authentication") || !strings.Contains(errOut, "--bearer-env") {
		t.Errorf("stderr does not say how to give the credential:\n%s", errOut)
	}
	r := readResults(t, dir)
	if r.Verdict == report.Conformant || r.Verdict == report.NonConformant {
		t.Errorf("verdict %s against a seller the run could not authenticate to", r.Verdict)
	}
	for _, rule := range r.Rules {
		if rule.Outcome == report.Failed {
			t.Errorf("%s failed on replies refused for authentication: %s", rule.ID, rule.Message)
		}
	}
}
