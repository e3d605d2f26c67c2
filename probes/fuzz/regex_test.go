package fuzz

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// releasePatterns collects every pattern and patternProperties name of a
// release's schema files.
func releasePatterns(t *testing.T, dir string) []string {
	t.Helper()
	set := map[string]bool{}
	var walk func(v any, parent string)
	walk = func(v any, parent string) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if k == "pattern" && parent != "properties" {
					if s, ok := c.(string); ok {
						set[s] = true
					}
				}
				if k == "patternProperties" && parent != "properties" {
					if m, ok := c.(map[string]any); ok {
						for p := range m {
							set[p] = true
						}
					}
				}
				if k != "examples" && k != "enum" && k != "const" && k != "default" {
					walk(c, k)
				}
			}
		case []any:
			for _, c := range x {
				walk(c, "")
			}
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var doc any
		if json.Unmarshal(b, &doc) == nil {
			walk(doc, "")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestEveryPatternOfBothReleasesHasAGeneratorThatMatches: each ECMA
// pattern the releases use compiles for matching, has an RE2 tree to
// generate from, and yields strings the ECMA matcher accepts.
func TestEveryPatternOfBothReleasesHasAGeneratorThatMatches(t *testing.T) {
	for _, release := range releases {
		_, dir := loadRelease(t, release)
		pats := releasePatterns(t, dir)
		if len(pats) < 20 {
			t.Fatalf("%s: only %d patterns found", release, len(pats))
		}
		for _, src := range pats {
			p, err := compilePattern(src)
			if err != nil {
				t.Errorf("%s: %q does not compile as ECMA: %v", release, src, err)
				continue
			}
			if p.ast == nil {
				t.Errorf("%s: %q has no RE2 tree to generate from: %v", release, src, p.astErr)
				continue
			}
			st := &state{r: newRNG(3), opts: Options{}.withDefaults()}
			hits := 0
			for try := 0; try < 50; try++ {
				if s, ok := st.patternString(p, 0, -1, try); ok && p.match(s) {
					hits++
				}
			}
			if hits < 25 {
				t.Errorf("%s: %q: %d of 50 generated strings match", release, src, hits)
			}
		}
		t.Logf("%s: %d patterns, each generated", release, len(pats))
	}
}

func TestECMASyntaxIsRewrittenForRE2(t *testing.T) {
	for in, want := range map[string]string{
		`^[^\u0000-\u001F]+$`: `^[^\x{0000}-\x{001F}]+$`,
		`^P(?!$)(\d+Y)?$`:     `^P(\d+Y)?$`,
		`a(?=b(c))d`:          `ad`,
		`^https:\/\/`:         `^https://`,
		`[^]`:                 `[\x{0}-\x{10FFFF}]`,
		`\u{1F600}`:           `\x{1F600}`,
		`x\0`:                 `x\x{0}`,
	} {
		if got, err := ecmaToRE2(in); err != nil || got != want {
			t.Errorf("ecmaToRE2(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ecmaToRE2(`(?=a`); err == nil {
		t.Error("an unbalanced lookahead was accepted")
	}
}
