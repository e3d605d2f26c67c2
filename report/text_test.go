package report

import (
	"bytes"
	"path/filepath"
	"strconv"
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

// TestWriteTextShowsStoryboards renders the storyboard run's summary: the
// failing storyboard steps after the failing rules, a line per storyboard
// category, the steps' counts with the advisory failures beside the
// failures; with -v, every storyboard.
func TestWriteTextShowsStoryboards(t *testing.T) {
	for name, opts := range map[string]TextOptions{
		"text.storyboards.golden":         {Dir: "adcp-conform-report"},
		"text.storyboards.verbose.golden": {Dir: "adcp-conform-report", Verbose: true},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteText(&out, storyboardRun(), opts); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name), out.Bytes())
			s := out.String()
			last := -1
			for _, want := range []string{"verdict: non_conformant — 1 MUST rule and 1 storyboard failed (exit 1)", "failures first",
				"storyboard failures first (3)", "  FAILED   [MCP] media_buy_seller/create/create_media_buy\n           field_value /status: expected",
				"rules by family", "storyboards by category (6: 1 passed · 1 failed · 3 skipped · 1 error)",
				"  media-buy  ", "  steps: 2 passed · 1 failed · 1 advisory failed · 1 skipped · 2 error · 1 validations not applicable",
				"skipped storyboards by reason: not_applicable 2 · requirement_unmet 1", "reports in"} {
				i := strings.Index(s, want)
				if i < 0 || i < last {
					t.Fatalf("%q is missing or out of order:\n%s", want, s)
				}
				last = i
			}
			if strings.ContainsAny(s, "\x1b\x00") {
				t.Error("the summary holds a control character")
			}
		})
	}
}

// TestTheStoryboardFailuresStayOneScreen checks a run with many failing
// storyboard steps and categories lists a bounded number and says how
// many more there are.
func TestTheStoryboardFailuresStayOneScreen(t *testing.T) {
	r := &Run{AdcpRelease: "3.1.19"}
	for i := range 30 {
		id := "sb" + strconv.Itoa(i)
		r.Storyboards = append(r.Storyboards, StoryboardResult{ID: id, Category: "cat" + strconv.Itoa(i)})
		r.Steps = append(r.Steps, sbStep(id, "p", "s", "t", false, Validation{Check: "field_present", Description: "d", JSONPointer: ptr("/x")}))
	}
	r.Settle()
	var out bytes.Buffer
	if err := WriteText(&out, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if n := strings.Count(s, "\n"); n > 45 {
		t.Errorf("%d lines:\n%s", n, s)
	}
	for _, want := range []string{"  … and 22 more: report.html#storyboards\n", "  … and 18 more categories: report.html#storyboards\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q:\n%s", want, s)
		}
	}
}

// The summary says which release the storyboards and schemas were, and
// why, under the verdict; the seller's words in the reason reach the
// terminal stripped of control characters.
func TestWriteTextSaysTheRunsRelease(t *testing.T) {
	for _, tc := range []struct {
		rel  *Release
		want string
	}{
		{&Release{Version: "3.2.0-beta.5", ChosenBy: ReleaseBySeller, Reason: "the seller's adcp.supported_versions [3.2-beta.5\x1b[31m]"},
			"storyboards and schemas: AdCP 3.2.0-beta.5 — the seller's adcp.supported_versions [3.2-beta.5?[31m]\n"},
		{&Release{ChosenBy: ReleaseBySeller, Reason: "none fits"}, "storyboards and schemas: AdCP none — none fits\n"},
	} {
		r := summaryRun()
		r.Release = tc.rel
		var out bytes.Buffer
		if err := WriteText(&out, r, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(out.String(), "\n")
		if len(lines) < 3 || lines[2] != tc.want {
			t.Errorf("third line %q, want %q", lines[min(2, len(lines)-1)], tc.want)
		}
	}
}

// TestWriteTextListsTheBaselinesStoryboardSteps: with a baseline listing
// storyboard steps, the summary lists each expected failure on one line
// with the baseline's reason (an advisory one too), a stale step entry
// among what fails the run, and a step failing other checks than listed as
// a failure that says what the baseline expected.
func TestWriteTextListsTheBaselinesStoryboardSteps(t *testing.T) {
	fv := Validation{Check: "field_value", Description: "d", JSONPointer: ptr("/x")}
	r := &Run{AdcpRelease: "3.1.19", StoryboardsRelease: "3.1.19", Rules: []RuleResult{rule("CTX-01", Must, spec(Passed, ""))},
		Storyboards: []StoryboardResult{{ID: "a", Category: "media-buy"}, {ID: "b", Category: "media-buy"}},
		Steps: []Step{sbStep("a", "p", "s1", "t", false, fv),
			sbStep("a", "p", "s2", "t", true, Validation{Check: "field_present", Severity: Advisory, Description: "d"}),
			sbStep("b", "p", "s1", "t", true)},
		Baseline: []BaselineEntry{
			{Rule: "storyboard:a", Step: "p/s1", Checks: []string{"field_value"}, Reason: "asks what the spec does not"},
			{Rule: "storyboard:a", Step: "p/s2", Checks: []string{"field_present(advisory)"}, Reason: "optional in the spec"}}}
	r.Settle()
	var out bytes.Buffer
	if err := WriteText(&out, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"verdict: conformant — every applicable MUST rule passed (1 of 1 rules judged); 1 of 2 storyboards passed, 1 failed as the baseline expects (exit 0)",
		"expected failures (2, as the baseline lists them: they do not fail the run)\n" +
			"  [MCP] a/p/s1 — asks what the spec does not\n  [MCP] a/p/s2 — optional in the spec\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "storyboard failures first") {
		t.Errorf("expected failures listed as failures:\n%s", s)
	}

	r.Baseline = append(r.Baseline, BaselineEntry{Rule: "storyboard:b", Step: "p/s1", Reason: "fixed since"})
	r.Baseline[0].Checks = []string{"field_absent"}
	r.Settle()
	out.Reset()
	if err := WriteText(&out, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	s = out.String()
	for _, want := range []string{"verdict: non_conformant — 1 storyboard failed (exit 1)",
		"storyboard failures first (2)\n  FAILED   [MCP] a/p/s1\n           field_value /x: d (the baseline expects field_absent, not field_value)\n" +
			"  STALE    [MCP] b/p/s1\n           passes now: remove its entry (storyboard:b, step p/s1) from the baseline\n",
		"expected failures (1, as the baseline lists them: they do not fail the run)\n  [MCP] a/p/s2 — optional in the spec\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q:\n%s", want, s)
		}
	}
}

// TestAMirroredStoryboardsStepsAreListedOnce: a release's domains/ mirror,
// skipped, shares its id with the protocols/ copy that ran; the failing
// step is listed once.
func TestAMirroredStoryboardsStepsAreListedOnce(t *testing.T) {
	r := &Run{AdcpRelease: "3.1.19", Storyboards: []StoryboardResult{
		{ID: "a", Category: "media-buy", Path: "domains/a.yaml", Skip: &Skip{Reason: "not_applicable", Detail: "domains/ mirrors protocols/"}},
		{ID: "a", Category: "media-buy", Path: "protocols/a.yaml"}},
		Steps: []Step{sbStep("a", "p", "s", "t", false, Validation{Check: "field_value", Description: "d"})}}
	r.Settle()
	var out bytes.Buffer
	if err := WriteText(&out, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "storyboard failures first (1)\n") || strings.Count(s, "FAILED   [MCP] a/p/s") != 1 {
		t.Errorf("the step is not listed once:\n%s", s)
	}
}
