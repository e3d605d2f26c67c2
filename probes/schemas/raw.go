package schemas

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/release"
)

// What a generator walking the schemas needs beyond validating bodies
// (probes/fuzz): each schema file's decoded JSON under the URL its $refs
// resolve against, a validator for any schema location, and each task's
// request schema and its mutating flag.

// Location returns the absolute URL of the release's schema file at rel
// ("media-buy/get-products-request.json"): the URL the file's relative
// $refs resolve against, and what Document and Check take (with a
// JSON-pointer fragment for a subschema). The URL is a name, never fetched.
func (s *Set) Location(rel string) string { return base + "/schemas/" + s.release + "/" + rel }

// Document returns the decoded JSON of the schema file at an absolute URL
// (its fragment ignored): objects as map[string]any, numbers as
// json.Number. It is cached and shared: callers must not modify it.
func (s *Set) Document(url string) (any, error) {
	rel, err := s.relOf(url)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	doc, ok := s.docs[rel]
	s.mu.Unlock()
	if ok {
		return doc, nil
	}
	doc, err = loader{s}.Load(url)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.docs[rel] = doc
	s.mu.Unlock()
	return doc, nil
}

// Checker compiles the schema at an absolute location (a URL from Location
// or a $ref resolved against one, with an optional JSON-pointer fragment)
// and returns a function reporting whether a decoded value (as
// encoding/json decodes with UseNumber: map[string]any, []any, string,
// json.Number, bool, nil) is valid against it. Safe for concurrent use.
func (s *Set) Checker(loc string) (func(v any) bool, error) {
	sch, err := s.compile(loc)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", strings.TrimPrefix(loc, base), err)
	}
	return func(v any) bool { return sch.Validate(v) == nil }, nil
}

// Check validates a decoded value against the schema at an absolute
// location, as Checker does, and lists where it breaks it.
func (s *Set) Check(loc string, v any) ([]Violation, error) {
	sch, err := s.compile(loc)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", strings.TrimPrefix(loc, base), err)
	}
	return violations(sch.Validate(v))
}

// RequestSchema returns the path of a task's request schema, or "": the
// manifest's request_schema where the release has a manifest naming the
// task, otherwise the file named after the task
// (get_products → media-buy/get-products-request.json).
func (s *Set) RequestSchema(task string) string {
	if t, ok := s.tools.Tools[task]; ok && release.SchemaPath(t.RequestSchema) != "" {
		return release.SchemaPath(t.RequestSchema)
	}
	return s.files[strings.ReplaceAll(task, "_", "-")+"-request.json"]
}

// Mutating reports the manifest's mutating flag for a task, and whether the
// manifest lists the task at all (a release without a manifest lists none).
func (s *Set) Mutating(task string) (mutating, listed bool) {
	t, ok := s.tools.Tools[task]
	return t.Mutating, ok
}

// Files returns the path of every schema file of the release, sorted.
func (s *Set) Files() []string {
	var out []string
	_ = fs.WalkDir(s.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}
