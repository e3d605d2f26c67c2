package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// storyboardAttack is one hostile storyboard seller of TestHostileAttacks
// (issue 21): the storyboards run against it (--sandbox
// --allow-mutations), and whatever it sends, every report is written,
// loads, and stays within the attack bounds.
type storyboardAttack struct {
	name     string
	start    func() *hostile.Storyboard
	deadline time.Duration
	heavy    bool
	schemas  bool // validate against the release's schemas (the schema bomb)
	check    func(t *testing.T, dir string)
}

var storyboardAttacks = []storyboardAttack{
	{name: "deep-reply", start: func() *hostile.Storyboard { return hostile.StartDeepStoryboard(hostileToken, hostile.DeepLevels) },
		deadline: 30 * time.Second, heavy: true},
	{name: "deep-legal-reply", start: func() *hostile.Storyboard { return hostile.StartDeepStoryboard(hostileToken, hostile.DeepLegalLevels) },
		deadline: 30 * time.Second, heavy: true},
	{name: "schema-bomb", start: func() *hostile.Storyboard {
		return hostile.StartSchemaBombStoryboard(hostileToken, hostile.SchemaBombItems)
	}, deadline: 30 * time.Second, heavy: true, schemas: true},
	{name: "huge-replies", start: func() *hostile.Storyboard { return hostile.StartHugeStoryboard(hostileToken, hostile.HugeReplyBytes) },
		deadline: 30 * time.Second, heavy: true},
}

// testStoryboardAttacks runs each storyboard attack (a subtest of
// TestHostileAttacks): the run ends within its deadline + 5 s, the live
// heap grows less than 512 MB, and results.json, evidence.json, junit.xml,
// report.html and the step summary are written; the JSON files load in
// Python's json module (where python3 is installed) as in Go's.
func testStoryboardAttacks(t *testing.T, targets bool) {
	compliance := shared.File(t, "spec/compliance/3.1.19")
	schemaDir := shared.File(t, "spec/schemas/3.1.19")
	for _, a := range storyboardAttacks {
		t.Run(a.name, func(t *testing.T) {
			if a.heavy && (raceEnabled || !targets) {
				t.Skip("CPU-heavy: run without -race with ADCP_CONFORM_HOSTILE_TARGETS=1 (as .ci/run does)")
			}
			sb := a.start()
			defer sb.Stop()
			dir := t.TempDir()
			if keep := os.Getenv("ADCP_CONFORM_ATTACK_KEEP"); keep != "" {
				dir = filepath.Join(keep, a.name)
			}
			summary := filepath.Join(t.TempDir(), "summary.md")
			args := []string{"--storyboards", compliance, "--sandbox", "--allow-mutations"}
			if a.schemas {
				args = append(args, "--schemas", schemaDir) // the last --schemas wins
			}
			mem := startMemWatch()
			dials := &dialLog{}
			code, out, errOut, took := attackRun(t, dials.network(), sb.URL, dir, summary, a.deadline, args...)
			allocated, peak := mem.stop()
			dials.checkAddresses(t)
			r := readResults(t, dir)
			var sizes []any
			for _, f := range []string{FileResults, FileEvidence, FileJUnit, FileHTML} {
				st, err := os.Stat(filepath.Join(dir, f))
				if err != nil || st.Size() == 0 {
					t.Errorf("%s not written: %v", f, err)
					continue
				}
				sizes = append(sizes, f, float64(st.Size())/(1<<20))
			}
			_, load := loadScaled(time.Second)
			t.Logf("%s: exit %d in %v (deadline %v, load per CPU %.1f), %d calls, allocated %.1f MB, peak heap growth %.1f MB (sampled); verdict %s, %d steps, harness error %q; sizes (MB) %v",
				a.name, code, took.Round(time.Millisecond), a.deadline, load, sb.Calls.Load(), float64(allocated)/(1<<20), float64(peak)/(1<<20),
				r.Verdict, len(r.Steps), cutText(r.HarnessError, 160), sizes)
			checkAttackBounds(t, a.deadline, took, allocated, peak, code, out, errOut)
			if st, err := os.Stat(summary); err != nil || st.Size() == 0 {
				t.Errorf("no step summary written: %v", err)
			}
			pythonLoads(t, dir, FileResults, FileEvidence)
			// What was recorded is written: a deadline may cut evidence.json
			// (the calls left out are counted), never leave it empty.
			written, omitted := evidenceCalls(t, dir)
			t.Logf("%s: evidence.json holds %d calls, %d left out", a.name, written, omitted)
			if written == 0 {
				t.Errorf("evidence.json holds no call (%d left out)", omitted)
			}
			if a.check != nil {
				a.check(t, dir)
			}
		})
	}
}

// pythonLoads checks that Python's json module loads each file (it has a
// recursion limit Go's decoder does not share); skipped without python3.
func pythonLoads(t *testing.T, dir string, files ...string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not installed: the reports were loaded by Go only")
		return
	}
	for _, f := range files {
		cmd := exec.Command(py, "-c", "import json,sys; json.load(open(sys.argv[1]))", filepath.Join(dir, f))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("python's json does not load %s: %v\n%s", f, err, tail(string(out)))
		}
	}
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if !json.Valid(b) {
			t.Errorf("%s is not JSON", f)
		}
	}
}

// evidenceCalls counts the calls evidence.json holds and those it says
// it left out.
func evidenceCalls(t *testing.T, dir string) (written, omitted int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileEvidence))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Calls   []json.RawMessage `json:"calls"`
		Omitted *evidence.Omitted `json:"omitted"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("evidence.json: %v", err)
	}
	if doc.Omitted != nil {
		omitted = doc.Omitted.Calls
	}
	return len(doc.Calls), omitted
}
