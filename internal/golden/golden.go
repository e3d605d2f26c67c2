// Package golden compares a test's output with a golden file, rewriting the
// file instead when the test runs with -update.
//
//	golden.Check(t, "testdata/rules.txt.golden", buf.Bytes())
package golden

import (
	"flag"
	"os"
	"path/filepath"
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
		t.Errorf("output drifted from %s (review, then run with -update):\n got:\n%s\nwant:\n%s", path, got, want)
	}
}
