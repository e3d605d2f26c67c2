package conform

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/material"
)

// TestTheReferenceRunServesTheReleaseOfItsFolders: the reference seller
// serves the 3.2 beta when --storyboards (or, without them, --schemas)
// is the 3.2.0-beta.5 release, and its default (3.1) otherwise, so a run
// with no flags or the 3.1.19 folders is unchanged.
func TestTheReferenceRunServesTheReleaseOfItsFolders(t *testing.T) {
	root := t.TempDir()
	dir := func(name string) string {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sb32, sb31, sc32, sc31 := dir("sb/3.2.0-beta.5"), dir("sb/3.1.19"), dir("sc/3.2.0-beta.5"), dir("sc/3.1.19")
	for _, tc := range []struct {
		storyboards, schemas, want, from string
	}{
		{"", "", "", ""},
		{sb31, sc31, "", ""},
		{sb32, sc32, seller.Release32, "--storyboards"},
		{sb32, "", seller.Release32, "--storyboards"},
		{sb31, sc32, "", ""}, // the storyboards say 3.1
		{"", sc32, seller.Release32, "--schemas"},
		{material.Off, sc32, seller.Release32, "--schemas"},
		{"https://example.invalid/protocol/3.2.0-beta.5.tgz", "", seller.Release32, "--storyboards"},
		{"", "https://example.invalid/schemas/3.2.0-beta.5/", seller.Release32, "--schemas"},
		{"", material.Off, "", ""},
		{dir("sb/3.2.0-beta.4"), "", "", ""}, // a beta the seller does not speak
	} {
		got, from := referenceRelease(Config{Storyboards: tc.storyboards, Schemas: tc.schemas})
		if got != tc.want || from != tc.from {
			t.Errorf("--storyboards %q --schemas %q: %q from %q, want %q from %q", tc.storyboards, tc.schemas, got, from, tc.want, tc.from)
		}
	}
	// --release counts when neither folder names a release.
	for _, tc := range []struct {
		release, storyboards, want, from string
	}{
		{"3.2.0-beta.5", "", seller.Release32, "--release"},
		{"3.2-beta.5", "", seller.Release32, "--release"},
		{"3.2", "", seller.Release32, "--release"},
		{"3.1.19", "", "", ""},
		{"3.1", "", "", ""},
		{"3.2.0-beta.4", "", "", ""},
		{"3.2", sb31, "", ""}, // the storyboards win
	} {
		got, from := referenceRelease(Config{Release: tc.release, Storyboards: tc.storyboards})
		if got != tc.want || from != tc.from {
			t.Errorf("--release %q --storyboards %q: %q from %q, want %q from %q", tc.release, tc.storyboards, got, from, tc.want, tc.from)
		}
	}
}
