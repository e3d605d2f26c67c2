package schemas

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/shared"
)

func load(t *testing.T) *Set {
	t.Helper()
	dir := shared.File(t, filepath.Join("spec", "schemas", "3.1.19"))
	start := time.Now()
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %s (%d files indexed, %d tasks in the manifest) in %v", dir, len(s.files), len(s.tools.Tools), time.Since(start))
	return s
}

func TestAValidErrorPassesAndABrokenOneNamesItsPointerAndSchema(t *testing.T) {
	s := load(t)
	if vs, err := s.Error([]byte(`{"code":"INVALID_REQUEST","message":"brief must be a string.","recovery":"correctable"}`)); err != nil || len(vs) > 0 {
		t.Fatalf("a valid error: %v %v", vs, err)
	}
	vs, err := s.Error([]byte(`{"code":"INVALID_REQUEST","message":42}`))
	if err != nil || len(vs) == 0 {
		t.Fatalf("a broken error: %v %v", vs, err)
	}
	found := false
	for _, v := range vs {
		if v.Pointer == "/message" && strings.Contains(v.SchemaID, "/schemas/3.1.19/core/error.json") {
			found = true
		}
	}
	if !found {
		t.Errorf("no violation at /message citing core/error.json: %+v", vs)
	}
}

func TestResponseSchemasResolveRootRelativeRefs(t *testing.T) {
	s := load(t)
	start := time.Now()
	vs, err := s.Response("get_products", []byte(`{"status":"completed","adcp_version":"3.1","products":[{"product_id":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("a product with a numeric id and nothing else validates")
	}
	t.Logf("compiled get-products-response.json and its references in %v; %d violations, e.g. %+v", time.Since(start), len(vs), vs[0])
	if _, err := s.Response("no_such_task", []byte(`{}`)); err != ErrNoSchema {
		t.Errorf("unknown task: %v", err)
	}
}

func TestValidateNamesKeywordAndSchemaPathAndRefusesSchemasOutsideTheRelease(t *testing.T) {
	s := load(t)
	vs, err := s.Validate("core/error.json", []byte(`{"code":"INVALID_REQUEST","message":42}`))
	if err != nil || len(vs) == 0 {
		t.Fatalf("a broken error: %v %v", vs, err)
	}
	found := false
	for _, v := range vs {
		if v.Pointer == "/message" && v.Keyword == "type" && strings.HasPrefix(v.SchemaPath, v.SchemaID) && strings.HasSuffix(v.SchemaPath, "/type") {
			found = true
		}
	}
	if !found {
		t.Errorf("no type violation at /message with its keyword and schema path: %+v", vs)
	}
	if vs, err := s.Validate("media-buy/create-media-buy-response.json", []byte(`{"status":"failed","errors":[{"code":"INVALID_REQUEST","message":"no"}]}`)); err != nil || len(vs) > 0 {
		t.Errorf("the error arm of create-media-buy-response.json: %v %v", vs, err)
	}
	for _, rel := range []string{"", "../3.2.0-beta.5/core/error.json", "/core/error.json", "extensions/test/comply-test-controller-response.json", "core"} {
		if _, err := s.Validate(rel, []byte(`{}`)); !errors.Is(err, ErrNoSchema) {
			t.Errorf("Validate(%q): %v, want ErrNoSchema", rel, err)
		}
	}
}

// TestATreeWithUnversionedIDsResolvesItsRefs: the 3.2 beta's schemas (the
// spec's source tree) name themselves "/schemas/core/…", without the
// release; their $refs resolve inside the folder all the same, and a
// reference that climbs out of it is still refused.
func TestATreeWithUnversionedIDsResolvesItsRefs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "3.9.0-beta.1")
	write := func(rel, body string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("core/error.json", `{"$id":"/schemas/core/error.json","type":"object","required":["code"],"properties":{"code":{"type":"string"}}}`)
	write("core/version-envelope.json", `{"$id":"/schemas/core/version-envelope.json","properties":{"adcp_version":{"type":"string"}}}`)
	write("media-buy/thing-response.json", `{"$id":"/schemas/media-buy/thing-response.json","allOf":[{"$ref":"/schemas/core/version-envelope.json"}]}`)
	write("media-buy/escape-response.json", `{"$id":"/schemas/media-buy/escape-response.json","allOf":[{"$ref":"/schemas/../../etc/x.json"}]}`)
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		doc        string
		violations bool
	}{
		{`{"adcp_version":"3.9-beta.1"}`, false},
		{`{"adcp_version":39}`, true},
	} {
		vs, err := s.Validate("media-buy/thing-response.json", []byte(c.doc))
		if err != nil || (len(vs) > 0) != c.violations {
			t.Errorf("%s: violations %+v, error %v; want violations %v", c.doc, vs, err, c.violations)
		}
	}
	if _, err := s.Validate("media-buy/escape-response.json", []byte(`{}`)); err == nil {
		t.Error("a $ref out of the release folder compiled")
	}
}

// TestThe32BetaSchemasCompile: every response schema of the 3.2 beta's
// manifest compiles (the tree's $ids carry no release).
func TestThe32BetaSchemasCompile(t *testing.T) {
	s, err := Load(shared.File(t, filepath.Join("spec", "schemas", "3.2.0-beta.5")))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range s.Tasks() {
		if _, err := s.Response(task, []byte(`{}`)); err != nil && !errors.Is(err, ErrNoSchema) {
			t.Errorf("%s: %v", task, err)
		}
	}
}

// TestAnInMemoryTreeServesDocumentsCheckersAndRequestSchemas: LoadFS reads
// a tree from any fs.FS; Document, Checker and RequestSchema serve a
// generator walking the raw schemas (probes/fuzz).
func TestAnInMemoryTreeServesDocumentsCheckersAndRequestSchemas(t *testing.T) {
	s, err := LoadFS(fstest.MapFS{
		"manifest.json":                  {Data: []byte(`{"tools":{"do_thing":{"request_schema":"x/do-thing-request.json","mutating":true}}}`)},
		"x/do-thing-request.json":        {Data: []byte(`{"$id":"/schemas/9.9.9/x/do-thing-request.json","type":"object","properties":{"n":{"$ref":"/schemas/9.9.9/core/n.json"}}}`)},
		"core/n.json":                    {Data: []byte(`{"$id":"/schemas/9.9.9/core/n.json","type":"integer","minimum":1}`)},
		"other/get-widgets-request.json": {Data: []byte(`{"type":"object"}`)},
	}, "9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.RequestSchema("do_thing"); got != "x/do-thing-request.json" {
		t.Errorf("manifest task: %q", got)
	}
	if got := s.RequestSchema("get_widgets"); got != "other/get-widgets-request.json" {
		t.Errorf("task by file name: %q", got)
	}
	if m, listed := s.Mutating("do_thing"); !m || !listed {
		t.Errorf("Mutating(do_thing) = %v, %v", m, listed)
	}
	doc, err := s.Document(s.Location("x/do-thing-request.json"))
	if err != nil || doc.(map[string]any)["type"] != "object" {
		t.Fatalf("Document: %v %v", doc, err)
	}
	if _, err := s.Document(s.Location("../escape.json")); err == nil {
		t.Error("a document outside the release was served")
	}
	ok, err := s.Checker(s.Location("x/do-thing-request.json") + "#/properties/n")
	if err != nil {
		t.Fatal(err)
	}
	if !ok(json.Number("2")) || ok(json.Number("0")) || ok("2") {
		t.Error("the checker of /properties/n does not follow the referenced schema")
	}
	if vs, err := s.Check(s.Location("x/do-thing-request.json"), map[string]any{"n": json.Number("0")}); err != nil || len(vs) != 1 || vs[0].Pointer != "/n" {
		t.Errorf("Check: %+v %v", vs, err)
	}
}
