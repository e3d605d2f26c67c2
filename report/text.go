package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// maxMessage bounds a seller-influenced message on a terminal line.
const maxMessage = 200

// WriteText writes a short summary for a terminal: one line per rule that
// did not pass, a table of rule outcomes by family and transport, the
// counts and the verdict. Every string that may come from
// the seller is stripped of control characters, escape sequences and bidi
// overrides, and cut.
func WriteText(w io.Writer, r *Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s — AdCP %s — %s\n", r.Tool, r.Version, r.AdcpRelease, wire.Sanitize(r.Target, maxMessage))
	var later, disabled []string
	for _, rule := range r.Rules {
		label, mark := strings.ToUpper(string(rule.Outcome)), ""
		if b := rule.Baseline; b != nil {
			switch b.Status {
			case ExpectedFailure:
				label, mark = "EXPECTED", " [expected failure (baseline): "+wire.Sanitize(b.Reason, 80)+"]"
			case Stale:
				label, mark = "STALE", " [passes now: remove it from the baseline]"
			}
		}
		switch {
		case rule.Outcome == Passed && label != "STALE":
			continue
		case rule.Outcome == Skipped && rule.Message == NotImplemented:
			later = append(later, rule.ID)
			continue
		case rule.Outcome == Disabled:
			disabled = append(disabled, rule.ID)
			continue
		}
		line := fmt.Sprintf("  %-8s %-9s %-6s %s%s", label, rule.ID, rule.Level,
			wire.Sanitize(rule.Message, maxMessage), mark)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	if len(disabled) > 0 {
		fmt.Fprintf(&b, "  %d rules disabled (not selected by the label filter)\n", len(disabled))
	}
	if len(later) > 0 {
		fmt.Fprintf(&b, "  %d rules skipped as not implemented yet: %s\n", len(later), strings.Join(later, " "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", wire.Sanitize(n, 300))
	}
	if r.HarnessError != "" {
		fmt.Fprintf(&b, "harness error: %s\n", wire.Sanitize(r.HarnessError, maxMessage))
	}
	writeTally(&b, r)
	fmt.Fprintf(&b, "%d rules: %d passed, %d failed, %d skipped, %d error, %d disabled\n",
		len(r.Rules), r.Counts[Passed], r.Counts[Failed], r.Counts[Skipped], r.Counts[Error], r.Counts[Disabled])
	fmt.Fprintf(&b, "verdict: %s\n", r.Verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTally writes the table of rule outcomes by family and transport.
func writeTally(b *strings.Builder, r *Run) {
	rows := tally(r)
	if len(rows) == 0 {
		return
	}
	fw, tw := len("family"), len("transport")
	for _, row := range rows {
		fw = max(fw, len(wire.Sanitize(row.Family, 40)))
		tw = max(tw, len(wire.Sanitize(row.Transport, 40)))
	}
	fmt.Fprintf(b, "\n  %-*s  %-*s", fw, "family", tw, "transport")
	for _, o := range outcomeOrder {
		fmt.Fprintf(b, "  %8s", o)
	}
	b.WriteString("\n")
	for _, row := range rows {
		fmt.Fprintf(b, "  %-*s  %-*s", fw, wire.Sanitize(row.Family, 40), tw, wire.Sanitize(row.Transport, 40))
		for _, o := range outcomeOrder {
			fmt.Fprintf(b, "  %8d", row.Counts[o])
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}
