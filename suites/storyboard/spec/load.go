package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Category is the folder a storyboard sits in.
type Category string

// The storyboard folders of a release.
const (
	Universal   Category = "universal"
	Protocols   Category = "protocols"
	Specialisms Category = "specialisms"
	Domains     Category = "domains"
)

// Position is a place in a YAML file (1-based).
type Position struct {
	Line, Column int
}

// Release is one compliance release folder, loaded.
type Release struct {
	// Dir is the folder that was loaded.
	Dir string
	// Storyboards are sorted by Path.
	Storyboards []*Storyboard
	// CheckKinds are the authored check kinds (and cross-response kinds)
	// of universal/runner-output-contract.yaml; empty when the release has
	// no contract.
	CheckKinds []string
	// TestKits are the files under test-kits/, by path.
	TestKits []*TestKit
	// Documents are the YAML files that are neither storyboards nor test
	// kits: the schema (comments only), the runner output contract and
	// reference data such as fictional-entities.yaml.
	Documents []string
	// Vectors are the files under test-vectors/; they are listed, not read.
	Vectors []string
	// Findings are what loading noticed without failing: unknown keys.
	Findings []Finding
}

// TestKit is a file under test-kits/: a brand kit (auth credential) or a
// runner contract (applies_to). Only the fields lint needs are typed.
type TestKit struct {
	ID        string         `yaml:"id"`
	Auth      map[string]any `yaml:"auth"`
	AppliesTo any            `yaml:"applies_to"`
	Path      string         `yaml:"-"`

	raw any // the whole kit, decoded
}

// Raw is the whole kit as decoded JSON-model data (map[string]any).
func (k *TestKit) Raw() any { return k.raw }

// Version is the release's AdCP version: index.json's adcp_version when
// the folder has one, else the folder's name ("3.1.19").
func (rel *Release) Version() string {
	if b, err := os.ReadFile(filepath.Join(rel.Dir, "index.json")); err == nil {
		var idx struct {
			AdcpVersion string `json:"adcp_version"`
		}
		if json.Unmarshal(b, &idx) == nil && idx.AdcpVersion != "" {
			return idx.AdcpVersion
		}
	}
	return filepath.Base(filepath.Clean(rel.Dir))
}

// RunnerContract is the part of universal/runner-output-contract.yaml the
// loader reads.
type runnerContract struct {
	AuthoredCheckKinds      []string `yaml:"authored_check_kinds"`
	CrossResponseCheckKinds []string `yaml:"cross_response_check_kinds"`
}

const (
	schemaDoc    = "universal/storyboard-schema.yaml"
	contractFile = "universal/runner-output-contract.yaml"
)

// Load walks a release folder (for example compliance/3.1.19) and loads
// each file as what it is: YAML under universal/, protocols/, specialisms/
// and domains/ with a top-level `phases` key as a Storyboard, other YAML
// there as a document (the runner output contract gives CheckKinds), files
// under test-kits/ as TestKits, and files under test-vectors/ by name only.
//
// A file that cannot be read or decoded is left out and named, with its
// YAML position, in the returned error; the rest of the release is still
// returned.
func Load(dir string) (*Release, error) {
	rel := &Release{Dir: dir}
	var errs []error
	type file struct{ path, rel string }
	var kits, stories []file
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		if d.IsDir() {
			return nil
		}
		r, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		r = filepath.ToSlash(r)
		top, _, _ := strings.Cut(r, "/")
		yamlFile := strings.HasSuffix(r, ".yaml") || strings.HasSuffix(r, ".yml")
		switch {
		case top == "test-vectors":
			rel.Vectors = append(rel.Vectors, r)
		case top == "test-kits" && yamlFile:
			kits = append(kits, file{p, r})
		case isCategory(top) && yamlFile:
			stories = append(stories, file{p, r})
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	// The files are parsed side by side (a release is some 3.5 MB of
	// YAML), then gathered in walk order so the result does not depend
	// on scheduling.
	type parsed struct {
		kit  *TestKit
		part *Release
		err  error
	}
	all := append(append([]file(nil), kits...), stories...)
	out := make([]parsed, len(all))
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(all))) {
		wg.Go(func() {
			for i := range work {
				f := all[i]
				if i < len(kits) {
					out[i].kit, out[i].err = loadTestKit(f.path, f.rel)
					continue
				}
				data, err := os.ReadFile(f.path)
				if err != nil {
					out[i].err = err
					continue
				}
				part := &Release{}
				out[i].part, out[i].err = part, part.add(f.rel, data)
			}
		})
	}
	for i := range all {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, p := range out {
		if p.err != nil {
			errs = append(errs, p.err)
		}
		if p.kit != nil {
			rel.TestKits = append(rel.TestKits, p.kit)
		}
		if q := p.part; q != nil {
			rel.Storyboards = append(rel.Storyboards, q.Storyboards...)
			rel.CheckKinds = append(rel.CheckKinds, q.CheckKinds...)
			rel.Documents = append(rel.Documents, q.Documents...)
			rel.Findings = append(rel.Findings, q.Findings...)
		}
	}
	sort.Slice(rel.Storyboards, func(i, j int) bool { return rel.Storyboards[i].Path < rel.Storyboards[j].Path })
	return rel, errors.Join(errs...)
}

func isCategory(s string) bool {
	switch Category(s) {
	case Universal, Protocols, Specialisms, Domains:
		return true
	}
	return false
}

// add classifies one YAML file under a storyboard folder.
func (rel *Release) add(r string, data []byte) error {
	if r == contractFile {
		var c runnerContract
		if err := decodeDoc(r, data, &c); err != nil {
			return err
		}
		rel.CheckKinds = append(append(rel.CheckKinds, c.AuthoredCheckKinds...), c.CrossResponseCheckKinds...)
		rel.Documents = append(rel.Documents, r)
		return nil
	}
	if r == schemaDoc {
		rel.Documents = append(rel.Documents, r)
		return nil
	}
	root, err := parseRoot(r, data)
	if err != nil {
		return err
	}
	if !hasKey(root, "phases") {
		rel.Documents = append(rel.Documents, r)
		return nil
	}
	sb, findings, err := parseNode(r, root)
	if err != nil {
		return err
	}
	top, _, _ := strings.Cut(r, "/")
	sb.Kind = Category(top)
	rel.Storyboards = append(rel.Storyboards, sb)
	rel.Findings = append(rel.Findings, findings...)
	return nil
}

func loadTestKit(p, r string) (*TestKit, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	kit := &TestKit{Path: r}
	if err := decodeDoc(r, data, kit); err != nil {
		return nil, err
	}
	if err := decodeDoc(r, data, &kit.raw); err != nil {
		return nil, err
	}
	kit.raw = Normalize(kit.raw)
	return kit, nil
}

// decodeDoc decodes a YAML document leniently (unknown keys allowed).
func decodeDoc(name string, data []byte, v any) (err error) {
	defer recoverInto(name, &err)
	if err := yaml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", name, modelTypes(err))
	}
	return nil
}

// goPackage is a Go package qualifier in a decoder's type name.
var goPackage = regexp.MustCompile(`\b[a-z][a-z0-9_]*\.([A-Z])`)

// modelTypes names the model's types in a decoder's type errors without
// their Go package ("into []Phase", not "into []storyboard.Phase"): the
// message is about the file, and the package is the harness's layout.
func modelTypes(err error) error {
	te, ok := err.(*yaml.TypeError)
	if !ok {
		return err
	}
	out := &yaml.TypeError{Errors: make([]string, len(te.Errors))}
	for i, e := range te.Errors {
		if at := strings.LastIndex(e, " into "); at >= 0 {
			e = e[:at] + goPackage.ReplaceAllString(e[at:], "$1")
		}
		out.Errors[i] = e
	}
	return out
}

func hasKey(root *yaml.Node, key string) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return true
		}
	}
	return false
}

// parseRoot returns the top-level mapping of a single-document YAML file.
func parseRoot(name string, data []byte) (root *yaml.Node, err error) {
	defer recoverInto(name, &err)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s: line %d: a storyboard file holds one YAML document, found another", name, extra.Line)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("%s: line %d: empty YAML document", name, doc.Line)
	}
	root = doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: line %d column %d: the top level must be a mapping, found %s", name, root.Line, root.Column, kindName(root.Kind))
	}
	return root, nil
}

// Parse decodes one storyboard file. name is used in errors and findings
// (Load passes the path relative to the release). Unknown or wrongly cased
// keys come back as "unknown_key" findings; malformed YAML and values of
// the wrong type are errors naming the file and the line.
func Parse(name string, data []byte) (sb *Storyboard, findings []Finding, err error) {
	defer recoverInto(name, &err)
	root, err := parseRoot(name, data)
	if err != nil {
		return nil, nil, err
	}
	return parseNode(name, root)
}

// parseNode decodes a storyboard from its parsed top-level mapping.
func parseNode(name string, root *yaml.Node) (sb *Storyboard, findings []Finding, err error) {
	defer recoverInto(name, &err)
	sb = &Storyboard{Path: name, pos: map[string]Position{}}
	if err := root.Decode(sb); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, modelTypes(err))
	}
	w := walker{file: name, pos: sb.pos}
	w.walk(root, reflect.TypeOf(*sb), "")
	return sb, w.findings, nil
}

func recoverInto(name string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: the YAML decoder failed: %v", name, r)
	}
}

// UnmarshalYAML records which keys a validation sets, so that `value: null`
// and an absent value differ.
func (v *Validation) UnmarshalYAML(n *yaml.Node) error {
	type plain Validation
	if err := n.Decode((*plain)(v)); err != nil {
		return err
	}
	if n.Kind == yaml.MappingNode {
		v.set = map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v.set[n.Content[i].Value] = true
		}
	}
	return nil
}

// walker compares the node tree with the struct types' yaml tags.
type walker struct {
	file     string
	pos      map[string]Position
	findings []Finding
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, at string) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	w.pos[at] = Position{n.Line, n.Column}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			child := join(at, k.Value)
			f, ok := fields[k.Value]
			if !ok {
				w.findings = append(w.findings, Finding{
					Rule: ruleUnknownKey, Severity: Error, File: w.file, Path: child,
					Line: k.Line, Column: k.Column,
					Message: fmt.Sprintf("unknown key %q%s", k.Value, caseHint(k.Value, fields)),
				})
				continue
			}
			w.walk(v, f, child)
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, e := range n.Content {
			w.walk(e, t.Elem(), at+"["+strconv.Itoa(i)+"]")
		}
	}
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func caseHint(key string, fields map[string]reflect.Type) string {
	for k := range fields {
		if strings.EqualFold(k, key) {
			return fmt.Sprintf(" (keys are case-sensitive: did you mean %q?)", k)
		}
	}
	return ""
}

// fieldsByType caches yamlFields: the walk asks for a struct type's fields
// at every mapping of it (it allocated a fifth of a release's loading).
var fieldsByType sync.Map // reflect.Type → map[string]reflect.Type

// yamlFields are the types of t's fields by their YAML names. The map is
// shared: callers only read it.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldsByType.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m, _ := fieldsByType.LoadOrStore(t, fieldsOf(t))
	return m.(map[string]reflect.Type)
}

func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || name == "" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		return "a scalar"
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

// Position returns where the YAML path (for example
// "phases[1].steps[0].validations[2]") sits in the storyboard's file, or
// the zero Position when the path is unknown.
func (sb *Storyboard) Position(yamlPath string) Position {
	return sb.pos[yamlPath]
}

// Counts totals a release's storyboards.
type Counts struct {
	Storyboards, Phases, Steps, Validations int
	ByCategory                              map[Category]int
}

// Count totals the storyboards, phases, steps and validations of rel.
func Count(rel *Release) Counts {
	c := Counts{ByCategory: map[Category]int{}}
	for _, sb := range rel.Storyboards {
		c.Storyboards++
		c.ByCategory[sb.Kind]++
		c.Phases += len(sb.Phases)
		for _, ph := range sb.Phases {
			c.Steps += len(ph.Steps)
			for _, st := range ph.Steps {
				c.Validations += len(st.Validations)
			}
		}
	}
	return c
}
