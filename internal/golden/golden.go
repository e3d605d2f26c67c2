// Package golden compares a test's output with a golden file, rewriting the
// file instead when the test runs with -update.
//
//	golden.Check(t, "testdata/rules.txt.golden", buf.Bytes())
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Check fails t when got differs from the golden file at path; with -update
// it writes got to path first.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("output drifted from %s (review, then run with -update); -want +got:\n%s", path, Diff(string(want), string(got)))
	}
}

// Diff returns a line diff of want and got: "-" lines only in want, "+"
// lines only in got, each change with up to two lines of context, and
// "…" where unchanged lines are left out.
func Diff(want, got string) string {
	a, b := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	ops := lineOps(a, b)
	var out strings.Builder
	const context = 2
	skipped := false
	for i, op := range ops {
		if op.kind == ' ' {
			near := false
			for j := max(0, i-context); j <= min(len(ops)-1, i+context); j++ {
				near = near || ops[j].kind != ' '
			}
			if !near {
				if !skipped {
					out.WriteString("  …\n")
				}
				skipped = true
				continue
			}
		}
		skipped = false
		out.WriteString(string(op.kind) + " " + strings.TrimSuffix(op.line, "\n") + "\n")
	}
	return out.String()
}

type lineOp struct {
	kind byte // ' ', '-' or '+'
	line string
}

// lineOps is the edit script from a to b: common prefix and suffix kept,
// the middle by longest common subsequence (or replaced whole when it is
// too large to compare line by line).
func lineOps(a, b []string) []lineOp {
	var head, tail []lineOp
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		head = append(head, lineOp{' ', a[0]})
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		tail = append([]lineOp{{' ', a[len(a)-1]}}, tail...)
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	var mid []lineOp
	if len(a)*len(b) > 4_000_000 {
		for _, l := range a {
			mid = append(mid, lineOp{'-', l})
		}
		for _, l := range b {
			mid = append(mid, lineOp{'+', l})
		}
		return append(append(head, mid...), tail...)
	}
	// lcs[i][j] is the length of the LCS of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			mid = append(mid, lineOp{' ', a[i]})
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			mid = append(mid, lineOp{'+', b[j]})
			j++
		default:
			mid = append(mid, lineOp{'-', a[i]})
			i++
		}
	}
	return append(append(head, mid...), tail...)
}
