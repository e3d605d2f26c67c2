package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// outcomeOrder is the order outcomes appear in every summary table.
var outcomeOrder = []Outcome{Passed, Failed, Skipped, Error, Disabled}

// tallyRow is one row of a summary by rule family and transport: how many
// of the family's rules reached each outcome on that transport.
type tallyRow struct {
	Family    string
	Transport string
	Counts    Counts
}

// Of returns the count for the outcome named o (for templates).
func (t tallyRow) Of(o string) int { return t.Counts[Outcome(o)] }

// Total is the number of rules the row counts.
func (t tallyRow) Total() int {
	n := 0
	for _, c := range t.Counts {
		n += c
	}
	return n
}

// tally counts the run's rules by family and transport, families and
// transports in the order they first appear. A rule counts once on each
// transport it applies to (the catalogue's transports and those its specs
// ran on), with the outcome of its specs on that transport; a transport no
// spec ran on counts as skipped. The rows are per transport, so a rule on
// two transports counts in two rows; Run.Counts has the per-rule totals.
// Transports the run did not test are left out.
func tally(r *Run) []tallyRow {
	var rows []tallyRow
	index := map[[2]string]int{}
	for _, rule := range r.Rules {
		for _, tr := range ruleTransports(rule) {
			if !r.Tested(tr) {
				continue
			}
			var specs []SpecResult
			for _, s := range rule.Specs {
				if s.Transport == tr {
					specs = append(specs, s)
				}
			}
			o, _ := Aggregate(specs)
			k := [2]string{rule.Family, tr}
			i, ok := index[k]
			if !ok {
				i = len(rows)
				index[k] = i
				rows = append(rows, tallyRow{Family: rule.Family, Transport: tr, Counts: Counts{}})
			}
			rows[i].Counts[o]++
		}
	}
	// Keep families in order of first appearance, transports within them
	// in order of first appearance.
	firstFamily := map[string]int{}
	for i, row := range rows {
		if _, ok := firstFamily[row.Family]; !ok {
			firstFamily[row.Family] = i
		}
	}
	slices.SortStableFunc(rows, func(a, b tallyRow) int { return firstFamily[a.Family] - firstFamily[b.Family] })
	return rows
}

// ruleTransports is the union of the rule's catalogue transports and the
// transports its specs ran on, in that order.
func ruleTransports(rule RuleResult) []string {
	out := slices.Clone(rule.Transports)
	for _, s := range rule.Specs {
		if s.Transport != "" && !slices.Contains(out, s.Transport) {
			out = append(out, s.Transport)
		}
	}
	return out
}

// verdictMark is the symbol the step summary puts before the verdict.
func verdictMark(v Verdict) string {
	switch v {
	case Conformant:
		return "✅"
	case NonConformant, StaleBaseline:
		return "❌"
	}
	return "⚠️"
}

// maxSummaryFailures bounds the failing rules the step summary lists.
const maxSummaryFailures = 50

// WriteStepSummary writes the run as GitHub-flavoured Markdown for
// $GITHUB_STEP_SUMMARY: the verdict and versions, each failed or errored
// rule with its first finding and each failing storyboard step with its
// first failed validation (the failures first: what a seller engineer came
// for), then a table of rule counts by family and transport and one of
// storyboard counts by category.
// Seller-influenced strings (findings, messages, harness errors) are
// stripped of control characters, cut, and set in code spans, where
// neither Markdown, HTML, bare-URL autolinks nor @-mentions apply.
func WriteStepSummary(w io.Writer, r *Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s %s: %s", verdictMark(r.Verdict), md(r.Tool, 80), md(string(r.Verdict), 40))
	if r.Reference() {
		fmt.Fprintf(&b, " (%s)", md(ReferenceLabel, 80))
	}
	if r.Face != "" {
		fmt.Fprintf(&b, " · %s", md(r.Face, 40))
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%s %s · AdCP %s · target `%s`", md(r.Tool, 80), md(r.Version, 40), md(r.AdcpRelease, 40), code(r.Target, 200))
	if r.TargetKind != "" {
		fmt.Fprintf(&b, " · target kind %s", md(string(r.TargetKind), 40))
	}
	if r.Strict {
		b.WriteString(" · strict")
	}
	if r.LabelFilter != "" {
		fmt.Fprintf(&b, " · label filter `%s`", code(r.LabelFilter, 200))
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "**%d rules:** %d passed, %d failed, %d skipped, %d error, %d disabled\n\n",
		len(r.Rules), r.Counts[Passed], r.Counts[Failed], r.Counts[Skipped], r.Counts[Error], r.Counts[Disabled])
	if r.HarnessError != "" {
		fmt.Fprintf(&b, "> **Harness error:** %s\n\n", sellerText(r.HarnessError, maxMessage))
	}

	var bad []RuleResult
	for _, rule := range r.Rules {
		stale := rule.Baseline != nil && rule.Baseline.Status == Stale
		if rule.Outcome == Failed || rule.Outcome == Error || stale {
			bad = append(bad, rule)
		}
	}
	if len(bad) > 0 {
		b.WriteString("### Failed, errored and stale-baseline rules\n\n")
		for i, rule := range bad {
			if i == maxSummaryFailures {
				fmt.Fprintf(&b, "- … and %d more (see report.html)\n", len(bad)-i)
				break
			}
			status := md(string(rule.Outcome), 20)
			if bm := rule.Baseline; bm != nil {
				switch bm.Status {
				case ExpectedFailure:
					status += ", expected by the baseline: " + md(bm.Reason, 120)
				case Stale:
					status += ", **stale baseline entry**: remove it"
				}
			}
			fmt.Fprintf(&b, "- **%s** %s (%s) — %s\n", md(rule.ID, 40), status, md(string(rule.Level), 20), md(rule.Statement, 300))
			if len(rule.Findings) > 0 {
				f := rule.Findings[0]
				more := ""
				if n := len(rule.Findings) - 1; n > 0 {
					more = fmt.Sprintf(" (and %d more)", n)
				}
				where := ""
				if f.JSONPointer != "" {
					where = fmt.Sprintf(" at `%s`", code(f.JSONPointer, 200))
				}
				fmt.Fprintf(&b, "  - [%s] `%s`%s: %s%s\n", md(f.Transport, 20), code(f.ProbeID, 120), where, sellerText(f.Message, maxMessage), more)
			} else if rule.Message != "" {
				fmt.Fprintf(&b, "  - %s\n", sellerText(rule.Message, maxMessage))
			}
		}
		b.WriteString("\n")
	}
	writeStoryboardFailuresMarkdown(&b, r)
	b.WriteString("| family | transport | passed | failed | skipped | error | disabled |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, row := range tally(r) {
		fmt.Fprintf(&b, "| %s | %s |", md(row.Family, 40), md(row.Transport, 40))
		for _, o := range outcomeOrder {
			fmt.Fprintf(&b, " %d |", row.Counts[o])
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	writeStoryboardTableMarkdown(&b, r)

	for _, n := range r.Notes {
		fmt.Fprintf(&b, "> note: %s\n", sellerText(n, 300))
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscaper escapes what Markdown or inline HTML would interpret.
var mdEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"(", `\(`, ")", `\)`, "#", `\#`, "|", `\|`, "!", `\!`, "~", `\~`,
)

// md makes s safe as Markdown text on one line: control characters
// replaced, cut at max runes, and every Markdown or HTML metacharacter
// escaped.
func md(s string, max int) string { return mdEscaper.Replace(wire.Sanitize(s, max)) }

// codeEscaper keeps text inside a single-backtick code span, where
// backslashes and markup are literal: only a backtick could end the span,
// so it becomes a look-alike. (Code spans are never put in table cells.)
var codeEscaper = strings.NewReplacer("`", "ˋ")

// code makes s safe inside a `code span` outside a table.
func code(s string, max int) string { return codeEscaper.Replace(wire.Sanitize(s, max)) }

// sellerText sets a message that may quote the seller in a code span: the
// text stays readable, and a URL or an @-mention in it is never a link.
func sellerText(s string, max int) string {
	if s == "" {
		return ""
	}
	return "`" + code(s, max) + "`"
}

// writeStoryboardFailuresMarkdown lists the storyboard steps that need a
// look (failures, errors, stale entries, expected failures), then the
// failed advisory validations, marked [ADVISORY] as the runner output
// contract asks; capped.
func writeStoryboardFailuresMarkdown(b *strings.Builder, r *Run) {
	bad := storyboardAttention(r)
	type advisory struct{ where, what string }
	var adv []advisory
	for _, st := range r.storyboardSteps() {
		for _, v := range st.Validations {
			if !v.Passed && v.Severity == Advisory {
				adv = append(adv, advisory{st.StoryboardID + "/" + st.PhaseID + "/" + st.StepID, validationLine(v)})
			}
		}
	}
	if len(bad) == 0 && len(adv) == 0 {
		return
	}
	b.WriteString("### Failed and errored storyboard steps\n\n")
	n := 0
	for _, a := range bad {
		if n == maxSummaryFailures {
			fmt.Fprintf(b, "- … and %d more (see report.html)\n", len(bad)+len(adv)-n)
			b.WriteString("\n")
			return
		}
		n++
		where := "**" + md(a.Storyboard, 80) + "**"
		if a.Where != "" {
			where += " " + md(a.Where, 160)
		}
		fmt.Fprintf(b, "- %s %s on %s", where, md(strings.ToLower(a.Label), 20), md(a.FaceList(), 80))
		if a.What != "" {
			fmt.Fprintf(b, ": %s", sellerText(a.What, maxMessage))
		}
		b.WriteString("\n")
	}
	for _, a := range adv {
		if n == maxSummaryFailures {
			fmt.Fprintf(b, "- … and %d more (see report.html)\n", len(bad)+len(adv)-n)
			break
		}
		n++
		fmt.Fprintf(b, "- %s %s advisory failure (does not fail the step): %s\n", md("[ADVISORY]", 20), md(a.where, 200), sellerText(a.what, maxMessage))
	}
	b.WriteString("\n")
}

// writeStoryboardTableMarkdown writes the storyboard counts, one row per
// category, and the storyboard steps' counts with the advisory failures
// beside the failures.
func writeStoryboardTableMarkdown(b *strings.Builder, r *Run) {
	cats := storyboardCategories(r)
	if len(cats) == 0 {
		return
	}
	total := Counts{}
	for _, sb := range r.Storyboards {
		total[sb.Outcome]++
	}
	steps, advisory, na := storyboardStepTally(r)
	fmt.Fprintf(b, "**%d storyboards:** %d passed, %d failed, %d skipped, %d error · **steps:** %d passed, %d failed, %d advisory failed, %d skipped, %d error",
		len(r.Storyboards), total[Passed], total[Failed], total[Skipped], total[Error],
		steps[Passed], steps[Failed], advisory, steps[Skipped], steps[Error])
	if na > 0 {
		fmt.Fprintf(b, ", %d validations not applicable", na)
	}
	b.WriteString("\n\n| storyboard category | passed | failed | skipped | error |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, c := range cats {
		fmt.Fprintf(b, "| %s |", md(c.Name, 60))
		for _, o := range storyboardOrder[:4] {
			fmt.Fprintf(b, " %d |", c.Counts[o])
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}
