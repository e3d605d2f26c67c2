package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
)

// runLookup runs the command line with an environment that tells a
// variable set empty from an unset one: env holds the variables set.
func runLookup(t *testing.T, env map[string]string, args ...string) (ExitCode, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut,
		Getenv:    func(k string) string { return env[k] },
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	return code, out.String(), errOut.String()
}

// TestAnEmptyTargetIsAUsageError: a target given but empty or blank — on
// the command line or through its variable, the CI case of an unset
// secret expanded into --mcp "$SELLER_URL" — is exit 2 naming the flag,
// before anything is started or written; it never falls back to the
// bundled reference seller.
func TestAnEmptyTargetIsAUsageError(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"--mcp empty", nil, []string{"--mcp", ""}, "adcp-conform run: --mcp: empty or blank: give the seller's MCP endpoint"},
		{"--mcp= empty", nil, []string{"--mcp="}, "adcp-conform run: --mcp: empty or blank"},
		{"--mcp blank", nil, []string{"--mcp", " \t "}, "adcp-conform run: --mcp: empty or blank"},
		{"--a2a empty", nil, []string{"--a2a", ""}, "adcp-conform run: --a2a: empty or blank: give the seller's A2A base URL"},
		{"--a2a empty beside --mcp", nil, []string{"--mcp", "https://seller.example/mcp", "--a2a", ""}, "adcp-conform run: --a2a: empty or blank"},
		{"--targets empty", nil, []string{"--targets", ""}, "adcp-conform run: --targets: empty or blank: give the targets file"},
		{"--targets blank", nil, []string{"--targets", "  "}, "adcp-conform run: --targets: empty or blank"},
		{"ADCP_CONFORM_MCP set empty", map[string]string{"ADCP_CONFORM_MCP": ""}, nil, "adcp-conform run: ADCP_CONFORM_MCP (--mcp): empty or blank"},
		{"ADCP_CONFORM_MCP blank", map[string]string{"ADCP_CONFORM_MCP": "  "}, nil, "adcp-conform run: ADCP_CONFORM_MCP (--mcp): empty or blank"},
		{"ADCP_CONFORM_A2A set empty", map[string]string{"ADCP_CONFORM_A2A": ""}, nil, "adcp-conform run: ADCP_CONFORM_A2A (--a2a): empty or blank"},
		{"ADCP_CONFORM_TARGETS set empty", map[string]string{"ADCP_CONFORM_TARGETS": ""}, nil, "adcp-conform run: ADCP_CONFORM_TARGETS (--targets): empty or blank"},
		{"ADCP_CONFORM_TARGETS blank", map[string]string{"ADCP_CONFORM_TARGETS": "\n"}, nil, "adcp-conform run: ADCP_CONFORM_TARGETS (--targets): empty or blank"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			code, out, errOut := runLookup(t, tc.env, append([]string{"run", "--out", dir}, tc.args...)...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d\n%s%s", code, ExitUsage, out, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			oneErrorLine(t, errOut, tc.want)
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the report folder was made (%v): something ran", err)
			}
		})
	}
	// The flag given wins over an empty variable, and an empty variable of
	// a flag that names no target is read as unset, as before.
	if code, _, errOut := runLookup(t, map[string]string{"ADCP_CONFORM_MCP": "", "ADCP_CONFORM_LABEL_FILTER": ""}, "run", "--out", t.TempDir(), "--mcp", "http://127.0.0.1:1/mcp", "--timeout", "1s", "--deadline", "10s",
		"--label-filter", "rule:ENV-01", "--storyboards", "off", "--schemas", "off"); code == ExitUsage {
		t.Errorf("an empty ADCP_CONFORM_MCP under a given --mcp: exit %d (%s)", code, errOut)
	}
}

// TestATargetsFileWithABlankURLIsRefused: a blank mcp or a2a of a target
// (a template variable left unexpanded) is a usage error naming the
// target, never a run of what is left.
func TestATargetsFileWithABlankURLIsRefused(t *testing.T) {
	for _, body := range []string{"- mcp: \" \"\n  a2a: https://s.example/a2a\n", "- a2a: \"\\t\"\n"} {
		code, _, errOut := run(t, nil, "", "run", "--out", t.TempDir(), "--targets", writeFile(t, "t.yaml", body))
		if code != ExitUsage || !strings.Contains(errOut, "target 1: ") || !strings.Contains(errOut, " is blank") {
			t.Errorf("%q: exit %d (%s)", body, code, errOut)
		}
	}
}

// TestCertifyRefusesTheBundledReferenceSeller: --certify with no target
// (from the flag or its variable) is exit 2 with the reason, before the
// seller starts.
func TestCertifyRefusesTheBundledReferenceSeller(t *testing.T) {
	for name, c := range map[string]struct {
		env  map[string]string
		args []string
	}{
		"flag":     {nil, []string{"--certify"}},
		"variable": {map[string]string{"ADCP_CONFORM_CERTIFY": "true"}, nil},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		code, out, errOut := run(t, c.env, "", append([]string{"run", "--out", dir}, c.args...)...)
		if code != ExitUsage || out != "" {
			t.Errorf("%s: exit %d, want %d\n%s", name, code, ExitUsage, out)
		}
		oneErrorLine(t, errOut, "adcp-conform run: --certify certifies a seller: give its --mcp or --a2a (a run with neither tests the bundled reference seller")
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: the report folder was made: the seller ran", name)
		}
	}
}

// junitProperties reads every testsuite's properties of a junit.xml.
func junitProperties(t *testing.T, dir string) []map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileJUnit))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Name   string `xml:"name,attr"`
		Suites []struct {
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, s := range doc.Suites {
		m := map[string]string{"(testsuites name)": doc.Name}
		for _, p := range s.Props {
			m[p.Name] = p.Value
		}
		out = append(out, m)
	}
	return out
}

// TestEveryReportSaysWhenTheTargetIsTheBundledReferenceSeller: a run with
// no target labels itself the bundled reference seller's in the terminal
// verdict line, report.html's header, every junit.xml testsuite and
// results.json (target_kind, within the schema), on both faces; a run of
// a seller says "seller" and carries none of those marks.
func TestEveryReportSaysWhenTheTargetIsTheBundledReferenceSeller(t *testing.T) {
	ref := t.TempDir()
	code, out, errOut := run(t, nil, "", "run", "--out", ref)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "verdict: conformant ("+report.ReferenceLabel+")") {
		t.Errorf("the terminal verdict does not name the bundled reference seller:\n%s", out)
	}
	for face, dir := range map[string]string{"MCP + A2A 1.0": ref, "A2A 0.3": filepath.Join(ref, ReferenceA2A03Dir)} {
		r := readResults(t, dir)
		if r.TargetKind != report.TargetBundledReference || r.Face != face || r.Publishable {
			t.Errorf("%s: target_kind %q, face %q, publishable %v", face, r.TargetKind, r.Face, r.Publishable)
		}
		validateResults(t, dir)
		for _, p := range junitProperties(t, dir) {
			if p["target_kind"] != "bundled_reference" || p["face"] != face || !strings.Contains(p["(testsuites name)"], report.ReferenceLabel) {
				t.Errorf("%s: junit.xml testsuite properties %v", face, p)
				break
			}
		}
		page, err := os.ReadFile(filepath.Join(dir, FileHTML))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(page, []byte(`id="target-kind"`)) || !bytes.Contains(page, []byte(`<dd id="target-kind-value">bundled_reference</dd>`)) {
			t.Errorf("%s: report.html does not say the target is the bundled reference seller", face)
		}
	}

	url, stop, err := seller.Start(t.Context(), seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	own := t.TempDir()
	code, out, errOut = run(t, nil, "", "run", "--mcp", url, "--out", own, "--label-filter", "family:env")
	if code != ExitOK {
		t.Fatalf("a seller's run: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, report.ReferenceLabel) || strings.Contains(out, "bundled reference seller") {
		t.Errorf("a seller's summary mentions the reference seller:\n%s", out)
	}
	if r := readResults(t, own); r.TargetKind != report.TargetSeller || r.Face != "" {
		t.Errorf("a seller's run: target_kind %q, face %q", r.TargetKind, r.Face)
	}
	if p := junitProperties(t, own)[0]; p["target_kind"] != "seller" || strings.Contains(p["(testsuites name)"], "reference") {
		t.Errorf("a seller's junit.xml: %v", p)
	}
	if page, _ := os.ReadFile(filepath.Join(own, FileHTML)); bytes.Contains(page, []byte(`id="target-kind"`)) {
		t.Error("a seller's report.html carries the reference banner")
	}
}

// TestTheSignedBundleCarriesTheTargetKind: target_kind is inside what
// results.json.sig signs; verify shows it and never calls a reference run
// a certification (--require-certification exits 1); a signed claim of a
// publishable reference run is refused; judge and merge keep the kind.
func TestTheSignedBundleCarriesTheTargetKind(t *testing.T) {
	dir, pub := signedRun(t)
	code, out, errOut := run(t, nil, "", "verify", "--pubkey", pub, dir)
	if code != ExitOK || !strings.Contains(out, "target kind: bundled_reference") || !strings.Contains(out, "certification: none — the run tested the bundled reference seller") {
		t.Errorf("verify: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, nil, "", "verify", "--require-certification", "--pubkey", pub, dir); code != ExitNonConformant ||
		!strings.Contains(errOut, "not a seller's certification") {
		t.Errorf("verify --require-certification: exit %d (%s)", code, errOut)
	}

	// The kind is signed: changing it breaks the signature.
	changed := copyDir(t, dir)
	flipByte(t, filepath.Join(changed, FileResults), `"target_kind": "bundled_reference"`, `"target_kind": "seller"           `)
	if code, out, _ := run(t, nil, "", "verify", "--pubkey", pub, changed); code != ExitNonConformant || !strings.Contains(out, "FAIL") {
		t.Errorf("a changed target_kind: exit %d\n%s", code, out)
	}

	// A publishable reference run, signed by whoever holds a key, is no
	// certification either.
	forged := copyDir(t, dir)
	b, err := os.ReadFile(filepath.Join(forged, FileResults))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["certify"], doc["publishable"] = true, true
	delete(doc, "publishable_reason")
	b, _ = json.Marshal(doc)
	priv, err := certify.ReadPrivateKey(strings.TrimSuffix(pub, ".pub") + ".key")
	if err != nil {
		t.Fatal(err)
	}
	sig, err := certify.Sign(priv, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(forged, FileResults), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(forged, FileSignature), sig, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run(t, nil, "", "verify", "--pubkey", pub, forged); code != ExitNonConformant || !strings.Contains(out, "only a seller is ever certified") {
		t.Errorf("a publishable claim of the reference seller: exit %d\n%s", code, out)
	}

	// judge keeps the kind; so does the index.
	judged := filepath.Join(t.TempDir(), "judged")
	if code, out, errOut := run(t, nil, "", "judge", "--out", judged, dir); code != ExitOK {
		t.Fatalf("judge: exit %d\n%s%s", code, out, errOut)
	}
	if r := readResults(t, judged); r.TargetKind != report.TargetBundledReference || r.Face != "MCP + A2A 1.0" || r.Publishable {
		t.Errorf("judged: target_kind %q, face %q, publishable %v", r.TargetKind, r.Face, r.Publishable)
	}
	idx := t.TempDir()
	code, out, errOut = run(t, nil, "", "merge", "--out", idx, dir, judged)
	if code != ExitOK || strings.Count(out, "["+report.ReferenceLabel+"]") != 2 {
		t.Errorf("merge: exit %d\n%s%s", code, out, errOut)
	}
	var index Index
	if b, err := os.ReadFile(filepath.Join(idx, FileIndexJSON)); err != nil || json.Unmarshal(b, &index) != nil {
		t.Fatalf("index.json: %v", err)
	}
	for _, e := range index.Targets {
		if e.TargetKind != "bundled_reference" {
			t.Errorf("index entry %s: target_kind %q", e.Name, e.TargetKind)
		}
	}
	if page, _ := os.ReadFile(filepath.Join(idx, FileIndexHTML)); !bytes.Contains(page, []byte("bundled reference seller, not a seller under test")) {
		t.Error("index.html does not mark the reference runs")
	}
}

// maxMainJobLines is the terminal summary of the main job, both faces of
// the bundled reference seller: one screen.
const maxMainJobLines = 40

// TestTheMainJobSummaryFitsOneScreen runs the main job (`run` with no
// target) as CI does — with the spec's schemas and storyboards beside the
// clone when they are there, without them otherwise — and counts its
// summary: both faces in at most 40 lines, the second condensed, and -v
// still giving every face's full tables.
func TestTheMainJobSummaryFitsOneScreen(t *testing.T) {
	envs := map[string]map[string]string{"without the spec material": nil}
	if root := shared.Root(); root != "" {
		envs["with the 3.1.19 schemas and storyboards"] = map[string]string{
			"ADCP_CONFORM_SCHEMAS":     filepath.Join(root, "spec", "schemas", "3.1.19"),
			"ADCP_CONFORM_STORYBOARDS": filepath.Join(root, "spec", "compliance", "3.1.19"),
		}
	} else {
		t.Logf("the shared spec folder is absent: the main job runs without schemas and storyboards only")
	}
	for name, env := range envs {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			code, out, errOut := run(t, env, "", "run", "--out", dir)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if n := strings.Count(out, "\n"); n > maxMainJobLines {
				t.Errorf("the summary is %d lines, want at most %d:\n%s", n, maxMainJobLines, out)
			}
			if strings.Count(out, "rules by family") != 1 || !strings.Contains(out, "\nA2A 0.3 — ") || !strings.Contains(out, "  rules: ") {
				t.Errorf("the second face is not condensed:\n%s", out)
			}
			code, verbose, _ := run(t, env, "", "run", "--out", t.TempDir(), "-v")
			if code != ExitOK || strings.Count(verbose, "\nevery rule\n") != 2 || strings.Count(verbose, "rules by family") != 2 {
				t.Errorf("-v does not give each face's full tables:\n%s", verbose)
			}
		})
	}
}
