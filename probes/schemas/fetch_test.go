package schemas

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/release"
	"github.com/adcp-conform/adcp-conform/probes/release/releasetest"
)

// A release fetched from its published folder loads, and validates against
// the schemas its references brought in.
func TestAFetchedReleaseLoadsAndValidates(t *testing.T) {
	folder, _ := releasetest.ServeSchemas(t, "9.1.0", releasetest.TinySchemas)
	dir, _, err := release.Fetch(context.Background(), nil, release.Schemas, folder, t.TempDir())
	if err != nil {
		t.Fatal(err)
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

// The published 3.1.19 tree, served over HTTP, is fetched whole enough to
// validate every task's response and the error schema, and the copy
// validates as the local folder does.
func TestFetchTheRealReleaseFromAFakePublishedLocation(t *testing.T) {
	local := shared.File(t, filepath.Join("spec", "schemas", "3.1.19"))
	folder, srv, hits := releasetest.ServeSchemasFolder(t, local, "3.1.19")
	cache := t.TempDir()
	start := time.Now()
	dir, fetched, err := release.Fetch(context.Background(), srv.Client(), release.Schemas, folder, cache)
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
