package selftest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/cli"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/schema"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// tenant2Token is the second tenant's token of the fuzz runs
// (seller.Options.Tenant2BearerToken).
const tenant2Token = "selftest-tenant2-token-0a1b2c3d4e5f"

// fuzzed runs the real `adcp-conform fuzz` path on the reference seller, a
// sandbox with two tenants and the faults given, over MCP and A2A 1.0 in
// one run (seed 7, 8 turns per tool), and reads back the FUZZ rules'
// outcomes keyed "RULE face", the exit code and the reproductions.
func fuzzed(faults ...seller.Fault) (map[string]outcome, cli.ExitCode, []report.FuzzRepro, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	eps, stop, err := seller.StartAll(ctx, seller.Options{BearerToken: token, Tenant2BearerToken: tenant2Token, Sandbox: true, Faults: faults})
	if err != nil {
		return nil, 0, nil, err
	}
	defer stop()
	dir, err := os.MkdirTemp("", "selftest-fuzz-")
	if err != nil {
		return nil, 0, nil, err
	}
	defer os.RemoveAll(dir)
	var out, errOut bytes.Buffer
	code := cli.Main([]string{"fuzz", "--mcp", eps.MCP, "--a2a", eps.A2A10, "--bearer-env", "SELFTEST_TOKEN", "--tenant2-bearer-env", "SELFTEST_TENANT2",
		"--allow-mutations", "--sandbox", "--seed", "7", "--turns", "8", "--schemas", schemasDir, "--out", dir},
		cli.Stdio{Out: &out, Err: &errOut, Getenv: func(k string) string {
			return map[string]string{"SELFTEST_TOKEN": token, "SELFTEST_TENANT2": tenant2Token}[k]
		}})
	b, err := os.ReadFile(filepath.Join(dir, cli.FileResults))
	if err != nil {
		return nil, code, nil, fmt.Errorf("exit %d, no results.json: %w\n%s", code, err, errOut.String())
	}
	if err := schema.Validate(b); err != nil {
		return nil, code, nil, fmt.Errorf("results.json does not match its schema: %w", err)
	}
	var run report.Run
	if err := json.Unmarshal(b, &run); err != nil {
		return nil, code, nil, err
	}
	if run.Fuzz == nil {
		return nil, code, nil, fmt.Errorf("exit %d, results.json holds no fuzz account\n%s", code, errOut.String())
	}
	got := map[string]outcome{}
	for _, r := range run.Rules {
		for _, sp := range r.Specs {
			face := sp.Transport
			if face == "a2a" {
				face = "a2a/1.0"
			}
			got[r.ID+" "+face] = outcome{Outcome: sp.Outcome, Message: sp.Message}
		}
	}
	return got, code, run.Fuzz.Reproductions, nil
}

// TestEveryFuzzFaultFailsItsRule is the matrix of the rules only
// `adcp-conform fuzz` judges: the reference seller passes every FUZZ rule
// on both transports, and each FUZZ fault fails its rule — with a shrunk
// reproduction of it — and only the rules its defect necessarily breaks,
// as testdata/fuzz_matrix.golden records for review.
func TestEveryFuzzFaultFailsItsRule(t *testing.T) {
	if schemasDir == "" {
		t.Skip("../shared/spec/schemas/3.1.19 is absent: a fuzz run generates its requests from it")
	}
	var faults []seller.FaultInfo
	for _, f := range seller.Catalog() {
		// Under the race detector the clean run and the first fault run
		// (.ci/run runs the whole matrix without it).
		if catalogue.CommandOf(f.Rule) == catalogue.CommandFuzz && !(raceEnabled && len(faults) > 0) {
			faults = append(faults, f)
		}
	}
	lines := make([]string, len(faults)+1)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i := -1; i < len(faults); i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var f seller.FaultInfo
			var with []seller.Fault
			if i >= 0 {
				f, with = faults[i], []seller.Fault{faults[i].Fault}
			}
			got, code, repros, err := fuzzed(with...)
			if err != nil {
				t.Errorf("fault %q: %v", f.Fault, err)
				return
			}
			if errs := ids(got, report.Error); len(errs) > 0 {
				t.Errorf("fault %q gives harness errors on %v", f.Fault, errs)
			}
			if i < 0 {
				if failed := ids(got, report.Failed); len(failed) > 0 || code != cli.ExitOK {
					t.Errorf("the reference seller fails %v (exit %d)", failed, code)
				}
				lines[0] = fmt.Sprintf("%-40s passes %s", "(no fault)", strings.Join(ids(got, report.Passed), ", "))
				return
			}
			var own, also []string
			for _, k := range ids(got, report.Failed) {
				if rule, face, _ := strings.Cut(k, " "); rule == f.Rule {
					own = append(own, face)
				} else {
					also = append(also, k)
				}
			}
			if len(own) == 0 {
				t.Errorf("fault %s does not fail %s on any face", f.Fault, f.Rule)
			}
			if code != cli.ExitNonConformant {
				t.Errorf("fault %s breaks MUST rule %s, yet the run exits %d", f.Fault, f.Rule, code)
			}
			shrunk := "no reproduction"
			for _, r := range repros {
				if r.Rule == f.Rule && r.Shell != "" {
					shrunk = "a reproduction"
					if r.Bytes < r.TurnBytes {
						shrunk = "a shrunk reproduction"
					}
					break
				}
			}
			lines[i+1] = fmt.Sprintf("%-40s fails %-9s on %-12s also %-4s with %s", f.Fault, f.Rule, strings.Join(own, ","), orNone(also), shrunk)
		}()
	}
	wg.Wait()
	matrix := strings.Join(lines, "\n") + "\n"
	t.Logf("fuzz fault matrix:\n%s", matrix)
	var filter func(string) string
	if raceEnabled {
		filter = func(s string) string {
			clean, _, _ := strings.Cut(s, "\n")
			return clean + "\n" + onlyFaults(s, faults)
		}
	}
	checkGolden(t, "testdata/fuzz_matrix.golden", matrix, filter)
}
