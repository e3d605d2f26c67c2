package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

// oneErrorLine checks that stderr is exactly one line, holding want, with
// no control character (no ANSI escape).
func oneErrorLine(t *testing.T, errOut, want string) {
	t.Helper()
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) {
		t.Errorf("stderr is not the one line %q:\n%s", want, errOut)
	}
	if strings.ContainsAny(errOut, "\x1b\r\t") {
		t.Errorf("stderr holds control characters: %q", errOut)
	}
}

func TestFlagErrorsAreOneLineNamingTheFlagAndTheForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unknown flag", nil, []string{"run", "--bogus"}, "adcp-conform run: unknown flag --bogus: see `adcp-conform run --help`"},
		{"unknown flag of judge", nil, []string{"judge", "-x", "d"}, "adcp-conform judge: unknown flag -x: see `adcp-conform judge --help`"},
		{"bad duration", nil, []string{"run", "--timeout", "5"}, "adcp-conform run: --timeout: want a duration such as 30s, 2m or 1h30m"},
		{"bad boolean", nil, []string{"run", "--strict=maybe"}, "adcp-conform run: --strict: want true or false"},
		{"bad boolean from the environment", map[string]string{"ADCP_CONFORM_STRICT": "maybe"}, []string{"run"}, "adcp-conform run: ADCP_CONFORM_STRICT (--strict): want true or false"},
		{"bad number", nil, []string{"run", "--rate-burst", "many"}, "adcp-conform run: --rate-burst: want a whole number"},
		{"missing value", nil, []string{"run", "--out"}, "adcp-conform run: --out needs a value: see `adcp-conform run --help`"},
		{"escape in a flag name", nil, []string{"run", "--\x1b[31mred"}, "adcp-conform run: unknown flag --?[31mred"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.env, "", tc.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d", code, ExitUsage)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			oneErrorLine(t, errOut, tc.want)
		})
	}
}

func TestHelpSpellsFlagsAsTheReadmeDoes(t *testing.T) {
	code, _, errOut := run(t, nil, "", "run", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errOut, "\n  -v\n") || strings.Contains(errOut, "--v\n") {
		t.Errorf("help does not spell -v as the README does:\n%s", errOut)
	}
	if !strings.Contains(errOut, "(env ADCP_CONFORM_OUT)") {
		t.Errorf("run's --out is not read from ADCP_CONFORM_OUT:\n%s", errOut)
	}
}

func TestOutFromTheEnvironmentIsRunsOnly(t *testing.T) {
	for cmd, env := range map[string]string{"judge": "ADCP_CONFORM_JUDGE_OUT", "keygen": "ADCP_CONFORM_KEYGEN_OUT", "merge": "ADCP_CONFORM_MERGE_OUT"} {
		_, _, errOut := run(t, nil, "", cmd, "--help")
		if !strings.Contains(errOut, "(env "+env+")") || strings.Contains(errOut, "(env ADCP_CONFORM_OUT)") {
			t.Errorf("%s --out is not read from %s alone:\n%s", cmd, env, errOut)
		}
	}
	// An exported ADCP_CONFORM_OUT does not make keygen write there.
	dir := t.TempDir()
	code, _, errOut := run(t, map[string]string{"ADCP_CONFORM_OUT": filepath.Join(dir, "k")}, "", "keygen")
	if code != ExitUsage {
		t.Errorf("keygen took ADCP_CONFORM_OUT (exit %d): %s", code, errOut)
	}
}

func TestAnOutThatCannotBeWrittenIsRefusedBeforeProbing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--mcp", "http://127.0.0.1:1/mcp", "--out", filepath.Join(file, "reports")},
		{"run", "--out", filepath.Join(file, "reports")}, // the bundled seller
	} {
		code, out, errOut := run(t, nil, "", args...)
		if code != ExitUsage {
			t.Fatalf("%v: exit %d, want %d\n%s", args, code, ExitUsage, errOut)
		}
		if out != "" || strings.Contains(errOut, "probing") {
			t.Errorf("%v: the run probed before refusing --out:\n%s%s", args, out, errOut)
		}
		oneErrorLine(t, errOut, "adcp-conform run: --out "+filepath.Join(file, "reports")+": not a directory")
	}
}

func TestABearerEnvGivenTheTokenNeverEchoesIt(t *testing.T) {
	for _, token := range []string{"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "eyJhbGciOiJIUzI1NiJ9.e30.abc", "Bearer abc123",
		"ghp_16C7e42F292c6912E7710c838347Ae178B4a", "3f9a1b2c4d5e6f708192a3b4c5d6e7f8"} {
		for _, args := range [][]string{
			{"run", "--mcp", "http://127.0.0.1:1/mcp", "--bearer-env", token},
			{"run", "--bearer-env", token},
		} {
			code, out, errOut := run(t, nil, "", append(args, "--out", t.TempDir())...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d", code, ExitUsage)
			}
			if strings.Contains(out+errOut, token) || strings.Contains(out+errOut, token[:12]) {
				t.Errorf("the token was echoed:\n%s%s", out, errOut)
			}
			oneErrorLine(t, errOut, "adcp-conform run: --bearer-env wants the name of an environment variable holding the token")
		}
	}
	// A variable's name is named back.
	for _, name := range []string{"SELLER_TOKEN", "my_seller_token_2024_v1"} {
		code, _, errOut := run(t, nil, "", "run", "--mcp", "http://127.0.0.1:1/mcp", "--bearer-env", name, "--out", t.TempDir())
		if code != ExitUsage {
			t.Fatalf("exit %d", code)
		}
		oneErrorLine(t, errOut, "adcp-conform run: --bearer-env "+name+": the variable is empty or unset")
	}
}

func TestABareRunsUsageErrorIsOneLine(t *testing.T) {
	code, out, errOut := run(t, nil, "", "run", "--deadline", "-1s", "--out", t.TempDir())
	if code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
	if out != "" {
		t.Errorf("stdout %q, want nothing", out)
	}
	oneErrorLine(t, errOut, "adcp-conform run: --deadline must be positive")
}

func TestVersionJSONListsTheA2AVersions(t *testing.T) {
	_, out, _ := run(t, nil, "", "version", "--json")
	var v struct {
		A2A []string `json:"a2a_versions"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || strings.Join(v.A2A, " ") != "0.3 1.0" {
		t.Fatalf("a2a_versions %v (%v) in\n%s", v.A2A, err, out)
	}
}

func TestRulesPrintPlainTextAndMarkdownOnRequest(t *testing.T) {
	code, out, _ := run(t, nil, "", "rules")
	if code != ExitOK || strings.ContainsAny(out, "`") || strings.Contains(out, "**") || strings.Contains(out, "|---") {
		t.Errorf("rules (exit %d) prints Markdown:\n%.600s", code, out)
	}
	if !strings.Contains(out, "ENV-01  MUST    mcp   A success tool result carries its AdCP payload as a JSON object: structuredContent") {
		t.Errorf("rules lacks ENV-01 in plain text:\n%.600s", out)
	}
	code, out, _ = run(t, nil, "", "rules", "--markdown")
	if code != ExitOK || !strings.Contains(out, "| ENV-01 | MUST | mcp | A success tool result carries its AdCP payload as a JSON **object**: `structuredContent`") {
		t.Errorf("rules --markdown (exit %d):\n%.600s", code, out)
	}
}

func TestDiffTakesFoldersAndRefusesOtherFiles(t *testing.T) {
	dir, _ := signedRun(t)
	code, out, errOut := run(t, nil, "", "diff", dir, dir)
	if code != ExitOK {
		t.Fatalf("diff of two folders: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = run(t, nil, "", "diff", filepath.Join(dir, FileEvidence), filepath.Join(dir, FileResults))
	if code != ExitUsage {
		t.Fatalf("diff of evidence.json: exit %d, want %d", code, ExitUsage)
	}
	oneErrorLine(t, errOut, "evidence.json: not a results.json")
}

func TestVerifySaysAnUnsignedFolderIsUnsigned(t *testing.T) {
	dir, pub := signedRun(t)
	if err := os.Remove(filepath.Join(dir, FileSignature)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, nil, "", "verify", "--pubkey", pub, dir)
	if code != ExitNonConformant {
		t.Fatalf("exit %d, want %d", code, ExitNonConformant)
	}
	if !strings.Contains(out, "is unsigned") {
		t.Errorf("stdout %q does not say the folder is unsigned", out)
	}
	oneErrorLine(t, errOut, "adcp-conform verify: the report folder is unsigned (no results.json.sig)")
}

func TestHelpMatchesItsGoldenFiles(t *testing.T) {
	for _, cmd := range []string{"run", "judge", "rules", "diagnose", "fuzz"} {
		code, out, errOut := run(t, nil, "", cmd, "--help")
		if code != ExitOK || out != "" {
			t.Fatalf("%s --help: exit %d, stdout %q", cmd, code, out)
		}
		golden.Check(t, filepath.Join("testdata", "help", cmd+".golden"), []byte(errOut))
	}
}
