package floors

import (
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/adcp-conform/adcp-conform"

// floors are the harness's packages, bottom first. A package may import
// the packages on the floors below its own; on its own floor only what
// sideways names. Every package of the module is on a floor, in fixtures,
// or in testOnly: a new package must be placed here before it lands.
var floors = [][]string{
	{"probes/rawjson"},                    // the JSON.parse-compatible scanner and decoder, the one RFC 6901 pointer
	{"probes/wire", "probes/extract"},     // the capturing transport; the spec's extraction algorithms
	{"probes/evidence", "probes/webhook"}, // the evidence store; webhook signatures and receiver
	{"probes/fetch"},                      // the guarded fetch every connection goes through
	{"probes/release", "probes/auth", "probes/a2a", "probes/mcp"}, // release material; OAuth tokens; the clients
	{"probes/schemas"},             // JSON Schema validation of the release's schemas
	{"probes/plan", "probes/fuzz"}, // the probes as data; schema-driven request generation
	{"report", "report/schema"},    // the report model and its writers
	{"report/certify"},             // certification over a report
	{"suites/catalogue"},           // the rule catalogue and its labels
	{"suites/storyboard/spec"},     // the storyboard model, loading, lint, and the run's records
	// the skip_if language and substitution tokens; the substitution observer; the OAuth graph, brand.json and JWKS
	{"suites/storyboard/expr", "suites/storyboard/observer", "suites/storyboard/oauth"},
	{"suites/storyboard/check"},     // the check kinds and invariants
	{"suites", "suites/storyboard"}, // the rule judges; the storyboard engine
	{"suites/runner", "suites/storyboard/live", "suites/diagnose", "suites/fuzz"}, // judging as a Ginkgo run; storyboards over live clients; diagnose; the fuzz engine
	{"internal/material"}, // a run's release material, loaded
	{"suites/conform"},    // the public Go API for one run
	{"internal/cli"},      // the commands
	{"cmd/adcp-conform"},  // the thin main
}

// sideways are the imports allowed between packages of one floor.
var sideways = map[string][]string{}

// fixtures are the reference seller and the broken and hostile sellers:
// honest, separate programs that import nothing of the harness (their
// tests may). The shipped binary bundles fixtures/seller.
const fixtures = "fixtures"

// testOnly are packages for tests and tools: they may import anything, and
// the shipped binary imports none of them.
var testOnly = []string{
	"internal/floors", "internal/golden", "internal/leakcheck", "internal/shared",
	"probes/release/releasetest", "report/browsertest", "suites/selftest", "suites/conform/ginkgoexample",
	"fixtures/hostile", "fixtures/oauthgate", "fixtures/realsellers",
}

// binary is the command whose dependencies are shipped.
const binary = "cmd/adcp-conform"

// TestNoImportRunsUpAFloor holds the module's import graph to the table.
func TestNoImportRunsUpAFloor(t *testing.T) {
	graph := moduleGraph(t)
	for _, v := range layering(graph) {
		t.Error(v)
	}
}

// TestTheCheckCatchesEachKindOfViolation proves the check on crafted
// graphs: each kind of violation is named, and the module's own graph,
// given one upward import, fails.
func TestTheCheckCatchesEachKindOfViolation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		from  string
		to    string
		wants string
	}{
		{"an import up a floor", "probes/wire", "suites", "probes/wire (floor 2) imports suites (floor 14)"},
		{"a sideways import not listed", "probes/wire", "probes/extract", "probes/wire imports probes/extract on its own floor"},
		{"a fixture importing the harness", "fixtures/seller", "report", "fixtures/seller imports report: fixtures import nothing of the harness"},
		{"the binary pulling in test-only code", "internal/cli", "internal/golden", "the shipped binary (cmd/adcp-conform) depends on internal/golden"},
		{"a package on no floor", "internal/cli", "internal/newpkg", "internal/newpkg is on no floor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			graph := moduleGraph(t)
			graph[tc.from] = append(slices.Clone(graph[tc.from]), tc.to)
			if _, ok := graph[tc.to]; !ok {
				graph[tc.to] = nil
			}
			got := layering(graph)
			if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.wants) }) {
				t.Errorf("adding %s → %s: want a violation containing %q, got %q", tc.from, tc.to, tc.wants, got)
			}
		})
	}
}

// layering returns every violation of the table in graph (package →
// imports, both relative to the module).
func layering(graph map[string][]string) []string {
	floorOf := map[string]int{}
	for i, f := range floors {
		for _, p := range f {
			floorOf[p] = i + 1
		}
	}
	isFixture := func(p string) bool { return p == fixtures || strings.HasPrefix(p, fixtures+"/") }
	isTestOnly := func(p string) bool {
		return slices.ContainsFunc(testOnly, func(o string) bool { return p == o || strings.HasPrefix(p, o+"/") })
	}
	var out []string
	for _, pkg := range sortedKeys(graph) {
		switch {
		case isTestOnly(pkg):
			continue
		case isFixture(pkg):
			for _, imp := range graph[pkg] {
				if !isFixture(imp) {
					out = append(out, fmt.Sprintf("%s imports %s: fixtures import nothing of the harness", pkg, imp))
				}
			}
			continue
		}
		f, ok := floorOf[pkg]
		if !ok {
			out = append(out, fmt.Sprintf("%s is on no floor: place it in internal/floors/floors_test.go (and docs/architecture.md)", pkg))
			continue
		}
		for _, imp := range graph[pkg] {
			g, placed := floorOf[imp]
			switch {
			case pkg == binary && imp == "internal/cli", isFixture(imp) && !isTestOnly(imp):
				// the bundled reference seller is a separate program the run starts
			case !placed:
				// named by its own entry, or a test-only package (below)
			case g > f:
				out = append(out, fmt.Sprintf("%s (floor %d) imports %s (floor %d): an import runs up the house", pkg, f, imp, g))
			case g == f && !slices.Contains(sideways[pkg], imp):
				out = append(out, fmt.Sprintf("%s imports %s on its own floor (%d): not a sideways import the table allows", pkg, imp, f))
			}
		}
	}
	seen := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		if isTestOnly(p) {
			out = append(out, fmt.Sprintf("the shipped binary (%s) depends on %s, a test-only package", binary, p))
		}
		for _, imp := range graph[p] {
			walk(imp)
		}
	}
	walk(binary)
	return out
}

// moduleGraph reads every package of the module: its non-test files'
// imports of the module, under the default build tags.
func moduleGraph(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..")
	graph := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			if _, none := err.(*build.NoGoError); none {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		var imps []string
		for _, imp := range pkg.Imports {
			if inner, ours := strings.CutPrefix(imp, module+"/"); ours {
				imps = append(imps, inner)
			}
		}
		graph[rel] = imps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(graph) < 30 {
		t.Fatalf("only %d packages found under %s", len(graph), root)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return graph
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestTheArchitecturePageDrawsTheTable keeps docs/architecture.md's table
// of floors the table above: the page explains it, the test is the truth.
func TestTheArchitecturePageDrawsTheTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| (\\d+) \\| ((?:`[^`]+`(?:, )?)+) \\|")
	var drawn [][]string
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		var pkgs []string
		for _, p := range strings.Split(m[2], ", ") {
			pkgs = append(pkgs, strings.Trim(p, "`"))
		}
		drawn = append(drawn, pkgs)
	}
	if !slices.EqualFunc(drawn, floors, slices.Equal) {
		t.Errorf("docs/architecture.md draws the floors\n%q\nthe table here is\n%q", drawn, floors)
	}
}
