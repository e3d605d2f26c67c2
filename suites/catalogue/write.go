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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	family := ""
	for _, r := range rules {
		if r.Family != family {
			if family != "" {
				fmt.Fprintln(tw)
			}
			family = r.Family
			fmt.Fprintf(tw, "%s — %s\n", r.Family, FamilyTitle(r.Family))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", r.ID, strings.ToUpper(string(r.Level)), transports(r), r.Statement)
	}
	return tw.Flush()
}

func transports(r Rule) string {
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
