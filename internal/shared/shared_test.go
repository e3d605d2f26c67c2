package shared

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootHonoursTheEnvironmentVariable(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	if got := Root(); got != dir {
		t.Fatalf("Root() = %q, want %q", got, dir)
	}
	t.Setenv(EnvVar, filepath.Join(dir, "missing"))
	if got := Root(); got != "" {
		t.Fatalf("Root() with a missing folder = %q, want \"\"", got)
	}
}

func TestFileSkipsWhenTheFileIsAbsent(t *testing.T) {
	t.Setenv(EnvVar, t.TempDir())
	ran := false
	t.Run("inner", func(t *testing.T) {
		defer func() { ran = true }()
		File(t, "spec/vectors/none.json")
		t.Error("File returned for an absent file instead of skipping")
	})
	if !ran {
		t.Fatal("inner test did not run")
	}
}

func TestFileReturnsAPresentFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "spec"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "spec", "x.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, dir)
	if got := File(t, "spec/x.json"); got != filepath.Join(dir, "spec", "x.json") {
		t.Fatalf("File = %q", got)
	}
}
