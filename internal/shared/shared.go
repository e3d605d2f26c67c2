// Package shared locates the public AdCP spec material (../shared beside the
// repository) for tests. The material is never committed into this
// repository: tests read it where it exists and skip with a clear message
// where it does not.
//
//	func TestVectors(t *testing.T) {
//		path := shared.File(t, "spec/vectors/mcp-response-extraction.json")
//		...
//	}
package shared

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar overrides where the shared folder is looked for.
const EnvVar = "ADCP_CONFORM_SHARED"

// Root returns the shared folder: $ADCP_CONFORM_SHARED, or the folder named
// "shared" beside the module root (the directory holding go.mod). It returns
// "" when neither exists.
func Root() string {
	if dir := os.Getenv(EnvVar); dir != "" {
		if isDir(dir) {
			return dir
		}
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			candidate := filepath.Join(filepath.Dir(dir), "shared")
			if isDir(filepath.Join(candidate, "spec")) {
				return candidate
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// File returns the path of rel inside the shared folder, or skips the test
// with a message naming what is missing.
func File(t testing.TB, rel string) string {
	t.Helper()
	root := Root()
	if root == "" {
		t.Skipf("the shared spec folder is absent (looked for ../shared beside the module root, or $%s); %s is needed", EnvVar, rel)
	}
	path := filepath.Join(root, rel)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is absent from the shared folder %s", rel, root)
	}
	return path
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// Mirror is a release mirror folder (as --release-mirror takes one)
// holding only the given releases of the shared spec: compliance/<release>
// and schemas/<release>, linked. The test skips when one is absent.
func Mirror(t testing.TB, releases ...string) string {
	t.Helper()
	spec, dir := File(t, "spec"), t.TempDir()
	for _, r := range releases {
		for _, kind := range []string{"compliance", "schemas"} {
			File(t, filepath.Join("spec", kind, r))
			if err := os.MkdirAll(filepath.Join(dir, kind), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(spec, kind, r), filepath.Join(dir, kind, r)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}
