package diagnose

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// marks are the text output's marks.
var marks = map[Mark]string{OK: "ok ", Bad: "BAD", Info: "   "}

// WriteText writes the report for a terminal: each step with what it read
// and what was expected, then the causes, the most likely first. Every
// string in the report is already cleaned (no control characters, secrets
// redacted).
func (r *Report) WriteText(out io.Writer) error {
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "adcp-conform diagnose: %s (%s), credential: %s\n", r.Endpoint, strings.ToUpper(r.Transport), r.Credential)
	fmt.Fprintf(w, "\nOAuth handshake\n")
	writeSteps(w, r.Handshake)
	if r.Unreachable != "" {
		fmt.Fprintf(w, "\nThe seller could not be reached: %s\n", r.Unreachable)
		return w.Flush()
	}
	fmt.Fprintf(w, "\nbrand.json → JWKS\n")
	writeSteps(w, r.Keys)
	fmt.Fprintf(w, "\nCauses, the most likely first\n")
	if len(r.Causes) == 0 {
		fmt.Fprintf(w, "  none: the evidence shows nothing wrong\n")
	}
	for i, h := range r.Causes {
		fmt.Fprintf(w, "  %d. [%s] %s (%s)\n", i+1, h.Verdict, h.Title, h.ID)
		for _, e := range h.Evidence {
			fmt.Fprintf(w, "       seen: %s\n", e)
		}
		if h.Fix != "" {
			fmt.Fprintf(w, "       fix:  %s\n", h.Fix)
		}
	}
	if len(r.RuledOut) > 0 {
		fmt.Fprintf(w, "\nRuled out\n")
		for _, h := range r.RuledOut {
			fmt.Fprintf(w, "  %s: %s\n", h.ID, strings.Join(h.Evidence, "; "))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "\nnote: %s\n", n)
	}
	return w.Flush()
}

func writeSteps(w io.Writer, steps []Step) {
	for i, s := range steps {
		fmt.Fprintf(w, "  %d. %s\n", i+1, s.Title)
		for _, l := range s.Lines {
			fmt.Fprintf(w, "     %s %s: %s\n", marks[l.Mark], l.What, l.Read)
			if l.Expected != "" {
				fmt.Fprintf(w, "         expected: %s\n", l.Expected)
			}
		}
	}
}

// WriteJSON writes the report as one JSON document, for machines.
func (r *Report) WriteJSON(out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
