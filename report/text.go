package report

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
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
	writeHeader(&b, r)
	if opts.Verbose {
		writeFullTable(&b, r)
		writeStoryboardTable(&b, r)
	}
	html := htmlPath(opts.Dir)
	writeFailures(&b, ruleLines([]Face{{Run: r}}, html), false)
	writeStoryboardFailures(&b, storyboardLines([]Face{{Run: r}}), html)
	writeFamilies(&b, r, opts.Verbose)
	writeStoryboards(&b, r)
	writeSkips(&b, r)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", wire.Sanitize(n, 300))
	}
	if opts.Dir != "" {
		fmt.Fprintf(&b, "\nreports in %s\n", wire.Sanitize(opts.Dir, 400))
		writeReportFiles(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeader writes what was tested and the verdict: the tool, the
// release, the target (named as the bundled reference seller when it is
// that), the verdict with its reason and exit code, and a harness error.
func writeHeader(b *strings.Builder, r *Run) {
	tested := ""
	if len(r.Transports) > 0 {
		tested = " (" + strings.ToUpper(strings.Join(r.Transports, ", ")) + ")"
	}
	target := wire.Sanitize(r.Target, maxMessage)
	if r.Reference() {
		target = "the bundled reference seller: " + target
	}
	fmt.Fprintf(b, "%s %s — AdCP %s — %s%s\n", r.Tool, r.Version, r.AdcpRelease, target, tested)
	fmt.Fprintf(b, "verdict: %s — %s (exit %d)\n", verdictOf(r), verdictWhy(r), r.ExitCode())
	if r.HarnessError != "" {
		fmt.Fprintf(b, "harness error: %s\n", wire.Sanitize(r.HarnessError, maxMessage))
	}
	if rel := r.Release; rel != nil {
		v := rel.Version
		if v == "" {
			v = "none"
		}
		fmt.Fprintf(b, "storyboards and schemas: AdCP %s — %s\n", v, wire.Sanitize(rel.Reason, 4*maxMessage))
	}
}

// verdictOf is the verdict as the terminal shows it: a run against the
// bundled reference seller says so beside it, so no log line can be read
// as a seller's result.
func verdictOf(r *Run) string {
	if r.Reference() {
		return string(r.Verdict) + " (" + ReferenceLabel + ")"
	}
	return string(r.Verdict)
}

// htmlPath is report.html in the report folder dir, terminal-safe.
func htmlPath(dir string) string {
	if dir == "" {
		return "report.html"
	}
	return filepath.Join(wire.Sanitize(dir, 400), "report.html")
}

// writeReportFiles lists the files of a report folder.
func writeReportFiles(b *strings.Builder) {
	for _, f := range reportFiles {
		fmt.Fprintf(b, "  %-14s %s\n", f.Name, f.What)
	}
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

// ruleLine is a rule to look at, on one report or merged across the
// faces of a run: its label, the transports (one report) or the faces
// (merged) it did not pass on, its first finding and where to read more.
type ruleLine struct {
	label, id, level, what, mark string
	on                           []string
	where, anchor                string
}

// ruleLines lists the rules that need a look, in orderFailures' order,
// one line per rule across the faces: a rule that needs a look on several
// faces with the same finding is listed once with every face named. With
// one face, on holds the rule's transports.
func ruleLines(faces []Face, html string) []ruleLine {
	var out []ruleLine
	index := map[[3]string]int{}
	for _, f := range faces {
		if f.Run == nil {
			continue
		}
		fhtml := html
		if len(faces) > 1 {
			fhtml = htmlPath(f.Dir)
		}
		for _, rule := range orderFailures(f.Run) {
			l, mark := label(rule)
			what, where := firstFinding(rule)
			if what == "" {
				what, mark = mark, ""
			}
			var on []string
			for _, t := range strings.Split(failedTransports(rule), ",") {
				if len(faces) > 1 {
					t = faceName(f.Run, t)
				}
				on = append(on, t)
			}
			k := [3]string{l, rule.ID, what}
			if i, ok := index[k]; ok {
				out[i].on = appendNew(out[i].on, on...)
				continue
			}
			index[k] = len(out)
			out = append(out, ruleLine{label: l, id: rule.ID, level: string(rule.Level), what: what, mark: mark, on: on,
				where: where, anchor: fhtml + "#rule-" + rule.ID})
		}
	}
	return out
}

// appendNew appends the items of add that list does not hold yet.
func appendNew(list []string, add ...string) []string {
	for _, s := range add {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// writeFailures lists the rules that need a look: failures (those that
// fail the run first), errors, expected failures and stale baseline
// entries, each with its first finding and where the details are. merged
// lines name the faces on their second line.
func writeFailures(b *strings.Builder, bad []ruleLine, merged bool) {
	if len(bad) == 0 {
		return
	}
	fmt.Fprintf(b, "\nfailures first (%d)\n", len(bad))
	for _, l := range bad {
		where := l.where
		if where != "" {
			where += " · "
		}
		if merged {
			line := fmt.Sprintf("  %-8s %-9s %-6s %s", l.label, l.id, l.level, l.what)
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			if l.mark != "" {
				fmt.Fprintf(b, "  %-25s %s\n", "", l.mark)
			}
			fmt.Fprintf(b, "  %-25s on %s · %s%s\n", "", strings.Join(l.on, ", "), where, l.anchor)
			continue
		}
		line := fmt.Sprintf("  %-8s %-9s %-6s %-8s %s", l.label, l.id, l.level, wire.Sanitize(strings.Join(l.on, ","), 20), l.what)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
		if l.mark != "" {
			fmt.Fprintf(b, "  %-34s %s\n", "", l.mark)
		}
		fmt.Fprintf(b, "  %-34s %s%s\n", "", where, l.anchor)
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
// its outcome over every transport tested). Without verbose, the families
// whose every rule passed are named on one line rather than given a row
// each, so the summary stays one screen; verbose gives every row.
func writeFamilies(b *strings.Builder, r *Run, verbose bool) {
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
	var rows, passed []string
	for _, f := range families {
		c := counts[f]
		if !verbose && len(c) == 1 && c[Passed] > 0 {
			passed = append(passed, wire.Sanitize(f, 20))
			continue
		}
		rows = append(rows, f)
	}
	if len(passed) == 1 { // a row costs no more than the line naming it
		rows, passed = families, nil
	}
	fw := len("family")
	for _, f := range rows {
		fw = max(fw, len(wire.Sanitize(f, 20)))
	}
	fmt.Fprintf(b, "\nrules by family\n  %-*s", fw, "family")
	for _, o := range outcomeOrder {
		fmt.Fprintf(b, " %8s", o)
	}
	b.WriteString("\n")
	for _, f := range rows {
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
	if len(passed) > 0 {
		fmt.Fprintf(b, "  every rule passed: %s (-v: a row each)\n", strings.Join(passed, " "))
	}
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

// skipGroup is the rules skipped (or disabled) for one reason.
type skipGroup struct {
	reason string
	ids    []string
}

// skipGroups groups the skipped and disabled rules by reason, the largest
// group first.
func skipGroups(r *Run) []skipGroup {
	var groups []skipGroup
	index := map[string]int{}
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
		i, ok := index[reason]
		if !ok {
			i = len(groups)
			index[reason] = i
			groups = append(groups, skipGroup{reason: reason})
		}
		groups[i].ids = append(groups[i].ids, rule.ID)
	}
	slices.SortStableFunc(groups, func(a, b skipGroup) int { return len(b.ids) - len(a.ids) })
	return groups
}

// writeSkips writes the skipped and disabled rules grouped by reason, the
// largest group first.
func writeSkips(b *strings.Builder, r *Run) {
	groups := skipGroups(r)
	if len(groups) == 0 {
		return
	}
	fmt.Fprintf(b, "\nskipped or disabled, by reason (%d rules)\n", r.Counts[Skipped]+r.Counts[Disabled])
	for _, g := range groups {
		shown := strings.Join(g.ids, " ")
		if len(g.ids) > 8 {
			shown = strings.Join(g.ids[:7], " ") + fmt.Sprintf(" … (+%d)", len(g.ids)-7)
		}
		if len(g.reason)+len(shown) <= 100 {
			fmt.Fprintf(b, "  %3d  %s: %s\n", len(g.ids), g.reason, shown)
		} else {
			fmt.Fprintf(b, "  %3d  %s\n       %s\n", len(g.ids), g.reason, shown)
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
