package selftest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/cli"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
)

// complianceDir is the 3.1.19 compliance folder of ../shared, "" when
// absent.
var complianceDir = func() string {
	dir := filepath.Join(shared.Root(), "spec", "compliance", "3.1.19")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir
	}
	return ""
}()

func needStoryboards(t *testing.T) {
	t.Helper()
	if complianceDir == "" || schemasDir == "" {
		t.Skip("../shared/spec/compliance/3.1.19 or ../shared/spec/schemas/3.1.19 is absent: the storyboards cannot run")
	}
}

// sbRun is one storyboard run's results: each storyboard's outcome, and
// the storyboard steps with a failed validation, keyed
// "storyboard_id/phase_id/step_id", each with the check kinds of its
// failed validations ("kind(advisory)" for a failed advisory one).
type sbRun struct {
	storyboards []report.StoryboardResult
	failing     map[string][]string
	// failed are the keys of failing whose step failed (or erred).
	failed map[string]bool
	// graded are the check kinds graded (not not_applicable) on steps
	// that ran, sorted.
	graded []string
	// rules are the protocol rules the same run failed (or erred on),
	// "RULE transport outcome", sorted.
	rules []string
}

// runStoryboards runs `adcp-conform run` on the MCP face of the reference
// seller started with faults: the protocol rules and the storyboards (a
// run on MCP alone takes two seconds). sandbox starts the seller as a
// sandbox deployment (its comply_test_controller wired) and runs with
// --sandbox: the controller-driven and seeded storyboards run too.
func runStoryboards(sandbox bool, faults ...seller.Fault) (*sbRun, error) {
	return runRelease(release31, sandbox, faults...)
}

// sbRelease is the AdCP release a storyboard run grades: its compliance
// and schema folders, and the release the reference seller serves
// (seller.Options.Release).
type sbRelease struct {
	compliance, schemas, serves string
}

// release31 is the 3.1.19 run (the seller's default release).
var release31 = sbRelease{compliance: complianceDir, schemas: schemasDir}

// runRelease is runStoryboards for a release.
func runRelease(rel sbRelease, sandbox bool, faults ...seller.Fault) (*sbRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// The seller's live-mode principal (--live-bearer-env) runs
	// comply_controller_mode_gate's deny_live_caller.
	eps, stop, err := seller.StartAll(ctx, seller.Options{BearerToken: token, LiveBearerToken: liveToken, Faults: faults, Sandbox: sandbox, Release: rel.serves})
	if err != nil {
		return nil, err
	}
	defer stop()
	dir, err := os.MkdirTemp("", "selftest-sb-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var out, errOut bytes.Buffer
	args := []string{"run", "--mcp", eps.MCP, "--bearer-env", "SELFTEST_TOKEN", "--live-bearer-env", "SELFTEST_LIVE_TOKEN", "--rate-burst", "40", "--seed", "7", "--allow-mutations",
		"--webhook-wait", "300ms", "--storyboards", rel.compliance, "--schemas", rel.schemas, "--out", dir}
	if sandbox {
		args = append(args, "--sandbox")
	}
	code := cli.Main(args, cli.Stdio{Out: &out, Err: &errOut, Getenv: func(k string) string {
		switch k {
		case "SELFTEST_TOKEN":
			return token
		case "SELFTEST_LIVE_TOKEN":
			return liveToken
		}
		return ""
	}})
	b, err := os.ReadFile(filepath.Join(dir, cli.FileResults))
	if err != nil {
		return nil, fmt.Errorf("exit %d, no results.json: %w\n%s", code, err, errOut.String())
	}
	var run report.Run
	if err := json.Unmarshal(b, &run); err != nil {
		return nil, err
	}
	res := &sbRun{storyboards: run.Storyboards, failing: map[string][]string{}, failed: map[string]bool{}}
	ids := map[string]bool{}
	for _, sb := range run.Storyboards {
		ids[sb.ID] = true
	}
	for _, st := range run.Steps {
		if !ids[st.StoryboardID] || st.Skip != nil {
			continue
		}
		key := st.StoryboardID + "/" + st.PhaseID + "/" + st.StepID
		for _, v := range st.Validations {
			if !v.NotApplicable && !slices.Contains(res.graded, v.Check) {
				res.graded = append(res.graded, v.Check)
			}
		}
		kinds := report.StepFailures(st)
		if len(kinds) > 0 || !st.Passed {
			sort.Strings(kinds)
			res.failing[key] = kinds
			res.failed[key] = !st.Passed || st.Error != ""
		}
	}
	sort.Strings(res.graded)
	for _, r := range run.Rules {
		for _, sp := range r.Specs {
			if sp.Outcome == report.Failed || sp.Outcome == report.Error {
				res.rules = append(res.rules, fmt.Sprintf("%s %s %s", r.ID, sp.Transport, sp.Outcome))
			}
		}
	}
	sort.Strings(res.rules)
	return res, nil
}

// lines returns the run's failing steps as "step kind,kind" lines, sorted.
func (r *sbRun) lines() []string {
	var out []string
	for k, kinds := range r.failing {
		out = append(out, k+" "+strings.Join(kinds, ","))
	}
	sort.Strings(out)
	return out
}

// TestTheReferenceSellerPassesEveryStoryboard: on the MCP face, every
// storyboard the reference seller runs passes (no failed step, no harness
// error), as a production deployment (read-write, no controller) and as a
// sandbox (--sandbox: the controller-driven and seeded storyboards too);
// testdata/storyboards.golden and storyboards_sandbox.golden list them,
// and the skipped ones with the reason.
func TestTheReferenceSellerPassesEveryStoryboard(t *testing.T) {
	needStoryboards(t)
	for _, sandbox := range []bool{false, true} {
		golden := "testdata/storyboards.golden"
		if sandbox {
			golden = "testdata/storyboards_sandbox.golden"
		}
		t.Run(fmt.Sprintf("sandbox=%v", sandbox), func(t *testing.T) { referenceStoryboards(t, sandbox, golden) })
	}
}

// knownSandboxFailures are the steps the reference seller fails on a
// 3.1.19 sandbox: its ledger's (fixtures/seller/ledger.yaml, each with the
// reason); the reference run must fail exactly these, so a fix on either
// side shows.
var knownSandboxFailures = ledgerFailures("3.1.19", true)

// ledgerFailures are the failing steps the seller's ledger lists for a run
// of the compliance release, with or without --sandbox, as sbRun.lines
// writes them: "storyboard/phase/step kind,kind".
func ledgerFailures(release string, sandbox bool) []string {
	entries, err := certify.ParseBaseline(seller.Ledger(), nil)
	if err != nil {
		panic("fixtures/seller/ledger.yaml: " + err.Error()) // TestTheLedgerIsABaseline says where
	}
	var out []string
	for _, e := range entries {
		if e.AppliesTo(release, sandbox) {
			checks := slices.Sorted(slices.Values(e.Checks))
			out = append(out, strings.TrimPrefix(e.Rule, report.StoryboardBaselinePrefix)+"/"+e.Step+" "+strings.Join(checks, ","))
		}
	}
	sort.Strings(out)
	return out
}

func referenceStoryboards(t *testing.T, sandbox bool, golden string) {
	r, err := runStoryboards(sandbox)
	if err != nil {
		t.Fatal(err)
	}
	holdStoryboards(t, r, ledgerFailures("3.1.19", sandbox), golden)
}

// holdStoryboards holds a reference run to its known failures (its
// ledger's, fixtures/seller/ledger.yaml) and its golden: every failing
// step is known and fails exactly the ledger's checks, every known one
// still fails, no rule fails, and the storyboards' outcomes are the
// golden's.
func holdStoryboards(t *testing.T, r *sbRun, known []string, golden string) {
	t.Helper()
	lines := r.lines()
	for _, l := range lines {
		if !slices.Contains(known, l) {
			t.Errorf("failing step: %s", l)
		}
	}
	for _, l := range known {
		if !slices.Contains(lines, l) {
			t.Errorf("a known failure no longer fails as the ledger says (mend fixtures/seller/ledger.yaml): %s", l)
		}
	}
	for _, l := range r.rules {
		t.Errorf("rule: %s", l)
	}
	var b strings.Builder
	passed := 0
	for _, sb := range r.storyboards {
		switch sb.Outcome {
		case report.Passed:
			passed++
			fmt.Fprintf(&b, "passed  %s\n", sb.ID)
		case report.Skipped:
			reason := "every step that ran was skipped"
			if sb.Skip != nil {
				reason = sb.Skip.Reason + ": " + sb.Skip.Detail
			}
			fmt.Fprintf(&b, "skipped %s — %s\n", sb.ID, reason)
		default:
			if !slices.ContainsFunc(known, func(l string) bool { return strings.HasPrefix(l, sb.ID+"/") }) {
				t.Errorf("storyboard %s: %s %s", sb.ID, sb.Outcome, sb.Error)
			}
			fmt.Fprintf(&b, "%-7s %s\n", sb.Outcome, sb.ID)
		}
	}
	if passed == 0 {
		t.Error("no storyboard passed")
	}
	checkGolden(t, golden, b.String(), nil)
}

// storyboardFaults are the catalogue's storyboard faults.
func storyboardFaults() []seller.FaultInfo {
	var out []seller.FaultInfo
	for _, f := range seller.Catalog() {
		// A fault of multi-agent storyboards needs the agents they route
		// to: internal/cli's governance test holds it to its steps.
		if f.IsStoryboard() && len(f.Agents) == 0 {
			out = append(out, f)
		}
	}
	return out
}

// TestEveryStoryboardFaultFailsItsSteps runs the storyboards against the
// reference seller with each storyboard fault: the steps with a failed
// validation are exactly the fault's Storyboard steps, each with exactly
// the check kinds listed, and the fault's own Check among them;
// testdata/storyboard_faults.golden records fault → failing steps, and the
// protocol rules the same run fails on MCP ("also rules"; a storyboard
// fault should move none, and one that must is recorded there).
func TestEveryStoryboardFaultFailsItsSteps(t *testing.T) {
	needStoryboards(t)
	catalog := storyboardFaults()
	if raceEnabled {
		// Under the race detector one fault runs (the race detector sees
		// the storyboard engine's paths); the golden is compared in part.
		catalog = catalog[:1]
	}
	lines := make([]string, len(catalog))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, f := range catalog {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r, err := runStoryboards(true, f.Fault)
			if err != nil {
				t.Errorf("fault %s: %v", f.Fault, err)
				return
			}
			// The sandbox run's known failures fail under every fault too.
			got := slices.DeleteFunc(r.lines(), func(l string) bool { return slices.Contains(knownSandboxFailures, l) })
			want := slices.Clone(f.Storyboard)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("fault %s: failing steps\n  got  %s\n  want %s", f.Fault, strings.Join(got, "\n       "), strings.Join(want, "\n       "))
			}
			own := false
			for k, kinds := range r.failing {
				if slices.Contains(knownSandboxFailures, k+" "+strings.Join(kinds, ",")) {
					continue
				}
				for _, kind := range kinds {
					if strings.TrimSuffix(kind, "(advisory)") == f.Check {
						own = true
					}
				}
				if kinds := r.failing[k]; !slices.ContainsFunc(kinds, func(s string) bool { return strings.HasSuffix(s, "(advisory)") }) && !r.failed[k] {
					t.Errorf("fault %s: step %s has failed validations yet passed", f.Fault, k)
				}
			}
			if !own {
				t.Errorf("fault %s: no step fails with its check kind %s", f.Fault, f.Check)
			}
			lines[i] = fmt.Sprintf("%s (%s) also rules %s\n  %s", f.Fault, f.Check, orNone(r.rules), strings.Join(got, "\n  "))
		}()
	}
	wg.Wait()
	got := strings.Join(lines, "\n") + "\n"
	t.Logf("storyboard faults:\n%s", got)
	var filter func(string) string
	if raceEnabled {
		filter = func(s string) string {
			name := string(catalog[0].Fault) + " "
			var keep []string
			in := false
			for _, l := range strings.Split(s, "\n") {
				if !strings.HasPrefix(l, "  ") {
					in = strings.HasPrefix(l, name)
				}
				if in {
					keep = append(keep, l)
				}
			}
			return strings.Join(keep, "\n")
		}
	}
	checkGolden(t, "testdata/storyboard_faults.golden", got, filter)
}

// referenceKinds are the check kinds the reference run grades (not as
// not_applicable), with the runner-synthesized capture_path_not_resolvable,
// which a clean run never produces. (The engine no longer synthesizes
// unexpected_error: a step is graded by its authored validations alone.)
var referenceKinds = []string{
	"any_of", "envelope_field_absent", "envelope_field_pattern", "envelope_field_present", "error_code", "field_absent",
	"field_contains", "field_equals_context", "field_present", "field_value", "http_status_in", "on_401_require_header",
	"response_schema", "capture_path_not_resolvable", "controller_seeding", "invariant",
	// graded on a sandbox only:
	"canonical_format_satisfaction", "cross_response_count_distinct", "cross_response_field_equal", "field_value_or_absent",
	"refs_resolve", "replay_not_cached_rate_limit", "idempotency_key", "webhook_payload_schema", "webhook_received",
	// the signing_keys_published precheck's runner-owned checks:
	"fetch_brand_jwks", "assert_jwks_purpose",
}

// TestEveryGradedCheckKindHasAFault: every check kind the reference run
// grades is the failing kind of at least one storyboard fault (the
// faults' Storyboard lists are held to the harness's results by
// TestEveryStoryboardFaultFailsItsSteps), and referenceKinds lists every
// kind the reference run grades.
func TestEveryGradedCheckKindHasAFault(t *testing.T) {
	faulted := map[string][]string{}
	for _, f := range storyboardFaults() {
		for _, s := range f.Storyboard {
			_, kinds, _ := strings.Cut(s, " ")
			for _, k := range strings.Split(kinds, ",") {
				k = strings.TrimSuffix(k, "(advisory)")
				faulted[k] = append(faulted[k], string(f.Fault))
			}
		}
		if !slices.Contains(referenceKinds, f.Check) {
			t.Errorf("fault %s: check kind %s is not one the reference run grades", f.Fault, f.Check)
		}
	}
	for _, k := range referenceKinds {
		if len(faulted[k]) == 0 {
			t.Errorf("check kind %s has no storyboard fault in fixtures/seller", k)
		}
	}
	needStoryboards(t)
	r, err := runStoryboards(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range r.graded {
		if !slices.Contains(referenceKinds, k) {
			t.Errorf("the reference run grades check kind %s, which referenceKinds does not list (and no fault may cover)", k)
		}
	}
}
