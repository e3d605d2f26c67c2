package expr

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// tokenStart finds the start of every runner token, independently of the
// scanner under test.
var tokenStart = regexp.MustCompile(`\$context\.|\$generate:|\$test_kit\.|\$agent_url|\{\{\s*(runner|prior_step)\.`)

// proseKeys hold human text: narratives quote tokens ("{{runner.webhook_url:...}}",
// "$context.<name>") without being substituted.
var proseKeys = map[string]bool{"narrative": true, "expected": true, "description": true, "title": true, "summary": true, "$comment": true, "rationale": true}

// tokenString is one string of a storyboard that holds a token.
type tokenString struct {
	file, key, value string
}

func collectTokenStrings(v any, file, key string, out *[]tokenString) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !proseKeys[k] {
				collectTokenStrings(e, file, k, out)
			}
		}
	case []any:
		for _, e := range x {
			collectTokenStrings(e, file, key, out)
		}
	case string:
		if tokenStart.MatchString(x) {
			*out = append(*out, tokenString{file, key, x})
		}
	}
}

// collectKeys gathers the string values of key anywhere in a document.
func collectKeys(v any, key string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == key {
				*out = append(*out, s)
			}
			collectKeys(e, key, out)
		}
	case []any:
		for _, e := range x {
			collectKeys(e, key, out)
		}
	}
}

// specCache keeps what the spec tests decode of a release folder: loading
// takes seconds, and three tests read the same folders.
var specCache = struct {
	sync.Mutex
	docs map[string]map[string]any
	rels map[string]*spec.Release
}{docs: map[string]map[string]any{}, rels: map[string]*spec.Release{}}

// loadRelease is storyboard.Load, cached.
func loadRelease(t *testing.T, dir string) *spec.Release {
	t.Helper()
	specCache.Lock()
	defer specCache.Unlock()
	if rel, ok := specCache.rels[dir]; ok {
		return rel
	}
	rel, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	specCache.rels[dir] = rel
	return rel
}

// releaseDocs decodes every storyboard YAML file of a release (test kits
// and the commented schema hold no substituted values), cached.
func releaseDocs(t *testing.T, dir string) map[string]any {
	t.Helper()
	specCache.Lock()
	defer specCache.Unlock()
	if docs, ok := specCache.docs[dir]; ok {
		return docs
	}
	docs := map[string]any{}
	defer func() { specCache.docs[dir] = docs }()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, "test-kits") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		docs[filepath.ToSlash(rel)] = spec.Normalize(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestSpecTokensResolve collects every substitution token of both releases
// (outside prose) and checks each parses, that tokenRefs finds exactly the
// tokens an independent scan finds, and that with every source populated
// Substitute leaves none behind.
func TestSpecTokensResolve(t *testing.T) {
	for _, release := range []string{"3.1.19", "3.2.0-beta.5"} {
		t.Run(release, func(t *testing.T) {
			dir := shared.File(t, filepath.Join("spec/compliance", release))
			var strs []tokenString
			for file, doc := range releaseDocs(t, dir) {
				collectTokenStrings(doc, file, "", &strs)
			}
			if len(strs) < 100 {
				t.Fatalf("only %d token strings found; the scan is broken", len(strs))
			}
			kinds := map[RefKind]int{}
			for _, s := range strs {
				refs, err := tokenRefs(s.value)
				if err != nil {
					t.Errorf("%s %s: %q: %v", s.file, s.key, s.value, err)
					continue
				}
				if n := len(tokenStart.FindAllStringIndex(s.value, -1)); n != len(refs) {
					t.Errorf("%s %s: %q: Refs found %d tokens, the scan %d", s.file, s.key, s.value, len(refs), n)
				}
				vars := populated(refs)
				if s.key == "task" || s.key == "schema_ref" || s.key == "response_schema_ref" {
					if _, err := ResolveTask(s.value, "", vars.TestKit); err != nil {
						t.Errorf("%s %s: ResolveTask(%q): %v", s.file, s.key, s.value, err)
					}
				}
				got, err := Substitute(s.value, vars)
				if err != nil {
					t.Errorf("%s %s: Substitute(%q): %v", s.file, s.key, s.value, err)
					continue
				}
				if str, ok := got.(string); ok && tokenStart.MatchString(str) {
					t.Errorf("%s %s: Substitute(%q) = %q keeps a token", s.file, s.key, s.value, str)
				}
				for _, r := range refs {
					kinds[r.Kind]++
				}
			}
			// Every form the release uses is exercised here. {{runner.webhook_base}}
			// and {{prior_step.…}} appear only in prose and in the webhook
			// receiver kit; $agent_url left the 3.2 storyboards (schema prose only).
			want := []RefKind{RefContext, RefGenerate, RefTestKit, RefWebhookURL}
			if release == "3.1.19" {
				want = append(want, RefAgentURL)
			}
			for _, k := range want {
				if kinds[k] == 0 {
					t.Errorf("no %s token found in %s", k, release)
				}
			}
			t.Logf("%s: %d strings with tokens; by kind %v", release, len(strs), kinds)
		})
	}
}

// populated is a run that can resolve every ref given.
func populated(refs []Ref) *Vars {
	vars := &Vars{
		Context:     map[string]any{},
		AgentURL:    "https://agent.example/mcp",
		WebhookURL:  func(id string) (string, bool) { return "https://hooks.example/step/" + id + "/c", true },
		WebhookBase: "https://hooks.example",
		Prior:       map[string]any{},
	}
	kit := map[string]any{}
	for _, r := range refs {
		switch r.Kind {
		case RefContext:
			vars.Context[r.Name] = "v-" + r.Name
		case RefTestKit:
			_ = spec.Set(kit, r.Name, "kit-value")
		case RefPriorStep:
			m := map[string]any{}
			_ = spec.Set(m, r.Field, "prior-value")
			vars.Prior[r.Name] = m
		}
	}
	vars.TestKit = kit
	return vars
}

// TestSpecExpressionsParse parses every skip_if and contributes_if of both
// releases, wherever it sits, and evaluates each skip_if on an empty run,
// and checks every capability predicate names a readable path and one
// matcher.
func TestSpecExpressionsParse(t *testing.T) {
	for _, release := range []string{"3.1.19", "3.2.0-beta.5"} {
		t.Run(release, func(t *testing.T) {
			dir := shared.File(t, filepath.Join("spec/compliance", release))
			var skips, contribs []string
			for _, doc := range releaseDocs(t, dir) {
				collectKeys(doc, "skip_if", &skips)
				collectKeys(doc, "contributes_if", &contribs)
			}
			if len(skips) == 0 || len(contribs) == 0 {
				t.Fatalf("found %d skip_if and %d contributes_if; the scan is broken", len(skips), len(contribs))
			}
			for _, e := range skips {
				if _, err := parseExpr(e); err != nil {
					t.Errorf("skip_if %q: %v", e, err)
					continue
				}
				if _, err := EvalSkipIf(e, &Vars{}); err != nil {
					t.Errorf("EvalSkipIf(%q): %v", e, err)
				}
			}
			for _, e := range contribs {
				if _, err := parseContributesIf(e); err != nil {
					t.Errorf("contributes_if %q: %v", e, err)
				}
			}
			rel := loadRelease(t, dir)
			var preds []*spec.CapabilityPredicate
			for _, sb := range rel.Storyboards {
				preds = append(preds, sb.RequiresCapability)
				for i := range sb.RequiresAllCapabilities {
					preds = append(preds, &sb.RequiresAllCapabilities[i])
				}
				for _, ph := range sb.Phases {
					preds = append(preds, ph.RequiresCapability)
					for _, st := range ph.Steps {
						preds = append(preds, st.RequiresCapability)
					}
				}
			}
			preds = slices.DeleteFunc(preds, func(p *spec.CapabilityPredicate) bool { return p == nil })
			if len(preds) == 0 {
				t.Fatal("no capability predicates found")
			}
			for _, p := range preds {
				_, detail := EvalCapability(p, map[string]any{})
				if strings.Contains(detail, "no matcher") || strings.Contains(detail, "cannot be read") {
					t.Errorf("predicate %+v: %s", *p, detail)
				}
			}
			t.Logf("%s: %d skip_if, %d contributes_if, %d capability predicates", release, len(skips), len(contribs), len(preds))
		})
	}
}

// TestSpecStoryboardRefsCoverEveryToken checks StoryboardRefs walks every
// field that holds a token: per storyboard file, it finds as many tokens
// as the independent scan of the decoded YAML (outside prose).
func TestSpecStoryboardRefsCoverEveryToken(t *testing.T) {
	for _, release := range []string{"3.1.19", "3.2.0-beta.5"} {
		t.Run(release, func(t *testing.T) {
			dir := shared.File(t, filepath.Join("spec/compliance", release))
			docs := releaseDocs(t, dir)
			rel := loadRelease(t, dir)
			total := 0
			for _, sb := range rel.Storyboards {
				var strs []tokenString
				collectTokenStrings(docs[sb.Path], sb.Path, "", &strs)
				want := 0
				for _, s := range strs {
					want += len(tokenStart.FindAllStringIndex(s.value, -1))
				}
				refs, err := StoryboardRefs(sb)
				if err != nil {
					t.Errorf("%s: %v", sb.Path, err)
				}
				got := 0
				for _, r := range refs {
					if r.Kind != RefBuildAssets {
						got++
					}
				}
				if got != want {
					t.Errorf("%s: StoryboardRefs found %d tokens, the scan %d", sb.Path, got, want)
				}
				total += got
			}
			if total < 100 {
				t.Fatalf("only %d tokens in %s", total, release)
			}
		})
	}
}
