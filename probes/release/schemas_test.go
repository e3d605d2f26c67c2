package release

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/release/releasetest"
)

func TestFetchCopiesAPublishedReleaseOnce(t *testing.T) {
	folder, hits := releasetest.ServeSchemas(t, "9.1.0", releasetest.TinySchemas)
	cache := t.TempDir()
	dir, fetched, err := Fetch(context.Background(), nil, Schemas, folder, cache)
	if err != nil || !fetched {
		t.Fatalf("first fetch: fetched %v, %v", fetched, err)
	}
	if dir != filepath.Join(cache, "9.1.0") || Cached(cache, "9.1.0") != dir {
		t.Fatalf("cached in %s", dir)
	}
	for rel := range releasetest.TinySchemas {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if strings.HasPrefix(rel, "bundled/") != os.IsNotExist(err) {
			t.Errorf("%s: %v", rel, err)
		}
	}
	first := hits.Load()
	if first != int64(len(releasetest.TinySchemas)-1) {
		t.Errorf("%d requests for %d files", first, len(releasetest.TinySchemas)-1)
	}
	again, fetched, err := Fetch(context.Background(), nil, Schemas, folder, cache)
	if err != nil || fetched || again != dir || hits.Load() != first {
		t.Fatalf("second fetch: %s fetched %v, %v, %d more requests", again, fetched, err, hits.Load()-first)
	}
}

func TestAFailedFetchLeavesNoCopy(t *testing.T) {
	broken := map[string]string{}
	for k, v := range releasetest.TinySchemas {
		broken[k] = v
	}
	delete(broken, "core/widget.json") // referenced, so the fetch fails on it
	folder, _ := releasetest.ServeSchemas(t, "9.1.0", broken)
	cache := t.TempDir()
	if _, _, err := Fetch(context.Background(), nil, Schemas, folder, cache); err == nil || !strings.Contains(err.Error(), "core/widget.json") {
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
		if _, _, err := Fetch(context.Background(), nil, Schemas, u, t.TempDir()); err == nil {
			t.Errorf("%s: fetched", u)
		}
	}
}
