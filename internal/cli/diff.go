package cli

import (
	"encoding/json"
	"os"

	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
)

// runDiff compares two results.json files rule by rule: regressions,
// fixes, unchanged failures, other changes, new and removed rules. Exit 1
// on any regression (a new rule that fails included), 0 otherwise, 2 when a
// file cannot be read.
func runDiff(args []string, stdio Stdio) error {
	fs := newFlagSet("diff", "diff OLD/results.json NEW/results.json", stdio.Err)
	if err := parseFlags(fs, args, stdio.getenv); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return &UsageError{Msg: "want two results.json files: OLD NEW", ShowUsage: true}
	}
	old, err := readRun(fs.Arg(0))
	if err != nil {
		return err
	}
	cur, err := readRun(fs.Arg(1))
	if err != nil {
		return err
	}
	d := certify.Diff(old, cur)
	if err := certify.WriteDiff(stdio.Out, old, cur, d); err != nil {
		return err
	}
	if d.Regressed() {
		return &codeError{code: ExitNonConformant}
	}
	return nil
}

// readRun reads a results.json file; a missing or invalid file is a usage
// error.
func readRun(path string) (*report.Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("%v", err)
	}
	var r report.Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, usagef("%s: not a results.json: %v", path, err)
	}
	return &r, nil
}
