package catalogue

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the rules as an aligned table for a terminal, grouped
// by family: `adcp-conform rules`.
func WriteTable(w io.Writer, rules []Rule) error {
	return WriteTableWith(w, rules, func(s string) string { return s })
}

// WriteTableWith writes the table with every title and statement passed
// through text first (the CLI drops their Markdown for a terminal).
func WriteTableWith(w io.Writer, rules []Rule, text func(string) string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	family := ""
	for _, r := range rules {
		if r.Family != family {
			if family != "" {
				fmt.Fprintln(tw)
			}
			family = r.Family
			fmt.Fprintf(tw, "%s — %s\n", r.Family, text(FamilyTitle(r.Family)))
		}
		statement := text(r.Statement)
		if r.Project {
			statement += " " + ProjectNote
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", r.ID, strings.ToUpper(string(r.Level)), Transports(r), statement)
	}
	return tw.Flush()
}

// ProjectNote marks, in a table, a rule the project defines (Rule.Project):
// it is not in the spec's rule table, and its owners did not write it.
const ProjectNote = "[harness-defined: not in the spec's rule table]"

// Transports is how a table names the transports of r: mcp, a2a or both.
func Transports(r Rule) string {
	if r.Covers(MCP) && r.Covers(A2A) {
		return "both"
	}
	return string(r.Transports[0])
}

// WriteJSON writes the rules and families as JSON: `adcp-conform rules
// --json`.
func WriteJSON(w io.Writer, rules []Rule) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Families []Family `json:"families"`
		Rules    []Rule   `json:"rules"`
	}{Families(), rules})
}
