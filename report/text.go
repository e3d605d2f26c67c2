package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// maxMessage bounds a seller-influenced message on a terminal line.
const maxMessage = 200

// WriteText writes a short summary for a terminal: the verdict, the counts,
// and one line per rule that did not pass. Every string that may come from
// the seller is stripped of control characters, escape sequences and bidi
// overrides, and cut.
func WriteText(w io.Writer, r *Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s — AdCP %s — %s\n", r.Tool, r.Version, r.AdcpRelease, wire.Sanitize(r.Target, maxMessage))
	var later, disabled []string
	for _, rule := range r.Rules {
		switch {
		case rule.Outcome == Passed:
			continue
		case rule.Outcome == Skipped && rule.Message == NotImplemented:
			later = append(later, rule.ID)
			continue
		case rule.Outcome == Disabled:
			disabled = append(disabled, rule.ID)
			continue
		}
		line := fmt.Sprintf("  %-8s %-9s %-6s %s", strings.ToUpper(string(rule.Outcome)), rule.ID, rule.Level,
			wire.Sanitize(rule.Message, maxMessage))
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
	fmt.Fprintf(&b, "%d rules: %d passed, %d failed, %d skipped, %d error, %d disabled\n",
		len(r.Rules), r.Counts[Passed], r.Counts[Failed], r.Counts[Skipped], r.Counts[Error], r.Counts[Disabled])
	fmt.Fprintf(&b, "verdict: %s\n", r.Verdict)
	_, err := io.WriteString(w, b.String())
	return err
}
