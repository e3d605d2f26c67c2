package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/conform"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func ruleOf(t *testing.T, r report.Run, id string) report.RuleResult {
	t.Helper()
	for _, rule := range r.Rules {
		if rule.ID == id {
			return rule
		}
	}
	t.Fatalf("no rule %s", id)
	return report.RuleResult{}
}

func TestABaselinedFailureDoesNotFailTheRun(t *testing.T) {
	bl := writeFile(t, "baseline.yaml", "expected_failures:\n  - rule: ENV-02\n    reason: nested payload until v2 (TICKET-1)\n")
	dir, code := faultyRun(t, "ENV-02/nested-payload", "--label-filter", "rule:ENV-02", "--baseline", bl)
	r := readResults(t, dir)
	if code != ExitOK || r.Verdict != report.Conformant {
		t.Fatalf("exit %d, verdict %s; want 0, conformant", code, r.Verdict)
	}
	rule := ruleOf(t, r, "ENV-02")
	if rule.Outcome != report.Failed || rule.Baseline == nil || rule.Baseline.Status != report.ExpectedFailure ||
		rule.Baseline.Reason != "nested payload until v2 (TICKET-1)" || r.RunSummary.ExpectedFailures != 1 {
		t.Errorf("ENV-02: %s, baseline %+v, summary %d expected failures", rule.Outcome, rule.Baseline, r.RunSummary.ExpectedFailures)
	}
	validateResults(t, dir)
	// The JUnit agrees with exit 0: no <failure>, the reason on a skip.
	junit, err := os.ReadFile(filepath.Join(dir, FileJUnit))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(junit), "<failure") || !strings.Contains(string(junit), `<skipped message="expected failure (baseline: nested payload until v2 (TICKET-1)): ENV-02`) {
		t.Errorf("junit.xml disagrees with exit 0:\n%s", junit)
	}
}

func TestAStaleBaselineFailsTheRun(t *testing.T) {
	bl := writeFile(t, "baseline.json", `{"expected_failures":[{"rule":"ENV-02","reason":"fixed since, but still listed"}]}`)
	dir := t.TempDir()
	code, out, _ := run(t, nil, "", "run", "--out", dir, "--label-filter", "rule:ENV-02", "--baseline", bl)
	r := readResults(t, dir)
	if code != ExitNonConformant || r.Verdict != report.StaleBaseline {
		t.Fatalf("exit %d, verdict %s; want 1, %s\n%s", code, r.Verdict, report.StaleBaseline, out)
	}
	if rule := ruleOf(t, r, "ENV-02"); rule.Outcome != report.Passed || rule.Baseline == nil || rule.Baseline.Status != report.Stale {
		t.Errorf("ENV-02: %s, baseline %+v", rule.Outcome, rule.Baseline)
	}
	validateResults(t, dir)
	junit, err := os.ReadFile(filepath.Join(dir, FileJUnit))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(junit), "<failure "); n != 1 || !strings.Contains(string(junit), "ENV-02: stale baseline entry") {
		t.Errorf("junit.xml has %d failures, want the stale entry's one:\n%s", n, junit)
	}
}

func TestANewFailureFailsTheRunWhateverTheBaseline(t *testing.T) {
	bl := writeFile(t, "baseline.yaml", "expected_failures:\n  - rule: CTX-01\n    reason: another rule\n")
	dir, code := faultyRun(t, "ENV-02/nested-payload", "--label-filter", "rule:ENV-02", "--baseline", bl)
	r := readResults(t, dir)
	if code != ExitNonConformant || r.Verdict != report.NonConformant {
		t.Fatalf("exit %d, verdict %s; want 1, non_conformant", code, r.Verdict)
	}
	if rule := ruleOf(t, r, "CTX-01"); rule.Baseline == nil || rule.Baseline.Status != report.Unjudged {
		t.Errorf("CTX-01 (not selected): baseline %+v", rule.Baseline)
	}
}

func TestBaselineAndCertifyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ baseline, extra string }{
		"unknown rule":      {"expected_failures:\n  - rule: NOPE-99\n    reason: r\n", ""},
		"unknown field":     {"expected_failures:\n  - rule: CTX-01\n    reason: r\n    until: 2027\n", ""},
		"unknown top level": {"expected_failures: []\nexpected_passes: []\n", ""},
		"no reason":         {`{"expected_failures":[{"rule":"CTX-01"}]}`, ""},
		"listed twice":      {`{"expected_failures":[{"rule":"CTX-01","reason":"a"},{"rule":"CTX-01","reason":"b"}]}`, ""},
		"no list":           {"{}", ""},
		"not YAML":          {"expected_failures: [", ""},
		"with --certify":    {`{"expected_failures":[]}`, "--certify"},
	} {
		args := []string{"run", "--out", dir, "--baseline", writeFile(t, "b.yaml", c.baseline)}
		if c.extra != "" {
			args = append(args, c.extra)
		}
		if code, _, errOut := run(t, nil, "", args...); code != ExitUsage || !strings.Contains(errOut, "--") {
			t.Errorf("%s: exit %d, want %d (%s)", name, code, ExitUsage, errOut)
		}
	}
	if code, _, errOut := run(t, nil, "", "run", "--out", dir, "--certify", "--label-filter", "family:env"); code != ExitUsage {
		t.Errorf("--certify with --label-filter: exit %d (%s)", code, errOut)
	}
	if code, _, errOut := run(t, nil, "", "run", "--out", dir, "--certify", "--allow-local-fetch"); code != ExitUsage || !strings.Contains(errOut, "--allow-local-fetch") {
		t.Errorf("--certify with --allow-local-fetch: exit %d (%s)", code, errOut)
	}
	if code, _, _ := run(t, nil, "", "run", "--out", dir, "--baseline", filepath.Join(dir, "none.yaml")); code != ExitUsage {
		t.Errorf("missing baseline: exit %d", code)
	}
}

func TestACertificationRunOverPlainHTTPIsNotPublishable(t *testing.T) {
	url, stop, err := seller.Start(t.Context(), seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	dir := t.TempDir()
	code, out, errOut := run(t, nil, "", "run", "--mcp", url, "--out", dir, "--certify")
	if code != ExitHarness {
		t.Errorf("exit %d, want %d\n%s", code, ExitHarness, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "adcp-conform run: cannot certify this seller: the target is not served over HTTPS; ") ||
		!strings.Contains(last, "SCHEMA-01") {
		t.Errorf("stderr does not end with the reasons:\n%s", errOut)
	}
	if strings.Contains(out+errOut, "\x1b") {
		t.Error("ANSI escapes in the output")
	}
	r := readResults(t, dir)
	if !r.Certify || r.Publishable || !strings.Contains(r.PublishableReason, "not served over HTTPS") ||
		strings.Contains(r.PublishableReason, "not a certification run") {
		t.Errorf("certify %v, publishable %v: %q", r.Certify, r.Publishable, r.PublishableReason)
	}
	if r.LabelFilter != "" || r.RunSummary.StepsNotSelected != 0 {
		t.Errorf("a certification run selected a subset: %q, %d not selected", r.LabelFilter, r.RunSummary.StepsNotSelected)
	}
	validateResults(t, dir)
}

func TestReportsHoldNoRequestHeadersAndOnlyAllowlistedResponseHeaders(t *testing.T) {
	dir, _ := faultyRun(t, "ENV-02/nested-payload")
	r := readResults(t, dir)
	evidenced := false
	for _, rule := range r.Rules {
		for _, ev := range rule.Evidence {
			for _, x := range ev.Exchanges {
				evidenced = true
				if x.RequestHeaders != nil {
					t.Errorf("%s: request headers in the report", ev.ProbeID)
				}
				for name := range x.ResponseHeaders {
					if !strings.EqualFold(name, "Content-Type") && !strings.EqualFold(name, "Content-Length") &&
						!strings.EqualFold(name, "Www-Authenticate") && !strings.EqualFold(name, "Retry-After") &&
						!strings.EqualFold(name, "Content-Encoding") && !strings.EqualFold(name, "Location") &&
						!strings.EqualFold(name, "X-Request-Id") && !strings.EqualFold(name, "X-Correlation-Id") {
						t.Errorf("%s: response header %s in the report", ev.ProbeID, name)
					}
				}
			}
		}
	}
	if !evidenced {
		t.Error("the failing run carries no evidence")
	}
}

// The integrity record a run seals is taken as the files are written, not
// by reading them back: it is the one certify.Seal reads from the folder,
// and certify.Check finds the folder matches it, whatever the calls hold
// (a reply nested past the report bound, one that is not UTF-8, long
// strings of escapes).
func TestTheSealTakenWhileWritingIsTheFolders(t *testing.T) {
	store := evidence.NewStore(evidence.Target{MCP: "http://127.0.0.1:1/mcp"})
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	long := strings.Repeat(`\"x\\`, 50_000)
	for i, msg := range []string{`{"jsonrpc":"2.0","id":1,"result":{"a":"` + long + `"}}`, deep, "{\"a\":\"\xff\"}"} {
		store.Add(evidence.Call{ProbeID: fmt.Sprintf("mcp/p%d", i), Transport: evidence.MCP, Kind: evidence.KindToolCall, Message: json.RawMessage(msg),
			Exchanges: []wire.Exchange{{Method: "POST", ResponseBody: wire.Bytes(msg), Events: []wire.Event{{Data: msg, Raw: wire.Bytes("data: \xfe\n\n")}}}}})
	}
	sel, err := runner.Select("", suites.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := runner.Report(runner.Meta{Tool: "adcp-conform", StartedAt: time.Now()}, store, sel, nil)
	dir := t.TempDir()
	if err := conform.WriteReports(dir, run, store, sel, conform.Finish{}); err != nil {
		t.Fatal(err)
	}
	read, err := certify.Seal(dir, []string{FileEvidence, FileJUnit, FileHTML}, []string{"mcp/p0", "mcp/p1", "mcp/p2"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(run.Integrity, read) {
		t.Errorf("sealed while writing:\n%+v\nread back:\n%+v", run.Integrity, read)
	}
	if errs := certify.Check(dir, run.Integrity); len(errs) > 0 {
		t.Errorf("the folder does not match its seal: %v", errs)
	}
}
