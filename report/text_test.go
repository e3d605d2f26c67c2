package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

// TestWriteTextMatchesItsGoldenFiles renders the baseline run's summary
// (failures first, an expected failure, a stale entry) as a run prints it
// and with -v.
func TestWriteTextMatchesItsGoldenFiles(t *testing.T) {
	for name, opts := range map[string]TextOptions{
		"text.summary.golden": {Dir: "adcp-conform-report"},
		"text.verbose.golden": {Dir: "adcp-conform-report", Verbose: true},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteText(&out, summaryRun(), opts); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name), out.Bytes())
		})
	}
}

// TestWriteTextPutsFailuresFirst checks the order a person reads: the
// verdict, then the failures, then the counts, the skips and the reports.
func TestWriteTextPutsFailuresFirst(t *testing.T) {
	var out bytes.Buffer
	if err := WriteText(&out, summaryRun(), TextOptions{Dir: "out"}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	last := -1
	for _, want := range []string{"verdict: non_conformant — 1 MUST rule failed (exit 1)", "failures first", "  FAILED   ENV-02",
		"rules by family", "skipped or disabled, by reason", "reports in out", "evidence.json"} {
		i := strings.Index(s, want)
		if i < 0 || i < last {
			t.Fatalf("%q is missing or out of order:\n%s", want, s)
		}
		last = i
	}
	if strings.Contains(s, "\nevery rule\n") {
		t.Error("the full table shows without -v")
	}
}

// TestRulesOfAnUntestedTransportAreNotApplicable checks a rule of a
// transport the run did not test reads "not applicable (A2A only)", never
// "not implemented", and that transport leaves the tally.
func TestRulesOfAnUntestedTransportAreNotApplicable(t *testing.T) {
	a2a := rule("A2A-01", Must)
	a2a.Transports = []string{"a2a"}
	r := &Run{Transports: []string{"mcp"}, Rules: []RuleResult{rule("ENV-01", Must, spec(Passed, "")), a2a, rule("TLS-01", Must)}}
	r.Settle()
	if got := r.Rules[1].Message; got != "not applicable (A2A only)" {
		t.Errorf("A2A-01 on an MCP-only run: %q", got)
	}
	if got := r.Rules[2].Message; got != NotImplemented {
		t.Errorf("TLS-01 (an MCP rule without a judge): %q", got)
	}
	for _, row := range tally(r) {
		if row.Transport == "a2a" {
			t.Errorf("the tally counts the untested transport: %+v", row)
		}
	}
	var out bytes.Buffer
	if err := WriteText(&out, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  1  not applicable (A2A only): A2A-01\n") {
		t.Errorf("the skips do not say A2A-01 is not applicable:\n%s", out.String())
	}
}
