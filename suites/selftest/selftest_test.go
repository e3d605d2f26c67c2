// Package selftest proves every rule can fail: the reference seller passes
// every rule the run can judge, and each deliberate fault of
// fixtures/seller fails its own rule — and only the rules its defect
// necessarily breaks too, as testdata/matrix.golden records for review.
package selftest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/cli"
	"github.com/adcp-conform/adcp-conform/internal/golden"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/schema"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

const token = "selftest-token-0123456789abcdef"

// liveToken is the reference seller's live-mode principal's token in the
// storyboard runs (seller.Options.LiveBearerToken).
const liveToken = "selftest-live-token-fedcba9876543210"

// outcome is one rule's result on one face in a run's results.json, with
// the probes whose steps carry its validations.
type outcome struct {
	Outcome  report.Outcome
	Message  string
	Examined []string
}

// A face is one way of reaching the seller: MCP with A2A 1.0 in one run,
// A2A 0.3 in another (a run takes one A2A target).
type face struct {
	name string
	args func(seller.Endpoints) []string
	// label names a transport of the run on this face.
	label func(transport string) string
}

var faces = []face{
	{"mcp+a2a/1.0", func(e seller.Endpoints) []string { return []string{"--mcp", e.MCP, "--a2a", e.A2A10} },
		func(t string) string {
			if t == "a2a" {
				return "a2a/1.0"
			}
			return t
		}},
	{"a2a/0.3", func(e seller.Endpoints) []string { return []string{"--a2a", e.A2A03} },
		func(string) string { return "a2a/0.3" }},
}

// judged runs the real `adcp-conform run` path (flags, probes, Ginkgo,
// report writers) on every face of the reference seller with faults, and
// reads the results back from the results.json each run wrote: outcomes
// keyed "RULE face" (e.g. "ENV-02 a2a/0.3"), and each run's exit code.
func judged(extra []string, faults ...seller.Fault) (map[string]outcome, []cli.ExitCode, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	eps, stop, err := seller.StartAll(ctx, seller.Options{BearerToken: token, Faults: faults})
	if err != nil {
		return nil, nil, err
	}
	defer stop()
	got := map[string]outcome{}
	var codes []cli.ExitCode
	for _, f := range faces {
		dir, err := os.MkdirTemp("", "selftest-")
		if err != nil {
			return nil, nil, err
		}
		defer os.RemoveAll(dir)
		var out, errOut bytes.Buffer
		args := append([]string{"run", "--bearer-env", "SELFTEST_TOKEN", "--rate-burst", "40", "--seed", "7", "--allow-mutations", "--webhook-wait", "300ms", "--out", dir}, append(f.args(eps), extra...)...)
		if schemasDir != "" {
			args = append(args, "--schemas", schemasDir)
		} else {
			args = append(args, "--schemas", "off") // never fetch them in a test
		}
		args = append(args, "--storyboards", "off") // storyboards_test.go runs them; never fetch them in a test
		code := cli.Main(args, cli.Stdio{Out: &out, Err: &errOut, Getenv: func(k string) string {
			if k == "SELFTEST_TOKEN" {
				return token
			}
			return ""
		}})
		codes = append(codes, code)
		b, err := os.ReadFile(filepath.Join(dir, cli.FileResults))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: exit %d, no results.json: %w\n%s", f.name, code, err, errOut.String())
		}
		if err := schema.Validate(b); err != nil {
			return nil, nil, fmt.Errorf("%s: results.json does not match its schema: %w", f.name, err)
		}
		var run report.Run
		if err := json.Unmarshal(b, &run); err != nil {
			return nil, nil, err
		}
		examined := map[string][]string{}
		for _, st := range run.Steps {
			transport, _, _ := strings.Cut(st.StepID, "/")
			seen := map[string]bool{}
			for _, v := range st.Validations {
				if k := v.Rule + " " + f.label(transport); !seen[k] {
					seen[k] = true
					examined[k] = append(examined[k], st.StepID)
				}
			}
		}
		for _, r := range run.Rules {
			for _, sp := range r.Specs { // judged by this build (not "not implemented")
				k := r.ID + " " + f.label(sp.Transport)
				got[k] = outcome{Outcome: sp.Outcome, Message: sp.Message, Examined: examined[k]}
			}
		}
	}
	return got, codes, nil
}

func ids(m map[string]outcome, o report.Outcome) []string {
	var out []string
	for id, r := range m {
		if r.Outcome == o {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// referenceSkips are the rules (on a face, or "*" for all) the reference
// seller cannot be judged on in a read-only run, each for a reason the spec
// gives.
var referenceSkips = map[string]string{
	"TLS-01 *":        "the faces are plain HTTP (TestTLSRules covers HTTPS)",
	"TLS-02 *":        "the faces are plain HTTP (TestTLSRules covers HTTPS)",
	"ERR-08 *":        "business rejections come from mutating tasks",
	"A2A-05 a2a/0.3":  "a rule of A2A 1.0",
	"A2A-06 a2a/0.3":  "a rule of A2A 1.0",
	"EOBJ-09 a2a/1.0": "an A2A reply carries its error on one path",
	"EOBJ-09 a2a/0.3": "an A2A reply carries its error on one path",
	"A2A-07 a2a/1.0":  "no read task returns submitted work unless asked to (see TestSubmittedWork)",
	"A2A-07 a2a/0.3":  "no read task returns submitted work unless asked to (see TestSubmittedWork)",
}

// asyncInputs is an --inputs file that asks the reference seller for
// submitted (asynchronous) get_products work (ext.reference_seller.submit),
// so A2A-07 has something to judge.
var asyncInputs = func() string {
	dir, err := os.MkdirTemp("", "selftest-inputs-")
	if err != nil {
		panic(err)
	}
	p := filepath.Join(dir, "inputs.yaml")
	if err := os.WriteFile(p, []byte("tools:\n  get_products:\n    ext: {reference_seller: {submit: true}}\n"), 0o644); err != nil {
		panic(err)
	}
	return p
}()

// schemasDir is the 3.1.19 schema folder of ../shared, "" when absent (the
// SCHEMA rules then skip with that reason: see referenceSkips).
var schemasDir = func() string {
	dir := filepath.Join(shared.Root(), "spec", "schemas", "3.1.19")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir
	}
	return ""
}()

// faultArgs are extra run flags a fault needs to be observable.
var faultArgs = map[string][]string{"A2A-07": {"--inputs", asyncInputs}}

// TestSubmittedWork: asked for submitted work, the reference seller maps
// it to a completed A2A task on both A2A versions (A2A-07 passes).
func TestSubmittedWork(t *testing.T) {
	got, _, err := judged(faultArgs["A2A-07"])
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"A2A-07 a2a/1.0", "A2A-07 a2a/0.3"} {
		if got[k].Outcome != report.Passed {
			t.Errorf("%s: %s: %s", k, got[k].Outcome, got[k].Message)
		}
	}
	for k, o := range got {
		if o.Outcome == report.Failed || o.Outcome == report.Error {
			t.Errorf("%s: %s: %s", k, o.Outcome, o.Message)
		}
	}
}

func allowedSkip(key string) bool {
	rule, _, _ := strings.Cut(key, " ")
	if schemasDir == "" && strings.HasPrefix(rule, "SCHEMA-") {
		return true // ../shared/spec/schemas is absent
	}
	_, exact := referenceSkips[key]
	_, any := referenceSkips[rule+" *"]
	return exact || any
}

func TestTheReferenceSellerPassesEveryJudgedRule(t *testing.T) {
	got, codes, err := judged(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, code := range codes {
		if code != cli.ExitOK {
			t.Errorf("%s: exit code %d against the reference seller", faces[i].name, code)
		}
	}
	for id, r := range got {
		switch {
		case r.Outcome == report.Skipped && allowedSkip(id):
		case r.Outcome != report.Passed:
			t.Errorf("%s: %s: %s", id, r.Outcome, r.Message)
		}
	}
	var b strings.Builder
	for _, id := range sortedKeys(got) {
		r := got[id]
		fmt.Fprintf(&b, "%-17s %-7s %s\n", id, r.Outcome, strings.Join(r.Examined, " "))
		if r.Message != "" {
			fmt.Fprintf(&b, "                  %s\n", r.Message)
		}
	}
	checkGolden(t, "testdata/reference.golden", b.String(), schemaFilter(withoutSchemaRows))
}

func TestEveryFaultFailsItsRule(t *testing.T) {
	var catalog []seller.FaultInfo
	family := map[string]bool{}
	for _, f := range seller.Catalog() {
		if httpsOnly[f.Rule] { // judged over HTTPS: TestTLSRules
			continue
		}
		if f.IsStoryboard() { // breaks a storyboard step, not a rule: TestEveryStoryboardFaultFailsItsSteps
			continue
		}
		if catalogue.CommandOf(f.Rule) == catalogue.CommandFuzz { // a fuzz rule's: TestEveryFuzzFaultFailsItsRule (fuzz_test.go)
			continue
		}
		// Under the race detector a run of the harness is several times
		// slower: the first fault of each family runs (the race detector
		// sees every path the matrix takes), each held to its golden line;
		// the whole matrix runs without it (.ci/run's self-test step).
		fam, _, _ := strings.Cut(f.Rule, "-")
		if raceEnabled && family[fam] {
			continue
		}
		family[fam] = true
		catalog = append(catalog, f)
	}
	lines := make([]string, len(catalog))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, f := range catalog {
		if schemasDir == "" && strings.HasPrefix(f.Rule, "SCHEMA-") {
			continue // nothing to validate against: see checkGolden
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			got, codes, err := judged(faultArgs[f.Rule], f.Fault)
			if err != nil {
				t.Errorf("fault %s: %v", f.Fault, err)
				return
			}
			var own, also []string
			for _, k := range ids(got, report.Failed) {
				if rule, _, _ := strings.Cut(k, " "); rule == f.Rule {
					own = append(own, strings.TrimPrefix(k, rule+" "))
				} else {
					also = append(also, k)
				}
			}
			if len(own) == 0 {
				t.Errorf("fault %s does not fail %s on any face", f.Fault, f.Rule)
			}
			if errs := ids(got, report.Error); len(errs) > 0 {
				t.Errorf("fault %s gives harness errors on %v", f.Fault, errs)
			}
			if rule, _ := catalogue.Lookup(f.Rule); rule.Level == catalogue.Must && !slices.Contains(codes, cli.ExitNonConformant) {
				t.Errorf("fault %s breaks MUST rule %s, yet no run exits 1 (%v)", f.Fault, f.Rule, codes)
			}
			lines[i] = fmt.Sprintf("%-40s fails %-9s on %-22s also %s", f.Fault, f.Rule, strings.Join(own, ","), orNone(also))
		}()
	}
	wg.Wait()
	matrix := strings.Join(lines, "\n") + "\n"
	t.Logf("fault matrix (fault, the rule it breaks, the other rules it breaks by necessity):\n%s", matrix)
	filter := schemaFilter(withoutSchemaFaults)
	if raceEnabled {
		noSchema := filter
		filter = func(s string) string {
			if noSchema != nil {
				s = noSchema(s)
			}
			return onlyFaults(s, catalog)
		}
	}
	checkGolden(t, "testdata/matrix.golden", matrix, filter)
}

// TestEveryInScopeRuleHasAFault holds the matrix to the catalogue: every
// rule with an MCP judge has at least one fault that breaks it.
func TestEveryInScopeRuleHasAFault(t *testing.T) {
	faulted := map[string]bool{}
	for _, f := range seller.Catalog() {
		faulted[f.Rule] = true
	}
	for _, c := range suites.Checks() {
		if !faulted[c.ID] {
			t.Errorf("%s has a judge but no fault in fixtures/seller", c.ID)
		}
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, " ")
}

func sortedKeys(m map[string]outcome) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// httpsOnly are the rules only an HTTPS seller exercises.
var httpsOnly = map[string]bool{"TLS-01": true, "TLS-02": true}

// TestTLSRules runs the TLS rules against the reference seller served over
// HTTPS (its own certificate trusted through --ca-cert): the clean seller
// passes both on every transport; each TLS fault fails its rule.
func TestTLSRules(t *testing.T) {
	for _, fault := range []seller.Fault{"", "TLS-01/tls-1.1-only", "TLS-02/no-hsts"} {
		t.Run(string(fault), func(t *testing.T) {
			var faults []seller.Fault
			if fault != "" {
				faults = []seller.Fault{fault}
			}
			eps, cert, stop, err := seller.StartAllTLS(t.Context(), seller.Options{BearerToken: token, Faults: faults})
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			dir := t.TempDir()
			ca := filepath.Join(dir, "ca.pem")
			if err := os.WriteFile(ca, cert, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			var so, se bytes.Buffer
			cli.Main([]string{"run", "--mcp", eps.MCP, "--a2a", eps.A2A10, "--ca-cert", ca, "--bearer-env", "SELFTEST_TOKEN",
				"--label-filter", "family:tls", "--storyboards", "off", "--out", out}, cli.Stdio{Out: &so, Err: &se, Getenv: func(k string) string {
				if k == "SELFTEST_TOKEN" {
					return token
				}
				return ""
			}})
			b, err := os.ReadFile(filepath.Join(out, cli.FileResults))
			if err != nil {
				t.Fatalf("%v\n%s%s", err, so.String(), se.String())
			}
			var run report.Run
			if err := json.Unmarshal(b, &run); err != nil {
				t.Fatal(err)
			}
			for _, r := range run.Rules {
				if !httpsOnly[r.ID] {
					continue
				}
				for _, sp := range r.Specs {
					want := report.Passed
					if string(fault) != "" && seller.Fault(fault).Rule() == r.ID {
						want = report.Failed
					} else if fault == "TLS-01/tls-1.1-only" {
						continue // nothing else can be read from a seller the client refuses
					}
					if sp.Outcome != want {
						t.Errorf("%s %s: %s (%s), want %s", r.ID, sp.Transport, sp.Outcome, sp.Message, want)
					}
				}
			}
		})
	}
}

// checkGolden compares got with a golden file, or, when filter is set, the
// filtered golden with the filtered got, never rewriting the file: without
// ../shared's schemas (a fresh clone on its own) the SCHEMA rules cannot be
// judged, and under the race detector only some faults run, so the same
// golden file holds in every case.
func checkGolden(t *testing.T, path, got string, filter func(string) string) {
	t.Helper()
	if filter == nil {
		golden.Check(t, path, []byte(got))
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want, got := filter(string(b)), filter(got); want != got {
		t.Errorf("output drifted from %s (compared in part: no ../shared, or the race detector); -want +got:\n%s", path, golden.Diff(want, got))
	}
}

// schemaFilter is the filter of a golden file without ../shared's schemas,
// nil with them.
func schemaFilter(without func(string) string) func(string) string {
	if schemasDir == "" {
		return without
	}
	return nil
}

// withoutSchemaRows drops the SCHEMA rows of reference.golden, each with its
// indented message line.
func withoutSchemaRows(s string) string {
	var out []string
	dropping := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "SCHEMA-") {
			dropping = true
			continue
		}
		if dropping && strings.HasPrefix(line, "    ") {
			continue
		}
		dropping = false
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

var schemaAlso = regexp.MustCompile(`SCHEMA-\d\d \S+ ?`)

// withoutSchemaFaults drops the SCHEMA faults' lines of matrix.golden and
// the SCHEMA rules other faults break too.
func withoutSchemaFaults(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if line == "" || strings.HasPrefix(line, "SCHEMA-") {
			continue
		}
		line = strings.TrimRight(schemaAlso.ReplaceAllString(line, ""), " ")
		if strings.HasSuffix(line, " also") {
			line += " -"
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// onlyFaults keeps the matrix lines of the faults in catalog.
func onlyFaults(s string, catalog []seller.FaultInfo) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		name, _, _ := strings.Cut(line, " ")
		if slices.ContainsFunc(catalog, func(f seller.FaultInfo) bool { return string(f.Fault) == name }) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
