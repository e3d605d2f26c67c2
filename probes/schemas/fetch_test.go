package schemas

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/shared"
)

// publish serves files (release-relative path → body) as a release's
// published folder at /schemas/<release>/, counting the requests.
func publish(t *testing.T, release string, files map[string]string) (folder string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		body, ok := files[strings.TrimPrefix(r.URL.Path, "/schemas/"+release+"/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/schema+json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/schemas/" + release + "/", hits
}

// tiny is a release of four schemas: the index, the manifest naming one
// task's response schema, which references a core object relatively and the
// error schema root-relatively, and a bundled file nothing fetches.
var tiny = map[string]string{
	"index.json": `{"$id":"/schemas/9.1.0/index.json","schemas":{"core":{"schemas":{"error":{"$ref":"/schemas/9.1.0/core/error.json"}}}}}`,
	"manifest.json": `{"tools":{"get_widgets":{"response_schema":"media-buy/get-widgets-response.json",` +
		`"async_response_schemas":["media-buy/get-widgets-async-response-working.json"]}}}`,
	"core/error.json": `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"/schemas/9.1.0/core/error.json","type":"object",` +
		`"required":["code","message"],"properties":{"code":{"type":"string"},"message":{"type":"string"}}}`,
	"core/widget.json": `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"/schemas/9.1.0/core/widget.json","type":"object",` +
		`"required":["widget_id"],"properties":{"widget_id":{"type":"string"}},"additionalProperties":false}`,
	"media-buy/get-widgets-response.json": `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"/schemas/9.1.0/media-buy/get-widgets-response.json",` +
		`"type":"object","required":["widgets"],"properties":{"widgets":{"type":"array","items":{"$ref":"../core/widget.json"}},` +
		`"errors":{"type":"array","items":{"$ref":"/schemas/9.1.0/core/error.json#"}}}}`,
	"media-buy/get-widgets-async-response-working.json": `{"$schema":"http://json-schema.org/draft-07/schema#",` +
		`"$id":"/schemas/9.1.0/media-buy/get-widgets-async-response-working.json","type":"object"}`,
	"bundled/media-buy/get-widgets-response.json": `{}`,
}

func TestFetchCopiesAPublishedReleaseOnceAndLoadsIt(t *testing.T) {
	folder, hits := publish(t, "9.1.0", tiny)
	cache := t.TempDir()
	dir, fetched, err := Fetch(context.Background(), nil, folder, cache)
	if err != nil || !fetched {
		t.Fatalf("first fetch: fetched %v, %v", fetched, err)
	}
	if dir != filepath.Join(cache, "9.1.0") || Cached(cache, "9.1.0") != dir {
		t.Fatalf("cached in %s", dir)
	}
	for rel := range tiny {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if strings.HasPrefix(rel, "bundled/") != os.IsNotExist(err) {
			t.Errorf("%s: %v", rel, err)
		}
	}
	first := hits.Load()
	if first != int64(len(tiny)-1) {
		t.Errorf("%d requests for %d files", first, len(tiny)-1)
	}
	again, fetched, err := Fetch(context.Background(), nil, folder, cache)
	if err != nil || fetched || again != dir || hits.Load() != first {
		t.Fatalf("second fetch: %s fetched %v, %v, %d more requests", again, fetched, err, hits.Load()-first)
	}
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := set.Response("get_widgets", []byte(`{"widgets":[{"widget_id":"w1"},{"widget_id":7,"colour":"red"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"/widgets/1/widget_id": false, "/widgets/1": false}
	for _, v := range vs {
		if _, ok := want[v.Pointer]; ok && strings.HasPrefix(v.SchemaID, "/schemas/9.1.0/core/widget.json#") {
			want[v.Pointer] = true
		}
	}
	for p, seen := range want {
		if !seen {
			t.Errorf("no violation at %s citing core/widget.json: %+v", p, vs)
		}
	}
	if rel := set.ResponseSchema("get_widgets", "working"); rel != "media-buy/get-widgets-async-response-working.json" {
		t.Errorf("working body: %s", rel)
	}
}

func TestAFailedFetchLeavesNoCopy(t *testing.T) {
	broken := map[string]string{}
	for k, v := range tiny {
		broken[k] = v
	}
	delete(broken, "core/widget.json") // referenced, so the fetch fails on it
	folder, _ := publish(t, "9.1.0", broken)
	cache := t.TempDir()
	if _, _, err := Fetch(context.Background(), nil, folder, cache); err == nil || !strings.Contains(err.Error(), "core/widget.json") {
		t.Fatalf("want an error naming core/widget.json, got %v", err)
	}
	if Cached(cache, "9.1.0") != "" {
		t.Error("a failed fetch is cached")
	}
	if left, _ := os.ReadDir(cache); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestFetchRefusesFoldersThatAreNotReleases(t *testing.T) {
	for _, u := range []string{"ftp://example.com/schemas/3.1.19/", "https://example.com/schemas/../", "https://example.com/", "not a url"} {
		if _, _, err := Fetch(context.Background(), nil, u, t.TempDir()); err == nil {
			t.Errorf("%s: fetched", u)
		}
	}
}

// The published 3.1.19 tree, served over HTTP, is fetched whole enough to
// validate every task's response and the error schema, and the copy
// validates as the local folder does.
func TestFetchTheRealReleaseFromAFakePublishedLocation(t *testing.T) {
	local := shared.File(t, filepath.Join("spec", "schemas", "3.1.19"))
	var hits atomic.Int64
	fsrv := http.StripPrefix("/schemas/3.1.19/", http.FileServer(http.Dir(local)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fsrv.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cache := t.TempDir()
	start := time.Now()
	dir, fetched, err := Fetch(context.Background(), srv.Client(), srv.URL+"/schemas/3.1.19/", cache)
	if err != nil || !fetched {
		t.Fatalf("fetched %v, %v", fetched, err)
	}
	t.Logf("fetched %d files in %v", hits.Load(), time.Since(start))
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	for task := range set.tools.Tools {
		if _, err := set.schema(set.ResponseSchema(task, "")); err != nil {
			t.Errorf("%s: %v", task, err)
		}
	}
	t.Logf("compiled the %d response schemas of the fetched copy in %v", len(set.tools.Tools), time.Since(start))
	vs, err := set.Error([]byte(`{"code":"INVALID_REQUEST","message":42}`))
	if err != nil || len(vs) == 0 || vs[0].Pointer != "/message" {
		t.Errorf("error schema: %+v %v", vs, err)
	}
}
