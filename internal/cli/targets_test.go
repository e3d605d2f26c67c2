package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

func readIndex(t *testing.T, dir string) Index {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileIndexJSON))
	if err != nil {
		t.Fatal(err)
	}
	var idx Index
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	return idx
}

// startSellers starts n reference sellers (MCP), each with its own token;
// faults[i], when set, is seller i's fault.
func startSellers(t testing.TB, n int, faults map[int]seller.Fault) (urls, tokens []string) {
	t.Helper()
	for i := range n {
		tok := fmt.Sprintf("target-token-%02d-5c0ffee5", i)
		opts := seller.Options{BearerToken: tok}
		if f, ok := faults[i]; ok {
			opts.Faults = []seller.Fault{f}
		}
		url, stop, err := seller.Start(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		urls, tokens = append(urls, url), append(tokens, tok)
	}
	return urls, tokens
}

// TestRunTargetsWritesOneFolderPerTargetAndAnIndex: three sellers, one
// broken, run two at a time, each with its own token; every target gets its
// folder, the index lists all three with their verdicts, the names are
// escaped in index.html and no token reaches a file.
func TestRunTargetsWritesOneFolderPerTargetAndAnIndex(t *testing.T) {
	urls, tokens := startSellers(t, 3, map[int]seller.Fault{1: "CTX-01/context-dropped"})
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.yaml")
	yaml := fmt.Sprintf(`targets:
  - name: alpha
    mcp: %s
    bearer_env: TOKEN_A
  - name: broken
    mcp: %s
    bearer_env: TOKEN_B
    out: b
  - name: '<script>alert(1)</script>'
    mcp: %s
    bearer_env: TOKEN_C
`, urls[0], urls[1], urls[2])
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	env := map[string]string{"TOKEN_A": tokens[0], "TOKEN_B": tokens[1], "TOKEN_C": tokens[2]}
	code, stdout, errOut := run(t, env, "", "run", "--targets", file, "--out", out, "--label-filter", "family:ctx",
		"--parallel-targets", "2", "--seed", "7")
	if code != ExitNonConformant {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitNonConformant, stdout, errOut)
	}
	idx := readIndex(t, out)
	if len(idx.Targets) != 3 {
		t.Fatalf("%d index entries, want 3", len(idx.Targets))
	}
	want := map[string]string{"alpha": string(report.Conformant), "broken": string(report.NonConformant), "<script>alert(1)</script>": string(report.Conformant)}
	for _, e := range idx.Targets {
		if e.Verdict != want[e.Name] {
			t.Errorf("%s: verdict %s, want %s", e.Name, e.Verdict, want[e.Name])
		}
		if _, err := os.Stat(filepath.Join(out, e.Dir, FileHTML)); err != nil {
			t.Errorf("%s: no report in %s: %v", e.Name, e.Dir, err)
		}
		if e.Name == "broken" && (e.Dir != "b" || !slices.Contains(e.Failed, "CTX-01")) {
			t.Errorf("broken: dir %q, failed %v", e.Dir, e.Failed)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, FileIndexHTML))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "<script>alert") || !strings.Contains(string(page), `href="b/report.html"`) {
		t.Errorf("index.html does not escape the names or link the reports:\n%s", page)
	}
	// The index has no script at all: the only complaint may be that.
	if bad := unsafeMarkup(page); bad != "0 script elements, want the page's own only" {
		t.Errorf("index.html: %s", bad)
	}
	err = filepath.Walk(out, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		for _, tok := range tokens {
			if strings.Contains(string(b), tok) {
				t.Errorf("%s holds a bearer token", path)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "targets: 3 (2 conformant, 1 non_conformant)") {
		t.Errorf("summary:\n%s", stdout)
	}
}

// TestMergeBuildsTheSameIndexFromFoldersWrittenAnywhere: single runs into
// unrelated folders, merged, give the index a --targets run gives; a folder
// without results is listed as missing, not dropped.
func TestMergeBuildsTheSameIndexFromFoldersWrittenAnywhere(t *testing.T) {
	urls, tokens := startSellers(t, 2, map[int]seller.Fault{1: "CTX-01/context-dropped"})
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "x", "ok"), filepath.Join(root, "y", "z", "bad")}
	for i, d := range dirs {
		code, out, _ := run(t, map[string]string{"T": tokens[i]}, "", "run", "--mcp", urls[i], "--bearer-env", "T", "--out", d,
			"--label-filter", "family:ctx")
		if code != ExitOK && code != ExitNonConformant {
			t.Fatalf("run %d: exit %d\n%s", i, code, out)
		}
	}
	empty := filepath.Join(root, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	idxDir := filepath.Join(root, "index")
	code, out, errOut := run(t, nil, "", "merge", "--out", idxDir, dirs[0], dirs[1], empty)
	if code != ExitNonConformant {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, errOut)
	}
	idx := readIndex(t, idxDir)
	got := map[string]IndexEntry{}
	for _, e := range idx.Targets {
		got[e.Name] = e
	}
	if got["ok"].Verdict != string(report.Conformant) || got["bad"].Verdict != string(report.NonConformant) ||
		!slices.Contains(got["bad"].Failed, "CTX-01") || got["empty"].Verdict != verdictMissing {
		t.Errorf("index: %+v", idx.Targets)
	}
	if got["bad"].Dir != "../y/z/bad" {
		t.Errorf("bad's dir is %q, want it relative to the index", got["bad"].Dir)
	}
	page, err := os.ReadFile(filepath.Join(idxDir, FileIndexHTML))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `href="../y/z/bad/report.html"`) {
		t.Errorf("index.html does not link bad's report")
	}
	if code, _, _ := run(t, nil, "", "merge", "--out", idxDir); code != ExitUsage {
		t.Errorf("merge without folders: exit %d", code)
	}
	if code, _, _ := run(t, nil, "", "merge", filepath.Join(root, "nope")); code != ExitUsage {
		t.Errorf("merge of a missing folder: exit %d", code)
	}
}

func TestLoadTargetsRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"empty":       `[]`,
		"no endpoint": `[{"name": "a"}]`,
		"unsafe out":  `[{"mcp": "http://a.example/mcp", "out": "../escape"}]`,
		"dup out":     `[{"mcp": "http://a.example/mcp", "out": "a"}, {"mcp": "http://b.example/mcp", "out": "a"}]`,
		"bad env":     `[{"mcp": "http://a.example/mcp", "bearer_env": "A B"}]`,
		"unknown key": `[{"mcp": "http://a.example/mcp", "token": "x"}]`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadTargets(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	p := filepath.Join(dir, "ok.json")
	_ = os.WriteFile(p, []byte(`[{"mcp": "http://a.example/mcp"}, {"mcp": "http://a.example/mcp"}, {"name": "x y", "a2a": "http://b.example"}]`), 0o644)
	ts, err := LoadTargets(p)
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Out != "a.example" || ts[1].Out != "a.example-2" || ts[2].Out != "x-y" {
		t.Errorf("folders %q %q %q", ts[0].Out, ts[1].Out, ts[2].Out)
	}
	if code, _, _ := run(t, nil, "", "run", "--targets", p, "--mcp", "http://a.example/mcp"); code != ExitUsage {
		t.Errorf("--targets with --mcp: exit %d, want %d", code, ExitUsage)
	}
}

// TestParallelRunsJudgeLikeASerialRun: the same seller and seed, one probe
// at a time and sixteen at a time, give the same outcome for every rule and
// transport, and the same findings.
func TestParallelRunsJudgeLikeASerialRun(t *testing.T) {
	verdicts := func(parallel string) map[string]string {
		dir := t.TempDir()
		code, out, errOut := run(t, nil, "", "run", "--out", dir, "--seed", "42", "--parallel", parallel)
		if code != ExitOK {
			t.Fatalf("--parallel %s: exit %d\n%s\n%s", parallel, code, out, errOut)
		}
		m := map[string]string{}
		for _, r := range readResults(t, dir).Rules {
			for _, s := range r.Specs {
				m[r.ID+" "+s.Transport] = string(s.Outcome) + " " + s.Message
			}
			m[r.ID] = fmt.Sprintf("%s, %d findings", r.Outcome, len(r.Findings))
		}
		return m
	}
	serial, parallel := verdicts("1"), verdicts("16")
	if len(serial) < 50 {
		t.Fatalf("only %d results", len(serial))
	}
	for k, v := range serial {
		if parallel[k] != v {
			t.Errorf("%s: serial %q, parallel %q", k, v, parallel[k])
		}
	}
	if len(parallel) != len(serial) {
		t.Errorf("%d results serial, %d parallel", len(serial), len(parallel))
	}
	for _, bad := range []string{"0", "65"} {
		if code, _, _ := run(t, nil, "", "run", "--parallel", bad, "--out", t.TempDir()); code != ExitUsage {
			t.Errorf("--parallel %s: exit %d, want %d", bad, code, ExitUsage)
		}
	}
}

// TestLimitFlagsReachTheTransport: --max-body small enough cuts the
// reference seller's replies (a failed or errored run, flagged truncated
// exchanges, kept heads of --max-evidence bytes); sizes parse with units.
func TestLimitFlagsReachTheTransport(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := run(t, nil, "", "run", "--out", dir, "--max-body", "200B", "--max-evidence", "50", "--label-filter", "family:env")
	if code == ExitOK {
		t.Fatalf("a 200-byte body limit passed the run\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileEvidence))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"truncated": true`) {
		t.Error("no exchange was flagged truncated")
	}
	for in, want := range map[string]int64{"8MiB": 8 << 20, "512KB": 512000, "65536": 65536, "1 GiB": 1 << 30, "10b": 10} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1.5MB", "8XB", "99999999999GiB"} {
		if _, err := parseByteSize(bad); err == nil {
			t.Errorf("parseByteSize(%q) accepted", bad)
		}
	}
	if code, _, _ := run(t, nil, "", "run", "--out", dir, "--max-event", "0"); code != ExitUsage {
		t.Errorf("--max-event 0: exit %d", code)
	}
}

// indexWithoutTimes is dir's index file name, untimed.
func indexWithoutTimes(t testing.TB, dir, name string) Index {
	t.Helper()
	idx, err := conform.ReadIndex(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return idx.Untimed()
}

// `run --targets FILE --shard I/3` for I = 1, 2, 3 into one folder (the
// second as a scheduler names it, --shard-index 1/3), then `merge
// --targets FILE`, gives the index of one run of the whole file; a second
// run of the whole file keeps every result and runs nothing. The flags'
// mistakes are usage errors.
func TestShardsOfATargetsFileMergeToTheWholeRunsIndex(t *testing.T) {
	urls, tokens := startSellers(t, 6, map[int]seller.Fault{2: "CTX-01/context-dropped"})
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.yaml")
	var yaml strings.Builder
	env := map[string]string{}
	for i, u := range urls {
		fmt.Fprintf(&yaml, "- {name: seller-%d, mcp: %q, bearer_env: TOKEN_%d}\n", i, u, i)
		env[fmt.Sprintf("TOKEN_%d", i)] = tokens[i]
	}
	if err := os.WriteFile(file, []byte(yaml.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--targets", file, "--label-filter", "family:ctx", "--storyboards", "off", "--schemas", "off", "--seed", "7"}
	whole, sharded := filepath.Join(dir, "whole"), filepath.Join(dir, "sharded")
	if code, out, errOut := run(t, env, "", append([]string{"run", "--out", whole}, flags...)...); code != ExitNonConformant {
		t.Fatalf("whole: exit %d\n%s\n%s", code, out, errOut)
	}
	for i, shard := range [][]string{{"--shard", "1/3"}, {"--shard-index", "1/3"}, {"--shard", "3/3"}} {
		code, out, errOut := run(t, env, "", append(append([]string{"run", "--out", sharded}, shard...), flags...)...)
		if code != ExitOK && code != ExitNonConformant {
			t.Fatalf("%s: exit %d\n%s\n%s", shard, code, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(sharded, fmt.Sprintf("index.shard-%d-of-3.json", i+1))); err != nil {
			t.Errorf("%s wrote no index of its own: %v", shard, err)
		}
	}
	if _, err := os.Stat(filepath.Join(sharded, FileIndexJSON)); err == nil {
		t.Error("a shard wrote index.json, which merge writes")
	}
	if code, out, errOut := run(t, nil, "", "merge", "--targets", file, "--out", sharded); code != ExitNonConformant {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, errOut)
	}
	want, got := indexWithoutTimes(t, whole, FileIndexJSON), indexWithoutTimes(t, sharded, FileIndexJSON)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("merged shards:\n%+v\nwhole run:\n%+v", got, want)
	}
	code, out, errOut := run(t, env, "", append([]string{"run", "--out", whole}, flags...)...)
	if code != ExitNonConformant || !strings.Contains(errOut, "6 of 6 targets kept the complete result their folder held") {
		t.Errorf("a second run: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{append([]string{"run", "--out", dir, "--shard", "0/3"}, flags...), "shards count from 1 (1/3 … 3/3)"},
		{append([]string{"run", "--out", dir, "--shard", "4/3"}, flags...), "between 1 and 3"},
		{append([]string{"run", "--out", dir, "--shard", "half"}, flags...), "want I/N"},
		{append([]string{"run", "--out", dir, "--shard-index", "3/3"}, flags...), "an index counts from 0 (0/3 … 2/3)"},
		{append([]string{"run", "--out", dir, "--shard", "1/3", "--shard-index", "0/3"}, flags...), "give one"},
		{append([]string{"run", "--out", dir, "--rerun", "some"}, flags...), "want errored, none or all"},
		{[]string{"run", "--out", dir, "--shard", "1/2"}, "give --targets too"},
		{[]string{"run", "--out", dir, "--rerun", "all"}, "give --targets too"},
		{[]string{"merge", "--targets", file, sharded, whole}, "at most one folder"},
	} {
		code, _, errOut := run(t, env, "", bad.args...)
		if code != ExitUsage || !strings.Contains(errOut, bad.says) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%q: exit %d, %q; want %d, one line saying %q", bad.args, code, errOut, ExitUsage, bad.says)
		}
	}
}
