package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// The storyboard leak attacks' credentials hold "/" and "+", which JSON
// may write as \/ and \u002b, HTML as &#47; and &#43;, a URL as %2F and
// %2B: no escaped form of them is a run of their bytes.
const (
	sbLeakToken    = "sb/Leak+Tok3n-7d1c0b9e2f"
	sbLeakKey      = "sb-api/Key+Q4x9Lm2Zt"
	sbLeakDeadline = 3 * time.Minute
)

// sbLeakEchoes is what each storyboard leak seller's echo leaves in
// evidence.json once redacted: the echo reached the evidence.
var sbLeakEchoes = map[hostile.StoryboardLeak]string{
	hostile.LeakInitRefusal:   "refused credentials Bearer " + wire.Redacted,
	hostile.LeakEscapedIDs:    "~" + wire.Redacted,
	hostile.LeakEscapedErrors: "rejected " + wire.Redacted,
}

// TestHostileAttacksStoryboardLeaks runs the spec's storyboards (sandbox,
// mutations allowed) with a bearer token and an X-Api-Key header against
// each storyboard leak seller (hostile.StoryboardLeaks), then judges the
// folder again: no credential, in any letter case or escaped form any
// JSON, HTML or URL decoder turns back into it (internal/leakcheck), is
// in any file of either folder, on the terminal or in the step summary;
// results.json and evidence.json stay valid JSON; the redacted echo is in
// the evidence.
func TestHostileAttacksStoryboardLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("the storyboard leak sellers take minutes")
	}
	compliance, schemas := specDirs(t)
	if len(sbLeakEchoes) != len(hostile.StoryboardLeaks) {
		t.Fatalf("%d leaks tested, %d in hostile.StoryboardLeaks", len(sbLeakEchoes), len(hostile.StoryboardLeaks))
	}
	secrets := []string{sbLeakToken, sbLeakKey}
	for _, leak := range hostile.StoryboardLeaks {
		t.Run(string(leak), func(t *testing.T) {
			if leak == hostile.LeakEscapedIDs && raceEnabled {
				t.Skip("about 100 s under -race: run without it (as .ci/run's hostile step does)")
			}
			sb := hostile.StartStoryboardLeak(leak, sbLeakToken)
			defer sb.Stop()
			dir := t.TempDir()
			if keep := os.Getenv("ADCP_CONFORM_ATTACK_KEEP"); keep != "" {
				dir = filepath.Join(keep, string(leak))
			}
			summary := filepath.Join(t.TempDir(), "summary.md")
			env := map[string]string{"SB_TOKEN": sbLeakToken, "GITHUB_STEP_SUMMARY": summary}
			args := []string{"run", "--mcp", sb.URL, "--out", dir, "--bearer-env", "SB_TOKEN", "--header", "X-Api-Key: " + sbLeakKey,
				"--sandbox", "--allow-mutations", "--storyboards", compliance, "--schemas", schemas, "--deadline", sbLeakDeadline.String(), "-v"}
			mem := startMemWatch()
			code, out, errOut, took := guardedRun(t, args, env, sbLeakDeadline+time.Minute)
			allocated, peak := mem.stop()
			sum, _ := os.ReadFile(summary)
			r := readResults(t, dir)
			var evSize int64
			if st, err := os.Stat(filepath.Join(dir, FileEvidence)); err == nil {
				evSize = st.Size()
			}
			t.Logf("%s: exit %d in %v, %d tool calls, allocated %.1f MB, peak heap growth %.1f MB (sampled), evidence.json %.2f MB; verdict %s, %d steps",
				leak, code, took.Round(time.Millisecond), sb.Calls.Load(), float64(allocated)/(1<<20), float64(peak)/(1<<20), float64(evSize)/(1<<20), r.Verdict, len(r.Steps))
			noLeak(t, dir, secrets, map[string]string{"stdout": out, "stderr": errOut, "step summary": string(sum)})
			redactedIn(sbLeakEchoes[leak])(t, nil, dir)

			judged := t.TempDir()
			code, out, errOut = run(t, nil, "", "judge", "--storyboards", compliance, "--schemas", schemas, "--out", judged, dir)
			if code == ExitUsage {
				t.Fatalf("judge: exit %d\n%s", code, errOut)
			}
			noLeak(t, judged, secrets, map[string]string{"judge's stdout": out, "judge's stderr": errOut})
		})
	}
}

// TestHostileAttacksStoryboardLeakThroughTargets runs the refusing seller
// (hostile.LeakInitRefusal) as one target of --targets: its folder
// (run.log too), the index and the terminal hold no credential in any
// reading.
func TestHostileAttacksStoryboardLeakThroughTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("the storyboard leak sellers take minutes")
	}
	compliance, schemas := specDirs(t)
	sb := hostile.StartStoryboardLeak(hostile.LeakInitRefusal, sbLeakToken)
	defer sb.Stop()
	targets := filepath.Join(t.TempDir(), "targets.yaml")
	if err := os.WriteFile(targets, []byte("- name: refusing\n  mcp: "+sb.URL+"\n  bearer_env: SB_TOKEN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := map[string]string{"SB_TOKEN": sbLeakToken}
	code, out, errOut, _ := guardedRun(t, []string{"run", "--targets", targets, "--out", dir, "--header", "X-Api-Key: " + sbLeakKey,
		"--sandbox", "--allow-mutations", "--storyboards", compliance, "--schemas", schemas, "--deadline", sbLeakDeadline.String(), "-v"}, env, sbLeakDeadline+time.Minute)
	if code != ExitNonConformant {
		t.Errorf("exit %d, want %d\n%s", code, ExitNonConformant, tail(errOut))
	}
	noLeak(t, dir, []string{sbLeakToken, sbLeakKey}, map[string]string{"stdout": out, "stderr": errOut})
	redactedIn(sbLeakEchoes[hostile.LeakInitRefusal])(t, nil, filepath.Join(dir, "refusing"))
}
