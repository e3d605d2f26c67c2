package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func runRules(args []string, stdio Stdio) error {
	fs := newFlagSet("rules", "rules [--json | --markdown]", stdio.Err)
	asJSON := fs.Bool("json", false, "print the catalogue as JSON")
	asMarkdown := fs.Bool("markdown", false, "print the catalogue as Markdown tables, one per family")
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case *asJSON && *asMarkdown:
		return usagef("--json and --markdown: give one")
	case *asJSON:
		return catalogue.WriteJSON(stdio.Out, catalogue.All())
	case *asMarkdown:
		return writeRulesMarkdown(stdio.Out, catalogue.All())
	}
	return writeRulesText(stdio.Out, catalogue.All())
}

// plainText drops the Markdown of a rule statement for a terminal: code
// spans and emphasis marks.
var plainText = strings.NewReplacer("**", "", "`", "")

// writeRulesText prints the catalogue as plain text: one line per rule,
// families in order, the Markdown of the statements dropped.
func writeRulesText(w io.Writer, rules []catalogue.Rule) error {
	return catalogue.WriteTableWith(w, rules, plainText.Replace)
}

// writeRulesMarkdown prints the catalogue as Markdown: a heading and a
// table per family, statements as written.
func writeRulesMarkdown(w io.Writer, rules []catalogue.Rule) error {
	family := ""
	for _, r := range rules {
		if r.Family != family {
			if family != "" {
				fmt.Fprintln(w)
			}
			family = r.Family
			fmt.Fprintf(w, "### %s — %s\n\n| Rule | Level | Transports | Statement |\n|---|---|---|---|\n", r.Family, catalogue.FamilyTitle(r.Family))
		}
		_, err := fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.ID, strings.ToUpper(string(r.Level)), catalogue.Transports(r), strings.ReplaceAll(r.Statement, "|", `\|`))
		if err != nil {
			return err
		}
	}
	return nil
}
