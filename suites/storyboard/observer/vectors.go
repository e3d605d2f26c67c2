package observer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The substitution fixture (test-vectors/catalog-macro-substitution.json):
// each vector's value and the encoding it must take at a macro position.

// MacroVector is one vector of the substitution fixture, with Encoded the
// value as it must appear at a macro position.
type MacroVector struct {
	Name     string `json:"name"`
	Macro    string `json:"macro"`
	Value    string `json:"value"`
	Template string `json:"template"`
	Expected string `json:"expected"`
	Encoded  string `json:"-"`
}

// LoadMacroVectors reads the release's substitution fixture
// (MacroVectorFile under dir), by vector name.
func LoadMacroVectors(dir string) (map[string]MacroVector, error) {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(MacroVectorFile)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFixtureBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFixtureBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", MacroVectorFile, maxFixtureBytes)
	}
	return parseMacroVectors(b)
}

// parseMacroVectors decodes the fixture's vectors and derives each one's
// Encoded value: the expected URL is the template with every occurrence
// of the macro replaced by it.
func parseMacroVectors(b []byte) (map[string]MacroVector, error) {
	var doc struct {
		Vectors []MacroVector `json:"vectors"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", MacroVectorFile, err)
	}
	out := map[string]MacroVector{}
	var errs []error
	for _, v := range doc.Vectors {
		enc, ok := encodedPart(v.Template, v.Macro, v.Expected)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: vector %q: expected is not its template with %s replaced", MacroVectorFile, v.Name, v.Macro))
			continue
		}
		v.Encoded = enc
		out[v.Name] = v
	}
	return out, errors.Join(errs...)
}

// encodedPart solves template[macro := e] == expected for e.
func encodedPart(template, macro, expected string) (string, bool) {
	k := strings.Count(template, macro)
	if macro == "" || k == 0 {
		return "", false
	}
	fixed := len(template) - k*len(macro)
	if len(expected) < fixed || (len(expected)-fixed)%k != 0 {
		return "", false
	}
	n := (len(expected) - fixed) / k
	at := strings.Index(template, macro)
	e := expected[at : at+n]
	return e, strings.ReplaceAll(template, macro, e) == expected
}
