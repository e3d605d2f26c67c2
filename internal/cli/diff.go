package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
)

// runDiff compares two results.json files rule by rule: regressions,
// fixes, unchanged failures, other changes, new and removed rules. Exit 1
// on any regression (a new rule that fails included), 0 otherwise, 2 when a
// file cannot be read.
func runDiff(args []string, stdio Stdio) error {
	fs := newFlagSet("diff", "diff OLD NEW (report folders, or their results.json files)", stdio.Err)
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return &UsageError{Msg: "want two report folders or results.json files: OLD NEW; see `adcp-conform diff --help`", ShowUsage: true}
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

// readRun reads a results.json file, or the one in a report folder; a
// missing file, or one that is not a run's results (evidence.json, any
// other JSON), is a usage error.
func readRun(path string) (*report.Run, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, FileResults)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("%v", err)
	}
	var r report.Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, usagef("%s: not a results.json: %v", path, unwrapSyntax(err))
	}
	if r.Tool == "" || r.Verdict == "" {
		return nil, usagef("%s: not a results.json (no tool and verdict)", path)
	}
	return &r, nil
}

// unwrapSyntax keeps a JSON error short: the offset, not Go type names.
func unwrapSyntax(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %s has the wrong type", te.Field)
	}
	return err.Error()
}
