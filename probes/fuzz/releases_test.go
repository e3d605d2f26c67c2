package fuzz

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
)

var releases = []string{"3.1.19", "3.2.0-beta.5"}

// loadRelease opens a release from ../shared, or skips.
func loadRelease(t testing.TB, release string) (*schemas.Set, string) {
	t.Helper()
	dir := shared.File(t, filepath.Join("spec", "schemas", release))
	set, err := schemas.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return set, dir
}

// requestSchemas lists every *-request.json of a release folder.
func requestSchemas(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "-request.json") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// perSchema is how many values the release test generates per request
// schema (the fuzz target and the benchmark go further).
const perSchema = 40

// TestEveryRequestSchemaOfBothReleasesGeneratesOnlyValidValues generates
// values for every request schema of 3.1.19 and 3.2.0-beta.5 and validates
// each, as JSON bytes, with probes/schemas: none may be invalid, and a
// schema the generator cannot serve must say where, with a typed error.
func TestEveryRequestSchemaOfBothReleasesGeneratesOnlyValidValues(t *testing.T) {
	for _, release := range releases {
		t.Run(release, func(t *testing.T) {
			set, dir := loadRelease(t, release)
			f := New(set)
			for _, rel := range requestSchemas(t, dir) {
				t.Run(strings.TrimSuffix(rel, "-request.json"), func(t *testing.T) {
					task, err := f.Schema(rel)
					if err != nil {
						t.Fatal(err)
					}
					failed := 0
					for i := uint64(0); i < perSchema; i++ {
						v, err := task.Generate(Options{Seed: 1}, i)
						if err != nil {
							var ge *Error
							if !errors.As(err, &ge) {
								t.Fatalf("value %d: an untyped error: %v", i, err)
							}
							failed++
							if failed <= 3 {
								t.Errorf("value %d: %v", i, err)
							}
							continue
						}
						b, err := Marshal(v)
						if err != nil {
							t.Fatal(err)
						}
						vs, err := set.Validate(rel, b)
						if err != nil {
							t.Fatal(err)
						}
						if len(vs) > 0 {
							t.Fatalf("value %d is invalid: %+v\n%s", i, vs, b)
						}
						if !json.Valid(b) {
							t.Fatalf("value %d is not JSON", i)
						}
					}
				})
			}
		})
	}
}
