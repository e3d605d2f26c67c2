package spec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// FuzzLoadStoryboard feeds arbitrary bytes to Parse and lints what
// decodes: nothing panics, every error names the file, every finding names
// the file and a line.
func FuzzLoadStoryboard(f *testing.F) {
	for _, pattern := range []string{"testdata/*.yaml", "testdata/bad/*.yaml", "testdata/lint/*.yaml", "testdata/release/*/*.yaml", "testdata/release/*/*/*.yaml", "testdata/release/*/*/*/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("a: &a [*a, *a]\nphases: *a\n"))
	f.Add([]byte("phases:\n  - steps:\n      - validations: [{check: array_length, value: -1, min: 2, max: 1}]\n"))
	const name = "fuzz/case.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		sb, findings, err := spec.Parse(name, data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), name+": ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			if sb != nil || findings != nil {
				t.Fatalf("Parse returned a storyboard with error %v", err)
			}
			return
		}
		rel := &spec.Release{Storyboards: []*spec.Storyboard{sb}, Findings: findings, CheckKinds: []string{"field_present"}}
		for _, fd := range spec.Lint(rel) {
			if fd.File != name || fd.Rule == "" || fd.Line <= 0 {
				t.Fatalf("finding without a file, rule or line: %s", fd)
			}
		}
	})
}
