package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// runMerge builds the index (index.json, index.html) across report folders
// written anywhere — by `run --out`, a CI matrix, a Kubernetes Indexed Job —
// into --out. Its exit code is the same as a --targets run's.
func runMerge(args []string, stdio Stdio) error {
	fs := newFlagSet("merge", "merge [--out DIR] REPORT-DIR…", stdio.Err)
	out := fs.String("out", ".", "the `DIR` for index.html and index.json")
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("name at least one report folder (each holding a %s)", FileResults)
	}
	if fs.NArg() > MaxTargets {
		return usagef("%d folders, at most %d", fs.NArg(), MaxTargets)
	}
	var sources []indexSource
	used := map[string]int{}
	for _, dir := range fs.Args() {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("%s is not a folder", wire.Sanitize(dir, 200))
		}
		name := filepath.Base(filepath.Clean(dir))
		if used[name]++; used[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, used[name])
		}
		sources = append(sources, indexSource{name: name, dir: dir, code: -1})
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return &UsageError{Msg: fmt.Sprintf("--out %s: %v", *out, err)}
	}
	idx := buildIndex(*out, sources)
	if err := writeIndex(*out, idx, nil); err != nil {
		return err
	}
	writeIndexText(stdio.Out, idx)
	fmt.Fprintf(stdio.Out, "index: %s\n", wire.Sanitize(filepath.Join(*out, FileIndexHTML)+" "+filepath.Join(*out, FileIndexJSON), 1000))
	if code := idx.exit(); code != ExitOK {
		return &codeError{code: code}
	}
	return nil
}
