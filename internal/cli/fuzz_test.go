package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/schema"
)

// The fuzz tests' two tenants on the reference seller.
const (
	fuzzToken   = "fuzz-test-token-0123456789abcdef"
	fuzzTenant2 = "fuzz-test-tenant2-fedcba9876543210"
)

var fuzzEnv = map[string]string{"T": fuzzToken, "T2": fuzzTenant2}

// fuzzSeller starts the reference seller as a sandbox with two tenants
// and the faults given.
func fuzzSeller(t *testing.T, faults ...seller.Fault) string {
	t.Helper()
	return startSeller(t, seller.Options{BearerToken: fuzzToken, Tenant2BearerToken: fuzzTenant2, Sandbox: true, Faults: faults}).MCP
}

// fuzzRun fuzzes url with the seed and turns, as a sandbox with both
// tenants, and reads back the results.json it wrote.
func fuzzRun(t *testing.T, url string, seed uint64, turns int, extra ...string) (ExitCode, *report.Run, string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fuzz")
	args := append([]string{"fuzz", "--mcp", url, "--bearer-env", "T", "--tenant2-bearer-env", "T2", "--allow-mutations", "--sandbox",
		"--schemas", shared.File(t, "spec/schemas/3.1.19"), "--seed", strconv.FormatUint(seed, 10), "--turns", strconv.Itoa(turns), "--out", dir}, extra...)
	code, so, se := run(t, fuzzEnv, "", args...)
	b, err := os.ReadFile(filepath.Join(dir, FileResults))
	if err != nil {
		t.Fatalf("exit %d, no results.json: %v\n%s%s", code, err, so, se)
	}
	if err := schema.Validate(b); err != nil {
		t.Fatalf("results.json does not match its schema: %v", err)
	}
	var r report.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(so+se+string(b), fuzzToken) || strings.Contains(so+se+string(b), fuzzTenant2) {
		t.Fatal("a token is in the output or results.json")
	}
	return code, &r, so, dir
}

// outcomes are the FUZZ rules' outcomes of a run.
func outcomes(r *report.Run) map[string]report.Outcome {
	out := map[string]report.Outcome{}
	for _, rr := range r.Rules {
		out[rr.ID] = rr.Outcome
	}
	return out
}

// The reference seller, a sandbox with two tenants, passes every FUZZ
// rule (none skipped: both paths, unknown ids, the cross-tenant pairs and
// the transport all judged), judge agrees on the folder offline, and a
// second run with the same seed sends the same requests.
func TestFuzzTheReferenceSellerIsClean(t *testing.T) {
	url := fuzzSeller(t)
	code, r, so, dir := fuzzRun(t, url, 7, 8)
	if code != ExitOK {
		t.Fatalf("exit %d against the reference seller\n%s", code, so)
	}
	if len(r.Rules) != 5 {
		t.Fatalf("%d rules in a fuzz report, want the 5 FUZZ rules", len(r.Rules))
	}
	for id, o := range outcomes(r) {
		if o != report.Passed {
			t.Errorf("%s: %s", id, o)
		}
	}
	if r.Fuzz == nil || r.Fuzz.Seed != 7 || len(r.Fuzz.Tools) < 8 || !r.Fuzz.CrossTenant || len(r.Fuzz.Pools["media_buy"]) == 0 {
		t.Fatalf("the fuzz account: %+v", r.Fuzz)
	}
	code, jo, je := run(t, nil, "", "judge", "--schemas", shared.File(t, "spec/schemas/3.1.19"), "--out", dir+"-judged", dir)
	if code != ExitOK || !strings.Contains(jo, "agree: every verdict judged again is the submitted one") {
		t.Fatalf("judge: exit %d\n%s%s", code, jo, je)
	}
	// The same seed against a fresh seller: the same requests, turn by turn.
	_, r2, _, dir2 := fuzzRun(t, fuzzSeller(t), 7, 8)
	if a, b := requests(t, dir), requests(t, dir2); a != b {
		t.Fatalf("the same seed sent other requests:\n%.2000s\n---\n%.2000s", a, b)
	}
	if fmt.Sprint(r.Fuzz.Tools) != fmt.Sprint(r2.Fuzz.Tools) {
		t.Fatalf("the same seed and seller, other outcomes:\n%v\n%v", r.Fuzz.Tools, r2.Fuzz.Tools)
	}
}

// requests lists the probe ID and arguments of every fuzz turn of a folder.
func requests(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileEvidence))
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Calls []struct {
			ProbeID   string          `json:"probe_id"`
			Purposes  []string        `json:"purposes"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"calls"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range ev.Calls {
		if len(c.Purposes) == 1 && c.Purposes[0] == "fuzz" && !strings.Contains(c.ProbeID, "/retry/") {
			lines = append(lines, c.ProbeID+" "+string(c.Arguments))
		}
	}
	return strings.Join(lines, "\n")
}

// Each FUZZ fault of the reference seller fails its rule, and only it,
// with a reproduction shrunk to a request no larger than the turn's that
// still holds the field the fault reacts to; judge agrees offline.
func TestFuzzEachFaultIsCaughtWithAShrunkReproduction(t *testing.T) {
	for _, tc := range []struct {
		fault seller.Fault
		rule  string
		holds string // what the smallest request still carries
	}{
		{"FUZZ-01/protocols-as-string", "FUZZ-01", `"protocols"`},
		{"FUZZ-02/lowercase-code", "FUZZ-02", `"status"`},
		{"FUZZ-03/minted-not-found", "FUZZ-03", `media_buy_id`},
		{"FUZZ-04/crash-on-pagination", "FUZZ-04", `"pagination"`},
		{"FUZZ-05/tells-tenants-apart", "FUZZ-05", `"mb_`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			code, r, so, dir := fuzzRun(t, fuzzSeller(t, tc.fault), 7, 8)
			if code != ExitNonConformant {
				t.Fatalf("exit %d with %s\n%s", code, tc.fault, so)
			}
			for id, o := range outcomes(r) {
				if (id == tc.rule) != (o == report.Failed) {
					t.Errorf("%s: %s with %s", id, o, tc.fault)
				}
			}
			var found *report.FuzzRepro
			for i, rp := range r.Fuzz.Reproductions {
				if rp.Rule == tc.rule {
					found = &r.Fuzz.Reproductions[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("no reproduction of %s: %+v", tc.rule, r.Fuzz.Reproductions)
			}
			if found.Bytes > found.TurnBytes || found.ShrinkCalls == 0 || !strings.Contains(found.Arguments, tc.holds) {
				t.Errorf("%s: shrunk from %d to %d bytes in %d calls: %s", tc.rule, found.TurnBytes, found.Bytes, found.ShrinkCalls, found.Arguments)
			}
			if !strings.Contains(so, tc.rule+" ") || !strings.Contains(so, "adcp-conform extract --jsonrpc") {
				t.Errorf("the terminal shows no reproduction of %s:\n%s", tc.rule, so)
			}
			t.Logf("%s: shrunk from %d to %d bytes in %d calls: %s", tc.rule, found.TurnBytes, found.Bytes, found.ShrinkCalls, found.Arguments)
			if tc.rule != "FUZZ-05" {
				replay(t, found.Shell, tc.rule)
			}
			code, jo, je := run(t, nil, "", "judge", "--schemas", shared.File(t, "spec/schemas/3.1.19"), "--out", dir+"-judged", dir)
			if code != ExitNonConformant || !strings.Contains(jo, "agree: every verdict judged again is the submitted one") {
				t.Fatalf("judge: exit %d\n%s%s", code, jo, je)
			}
		})
	}
}

// replay runs a reproduction's shell text with bash and curl, piping the
// reply into this build's extract, and checks the reply still shows the
// fault. Skipped where bash or curl is missing.
func replay(t *testing.T, shell, rule string) {
	t.Helper()
	for _, bin := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Logf("%s: the reproduction is not replayed: no %s", rule, bin)
			return
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// adcp-conform is this test binary's Main (TestMain runs it with the
	// arguments childArgsEnv holds): the reproduction calls it once, as
	// extract.
	bin := t.TempDir()
	script := "#!/bin/sh\n[ \"$*\" = 'extract --jsonrpc --transport mcp' ] || exit 99\n" +
		childArgsEnv + "='[\"extract\",\"--jsonrpc\",\"--transport\",\"mcp\"]' exec " + exe + "\n"
	if err := os.WriteFile(filepath.Join(bin, "adcp-conform"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "set -o pipefail\n"+shell)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "T="+fuzzToken)
	out, err := cmd.CombinedOutput()
	got := string(out)
	want := map[string]string{"FUZZ-01": `"supported_protocols": "media_buy"`, "FUZZ-02": `invalid_status_filter`,
		"FUZZ-03": `X_REFSELLER_BUY_NOT_FOUND`, "FUZZ-04": ``}[rule]
	if rule == "FUZZ-04" {
		if err == nil {
			t.Errorf("%s: the reproduction's reply was read as an AdCP reply:\n%s", rule, got)
		}
		return
	}
	if err != nil || !strings.Contains(got, want) {
		t.Errorf("%s: replaying the reproduction (%v) gave:\n%s\nscript:\n%s", rule, err, got, shell)
	}
}

// The reference seller stays clean over many seeds: every FUZZ rule passes
// for seeds 1..N at 20 turns per tool, each against a fresh seller. Slow
// (about 6 s a seed on an idle machine): set ADCP_CONFORM_FUZZ_SEEDS=N
// (docs/fuzz.md gives the figure for 20).
func TestFuzzTheReferenceSellerIsCleanOverManySeeds(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ADCP_CONFORM_FUZZ_SEEDS"))
	if n <= 0 {
		t.Skip("set ADCP_CONFORM_FUZZ_SEEDS=20 to fuzz the reference seller with 20 seeds")
	}
	turns, failed := 0, 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		code, r, so, _ := fuzzRun(t, fuzzSeller(t), seed, 20)
		for _, tool := range r.Fuzz.Tools {
			turns += tool.Turns
		}
		for id, o := range outcomes(r) {
			if o != report.Passed {
				failed++
				t.Errorf("seed %d: %s %s (exit %d)\n%s", seed, id, o, code, so)
			}
		}
	}
	t.Logf("%d seeds, %d turns: %d rule verdicts other than passed", n, turns, failed)
}
