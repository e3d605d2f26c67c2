package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/release/releasetest"
	"github.com/adcp-conform/adcp-conform/report"
)

// withCache points the fetched-schemas cache at a temporary folder.
func withCache(t *testing.T) string { return tempCache(t, &material.SchemasCache) }

// tempCache points a cache of fetched releases (material.SchemasCache,
// material.StoryboardsCache) at a temporary folder for the test.
func tempCache(t *testing.T, root *func() (string, error)) string {
	t.Helper()
	dir := t.TempDir()
	old := *root
	*root = func() (string, error) { return dir, nil }
	t.Cleanup(func() { *root = old })
	return dir
}

// schemaOutcomes returns the outcome and message of SCHEMA-01 and SCHEMA-02.
func schemaOutcomes(t *testing.T, dir string) map[string]report.SpecResult {
	t.Helper()
	out := map[string]report.SpecResult{}
	for _, r := range readResults(t, dir).Rules {
		if strings.HasPrefix(r.ID, "SCHEMA-") && len(r.Specs) > 0 {
			out[r.ID] = r.Specs[0]
		}
	}
	return out
}

// A run given the URL of a published release fetches it into the cache
// once, says so, and judges with it; the next run reads the cache.
func TestRunFetchesThePublishedSchemasOnceIntoTheCache(t *testing.T) {
	local := shared.File(t, "spec/schemas/3.1.19")
	cache := withCache(t)
	published, _, hits := releasetest.ServeSchemasFolder(t, local, "3.1.19")
	url, stop, err := seller.Start(t.Context(), seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for i, want := range []string{"fetched release 3.1.19 from " + published + " into " + filepath.Join(cache, "3.1.19"),
		"release 3.1.19 from the cache " + filepath.Join(cache, "3.1.19")} {
		before := hits.Load()
		out := t.TempDir()
		code, so, se := run(t, nil, "", "run", "--mcp", url, "--out", out, "--schemas", published, "--label-filter", "family:schema")
		if code != ExitOK || !strings.Contains(se, want) {
			t.Fatalf("run %d: exit %d, want %q on stderr\n%s%s", i+1, code, want, so, se)
		}
		if i == 1 && hits.Load() != before {
			t.Errorf("the second run made %d requests", hits.Load()-before)
		}
		for id, sp := range schemaOutcomes(t, out) {
			if sp.Outcome != report.Passed {
				t.Errorf("run %d: %s %s: %s", i+1, id, sp.Outcome, sp.Message)
			}
		}
		if got := readResults(t, out).SchemasRelease; got != "3.1.19" {
			t.Errorf("schemas_release %q", got)
		}
	}
}

// With no local copy and the published location unreachable, the SCHEMA
// rules are skipped with the reason, and the run goes on.
func TestUnreachableSchemasSkipTheRulesWithTheReason(t *testing.T) {
	withCache(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	gone := srv.URL + "/schemas/3.1.19/"
	srv.Close()
	url, stop, err := seller.Start(t.Context(), seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	out := t.TempDir()
	code, so, se := run(t, nil, "", "run", "--mcp", url, "--out", out, "--schemas", gone, "--label-filter", "family:schema || family:env")
	if code != ExitOK || !strings.Contains(se, "SCHEMA-01 and SCHEMA-02 are skipped") {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	got := schemaOutcomes(t, out)
	for _, id := range []string{"SCHEMA-01", "SCHEMA-02"} {
		if sp := got[id]; sp.Outcome != report.Skipped || !strings.Contains(sp.Message, "fetching the 3.1.19 schemas from "+gone) {
			t.Errorf("%s: %s %q", id, sp.Outcome, sp.Message)
		}
	}
	if code, _, se := run(t, nil, "", "run", "--mcp", url, "--out", t.TempDir(), "--schemas", "off", "--label-filter", "family:schema || family:env"); code != ExitOK || strings.Contains(se, "adcp-conform: schemas:") {
		t.Errorf("--schemas off: exit %d, %q", code, se)
	}
}
