package storyboard

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPackagesImportOnlyTheFloorsBelowThem holds the storyboard packages'
// layering: spec at the bottom imports none of them; expr, observer and
// oauth sit on spec; check on spec and oauth (the oauth_metadata_graph
// kind reads its evaluation); the engine on all of them. A package never
// imports one above it, so no cycle can form.
func TestPackagesImportOnlyTheFloorsBelowThem(t *testing.T) {
	const root = "github.com/adcp-conform/adcp-conform/suites/storyboard"
	below := map[string][]string{
		"spec":     nil,
		"expr":     {"spec"},
		"observer": {"spec"},
		"oauth":    {"spec"},
		"check":    {"spec", "oauth"},
		".":        {"spec", "expr", "observer", "oauth", "check"},
	}
	for dir, allowed := range below {
		pkg, err := build.ImportDir(filepath.Join(".", dir), 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			rest, ok := strings.CutPrefix(imp, root)
			if !ok {
				continue
			}
			name := strings.TrimPrefix(rest, "/")
			if name == "" {
				name = "."
			}
			if !slices.Contains(allowed, name) {
				t.Errorf("%s imports %s, which is not below it (it may import %v)", dir, imp, allowed)
			}
		}
	}
}
