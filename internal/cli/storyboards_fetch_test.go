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
)

// withStoryboardsCache points the fetched-storyboards cache at a
// temporary folder.
func withStoryboardsCache(t *testing.T) string { return tempCache(t, &material.StoryboardsCache) }

// A run given the URL of a published bundle fetches it into the cache
// once, says so, and runs its storyboards; the next run, and a re-judge
// given the same URL, read the cache.
func TestRunFetchesThePublishedStoryboardsOnceIntoTheCache(t *testing.T) {
	local := shared.File(t, "spec/compliance/3.1.19")
	cache := withStoryboardsCache(t)
	published, hits := releasetest.Serve(t, releasetest.Pack(t, local, "3.1.19"), "3.1.19")
	url, stop, err := seller.Start(t.Context(), seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var first string
	for i, want := range []string{"adcp-conform: storyboards: fetched release 3.1.19 from " + published + " into " + filepath.Join(cache, "3.1.19"),
		"adcp-conform: storyboards: release 3.1.19 from the cache " + filepath.Join(cache, "3.1.19")} {
		before := hits.Load()
		out := t.TempDir()
		// --storyboard alone judges no rule; the re-judge below must do
		// the same (it once judged them all, and disagreed).
		code, so, se := run(t, nil, "", "run", "--mcp", url, "--out", out, "--storyboards", published, "--storyboard", "capability_discovery")
		if code != ExitOK || !strings.Contains(se, want) {
			t.Fatalf("run %d: exit %d, want %q on stderr\n%s%s", i+1, code, want, so, se)
		}
		if i == 0 {
			first = out
		}
		if i == 1 && hits.Load() != before {
			t.Errorf("the second run made %d requests", hits.Load()-before)
		}
		res := readResults(t, out)
		if res.StoryboardsRelease != "3.1.19" || len(res.Storyboards) == 0 {
			t.Errorf("run %d: storyboards_release %q, %d storyboards; notes %q", i+1, res.StoryboardsRelease, len(res.Storyboards), res.Notes)
		}
	}
	before := hits.Load()
	code, so, se := run(t, nil, "", "judge", "--out", t.TempDir(), "--storyboards", published, first)
	if !strings.Contains(se, "from the cache") || strings.Contains(so+se, "DISAGREE") || code == ExitUsage {
		t.Errorf("judge --storyboards URL: exit %d\n%s%s", code, so, se)
	}
	if hits.Load() != before {
		t.Errorf("the re-judge made %d requests", hits.Load()-before)
	}
	// Without --storyboards, the usage error names the cached copy.
	want := "the copy fetched earlier is " + filepath.Join(cache, "3.1.19")
	if code, _, se := run(t, nil, "", "judge", "--out", t.TempDir(), first); code != ExitUsage || !strings.Contains(se, want) {
		t.Errorf("judge without --storyboards: exit %d, want %q in %q", code, want, se)
	}
}

// A bundle that cannot be fetched (a URL given, or the default with no
// cache folder) leaves the storyboards out with the reason: no usage
// error, and the exit code is the one of a run without storyboards.
func TestUnfetchableStoryboardsAreUnavailableWithTheReason(t *testing.T) {
	url, stop, err := seller.Start(t.Context(), seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	srv := httptest.NewServer(http.NotFoundHandler())
	gone := srv.URL + "/protocol/3.1.19.tgz"
	srv.Close()
	args := []string{"run", "--mcp", url, "--schemas", "off", "--label-filter", "family:env"}
	offCode, so, se := run(t, nil, "", append(args, "--out", t.TempDir(), "--storyboards", "off")...)
	if offCode == ExitUsage {
		t.Fatalf("--storyboards off: exit %d\n%s%s", offCode, so, se)
	}
	for _, tc := range []struct {
		name, flag, want string
		cache            bool
	}{
		{"unreachable URL", gone, "fetching the 3.1.19 storyboards from " + gone, true},
		{"default, no cache folder", "", "no cache folder for https://adcontextprotocol.org/protocol/3.1.19.tgz", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cache {
				withStoryboardsCache(t)
			}
			out := t.TempDir()
			a := append(append([]string(nil), args...), "--out", out)
			if tc.flag != "" {
				a = append(a, "--storyboards", tc.flag)
			}
			code, so, se := run(t, nil, "", a...)
			if code != offCode || !strings.Contains(se, "adcp-conform: storyboards: the spec's compliance storyboards were not run: ") || !strings.Contains(se, tc.want) {
				t.Fatalf("exit %d (with --storyboards off: %d), want %q on stderr\n%s%s", code, offCode, tc.want, so, se)
			}
			res := readResults(t, out)
			note := strings.Join(res.Notes, "\n")
			if res.StoryboardsRelease != "" || !strings.Contains(note, tc.want) || !strings.Contains(note, "give a local copy with --storyboards DIR") {
				t.Errorf("storyboards_release %q, notes %q", res.StoryboardsRelease, res.Notes)
			}
		})
	}
	// A URL that names no bundle is a mistake in the command line.
	if code, _, se := run(t, nil, "", append(args, "--out", t.TempDir(), "--storyboards", "https://example.com/protocol/latest.zip")...); code != ExitUsage || !strings.Contains(se, "release bundle") {
		t.Errorf("a URL naming no bundle: exit %d, %q", code, se)
	}
}

// The reference seller's two passes share one fetch, said once.
func TestTheReferenceRunFetchesTheStoryboardsOnce(t *testing.T) {
	local := shared.File(t, "spec/compliance/3.1.19")
	withStoryboardsCache(t)
	published, hits := releasetest.Serve(t, releasetest.Pack(t, local, "3.1.19"), "3.1.19")
	out := t.TempDir()
	code, so, se := run(t, nil, "", "run", "--out", out, "--schemas", "off", "--storyboards", published, "--label-filter", "storyboard:capability_discovery")
	if code != ExitOK || strings.Count(se, "adcp-conform: storyboards: fetched release 3.1.19") != 1 || hits.Load() != 2 {
		t.Fatalf("exit %d, %d requests (want the .tgz and its .sha256 once)\n%s%s", code, hits.Load(), so, se)
	}
	for _, dir := range []string{out, filepath.Join(out, ReferenceA2A03Dir)} {
		if res := readResults(t, dir); res.StoryboardsRelease != "3.1.19" {
			t.Errorf("%s: storyboards_release %q, notes %q", dir, res.StoryboardsRelease, res.Notes)
		}
	}
}
