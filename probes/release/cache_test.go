package release

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFillIsCachedOnlyWhenComplete(t *testing.T) {
	root := t.TempDir()
	boom := errors.New("boom")
	if _, err := Fill(root, "3.1.19", []byte("u\n"), func(string) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("a failed fill: %v", err)
	}
	if Cached(root, "3.1.19") != "" {
		t.Fatal("a failed fill is cached")
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("a failed fill left %v", entries)
	}
	dir, err := Fill(root, "3.1.19", []byte("u\n"), func(tmp string) error {
		return os.WriteFile(filepath.Join(tmp, "index.json"), []byte("{}"), 0o644)
	})
	if err != nil || Cached(root, "3.1.19") != dir || dir != filepath.Join(root, "3.1.19") {
		t.Fatalf("dir %q err %v cached %q", dir, err, Cached(root, "3.1.19"))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, Mark)); string(b) != "u\n" {
		t.Fatalf("mark %q", b)
	}
}

func TestReleaseNamesNeverClimbOut(t *testing.T) {
	for name, ok := range map[string]bool{"3.1.19": true, "3.2.0-beta.5": true, "..": false, "a/b": false, "": false, ".x": false, "3..1": false} {
		if ValidRelease(name) != ok {
			t.Errorf("ValidRelease(%q) = %v", name, !ok)
		}
		if !ok && Cached(t.TempDir(), name) != "" {
			t.Errorf("Cached(%q) is a folder", name)
		}
	}
}

// List names the complete releases only: an interrupted fetch, a stray
// file and a folder without the mark are none.
func TestListNamesCompleteReleasesOnly(t *testing.T) {
	root := t.TempDir()
	if _, err := Fill(root, "3.1.19", []byte("u\n"), func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".3.2.0.fetching-1", "3.0.0"} {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "3.3.0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := List(root); len(got) != 1 || got[0] != "3.1.19" {
		t.Errorf("List = %v", got)
	}
	if got := List(filepath.Join(root, "absent")); got != nil {
		t.Errorf("List of no folder = %v", got)
	}
}
