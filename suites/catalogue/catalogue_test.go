package catalogue

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/golden"
	"github.com/adcp-conform/adcp-conform/internal/shared"
)

func TestTheCatalogueHoldsEveryFamilyInOrder(t *testing.T) {
	want := []string{"ENV", "ERR", "EOBJ", "RETRY", "CTX", "TOL", "A2A", "CAP", "TASK", "VER", "IDEM", "AUTH", "URL", "HOOK", "SCHEMA", "TLS", "FUZZ"}
	var got []string
	for _, f := range Families() {
		got = append(got, f.ID)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("families = %v, want %v", got, want)
	}
	if n := len(All()); n != 84 {
		t.Fatalf("%d rules, want 84 (79 run judges, 5 fuzz judges)", n)
	}
	var fuzz []string
	for _, r := range All() {
		if CommandOf(r.ID) == CommandFuzz {
			fuzz = append(fuzz, r.ID)
		}
	}
	if got := strings.Join(fuzz, " "); got != "FUZZ-01 FUZZ-02 FUZZ-03 FUZZ-04 FUZZ-05" {
		t.Fatalf("rules judged by fuzz: %s", got)
	}
	if CommandOf("ENV-01") != "" || CommandOf("NOPE-01") != "" {
		t.Fatal("a run rule or an unknown ID has a command")
	}
}

func TestLookupFindsARuleAndRefusesAnUnknownID(t *testing.T) {
	r, ok := Lookup("ERR-06")
	if !ok || r.Level != Must || !r.Covers(MCP) || r.Covers(A2A) || r.Family != "ERR" {
		t.Fatalf("Lookup(ERR-06) = %+v, %v", r, ok)
	}
	if _, ok := Lookup("ERR-99"); ok {
		t.Fatal("Lookup(ERR-99) found a rule")
	}
}

func TestParseRejectsAMalformedCatalogue(t *testing.T) {
	const families = "families:\n  - {id: ENV, title: t}\n"
	rule := func(fields string) string {
		return families + "rules:\n  - {" + fields + "}\n"
	}
	const ok = "family: ENV, level: must, transports: [mcp], statement: s, source: x, since: 0.1.0"
	cases := []struct{ name, doc, want string }{
		{"bad ID", rule("id: env-1, " + ok), "does not match"},
		{"duplicate ID", families + "rules:\n  - {id: ENV-01, " + ok + "}\n  - {id: ENV-01, " + ok + "}\n", "listed twice"},
		{"unknown family", rule("id: ENV-01, family: XYZ, level: must, transports: [mcp], statement: s, source: x, since: 0.1.0"), "unknown family"},
		{"unknown level", rule("id: ENV-01, family: ENV, level: may, transports: [mcp], statement: s, source: x, since: 0.1.0"), "unknown level"},
		{"unknown transport", rule("id: ENV-01, family: ENV, level: must, transports: [grpc], statement: s, source: x, since: 0.1.0"), "unknown transport"},
		{"no transport", rule("id: ENV-01, family: ENV, level: must, transports: [], statement: s, source: x, since: 0.1.0"), "no transport"},
		{"missing statement", rule("id: ENV-01, family: ENV, level: must, transports: [mcp], source: x, since: 0.1.0"), "required"},
		{"unknown field", rule("id: ENV-01, color: red, " + ok), "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parse error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := parse([]byte(rule("id: ENV-01, " + ok))); err != nil {
		t.Fatalf("a well-formed catalogue was refused: %v", err)
	}
}

// TestTheCatalogueMatchesTheSpecRuleTable reads the spec's rule table
// (RULES.md) and checks every row's ID, level, transports and statement
// against the catalogue, and that the catalogue adds no rule the table lacks
// unless it is marked as the project's own.
func TestTheCatalogueMatchesTheSpecRuleTable(t *testing.T) {
	b, err := os.ReadFile(shared.File(t, "RULES.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`^\| ([A-Z0-9]+-\d\d) \| (MUST|SHOULD) \| (mcp|a2a|both) \| (.*?) \| (.*?) \| (.*?) \|$`)
	inTable := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id := m[1]
		inTable[id] = true
		r, ok := Lookup(id)
		if !ok {
			t.Errorf("%s is in the spec's table but not in the catalogue", id)
			continue
		}
		if string(r.Level) != strings.ToLower(m[2]) {
			t.Errorf("%s: level %s, the table says %s", id, r.Level, m[2])
		}
		if got := Transports(r); got != m[3] {
			t.Errorf("%s: transports %s, the table says %s", id, got, m[3])
		}
		if norm(r.Statement) != norm(m[4]) {
			t.Errorf("%s: statement differs from the table:\n got: %s\nwant: %s", id, r.Statement, m[4])
		}
	}
	if len(inTable) == 0 {
		t.Fatal("no rule rows found in RULES.md: has its table format changed?")
	}
	for _, r := range All() {
		if !inTable[r.ID] && !r.Project {
			t.Errorf("%s is in the catalogue but not in the spec's table, and is not marked project: true", r.ID)
		}
	}
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestListingsMatchTheirGoldenFiles(t *testing.T) {
	for name, write := range map[string]func(*bytes.Buffer) error{
		"rules.txt":  func(b *bytes.Buffer) error { return WriteTable(b, All()) },
		"rules.json": func(b *bytes.Buffer) error { return WriteJSON(b, All()) },
	} {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			if err := write(&got); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".golden"), got.Bytes())
		})
	}
}

func TestLabelsComeFromTheCatalogue(t *testing.T) {
	got, err := Labels("CTX-02", A2A)
	if err != nil {
		t.Fatal(err)
	}
	if want := "rule:CTX-02 transport:a2a level:must family:ctx"; strings.Join(got, " ") != want {
		t.Fatalf("labels = %v, want %s", got, want)
	}
	for _, l := range got {
		if strings.ContainsAny(l, "&|!,()/") {
			t.Errorf("label %q holds a character Ginkgo's label filter reserves", l)
		}
	}
	if _, err := Labels("ENV-01", A2A); err == nil || !strings.Contains(err.Error(), "does not apply") {
		t.Fatalf("ENV-01 on a2a: err = %v, want a transport error", err)
	}
	if _, err := Labels("NOPE-01", MCP); err == nil || !strings.Contains(err.Error(), "unknown rule") {
		t.Fatalf("NOPE-01: err = %v, want an unknown-rule error", err)
	}
}

func TestJudgeLabelsRecordsDeclarationBugs(t *testing.T) {
	ResetBugs()
	t.Cleanup(ResetBugs)
	if _, err := judgeLabels("echoes context", []ID{"CTX-01"}, []On{On(MCP)}); err != nil {
		t.Fatalf("first declaration refused: %v", err)
	}
	cases := []struct {
		name string
		ids  []ID
		ons  []On
		want string
	}{
		{"same name twice", []ID{"CTX-01"}, []On{On(MCP)}, "declared twice"},
		{"no ID", nil, []On{On(MCP)}, "exactly one ID"},
		{"two transports", []ID{"CTX-01"}, []On{On(MCP), On(A2A)}, "exactly one ID and one On"},
		{"unknown ID", []ID{"CTX-77"}, []On{On(MCP)}, "unknown rule"},
	}
	for _, tc := range cases {
		if _, err := judgeLabels("echoes context", tc.ids, tc.ons); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := judgeLabels("echoes context", []ID{"CTX-01"}, []On{On(A2A)}); err != nil {
		t.Errorf("the same text on another transport was refused: %v", err)
	}
}

func TestLabelValue(t *testing.T) {
	labels := []string{"rule:ENV-02", "transport:mcp"}
	if v, ok := LabelValue(labels, LabelRule); !ok || v != "ENV-02" {
		t.Fatalf("LabelValue(rule) = %q, %v", v, ok)
	}
	if _, ok := LabelValue(labels, LabelLevel); ok {
		t.Fatal("LabelValue found an absent key")
	}
}
