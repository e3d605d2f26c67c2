package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

// runMerge builds the index (index.json, index.html) across report folders
// written anywhere — by `run --out`, the shards of a --targets run, a CI
// matrix, a Kubernetes Indexed Job — into --out. With --targets FILE the
// folders are the file's targets' under one root (the argument, default
// --out), in the file's order: the index a --targets run of the whole file
// writes. Its exit code is the same as a --targets run's.
func runMerge(args []string, stdio Stdio) error {
	fs := newFlagSet("merge", "merge [--out DIR] REPORT-DIR… | merge --targets FILE [--out DIR] [ROOT]", stdio.Err)
	out := fs.String("out", ".", "the `DIR` for index.html and index.json")
	targetsFile := fs.String("targets", "", "the targets `FILE` of the run(s) to index: each target's folder is ROOT/<its out>, ROOT being the one argument (default: --out)")
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	var folders []conform.IndexFolder
	if *targetsFile != "" {
		if fs.NArg() > 1 {
			return usagef("with --targets, name at most one folder: the root holding the targets' folders (default: --out)")
		}
		root := *out
		if fs.NArg() == 1 {
			root = fs.Arg(0)
		}
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			return usagef("%s is not a folder", wire.Sanitize(root, 200))
		}
		targets, err := LoadTargets(*targetsFile)
		if err != nil {
			return usagef("--targets: %v", err)
		}
		for _, t := range targets {
			folders = append(folders, conform.IndexFolder{Name: t.Name, Dir: filepath.Join(root, t.Out)})
		}
	} else {
		if fs.NArg() == 0 {
			return usagef("name at least one report folder (each holding a %s), or give --targets", FileResults)
		}
		if fs.NArg() > MaxTargets {
			return usagef("%d folders, at most %d", fs.NArg(), MaxTargets)
		}
		used := map[string]int{}
		for _, dir := range fs.Args() {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usagef("%s is not a folder", wire.Sanitize(dir, 200))
			}
			name := filepath.Base(filepath.Clean(dir))
			if used[name]++; used[name] > 1 {
				name = fmt.Sprintf("%s-%d", name, used[name])
			}
			folders = append(folders, conform.IndexFolder{Name: name, Dir: dir})
		}
	}
	sum, err := conform.Merge(*out, folders, conform.MergeOptions{Summary: stdio.Out, Version: currentVersion().Version})
	if err != nil {
		return runError(err)
	}
	fmt.Fprintf(stdio.Out, "index: %s\n", wire.Sanitize(sum.HTML+" "+sum.JSON, 1000))
	if sum.ExitCode != 0 {
		return &codeError{code: ExitCode(sum.ExitCode)}
	}
	return nil
}
