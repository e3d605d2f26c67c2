package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// actionScript returns the shell script of the GitHub Action's run step.
func actionScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", ".github", "actions", "adcp-conform", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Runs struct {
			Steps []struct {
				ID  string `json:"id"`
				Run string `json:"run"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := yaml.Unmarshal(b, &action); err != nil {
		t.Fatal(err)
	}
	for _, s := range action.Runs.Steps {
		if s.ID == "run" {
			return s.Run
		}
	}
	t.Fatal("action.yml has no step with id run")
	return ""
}

func TestTheActionSaysWhenItsTokenIsEmpty(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := actionScript(t)
	tmp := t.TempDir()
	// A stand-in for the built tool: it records its arguments.
	fake := "#!/bin/sh\necho \"$@\" >\"$RUNNER_TEMP/args\"\nexit 3\n"
	if err := os.WriteFile(filepath.Join(tmp, "adcp-conform"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token, mcp string
		warned     bool
	}{
		{"", "https://seller.example/mcp", true},
		{"a-token", "https://seller.example/mcp", false},
		{"", "", false}, // the bundled seller needs none
	} {
		cmd := exec.Command(bash, "-c", script)
		cmd.Dir = tmp
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "RUNNER_TEMP=" + tmp, "GITHUB_OUTPUT=" + filepath.Join(tmp, "output"),
			"IN_MCP_URL=" + tc.mcp, "IN_A2A_URL=", "IN_BASELINE=", "IN_LABEL_FILTER=", "IN_OUT=" + filepath.Join(tmp, "out"), "IN_ARGS=",
			"ADCP_SELLER_TOKEN=" + tc.token}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the script failed: %v\n%s", err, out)
		}
		warned := strings.Contains(string(out), "::warning title=adcp-conform::the token input is empty") &&
			strings.Contains(string(out), "pull requests from forks")
		if warned != tc.warned {
			t.Errorf("token %q, mcp %q: warned %v, want %v\n%s", tc.token, tc.mcp, warned, tc.warned, out)
		}
		if strings.Count(string(out), "\n::warning") > 1 {
			t.Errorf("more than one warning:\n%s", out)
		}
	}
}

// TestTheActionWarnsWhenItTestedTheBundledSeller: a step given no seller
// URL (an undefined secret) tests the bundled reference seller; the step
// says so in a warning and in its target-kind output, never silently.
func TestTheActionWarnsWhenItTestedTheBundledSeller(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("no jq (GitHub's runners ship it)")
	}
	script := actionScript(t)
	for _, kind := range []string{"bundled_reference", "seller"} {
		tmp := t.TempDir()
		if err := os.WriteFile(filepath.Join(tmp, "adcp-conform"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(tmp, "out")
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		results := `{"verdict":"conformant","target_kind":"` + kind + `"}`
		if err := os.WriteFile(filepath.Join(out, FileResults), []byte(results), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bash, "-c", script)
		cmd.Dir = tmp
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "RUNNER_TEMP=" + tmp, "GITHUB_OUTPUT=" + filepath.Join(tmp, "output"),
			"IN_MCP_URL=", "IN_A2A_URL=", "IN_BASELINE=", "IN_LABEL_FILTER=", "IN_OUT=" + out, "IN_ARGS=", "ADCP_SELLER_TOKEN="}
		log, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the script failed: %v\n%s", err, log)
		}
		warned := strings.Contains(string(log), "::warning title=adcp-conform::mcp-url and a2a-url are empty, so this step tested the bundled reference seller")
		if warned != (kind == "bundled_reference") {
			t.Errorf("%s: warned %v\n%s", kind, warned, log)
		}
		outputs, err := os.ReadFile(filepath.Join(tmp, "output"))
		if err != nil || !strings.Contains(string(outputs), "target-kind="+kind+"\n") {
			t.Errorf("%s: outputs %q (%v)", kind, outputs, err)
		}
	}
}
