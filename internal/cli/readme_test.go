package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestTheReadmeListsEveryRunVariable keeps the README's ADCP_CONFORM_*
// table in step with the flags of `run`.
func TestTheReadmeListsEveryRunVariable(t *testing.T) {
	var help bytes.Buffer
	Main([]string{"run", "--help"}, Stdio{Out: &help, Err: &help})
	env := regexp.MustCompile(`\(env (ADCP_CONFORM_[A-Z0-9_]+)\)`)
	var flags []string
	for _, m := range env.FindAllStringSubmatch(help.String(), -1) {
		flags = append(flags, m[1])
	}
	if len(flags) < 20 {
		t.Fatalf("only %d variables in run --help:\n%s", len(flags), help.String())
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(ADCP_CONFORM_[A-Z0-9_]+)` \\| `--")
	var listed []string
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		listed = append(listed, m[1])
	}
	for _, f := range flags {
		if !slices.Contains(listed, f) {
			t.Errorf("the README's table lacks %s", f)
		}
	}
	for _, l := range listed {
		if !slices.Contains(flags, l) {
			t.Errorf("the README's table lists %s, which run does not read", l)
		}
	}
}
