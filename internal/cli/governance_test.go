package cli

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/report"
)

// The 3.1.19 governance storyboards: two multi-agent ones routing their
// plan setup to a governance agent, and the one-agent-per-account
// registration check.
var governanceStoryboards = []string{
	"media_buy_seller/governance_denied",
	"media_buy_seller/governance_denied_recovery",
	"governance_aware_seller/governance_multi_agent_rejected",
}

// specDirs are ../shared's 3.1.19 compliance and schema folders; the test
// skips when either is absent.
func specDirs(t *testing.T) (compliance, schemas string) {
	t.Helper()
	compliance = filepath.Join(shared.Root(), "spec", "compliance", "3.1.19")
	schemas = filepath.Join(shared.Root(), "spec", "schemas", "3.1.19")
	for _, d := range []string{compliance, schemas} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Skipf("%s is absent: the 3.1.19 governance storyboards cannot run", d)
		}
	}
	return compliance, schemas
}

// governanceAgent is the reference governance agent (seller.Options
// Governance) over HTTPS — sync_governance takes https URLs only — keeping
// the tools each call named and its Authorization headers.
type governanceAgent struct {
	URL, CAFile string
	roots       *x509.CertPool
	mu          sync.Mutex
	tools, auth []string
}

func startGovernanceAgent(t *testing.T) *governanceAgent {
	t.Helper()
	g := &governanceAgent{}
	h := seller.New(seller.Options{Governance: true})
	srv := httptest.NewUnstartedServer(observeToolCalls(h, func(tool string, r *http.Request) {
		if tool == "" {
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.tools = append(g.tools, tool)
		g.auth = append(g.auth, r.Header.Get("Authorization"))
	}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	g.URL = srv.URL + "/mcp"
	g.roots = x509.NewCertPool()
	g.roots.AddCert(srv.Certificate())
	g.CAFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(g.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return g
}

// calls returns, by tool, the Authorization headers of its calls.
func (g *governanceAgent) calls() map[string][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string][]string{}
	for i, tool := range g.tools {
		out[tool] = append(out[tool], g.auth[i])
	}
	return out
}

// runGovernanceStoryboards runs the three storyboards against a reference
// seller that onboarded g, naming g with --agent governance, and returns
// the results and the run's directory.
func runGovernanceStoryboards(t *testing.T, g *governanceAgent, faults ...seller.Fault) (report.Run, string) {
	t.Helper()
	compliance, schemas := specDirs(t)
	h := seller.New(seller.Options{GovernanceAgents: []string{g.URL}, GovernanceRoots: g.roots, Faults: faults})
	sales := httptest.NewServer(h)
	t.Cleanup(sales.Close)
	out := t.TempDir()
	args := []string{"run", "--mcp", sales.URL + "/mcp", "--allow-mutations", "--agent", "governance=" + g.URL, "--ca-cert", g.CAFile,
		"--storyboards", compliance, "--schemas", schemas, "--seed", "7", "--out", out}
	for _, id := range governanceStoryboards {
		args = append(args, "--storyboard", id)
	}
	code, so, se := run(t, nil, "", args...)
	r := readResults(t, out)
	if len(r.Storyboards) == 0 {
		t.Fatalf("exit %d, no storyboards\n%s%s", code, so, se)
	}
	return r, out
}

// failingSteps are the steps of the run with a failed validation,
// "storyboard/phase/step check[,check]".
func failingSteps(r report.Run) []string {
	var out []string
	for _, st := range r.Steps {
		var kinds []string
		for _, v := range st.Validations {
			if !v.Passed && !v.NotApplicable && !slices.Contains(kinds, v.Check) {
				kinds = append(kinds, v.Check)
			}
		}
		if len(kinds) > 0 {
			out = append(out, st.StoryboardID+"/"+st.PhaseID+"/"+st.StepID+" "+strings.Join(kinds, ","))
		}
	}
	sort.Strings(out)
	return out
}

func TestTheGovernanceStoryboardsPassAgainstTheReferenceAgents(t *testing.T) {
	g := startGovernanceAgent(t)
	r, out := runGovernanceStoryboards(t, g)
	ran := map[string]string{}
	for _, sb := range r.Storyboards {
		switch {
		case !slices.Contains(governanceStoryboards, sb.ID):
			continue
		case sb.Skip != nil && strings.Contains(sb.Skip.Detail, "domains/ mirrors protocols/"):
			continue // the release's domains/ copy of a protocols/ storyboard
		case sb.Skip != nil:
			ran[sb.ID] = "skipped " + sb.Skip.Reason + ": " + sb.Skip.Detail
		default:
			ran[sb.ID] = string(sb.Outcome)
		}
	}
	want := map[string]string{
		"media_buy_seller/governance_denied":          "passed",
		"media_buy_seller/governance_denied_recovery": "passed",
		// The governance-aware-seller specialism's scenarios run for an
		// agent that claims it; the claim promises governance_approved's
		// governance_context echo and governance_conditions' propagated
		// conditions, which the reference seller does not implement, so
		// it does not claim it (fixtures/seller/STORYBOARDS.md).
		"governance_aware_seller/governance_multi_agent_rejected": "skipped not_applicable: the agent does not declare specialism governance-aware-seller (specialisms: [])",
	}
	if !maps.Equal(ran, want) {
		t.Errorf("storyboards\n  got  %v\n  want %v", ran, want)
	}
	steps := 0
	for _, st := range r.Steps {
		if ran[st.StoryboardID] != "passed" {
			continue
		}
		steps++
		if st.Skip != nil || st.Error != "" || !st.Passed {
			t.Errorf("%s/%s/%s: passed %v, skip %+v, error %s", st.StoryboardID, st.PhaseID, st.StepID, st.Passed, st.Skip, st.Error)
		}
	}
	if steps != 11 {
		t.Errorf("%d steps ran, want 11 (5 of governance_denied, 6 of governance_denied_recovery)", steps)
	}
	if f := failingSteps(r); len(f) > 0 {
		t.Errorf("failed validations: %v", f)
	}
	// The harness set up the plans on the governance agent, and the seller
	// asked it check_governance, with the credential registered through
	// sync_governance, for each create_media_buy: the denial, the denial
	// and the approved retry.
	calls := g.calls()
	if len(calls["sync_plans"]) != 2 || len(calls["check_governance"]) != 3 {
		t.Errorf("the governance agent got %v", calls)
	}
	for _, a := range calls["check_governance"] {
		if a != "Bearer gov-token-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" {
			t.Errorf("check_governance came with Authorization %q", a)
		}
	}
	for _, a := range calls["sync_plans"] {
		if a != "" {
			t.Errorf("the run sent the governance agent a credential it was not given: %q", a)
		}
	}

	// judge re-resolves $context.governance_agent_url from the recorded
	// agent URL: the same requests, the same verdicts, with no agent.
	compliance, schemas := specDirs(t)
	judged := t.TempDir()
	code, so, se := run(t, nil, "", "judge", "--storyboards", compliance, "--schemas", schemas, "--out", judged, out)
	if code != ExitOK || !strings.Contains(so, "agree: every verdict judged again is the submitted one") {
		t.Fatalf("judge: exit %d\n%s%s", code, so, se)
	}
}

func TestAGovernanceDenialTheSellerIgnoresFailsExactlyTheDenialSteps(t *testing.T) {
	g := startGovernanceAgent(t)
	var fault seller.FaultInfo
	for _, f := range seller.Catalog() {
		if f.Fault == "SB/error_code/governance-denial-ignored" {
			fault = f
		}
	}
	if fault.Fault == "" || !slices.Equal(fault.Agents, []string{"governance"}) {
		t.Fatalf("the catalogue has no governance denial fault: %+v", fault)
	}
	r, _ := runGovernanceStoryboards(t, g, fault.Fault)
	want := slices.Clone(fault.Storyboard)
	sort.Strings(want)
	if got := failingSteps(r); !slices.Equal(got, want) {
		t.Errorf("failing steps\n  got  %v\n  want %v", got, want)
	}
}
