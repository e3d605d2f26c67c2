package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

// flagsPagePreamble is the hand-written head of docs/flags.md; the rest of
// the page is every command's --help.
const flagsPagePreamble = `# Flags

<!-- Generated from every command's --help by TestTheFlagsPageIsGenerated
     (internal/cli/readme_test.go): edit the flags' help in the code, then run
     go test ./internal/cli -run TestTheFlagsPageIsGenerated -update -->

Every flag can also be set from an environment variable ` + "`ADCP_CONFORM_<FLAG>`" + ` (dashes become
underscores: ` + "`--label-filter`" + ` is ` + "`ADCP_CONFORM_LABEL_FILTER`" + `), named after each flag below. A flag on
the command line wins over the environment, which wins over the default. A boolean is set by ` + "`true`/`false`" + `
(or ` + "`1`/`0`" + `); a repeatable flag takes one value per line. A variable set empty is read as unset, except
for the flags naming a target (` + "`--mcp`, `--a2a`, `--targets`" + `), which refuse an empty value (exit 2): an unset CI
variable expanded into ` + "`--mcp \"$SELLER_URL\"`" + ` never makes a run test the bundled reference seller instead.
` + "`ADCP_CONFORM_OUT`" + ` is ` + "`run`" + `'s report folder only: the ` + "`--out`" + ` of ` + "`judge`, `keygen`, `merge` and `fuzz`" + ` is read from
` + "`ADCP_CONFORM_JUDGE_OUT`, `ADCP_CONFORM_KEYGEN_OUT`, `ADCP_CONFORM_MERGE_OUT` and `ADCP_CONFORM_FUZZ_OUT`" + `. In the GitHub Action, set
them in the step's ` + "`env:`" + `; what the Action's own inputs set is passed as a flag and wins.

A mistake in the command line is one line on stderr and exit 2, before anything is probed: an unknown
flag, a bad duration or boolean (naming the flag and the form it wants), a target given empty, an
` + "`--out`" + ` folder that cannot be written, a ` + "`--bearer-env`" + ` given the token instead of the name of the variable
holding it (the value is never repeated).

`

// TestTheFlagsPageIsGenerated keeps docs/flags.md what the commands say
// of themselves: the page is generated from each command's --help, so it
// cannot drift from the flags.
func TestTheFlagsPageIsGenerated(t *testing.T) {
	var page bytes.Buffer
	page.WriteString(flagsPagePreamble)
	var top bytes.Buffer
	Main([]string{"--help"}, Stdio{Out: &top, Err: &top})
	fmt.Fprintf(&page, "## adcp-conform\n\n```\n%s```\n", top.String())
	for _, name := range commandNames() {
		var help bytes.Buffer
		if code := Main([]string{name, "--help"}, Stdio{Out: &help, Err: &help}); code != ExitOK {
			t.Fatalf("%s --help: exit %d\n%s", name, code, help.String())
		}
		fmt.Fprintf(&page, "\n## adcp-conform %s\n\n%s.\n\n```\n%s```\n", name, commands[name].summary, help.String())
	}
	golden.Check(t, filepath.Join("..", "..", "docs", "flags.md"), page.Bytes())
}

// TestRunHelpPlacesEveryFlagInAGroup keeps run --help without an "Other
// flags" group: a flag added to run is placed where a user looks for it.
func TestRunHelpPlacesEveryFlagInAGroup(t *testing.T) {
	var help bytes.Buffer
	Main([]string{"run", "--help"}, Stdio{Out: &help, Err: &help})
	if bytes.Contains(help.Bytes(), []byte("\nOther flags:\n")) {
		t.Errorf("run --help has flags in no group (add them to runHelp in help.go):\n%s", help.String())
	}
	if !bytes.Contains(help.Bytes(), []byte("\nExamples:\n")) {
		t.Errorf("run --help has no examples:\n%s", help.String())
	}
}
