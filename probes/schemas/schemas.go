// Package schemas validates AdCP payloads against the published JSON
// Schemas of one release, read from a local copy laid out like the
// published tree (<dir>/core/error.json, <dir>/media-buy/…), where $id and
// $ref are root-relative ("/schemas/<release>/core/product.json").
// Validation is draft-07 as the schemas declare, each schema's own
// additionalProperties honoured; schemas compile lazily and are cached.
// probes/release fetches a release from its published location into the
// user's cache once, for Load to read from then on.
//
//	set, err := schemas.Load("spec/schemas/3.1.19") // a release's published schemas, copied locally
//	vs, err := set.Response("get_products", body)
//	for _, v := range vs { fmt.Println(v.Pointer, v.Message, v.SchemaID) }
package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/release"
)

// base is the URL the schemas are compiled under; the root-relative $id
// and $ref values resolve against it, and the loader maps it back to the
// local folder. Nothing is ever fetched from it.
const base = "https://schemas.adcp.invalid"

// Set is one release's schemas.
type Set struct {
	fsys     fs.FS // the release folder
	release  string
	files    map[string]string // base name → path relative to the folder
	tools    release.Manifest  // manifest.json, when the release has one
	mu       sync.Mutex
	c        *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema // by absolute location
	docs     map[string]any                // decoded documents, by URL
}

// Violation is one place a payload breaks its schema.
type Violation struct {
	// Pointer is the JSON pointer of the offending value in the payload.
	Pointer string
	// SchemaID is the $id of the schema, with the keyword's location.
	SchemaID string
	// Keyword is the schema keyword that rejected the value ("required",
	// "type", "oneOf"…), and SchemaPath is SchemaID followed by the
	// keyword's path inside that schema: the runner output contract's
	// keyword and schema_path of a response_schema error.
	Keyword    string
	SchemaPath string
	Message    string
	// More, on the last violation of a document, counts the violations
	// found beyond MaxViolations and not listed; Unlisted says which parts
	// of the document were validated for the verdict only (the items of a
	// long list past the first DetailItems), "" when none.
	More     int
	Unlisted string
}

// Load reads the schema tree at dir (its base name is the release).
func Load(dir string) (*Set, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "core", "error.json")); err != nil {
		return nil, fmt.Errorf("%s holds no core/error.json: not an AdCP schema folder", dir)
	}
	return LoadFS(os.DirFS(dir), filepath.Base(filepath.Clean(dir)))
}

// LoadFS reads the schema tree of release from fsys, laid out like the
// published folder: what Load does for a folder on disk, for a tree held
// elsewhere (a test's hand-written schemas, an embedded copy).
func LoadFS(fsys fs.FS, release string) (*Set, error) {
	s := &Set{fsys: fsys, release: release, files: map[string]string{}, compiled: map[string]*jsonschema.Schema{}, docs: map[string]any{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		if _, dup := s.files[path.Base(p)]; !dup || strings.HasPrefix(p, "core/") {
			s.files[path.Base(p)] = p
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if b, err := fs.ReadFile(fsys, "manifest.json"); err == nil {
		_ = json.Unmarshal(b, &s.tools) // a release without a readable manifest maps tasks by file name
	}
	s.c = jsonschema.NewCompiler()
	s.c.DefaultDraft(jsonschema.Draft7)
	s.c.UseLoader(loader{s})
	s.c.UseRegexpEngine(ecmaRegexp)
	return s, nil
}

// ecmaRegexp compiles a schema's pattern as the ECMAScript regular
// expression JSON Schema specifies (the AdCP schemas use lookahead, which
// Go's RE2 lacks).
func ecmaRegexp(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = time.Second // a pattern is schema data, not seller data, but bound it anyway
	return ecma{re}, nil
}

type ecma struct{ re *regexp2.Regexp }

func (e ecma) MatchString(s string) bool {
	ok, err := e.re.MatchString(s)
	return ok && err == nil
}

func (e ecma) String() string { return e.re.String() }

// Tasks returns the task names of the release's manifest.json, sorted; nil
// when the release has none.
func (s *Set) Tasks() []string {
	if s == nil || len(s.tools.Tools) == 0 {
		return nil
	}
	out := make([]string, 0, len(s.tools.Tools))
	for name := range s.tools.Tools {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Release is the release the schemas belong to ("3.1.19").
func (s *Set) Release() string { return s.release }

// Serves reports whether a body echoing adcp_version v was served in this
// set's release: v is the release at the wire's release precision ("3.1"
// for 3.1.19, "3.2-beta.5" for 3.2.0-beta.5). An absent echo ("") is served
// in it too: the buyer validates against its own pin.
func (s *Set) Serves(v string) bool { return v == "" || v == WireRelease(s.release) }

// WireRelease returns a published release at the wire's release precision:
// MAJOR.MINOR, with the pre-release tag when there is one ("3.1.19" → "3.1",
// "3.2.0-beta.5" → "3.2-beta.5").
func WireRelease(release string) string {
	core, pre, hasPre := strings.Cut(release, "-")
	parts := strings.SplitN(core, ".", 3)
	if len(parts) < 2 {
		return release
	}
	out := parts[0] + "." + parts[1]
	if hasPre {
		out += "-" + pre
	}
	return out
}

type loader struct{ s *Set }

// Load maps a schema URL back to the release folder. A published release
// tree names its schemas with the release ("$id":
// "/schemas/3.1.19/core/error.json"); the source tree a pre-release is
// taken from (schemas/3.2.0-beta.5) names them without it
// ("/schemas/core/error.json"), and both are read from the folder.
func (l loader) Load(url string) (any, error) {
	rel, err := l.s.relOf(url)
	if err != nil {
		return nil, err
	}
	f, err := l.s.fsys.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jsonschema.UnmarshalJSON(f)
}

// relOf maps a schema URL (its fragment dropped) to its path in the release
// folder, or refuses one outside it.
func (s *Set) relOf(url string) (string, error) {
	url, _, _ = strings.Cut(url, "#")
	rel, ok := strings.CutPrefix(url, base+"/schemas/"+s.release+"/")
	if !ok {
		rel, ok = strings.CutPrefix(url, base+"/schemas/")
	}
	if rel = release.SchemaPath(rel); !ok || rel == "" {
		return "", fmt.Errorf("schema %s is outside the release %s", url, s.release)
	}
	return rel, nil
}

func (s *Set) schema(rel string) (*jsonschema.Schema, error) {
	target, verdict := strings.CutPrefix(rel, checkPrefix)
	if !verdict {
		return s.compile(s.Location(rel))
	}
	url := base + "/adcp-conform/verdict/" + target
	s.mu.Lock()
	_, done := s.compiled[url]
	if !done {
		doc := map[string]any{"$schema": "http://json-schema.org/draft-07/schema#",
			"if": map[string]any{"$ref": s.Location(target)}, "else": false}
		if err := s.c.AddResource(url, doc); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	s.mu.Unlock()
	return s.compile(url)
}

// compile returns the schema at an absolute location (a document's URL, a
// JSON-pointer fragment optional), compiled once.
func (s *Set) compile(loc string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[loc]; ok {
		return sch, nil
	}
	sch, err := s.c.Compile(loc)
	if err != nil {
		return nil, err
	}
	s.compiled[loc] = sch
	return sch, nil
}

// ResponseSchema returns the path of a task's response schema, for a body
// in AdCP status status (an async variant when one exists), or "". The
// release's manifest.json names them where it has one; otherwise the task's
// kebab-case name does (get_products → media-buy/get-products-response.json).
func (s *Set) ResponseSchema(task, status string) string {
	if t, ok := s.tools.Tools[task]; ok && release.SchemaPath(t.ResponseSchema) != "" {
		if status != "" && status != "completed" {
			for _, a := range t.AsyncResponseSchemas {
				if strings.HasSuffix(a, "-async-response-"+status+".json") && release.SchemaPath(a) != "" {
					return release.SchemaPath(a)
				}
			}
		}
		return release.SchemaPath(t.ResponseSchema)
	}
	kebab := strings.ReplaceAll(task, "_", "-")
	if status != "" && status != "completed" {
		if rel, ok := s.files[kebab+"-async-response-"+status+".json"]; ok {
			return rel
		}
	}
	return s.files[kebab+"-response.json"]
}

// english renders the validator's messages.
var english = message.NewPrinter(language.English)

// ErrNoSchema is returned for a task the release has no response schema for.
var ErrNoSchema = errors.New("no response schema for this task")

// Response validates a task's success body.
func (s *Set) Response(task string, body []byte) ([]Violation, error) {
	var st struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(body, &st)
	rel := s.ResponseSchema(task, st.Status)
	if rel == "" {
		return nil, ErrNoSchema
	}
	return s.validate(rel, body)
}

// Validate validates doc against the release's schema at rel, a path
// relative to the release folder ("media-buy/get-products-response.json",
// as a storyboard's response_schema_ref names it). A schema that is not in
// the release, or does not compile, is an error, never a violation.
func (s *Set) Validate(rel string, doc []byte) ([]Violation, error) {
	rel = release.SchemaPath(rel)
	if rel == "" {
		return nil, fmt.Errorf("%w: empty or escaping schema path", ErrNoSchema)
	}
	if _, err := fs.Stat(s.fsys, rel); err != nil {
		return nil, fmt.Errorf("%w: %s is not in release %s", ErrNoSchema, rel, s.release)
	}
	return s.validate(rel, doc)
}

// Error validates an adcp_error object against core/error.json.
func (s *Set) Error(obj []byte) ([]Violation, error) { return s.validate("core/error.json", obj) }

// Bounds of one document's validation: a hostile reply of ten thousand
// items, each breaking its schema in a dozen places, would otherwise have
// the validator build (and the reports carry) a hundred thousand errors.
const (
	// MaxViolations is the most violations one document reports; the last
	// one listed carries More, the count of those found beyond it.
	MaxViolations = 50
	// DetailItems is how many items of each list are validated in detail
	// (each error located); the whole document, every item of every list,
	// is validated for its verdict.
	DetailItems = 16
	// maxMessage bounds a violation's message (it may quote the value).
	maxMessage = 512
)

func (s *Set) validate(rel string, doc []byte) ([]Violation, error) {
	sch, err := s.schema(rel)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", rel, err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(doc)))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	// The verdict first, in the validator's yes-or-no mode: it stops at an
	// instance's first error and records none, so its cost is the
	// document's size, never its number of errors.
	verdict, err := s.schema(checkPrefix + rel)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", rel, err)
	}
	if verdict.Validate(v) == nil {
		return nil, nil
	}
	// Then the errors, of the document with each list cut to its first
	// DetailItems items.
	cut := map[string]int{}
	err = sch.Validate(detailed(v, "", cut))
	var ve *jsonschema.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return nil, err
	}
	var out []Violation // of the cut document: a bounded number
	if ve != nil {
		eachLeaf(ve, func(v Violation) {
			if _, wasCut := cut[v.Pointer]; wasCut && (v.Keyword == "minItems" || v.Keyword == "contains") {
				return // the cut list's, not the document's
			}
			if len(v.Message) > maxMessage {
				v.Message = strings.ToValidUTF8(v.Message[:maxMessage], "") + "…"
			}
			out = append(out, v)
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	more := 0
	if len(out) > MaxViolations {
		out, more = out[:MaxViolations], len(out)-MaxViolations
	}
	if len(out) == 0 {
		// The whole document breaks the schema, its lists cut to their
		// first items do not: every error lies past the detailed items of
		// a long list, or in a list as a whole (maxItems, uniqueItems).
		out = append(out, pastDetail(cut, "/schemas/"+s.release+"/"+rel))
	}
	if len(cut) > 0 {
		p := longest(cut)
		out[len(out)-1].Unlisted = fmt.Sprintf("the items past the first %d of each list (%s holds %d) were validated for the verdict only, their errors not listed", DetailItems, p, cut[p])
	}
	out[len(out)-1].More = more
	return out, nil
}

// checkPrefix names, in the compiled cache, the yes-or-no schema of a
// release schema: {"if": {"$ref": <it>}, "else": false}. A validator
// applies an if schema in its yes-or-no mode.
const checkPrefix = "?"

// violations lists the leaves of a validation error (nil: none).
func violations(err error) ([]Violation, error) {
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	var out []Violation
	eachLeaf(ve, func(v Violation) { out = append(out, v) })
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	if len(out) == 0 {
		out = append(out, Violation{Message: err.Error()})
	}
	return out, nil
}

// eachLeaf calls fn with the violation each leaf of a validation error is:
// where in the document, which schema and keyword, and the validator's
// message in English (unbounded).
func eachLeaf(e *jsonschema.ValidationError, fn func(Violation)) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			eachLeaf(c, fn)
		}
		return
	}
	p := ""
	for _, tok := range e.InstanceLocation {
		p += "/" + rawjson.EscapeToken(tok)
	}
	id := strings.TrimPrefix(e.SchemaURL, base)
	kw, sp := "", id
	if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
		kw = kp[len(kp)-1]
		if strings.Contains(id, "#") {
			sp = id + "/" + strings.Join(kp, "/")
		} else {
			sp = id + "#/" + strings.Join(kp, "/")
		}
	}
	fn(Violation{Pointer: p, SchemaID: id, Keyword: kw, SchemaPath: sp, Message: e.ErrorKind.LocalizedString(english)})
}

// detailed returns v with every list longer than DetailItems cut to its
// first DetailItems items, noting in cut the JSON pointer and length of
// each list it cut. v is not changed.
func detailed(v any, at string, cut map[string]int) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = detailed(e, rawjson.Pointer(at, k), cut)
		}
		return out
	case []any:
		n := len(x)
		if n > DetailItems {
			cut[at] = n
			n = DetailItems
		}
		out := make([]any, n)
		for i := range n {
			out[i] = detailed(x[i], at+"/"+strconv.Itoa(i), cut)
		}
		return out
	}
	return v
}

// pastDetail is the violation of a document that breaks schema id only
// in what its detailed validation left out (the items of the lists cut):
// at the list, or at the nearest member holding every list cut, naming
// them (the first few).
func pastDetail(cut map[string]int, id string) Violation {
	lists := make([]string, 0, len(cut))
	for p := range cut {
		lists = append(lists, p)
	}
	sort.Strings(lists)
	if len(lists) == 1 {
		p := lists[0]
		return Violation{Pointer: p, SchemaID: id, Message: fmt.Sprintf(
			"the list breaks the schema past its first %d items, or as a whole: it holds %d items, and a list this long is checked in full for the verdict but its errors are listed only within its first %d items",
			DetailItems, cut[p], DetailItems)}
	}
	at := lists[0]
	var named []string
	for i, p := range lists {
		at = commonPointer(at, p)
		if i < 3 {
			named = append(named, fmt.Sprintf("%s (%d items)", p, cut[p]))
		}
	}
	if len(lists) > 3 {
		named = append(named, fmt.Sprintf("%d more", len(lists)-3))
	}
	return Violation{Pointer: at, SchemaID: id, Message: fmt.Sprintf(
		"one of the %d lists longer than %d items breaks the schema past its first %d items, or as a whole: %s; each is checked in full for the verdict but its errors are listed only within its first %d items",
		len(lists), DetailItems, DetailItems, strings.Join(named, ", "), DetailItems)}
}

// commonPointer is the longest JSON pointer a and b both start with.
func commonPointer(a, b string) string {
	ta, tb := strings.Split(a, "/"), strings.Split(b, "/")
	n := 0
	for n < len(ta) && n < len(tb) && ta[n] == tb[n] {
		n++
	}
	return strings.Join(ta[:n], "/")
}

// longest is the pointer of the longest list cut ("" when none).
func longest(cut map[string]int) string {
	best, n := "", -1
	for p, l := range cut {
		if l > n || (l == n && p < best) {
			best, n = p, l
		}
	}
	return best
}

// Total is the number of violations vs stands for: those listed and the
// More of the last.
func Total(vs []Violation) int {
	if len(vs) == 0 {
		return 0
	}
	return len(vs) + vs[len(vs)-1].More
}
