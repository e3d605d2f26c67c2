package cli

import (
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func runRules(args []string, stdio Stdio) error {
	fs := newFlagSet("rules", "rules [--json]", stdio.Err)
	asJSON := fs.Bool("json", false, "print the catalogue as JSON")
	if err := parseFlags(fs, args, stdio.getenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *asJSON {
		return catalogue.WriteJSON(stdio.Out, catalogue.All())
	}
	return catalogue.WriteTable(stdio.Out, catalogue.All())
}
