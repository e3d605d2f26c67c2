package report

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// maxMessage bounds a seller-influenced message on a terminal line.
const maxMessage = 200

// maxLine bounds a finding or a skip reason in the terminal summary, so
// each stays on one line of a wide terminal.
const maxLine = 110

// TextOptions say how much the terminal summary shows and where the
// reports are.
type TextOptions struct {
	// Verbose adds the full table: every rule, one line each.
	Verbose bool
	// Dir is the report folder; "" leaves out the lines that point to it.
	Dir string
}

// The report files of a run's folder, as the summary names them.
var reportFiles = []struct{ Name, What string }{
	{"report.html", "the failures first, with findings and exchanges"},
	{"junit.xml", "for a CI test view"},
	{"results.json", "every rule's result, machine-readable"},
	{"evidence.json", "every recorded exchange, redacted"},
}

// WriteText writes the terminal summary, meant to fit one screen: the
// verdict; the failures first (rule, level, transport, its first finding
// and where it is), the failing storyboard steps (capped), then the rule
// counts by family, the storyboard counts by category, the skipped rules
// condensed by reason, and where the reports are. With Verbose, the full
// table of every rule comes before it. Every string that may come from the
// seller is stripped of control characters, escape sequences and bidi
// overrides, and cut.
func WriteText(w io.Writer, r *Run, opts TextOptions) error {
	var b strings.Builder
	tested := ""
	if len(r.Transports) > 0 {
		tested = " (" + strings.ToUpper(strings.Join(r.Transports, ", ")) + ")"
	}
	fmt.Fprintf(&b, "%s %s — AdCP %s — %s%s\n", r.Tool, r.Version, r.AdcpRelease, wire.Sanitize(r.Target, maxMessage), tested)
	fmt.Fprintf(&b, "verdict: %s — %s (exit %d)\n", r.Verdict, verdictWhy(r), r.ExitCode())
	if r.HarnessError != "" {
		fmt.Fprintf(&b, "harness error: %s\n", wire.Sanitize(r.HarnessError, maxMessage))
	}
	if opts.Verbose {
		writeFullTable(&b, r)
		writeStoryboardTable(&b, r)
	}
	writeFailures(&b, r, opts.Dir)
	writeStoryboardFailures(&b, r, opts.Dir)
	writeFamilies(&b, r)
	writeStoryboards(&b, r)
	writeSkips(&b, r)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", wire.Sanitize(n, 300))
	}
	if opts.Dir != "" {
		dir := wire.Sanitize(opts.Dir, 400)
		fmt.Fprintf(&b, "\nreports in %s\n", dir)
		for _, f := range reportFiles {
			fmt.Fprintf(&b, "  %-14s %s\n", f.Name, f.What)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// verdictWhy says in a few words what decided the verdict.
func verdictWhy(r *Run) string {
	count := func(ok func(RuleResult) bool) int {
		n := 0
		for _, rule := range r.Rules {
			if ok(rule) {
				n++
			}
		}
		return n
	}
	plural := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	sbCount := func(ok func(StoryboardResult) bool) int {
		n := 0
		for _, sb := range r.Storyboards {
			if ok(sb) {
				n++
			}
		}
		return n
	}
	// and joins the rules' part and the storyboards', leaving out a zero.
	and := func(rules, storyboards int, rule string) string {
		switch {
		case storyboards == 0:
			return plural(rules, rule)
		case rules == 0:
			return plural(storyboards, "storyboard")
		}
		return plural(rules, rule) + " and " + plural(storyboards, "storyboard")
	}
	sbs := len(r.Storyboards) > 0
	switch r.Verdict {
	case Conformant:
		why := fmt.Sprintf("every applicable MUST rule passed (%d of %d rules judged)", r.Counts[Passed]+r.Counts[Failed], len(r.Rules))
		if sbs {
			why += fmt.Sprintf("; %d of %d storyboards passed", sbCount(func(s StoryboardResult) bool { return s.Outcome == Passed }),
				len(r.Storyboards))
			if n := sbCount(func(s StoryboardResult) bool { return s.Outcome == Failed }); n > 0 {
				why += fmt.Sprintf(", %d failed as the baseline expects", n)
			}
		}
		return why
	case NonConformant:
		n := count(func(x RuleResult) bool { return x.Failing() && (x.Level == Must || r.Strict) })
		m := sbCount(StoryboardResult.Failing)
		if r.Strict {
			return and(n, m, "rule") + " failed (strict: SHOULD rules count)"
		}
		return and(n, m, "MUST rule") + " failed"
	case StaleBaseline:
		if sbs {
			return "a rule or storyboard the baseline lists passes now: remove it from the baseline"
		}
		return "a rule the baseline lists passes now: remove it from the baseline"
	case HarnessError:
		if r.HarnessError != "" {
			return "the harness or the network failed (not counted against the seller)"
		}
		return and(count(func(x RuleResult) bool { return x.Outcome == Error && x.Level == Must }),
			sbCount(func(s StoryboardResult) bool { return s.Outcome == Error }), "MUST rule") +
			" could not be judged (harness or network error, not counted against the seller)"
	case Incomplete:
		if sbs {
			return "no rule or storyboard was judged"
		}
		return "no rule was judged"
	}
	return ""
}

// label is the rule's outcome as the summary shows it, with the baseline's
// mark.
func label(rule RuleResult) (string, string) {
	l := strings.ToUpper(string(rule.Outcome))
	if b := rule.Baseline; b != nil {
		switch b.Status {
		case ExpectedFailure:
			return "EXPECTED", "expected failure (baseline): " + wire.Sanitize(b.Reason, 80)
		case Stale:
			return "STALE", "passes now: remove it from the baseline"
		}
	}
	return l, ""
}

// writeFailures lists the rules that need a look: failures (those that
// fail the run first), errors, expected failures and stale baseline
// entries, each with its first finding and where the details are.
func writeFailures(b *strings.Builder, r *Run, dir string) {
	bad := orderFailures(r)
	if len(bad) == 0 {
		return
	}
	fmt.Fprintf(b, "\nfailures first (%d)\n", len(bad))
	html := "report.html"
	if dir != "" {
		html = filepath.Join(wire.Sanitize(dir, 400), html)
	}
	for _, rule := range bad {
		l, mark := label(rule)
		what, where := firstFinding(rule)
		if what == "" {
			what, mark = mark, ""
		}
		line := fmt.Sprintf("  %-8s %-9s %-6s %-8s %s", l, rule.ID, rule.Level, failedTransports(rule), what)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
		if where != "" {
			where += " · "
		}
		if mark != "" {
			fmt.Fprintf(b, "  %-34s %s\n", "", mark)
		}
		fmt.Fprintf(b, "  %-34s %s%s#rule-%s\n", "", where, html, rule.ID)
	}
}

// orderFailures lists the rules that need a look, those that fail the
// run first: failures, failed SHOULD rules, errors, stale baseline entries,
// expected failures.
func orderFailures(r *Run) []RuleResult {
	var bad []RuleResult
	rank := func(rule RuleResult) int {
		stale := rule.Baseline != nil && rule.Baseline.Status == Stale
		switch {
		case rule.Failing() && (rule.Level == Must || r.Strict):
			return 1
		case rule.Failing():
			return 2
		case rule.Outcome == Error:
			return 3
		case stale:
			return 4
		case rule.Outcome == Failed:
			return 5
		}
		return 0
	}
	for pass := 1; pass <= 5; pass++ {
		for _, rule := range r.Rules {
			if rank(rule) == pass {
				bad = append(bad, rule)
			}
		}
	}
	return bad
}

// failedTransports lists the transports on which the rule did not pass.
func failedTransports(rule RuleResult) string {
	var ts []string
	for _, s := range rule.Specs {
		if (s.Outcome == Failed || s.Outcome == Error || s.Outcome == rule.Outcome) && !containsString(ts, s.Transport) {
			ts = append(ts, s.Transport)
		}
	}
	if len(ts) == 0 {
		ts = rule.Transports
	}
	return wire.Sanitize(strings.Join(ts, ","), 20)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// specPrefix is what a judge's message opens with: "CTX-01: mcp/probe: ".
var specPrefix = regexp.MustCompile(`^[A-Z0-9]+-\d+: `)

// firstFinding is the rule's first finding on one line — its JSON pointer
// and what is wrong there — and where it is (the probe); without findings,
// the rule's message.
func firstFinding(rule RuleResult) (string, string) {
	if len(rule.Findings) == 0 {
		return termLine(specPrefix.ReplaceAllString(rule.Message, ""), maxLine), ""
	}
	f := rule.Findings[0]
	what := f.Message
	if f.JSONPointer != "" {
		what = f.JSONPointer + " " + what
	}
	if n := len(rule.Findings) - 1; n > 0 {
		what += fmt.Sprintf(" (+%d more)", n)
	}
	return termLine(what, maxLine), termLine("probe "+f.ProbeID, maxLine)
}

// termLine sanitizes s and keeps it on one line, cut to max runes.
func termLine(s string, max int) string {
	return wire.Sanitize(strings.Join(strings.Fields(s), " "), max)
}

// writeFamilies writes the rule counts by family (a rule counts once, with
// its outcome over every transport tested).
func writeFamilies(b *strings.Builder, r *Run) {
	var families []string
	counts := map[string]Counts{}
	for _, rule := range r.Rules {
		if counts[rule.Family] == nil {
			counts[rule.Family] = Counts{}
			families = append(families, rule.Family)
		}
		counts[rule.Family][rule.Outcome]++
	}
	if len(families) == 0 {
		return
	}
	fw := len("family")
	for _, f := range families {
		fw = max(fw, len(wire.Sanitize(f, 20)))
	}
	fmt.Fprintf(b, "\nrules by family\n  %-*s", fw, "family")
	for _, o := range outcomeOrder {
		fmt.Fprintf(b, " %8s", o)
	}
	b.WriteString("\n")
	for _, f := range families {
		fmt.Fprintf(b, "  %-*s", fw, wire.Sanitize(f, 20))
		for _, o := range outcomeOrder {
			if n := counts[f][o]; n > 0 {
				fmt.Fprintf(b, " %8d", n)
			} else {
				fmt.Fprintf(b, " %8s", "·")
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "  %-*s", fw, "all")
	for _, o := range outcomeOrder {
		fmt.Fprintf(b, " %8d", r.Counts[o])
	}
	fmt.Fprintf(b, "   (%d rules)\n", len(r.Rules))
}

// probeNotRun is how a judge says a probe it needed did not run.
var probeNotRun = regexp.MustCompile(`^\S+ not run: `)

// skipReason condenses a skipped rule's message to its reason: a probe
// that was not run is named by why, and only the first of several reasons
// is kept.
func skipReason(msg string) string {
	msg = probeNotRun.ReplaceAllString(msg, "")
	if i := strings.Index(msg, "; "); i >= 0 && probeNotRun.MatchString(msg[i+2:]) {
		msg = msg[:i]
	}
	return termLine(msg, 90)
}

// writeSkips writes the skipped and disabled rules grouped by reason, the
// largest group first.
func writeSkips(b *strings.Builder, r *Run) {
	var reasons []string
	ids := map[string][]string{}
	for _, rule := range r.Rules {
		var reason string
		switch rule.Outcome {
		case Skipped:
			reason = skipReason(rule.Message)
		case Disabled:
			reason = "not selected by the label filter"
		default:
			continue
		}
		if _, ok := ids[reason]; !ok {
			reasons = append(reasons, reason)
		}
		ids[reason] = append(ids[reason], rule.ID)
	}
	if len(reasons) == 0 {
		return
	}
	// A stable sort, largest group first.
	for i := 1; i < len(reasons); i++ {
		for j := i; j > 0 && len(ids[reasons[j]]) > len(ids[reasons[j-1]]); j-- {
			reasons[j], reasons[j-1] = reasons[j-1], reasons[j]
		}
	}
	fmt.Fprintf(b, "\nskipped or disabled, by reason (%d rules)\n", r.Counts[Skipped]+r.Counts[Disabled])
	for _, reason := range reasons {
		list := ids[reason]
		shown := strings.Join(list, " ")
		if len(list) > 8 {
			shown = strings.Join(list[:7], " ") + fmt.Sprintf(" … (+%d)", len(list)-7)
		}
		if len(reason)+len(shown) <= 100 {
			fmt.Fprintf(b, "  %3d  %s: %s\n", len(list), reason, shown)
		} else {
			fmt.Fprintf(b, "  %3d  %s\n       %s\n", len(list), reason, shown)
		}
	}
}

// writeFullTable writes every rule, one line each (the -v table).
func writeFullTable(b *strings.Builder, r *Run) {
	fmt.Fprintf(b, "\nevery rule\n")
	for _, rule := range r.Rules {
		l, mark := label(rule)
		msg := ""
		if rule.Outcome != Passed {
			msg, _ = firstFinding(rule)
		}
		if mark != "" {
			msg = strings.TrimSpace(msg + " [" + mark + "]")
		}
		line := fmt.Sprintf("  %-8s %-9s %-6s %-8s %s", l, rule.ID, rule.Level, wire.Sanitize(strings.Join(rule.Transports, ","), 20), msg)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}
