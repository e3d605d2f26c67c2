package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadClassifiesEachFileOfARelease(t *testing.T) {
	rel, err := Load("testdata/release")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var got []string
	for _, sb := range rel.Storyboards {
		got = append(got, string(sb.Kind)+" "+sb.ID+" "+sb.Path)
	}
	want := []string{
		"protocols widget_seller protocols/widgets/index.yaml",
		"protocols widget_seller/branching protocols/widgets/scenarios/branching.yaml",
		"specialisms widget_seller_specialism specialisms/widget-seller/index.yaml",
		"universal ping universal/ping.yaml",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("storyboards:\n got %q\nwant %q", got, want)
	}
	if want := []string{"universal/reference.yaml", "universal/runner-output-contract.yaml", "universal/storyboard-schema.yaml"}; !reflect.DeepEqual(rel.Documents, want) {
		t.Errorf("documents = %q, want %q", rel.Documents, want)
	}
	if len(rel.TestKits) != 1 || rel.TestKits[0].ID != "demo_kit" || rel.TestKits[0].Path != "test-kits/demo-kit.yaml" {
		t.Errorf("test kits = %+v, want demo_kit at test-kits/demo-kit.yaml", rel.TestKits)
	}
	if want := []string{"test-vectors/none.json"}; !reflect.DeepEqual(rel.Vectors, want) {
		t.Errorf("vectors = %q, want %q", rel.Vectors, want)
	}
	if len(rel.CheckKinds) != 14 || rel.CheckKinds[13] != "cross_response_count_distinct" {
		t.Errorf("check kinds = %q, want the 13 authored kinds then cross_response_count_distinct", rel.CheckKinds)
	}
	if c := Count(rel); c.Storyboards != 4 || c.Phases != 7 || c.Steps != 8 || c.Validations != 8 {
		t.Errorf("counts = %+v, want 4 storyboards, 7 phases, 8 steps, 8 validations", c)
	}
	if f := Lint(rel); len(f) != 0 {
		t.Errorf("the crafted release lints with findings: %v", f)
	}
}

func TestLoadDecodesTypedFields(t *testing.T) {
	rel, err := Load("testdata/release")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	ping := rel.Storyboards[3]
	if ping.Phases[0].DependsOn != nil {
		t.Errorf("absent depends_on decodes as %#v, want nil (all prior phases)", ping.Phases[0].DependsOn)
	}
	if d := ping.Phases[1].DependsOn; d == nil || len(d) != 0 {
		t.Errorf("depends_on: [] decodes as %#v, want an empty non-nil slice (no upstream dependencies)", d)
	}
	outs := ping.Phases[0].Steps[0].ContextOutputs
	if outs[0].Variable() != "protocols" || outs[1].Variable() != "run_token" || outs[1].Generate != "uuid_v4" {
		t.Errorf("context outputs = %+v", outs)
	}
	v := ping.Phases[0].Steps[0].Validations[1]
	if v.Check != "field_value" || v.Value != 3 || !v.Has("value") || v.Has("allowed_values") {
		t.Errorf("field_value validation = %+v", v)
	}
	seller := rel.Storyboards[0]
	create := seller.Phases[1].Steps[0]
	if create.Auth == nil || create.Auth.Type != "api_key" || create.Auth.FromTestKit != true {
		t.Errorf("auth = %+v, want api_key from the test kit", create.Auth)
	}
	if got := seller.Phases[0].Steps[1].ProvidesStateFor; !reflect.DeepEqual(got, StringList{"list"}) {
		t.Errorf("provides_state_for = %q, want [list]", got)
	}
	if p := seller.Position("phases[1].steps[0].validations[1]"); p != (Position{Line: 47, Column: 13}) {
		t.Errorf("position of phases[1].steps[0].validations[1] = %+v, want 47:13", p)
	}
}

func TestParseReportsUnknownKeysAsFindings(t *testing.T) {
	data, err := os.ReadFile("testdata/unknown_keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sb, findings, err := Parse("unknown_keys.yaml", data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if sb.ID != "unknown_keys" || len(sb.Phases[0].Steps) != 1 {
		t.Errorf("the known fields still decode: %+v", sb)
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.String())
	}
	want := []string{
		`unknown_keys.yaml:3:1: error unknown_key: Title: unknown key "Title" (keys are case-sensitive: did you mean "title"?)`,
		`unknown_keys.yaml:8:1: error unknown_key: owner: unknown key "owner"`,
		`unknown_keys.yaml:12:5: error unknown_key: phases[0].descripton: unknown key "descripton"`,
		`unknown_keys.yaml:19:13: error unknown_key: phases[0].steps[0].validations[0].chek: unknown key "chek"`,
		`unknown_keys.yaml:22:13: error unknown_key: phases[0].steps[0].context_outputs[0].Path: unknown key "Path" (keys are case-sensitive: did you mean "path"?)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func TestParseNamesTheFileAndLineOfABadFile(t *testing.T) {
	for _, tc := range []struct {
		file string
		want string
	}{
		{"syntax.yaml", "syntax.yaml: yaml: line 4: found unexpected end of stream"},
		{"top_sequence.yaml", "top_sequence.yaml: line 2 column 1: the top level must be a mapping, found a sequence"},
		{"wrong_type.yaml", "wrong_type.yaml: yaml: unmarshal errors:\n  line 8: cannot unmarshal !!str `first` into []Phase"},
		{"auth_string.yaml", `auth_string.yaml: line 13: auth must be "none" or an object, got "anonymous"`},
		{"two_documents.yaml", "two_documents.yaml: line 8: a storyboard file holds one YAML document, found another"},
		{"empty.yaml", "empty.yaml: EOF"},
		{"duplicate_key.yaml", `duplicate_key.yaml: yaml: unmarshal errors:` + "\n" + `  line 5: mapping key "title" already defined at line 3`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/bad", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = Parse(tc.file, data)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Parse error = %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestLoadKeepsTheGoodFilesAndNamesTheBadOne(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "universal/good.yaml"), "id: good\nversion: \"1\"\ntitle: G\ncategory: g\nsummary: s\nnarrative: n\nphases: []\n")
	write(t, filepath.Join(dir, "universal/bad.yaml"), "id: bad\nphases:\n  - id: [\n")
	rel, err := Load(dir)
	if err == nil || !strings.HasPrefix(err.Error(), "universal/bad.yaml: yaml: line 3:") {
		t.Errorf("Load error = %v, want it to name universal/bad.yaml and line 3", err)
	}
	if rel == nil || len(rel.Storyboards) != 1 || rel.Storyboards[0].ID != "good" {
		t.Errorf("Load kept %+v, want the good storyboard only", rel)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
