package spec

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLintRules runs each crafted case of testdata/lint inside a copy of
// the clean testdata/release and compares the findings with the case's
// "# want: <rule> <yaml path> [@file]" lines, in full.
func TestLintRules(t *testing.T) {
	cases, err := filepath.Glob("testdata/lint/*.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no lint cases: %v", err)
	}
	covered := map[string]bool{}
	for _, c := range cases {
		name := filepath.Base(c)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, "testdata/release", dir)
			dest := "universal/" + name
			if strings.HasSuffix(name, ".kit.yaml") {
				dest = "test-kits/" + name
			}
			data, err := os.ReadFile(c)
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, dest), string(data))
			want := wants(t, c, dest)
			rel, err := Load(dir)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var got []string
			for _, f := range Lint(rel) {
				got = append(got, f.Rule+" "+f.Path+" @"+f.File)
				covered[f.Rule] = true
				if f.Line == 0 {
					t.Errorf("finding without a position: %s", f)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("findings:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
			}
		})
	}
	for _, rule := range []string{
		ruleUnknownKey, ruleRequiredField, ruleDuplicateID, ruleUnknownCheckKind,
		ruleDependsOn, ruleEmptyGate, ruleCapabilityMatcher, ruleContextOutput,
		ruleContextScalar, ruleContextOutputUnique, ruleBranchSet, ruleOrphanContribution, ruleProvidesStateFor,
		ruleValidationArgs, ruleAdvisory, ruleNegativePath, ruleScenarioReference,
		ruleAuthShape, ruleStepReference, ruleRunnerBounds, ruleTestKitReference,
		ruleTestKitShape, ruleIdentifierPathSyntax,
	} {
		if !covered[rule] {
			t.Errorf("no lint case makes rule %s fire", rule)
		}
	}
}

func wants(t *testing.T, file, dest string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "# want:")
		if !ok {
			continue
		}
		rule, path, in := "", "", dest
		for _, field := range strings.Fields(line) {
			switch {
			case strings.HasPrefix(field, "@"):
				in = field[1:]
			case rule == "":
				rule = field
			default:
				path = field
			}
		}
		out = append(out, rule+" "+path+" @"+in)
	}
	return out
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		r, _ := filepath.Rel(from, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		write(t, filepath.Join(to, r), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The 3.1 domains/ folder mirrors protocols/ file for file; a mirrored
// file is the same storyboard, while a third file with the id is a
// duplicate.
func TestLintDuplicateIDSparesTheDomainsMirror(t *testing.T) {
	dir := t.TempDir()
	const sb = "id: same\nversion: \"1\"\ntitle: T\ncategory: c\nsummary: s\nnarrative: n\nphases: []\n"
	write(t, filepath.Join(dir, "protocols/x/index.yaml"), sb)
	write(t, filepath.Join(dir, "domains/x/index.yaml"), sb)
	rel, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f := Lint(rel); len(f) != 0 {
		t.Errorf("a domains/ mirror is reported: %v", f)
	}
	write(t, filepath.Join(dir, "domains/y/index.yaml"), sb)
	if rel, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	f := Lint(rel)
	if len(f) != 1 || f[0].String() != `protocols/x/index.yaml:1:5: error duplicate_id: id: storyboard id "same" is also declared by domains/y/index.yaml` {
		t.Errorf("findings = %v, want one duplicate_id naming domains/y/index.yaml", f)
	}
}

func TestLintWarnsOfAnUnknownInvariant(t *testing.T) {
	sb, _, err := Parse("t.yaml", []byte("id: t\nversion: \"1.0.0\"\ntitle: t\ncategory: t\nsummary: t\nnarrative: t\ninvariants: [status.monotonic, x.unknown]\nphases: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range Lint(&Release{Storyboards: []*Storyboard{sb}}) {
		if f.Rule == ruleUnknownInvariant {
			got = append(got, f.String())
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "x.unknown") {
		t.Fatalf("got %q", got)
	}
}
