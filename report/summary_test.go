package report

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

// summaryRun is the synthetic run with a baseline — CTX-04 passes although
// the baseline lists it, CTX-05 fails as it expects — and a finding that
// quotes Markdown and HTML.
func summaryRun() *Run {
	r := syntheticRun()
	r.Rules = append(r.Rules, rule("CTX-04", Should, spec(Passed, "")), rule("CTX-05", Should, spec(Failed, "CTX-05: drops the context")))
	r.Baseline = []BaselineEntry{{Rule: "CTX-04", Reason: "fixed in 2.1"}, {Rule: "CTX-05", Reason: "tracked as SELL-12"}}
	r.Rules[1].Findings = append(r.Rules[1].Findings, Finding{Transport: "mcp", ProbeID: "mcp/x`y", Message: "second"})
	r.Rules[1].Findings[0].Message = "nests **body** fields <img src=x onerror=alert(1)> [link](javascript:alert(2)) | pipe\n# heading https://evil.example/x www.evil.example @octocat"
	r.Settle()
	return r
}

func TestStepSummaryMatchesItsGoldenFile(t *testing.T) {
	var got bytes.Buffer
	if err := WriteStepSummary(&got, summaryRun()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "summary.golden.md"), got.Bytes())
}

// TestStepSummaryNeutralizesSellerMarkup checks a seller string can add no
// Markdown link, emphasis, heading, table cell or HTML to the summary.
func TestStepSummaryNeutralizesSellerMarkup(t *testing.T) {
	var out bytes.Buffer
	if err := WriteStepSummary(&out, summaryRun()); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	// Outside code spans (where nothing is interpreted) no seller markup,
	// bare URL (GitHub autolinks them) or @-mention is left.
	var outside strings.Builder
	for _, line := range strings.Split(s, "\n") {
		for i, part := range strings.Split(line, "`") {
			if i%2 == 0 {
				outside.WriteString(part)
			}
		}
		outside.WriteString("\n")
	}
	for _, bad := range []string{"<img", "](javascript", "**body**", "\n# heading", ") | pipe", "https://evil", "www.evil", "@octocat"} {
		if strings.Contains(outside.String(), bad) {
			t.Errorf("the summary holds %q outside a code span", bad)
		}
	}
	if !strings.Contains(s, "`nests **body** fields <img") {
		t.Errorf("the seller's message is not kept, literal, in a code span:\n%s", s)
	}
	if strings.Index(s, "### Failed") > strings.Index(s, "| family |") {
		t.Errorf("the failures do not come before the counts:\n%s", s)
	}
	for _, want := range []string{"## ❌ adcp-conform: non\\_conformant", "| ENV | mcp | 1 | 1 | 0 | 0 | 0 |", "**ENV-02** failed",
		"/result/structuredContent/payload", "(and 1 more)", "**CTX-04** passed, **stale baseline entry**", "**AUTH-01** error", "**CTX-05** failed, expected by the baseline: tracked as SELL-12"} {
		if !strings.Contains(s, want) {
			t.Errorf("the summary lacks %q:\n%s", want, s)
		}
	}
}

func TestTallyCountsEachRuleOncePerTransport(t *testing.T) {
	r := &Run{Rules: []RuleResult{
		{ID: "ENV-01", Family: "ENV", Transports: []string{"mcp", "a2a"},
			Specs: []SpecResult{{Transport: "mcp", Outcome: Passed}, {Transport: "a2a", Outcome: Failed}}},
		{ID: "ENV-02", Family: "ENV", Transports: []string{"mcp"}, Specs: []SpecResult{{Transport: "mcp", Outcome: Disabled}}},
		{ID: "CTX-01", Family: "CTX", Transports: []string{"mcp"}},
		{ID: "ENV-03", Family: "ENV", Transports: []string{"a2a"}, Specs: []SpecResult{{Transport: "a2a", Outcome: Error}}},
	}}
	r.Settle()
	rows := tally(r)
	var got []string
	for _, row := range rows {
		got = append(got, row.Family+"/"+row.Transport+":"+strings.Join([]string{
			itoa(row.Counts[Passed]), itoa(row.Counts[Failed]), itoa(row.Counts[Skipped]), itoa(row.Counts[Error]), itoa(row.Counts[Disabled])}, ","))
	}
	want := "ENV/mcp:1,0,0,0,1 ENV/a2a:0,1,0,1,0 CTX/mcp:0,0,1,0,0"
	if strings.Join(got, " ") != want {
		t.Errorf("tally %v, want %s", got, want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestStepSummaryShowsStoryboards checks the storyboard run's summary: the
// failing storyboard steps after the failing rules, the advisory failure
// marked, a row per storyboard category, and seller or storyboard text
// only in code spans or escaped.
func TestStepSummaryShowsStoryboards(t *testing.T) {
	var out bytes.Buffer
	if err := WriteStepSummary(&out, storyboardRun()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "summary_storyboards.golden.md"), out.Bytes())
	s := out.String()
	last := -1
	for _, want := range []string{"### Failed, errored and stale-baseline rules", "### Failed and errored storyboard steps",
		"- **media\\_buy\\_seller** create/create\\_media\\_buy failed on MCP: `field_value /status: expected",
		"- \\[ADVISORY\\] media\\_buy\\_seller/discovery/get\\_products advisory failure", "| family |",
		"**6 storyboards:** 1 passed, 1 failed, 3 skipped, 1 error · **steps:** 2 passed, 1 failed, 1 advisory failed, 1 skipped, 2 error",
		"| media-buy | 0 | 1 | 0 | 0 |"} {
		i := strings.Index(s, want)
		if i < 0 || i < last {
			t.Fatalf("%q is missing or out of order:\n%s", want, s)
		}
		last = i
	}
	var outside strings.Builder
	for _, line := range strings.Split(s, "\n") {
		for i, part := range strings.Split(line, "`") {
			if i%2 == 0 {
				outside.WriteString(part)
			}
		}
	}
	if strings.Contains(outside.String(), "<img") || strings.Contains(outside.String(), "\x1b") {
		t.Errorf("seller markup outside a code span:\n%s", s)
	}
}
