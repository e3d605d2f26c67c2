package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
)

// TestALiveCredentialRunsTheControllerModeGate: with --live-bearer-env the
// live-mode principal's step of comply_controller_mode_gate is sent with
// that token and passes against the reference seller (which refuses its
// controller calls), judge grades it the same, and neither token is in the
// evidence. Without the flag the step is skipped naming it.
func TestALiveCredentialRunsTheControllerModeGate(t *testing.T) {
	compliance, schemas := specDirs(t)
	const runTok, liveTok = "run-token-5a1b2c3d4e", "live-token-9f8e7d6c5b"
	eps, stop, err := seller.StartAll(context.Background(), seller.Options{BearerToken: runTok, LiveBearerToken: liveTok, Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	env := map[string]string{"RUN_TOKEN": runTok, "LIVE_TOKEN": liveTok}
	args := []string{"run", "--mcp", eps.MCP, "--bearer-env", "RUN_TOKEN", "--header", "X-Run: yes", "--sandbox", "--allow-mutations",
		"--storyboards", compliance, "--schemas", schemas, "--storyboard", "comply_controller_mode_gate", "--label-filter", "storyboard:comply_controller_mode_gate"}

	out := t.TempDir()
	code, so, se := run(t, env, "", append(args, "--live-bearer-env", "LIVE_TOKEN", "--out", out)...)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	step := func(dir string) string {
		t.Helper()
		r := readResults(t, dir)
		for _, st := range r.Steps {
			if st.StoryboardID == "comply_controller_mode_gate" && st.StepID == "deny_live_caller" {
				switch {
				case st.Skip != nil:
					return "skipped: " + st.Skip.Detail
				case st.Error != "":
					return "error: " + st.Error
				case st.Passed:
					return "passed"
				}
				return "failed"
			}
		}
		return "absent"
	}
	if got := step(out); got != "passed" {
		t.Fatalf("deny_live_caller %s", got)
	}
	b, _ := evidenceWithout(t, out, runTok, liveTok)
	if !bytes.Contains(b, []byte(`"live_credential": true`)) && !bytes.Contains(b, []byte(`"live_credential":true`)) {
		t.Errorf("the evidence target does not record the live credential")
	}

	judged := t.TempDir()
	code, so, se = run(t, nil, "", "judge", "--storyboards", compliance, "--schemas", schemas, "--out", judged, out)
	if code != ExitOK {
		t.Fatalf("judge: exit %d\n%s%s", code, so, se)
	}
	if got := step(judged); got != "passed" {
		t.Errorf("judged: deny_live_caller %s", got)
	}

	without := t.TempDir()
	// Nothing is judged then: the run is incomplete (exit 3), not failed.
	_, _, _ = run(t, env, "", append(args, "--out", without)...)
	if got := step(without); !strings.HasPrefix(got, "skipped") || !strings.Contains(got, "--live-bearer-env") {
		t.Errorf("without the flag: deny_live_caller %s", got)
	}
}

func TestLiveBearerEnvWantsAVariableNameAndAnotherToken(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		name string
		want string
	}{
		{map[string]string{}, "LIVE_TOKEN", "--live-bearer-env LIVE_TOKEN: the variable is empty or unset"},
		{map[string]string{"T": "same-token"}, "T", "holds the run's own token"},
		{map[string]string{}, "live-Tok3n-Abcdef0123456789xyzXYZ", "not the token itself"},
	} {
		env := map[string]string{"T": "same-token"}
		for k, v := range tc.env {
			env[k] = v
		}
		code, _, se := run(t, env, "", "run", "--mcp", "http://127.0.0.1:1/mcp", "--bearer-env", "T", "--live-bearer-env", tc.name, "--out", t.TempDir())
		if code != ExitUsage || !strings.Contains(se, tc.want) {
			t.Errorf("--live-bearer-env %s: exit %d, stderr %q, want %q", tc.name, code, se, tc.want)
		}
	}
}

func TestLiveBearerEnvIsNotForSeveralTargets(t *testing.T) {
	code, _, se := run(t, map[string]string{"L": "live"}, "", "run", "--targets", filepath.Join(t.TempDir(), "targets.yaml"), "--live-bearer-env", "L", "--out", t.TempDir())
	if code != ExitUsage || !strings.Contains(se, "not with --targets") {
		t.Errorf("exit %d, stderr %q", code, se)
	}
}
