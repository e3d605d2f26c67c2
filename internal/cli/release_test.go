package cli

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/release"
	"github.com/adcp-conform/adcp-conform/probes/release/releasetest"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/schema"
)

// specMirror is the spec folder internal/shared finds, as a folder mirror: compliance/<release>/
// and schemas/<release>/ for 3.1.19 and 3.2.0-beta.5.
func specMirror(t *testing.T) string {
	t.Helper()
	shared.File(t, "spec/compliance/3.2.0-beta.5")
	shared.File(t, "spec/schemas/3.2.0-beta.5")
	return shared.File(t, "spec")
}

// releaseToken protects the sellers of these tests, as the bundled
// reference run's token does (the security storyboards need one).
const releaseToken = "release-test-token-0123456789abcdef"

var tokenEnv = map[string]string{"T": releaseToken}

// startSeller starts the reference seller on every face.
func startSeller(t *testing.T, opts seller.Options) seller.Endpoints {
	t.Helper()
	eps, stop, err := seller.StartAll(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return eps
}

// The must-show of the release following the seller: a reference seller
// that speaks only the 3.2 beta, run with the default flags and the spec
// folder as the mirror, is graded on 3.2.0-beta.5 — storyboards and
// schemas — and the terminal and results.json say which and why. Under
// the fixed 3.1.19 default it was graded on storyboards it is excluded
// from.
func TestASellerSpeakingOnly32IsGradedOn32(t *testing.T) {
	mirror := specMirror(t)
	eps := startSeller(t, seller.Options{Release: seller.Release32, OnlyRelease: true, BearerToken: releaseToken})
	out := t.TempDir()
	code, so, se := run(t, tokenEnv, "", "run", "--mcp", eps.MCP, "--a2a", eps.A2A10, "--bearer-env", "T", "--release-mirror", mirror, "--out", out)
	want := "adcp-conform: release: 3.2.0-beta.5 — 3.2.0-beta.5 is the newest release of 3.2-beta.5, the newest version the seller's adcp.supported_versions [3.2-beta.5] lists that the harness can get from " + mirror
	if !strings.Contains(se, want) || !strings.Contains(so, "storyboards and schemas: AdCP 3.2.0-beta.5 — ") {
		t.Fatalf("exit %d; want %q on stderr and the release in the summary\n%s%s", code, want, so, se)
	}
	// The mirror's release folders are named with their links resolved
	// (the spec folder may itself be a link).
	resolved := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	for _, line := range []string{"adcp-conform: schemas: release 3.2.0-beta.5 from the mirror " + resolved(filepath.Join(mirror, "schemas", "3.2.0-beta.5")),
		"adcp-conform: storyboards: release 3.2.0-beta.5 from the mirror " + resolved(filepath.Join(mirror, "compliance", "3.2.0-beta.5"))} {
		if !strings.Contains(se, line) {
			t.Errorf("stderr lacks %q", line)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, FileResults)); err != nil || schema.Validate(b) != nil {
		t.Errorf("results.json does not match its schema: %v %v", err, schema.Validate(b))
	}
	res := readResults(t, out)
	if res.StoryboardsRelease != "3.2.0-beta.5" || res.SchemasRelease != "3.2.0-beta.5" {
		t.Errorf("storyboards_release %q, schemas_release %q", res.StoryboardsRelease, res.SchemasRelease)
	}
	if r := res.Release; r == nil || r.Version != "3.2.0-beta.5" || r.ChosenBy != report.ReleaseBySeller || !slices.Equal(r.Advertised, []string{"3.2-beta.5"}) ||
		r.Mirror != mirror || !slices.Equal(r.Available, []string{"3.2.0-beta.5", "3.1.19"}) || !strings.HasPrefix(want, "adcp-conform: release: 3.2.0-beta.5 — "+r.Reason) {
		t.Errorf("release %+v", res.Release)
	}
	excluded, ran := 0, 0
	for _, sb := range res.Storyboards {
		switch {
		case sb.NotSelected != nil && sb.NotSelected.Reason == "version_excluded":
			excluded++
		case sb.Outcome == report.Passed:
			ran++
		}
	}
	if excluded > 0 || ran == 0 {
		t.Errorf("%d storyboards version_excluded, %d passed; want none excluded", excluded, ran)
	}
	// The run grades the 3.2 storyboards: a read-only run of this seller
	// fails webhook_emission's synchronous-completion branch set
	// whichever way the release is given (--storyboards too), so the exit
	// code is not this test's business.
	if code != ExitOK && code != ExitNonConformant {
		t.Errorf("exit %d\n%s", code, so)
	}
}

// The release follows the seller in 3.1 and 3.2 mode, --release pins one
// (a version takes its newest release), the explicit folders still win,
// and a seller advertising no release the run can get is told so: its
// storyboards and SCHEMA-01 skipped with the reason, never passed.
func TestTheReleaseFollowsTheSeller(t *testing.T) {
	mirror := specMirror(t)
	only31 := shared.Mirror(t, "3.1.19")
	sb31 := filepath.Join(mirror, "compliance", "3.1.19")
	r32 := seller.Options{Release: seller.Release32}
	r32only := seller.Options{Release: seller.Release32, OnlyRelease: true}
	for _, tc := range []struct {
		name     string
		seller   seller.Options
		args     []string
		version  string // "" none
		by       string
		why      string // in the reason
		excluded bool   // the storyboard is version_excluded
	}{
		{name: "3.1 mode", args: []string{"--release-mirror", mirror}, version: "3.1.19", by: report.ReleaseBySeller,
			why: "3.1.19 is the newest release of 3.1, the newest version the seller's adcp.supported_versions [3.0, 3.1] lists that the harness can get from " + mirror},
		{name: "3.2 mode", seller: r32, args: []string{"--release-mirror", mirror}, version: "3.2.0-beta.5", by: report.ReleaseBySeller,
			why: "adcp.supported_versions [3.0, 3.1, 3.2-beta.5]"},
		{name: "a version pinned", seller: r32, args: []string{"--release-mirror", mirror, "--release", "3.1"}, version: "3.1.19", by: "--release",
			why: "the newest release of --release 3.1 the run can get from " + mirror},
		{name: "a release pinned", seller: r32, args: []string{"--release-mirror", mirror, "--release", "3.1.19"}, version: "3.1.19", by: "--release",
			why: "pinned by --release 3.1.19"},
		{name: "the explicit storyboards win", seller: r32only, args: []string{"--release-mirror", mirror, "--storyboards", sb31}, version: "3.1.19", by: "--storyboards",
			why: "the release of --storyboards", excluded: true},
		{name: "no release the seller speaks", seller: r32only, args: []string{"--release-mirror", only31}, by: report.ReleaseBySeller,
			why: "the seller's adcp.supported_versions [3.2-beta.5] lists no release the harness can get from " + only31 + " (it has 3.1.19)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.seller
			opts.BearerToken = releaseToken
			eps := startSeller(t, opts)
			out := t.TempDir()
			args := append([]string{"run", "--mcp", eps.MCP, "--bearer-env", "T", "--out", out, "--label-filter", "rule:SCHEMA-01 || storyboard:capability_discovery"}, tc.args...)
			code, so, se := run(t, tokenEnv, "", args...)
			res := readResults(t, out)
			r := res.Release
			if r == nil || r.Version != tc.version || r.ChosenBy != tc.by || !strings.Contains(r.Reason, tc.why) {
				t.Fatalf("exit %d, release %+v; want %q by %s, %q\n%s%s", code, r, tc.version, tc.by, tc.why, so, se)
			}
			if want := "adcp-conform: release: " + cmp.Or(tc.version, "none") + " — "; !strings.Contains(se, want+r.Reason) {
				t.Errorf("stderr lacks %q", want+r.Reason)
			}
			schema := schemaOutcomes(t, out)["SCHEMA-01"]
			var sb *report.StoryboardResult
			for i := range res.Storyboards {
				if res.Storyboards[i].ID == "capability_discovery" {
					sb = &res.Storyboards[i]
				}
			}
			switch {
			case tc.version == "":
				notes := strings.Join(res.Notes, "\n")
				if sb != nil || res.StoryboardsRelease != "" || !strings.Contains(notes, "the spec's compliance storyboards were not run: "+r.Reason) {
					t.Errorf("storyboards %q ran %v; notes %q", res.StoryboardsRelease, sb, notes)
				}
				if schema.Outcome != report.Skipped || schema.Message != "no schemas: "+r.Reason {
					t.Errorf("SCHEMA-01 %s %q", schema.Outcome, schema.Message)
				}
				if code == ExitOK {
					t.Errorf("exit 0 for a run that graded nothing")
				}
			case sb == nil || res.StoryboardsRelease != tc.version || res.SchemasRelease != tc.version:
				t.Errorf("storyboards %q (capability_discovery %v), schemas %q", res.StoryboardsRelease, sb, res.SchemasRelease)
			case tc.excluded != (sb.NotSelected != nil && sb.NotSelected.Reason == "version_excluded"):
				t.Errorf("capability_discovery %+v, excluded want %v", sb, tc.excluded)
			case !tc.excluded && (sb.Outcome != report.Passed || schema.Outcome != report.Passed):
				t.Errorf("capability_discovery %s, SCHEMA-01 %s %q", sb.Outcome, schema.Outcome, schema.Message)
			}
		})
	}
}

// publishedSite serves the spec folder internal/shared finds, laid out as the published site:
// the release index (3.2.0 listed unpublished, 3.1.3 withdrawn), each
// release's bundle with its checksum, and its schemas; it counts requests.
func publishedSite(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	spec := specMirror(t)
	bundles := map[string][]byte{}
	for _, r := range []string{"3.1.19", "3.2.0-beta.5"} {
		bundles["/protocol/"+r+".tgz"] = releasetest.Pack(t, filepath.Join(spec, "compliance", r), r)
	}
	index := `{"latest_stable":"3.1.19","versions":[
		{"version":"3.2.0","stability":"unpublished","published":false},
		{"version":"3.2.0-beta.5","stability":"beta","prerelease":true},
		{"version":"3.1.19","stability":"stable"},
		{"version":"3.1.3","stability":"withdrawn","withdrawn":true}]}`
	schemaFiles := http.StripPrefix("/schemas/", http.FileServer(http.Dir(filepath.Join(spec, "schemas"))))
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		p := r.URL.Path
		switch tgz, ok := bundles[strings.TrimSuffix(p, ".sha256")]; {
		case p == "/schemas/index.json":
			_, _ = w.Write([]byte(index))
		case ok && strings.HasSuffix(p, ".sha256"):
			sum := sha256.Sum256(tgz)
			_, _ = w.Write([]byte(hex.EncodeToString(sum[:]) + "  " + filepath.Base(strings.TrimSuffix(p, ".sha256")) + "\n"))
		case ok:
			_, _ = w.Write(tgz)
		case strings.HasPrefix(p, "/schemas/3."):
			schemaFiles.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// A site mirror (the published site's layout): its index lists the
// releases, the chosen one's bundle and schemas are fetched into the
// cache once, and a second run reads them from there.
func TestASiteMirrorIsReadThroughItsIndexAndFetchedOnce(t *testing.T) {
	site, hits := publishedSite(t)
	sbCache, scCache := withStoryboardsCache(t), withCache(t)
	eps := startSeller(t, seller.Options{Release: seller.Release32, OnlyRelease: true, BearerToken: releaseToken})
	for i, want := range []string{
		"adcp-conform: storyboards: fetched release 3.2.0-beta.5 from " + site + "/protocol/3.2.0-beta.5.tgz into " + filepath.Join(sbCache, "3.2.0-beta.5"),
		"adcp-conform: storyboards: release 3.2.0-beta.5 from the cache " + filepath.Join(sbCache, "3.2.0-beta.5"),
	} {
		before := hits.Load()
		out := t.TempDir()
		code, so, se := run(t, tokenEnv, "", "run", "--mcp", eps.MCP, "--bearer-env", "T", "--out", out, "--release-mirror", site,
			"--label-filter", "rule:SCHEMA-01 || storyboard:capability_discovery")
		res := readResults(t, out)
		if code != ExitOK || !strings.Contains(se, want) || res.Release == nil || res.Release.Version != "3.2.0-beta.5" ||
			!slices.Equal(res.Release.Available, []string{"3.2.0-beta.5", "3.1.19"}) || res.SchemasRelease != "3.2.0-beta.5" {
			t.Fatalf("run %d: exit %d, release %+v, schemas %q; want %q on stderr\n%s%s", i+1, code, res.Release, res.SchemasRelease, want, so, se)
		}
		// (SCHEMA-01 judges nothing here: the shared 3.2.0-beta.5 tree is
		// the source form, without the manifest.json naming the response
		// schemas that a fetch follows.)
		if i == 1 && hits.Load() != before {
			t.Errorf("the second run made %d requests (the index is read once per process, the release from the cache)", hits.Load()-before)
		}
	}
	if release.Cached(scCache, "3.2.0-beta.5") == "" {
		t.Errorf("the schemas are not in the cache %s", scCache)
	}
}

// A folder mirror may hold a release as its published bundle: used only
// beside a matching .sha256, and extracted into the cache.
func TestAFolderMirrorMayHoldTheBundle(t *testing.T) {
	spec := specMirror(t)
	cache := withStoryboardsCache(t)
	dir := filepath.Join(t.TempDir(), "protocol")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tgz := releasetest.Pack(t, filepath.Join(spec, "compliance", "3.1.19"), "3.1.19")
	sum := sha256.Sum256(tgz)
	for name, b := range map[string][]byte{"3.1.19.tgz": tgz, "3.1.19.tgz.sha256": []byte(hex.EncodeToString(sum[:]) + "  3.1.19.tgz\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eps := startSeller(t, seller.Options{BearerToken: releaseToken})
	out := t.TempDir()
	code, so, se := run(t, tokenEnv, "", "run", "--mcp", eps.MCP, "--bearer-env", "T", "--out", out, "--release-mirror", filepath.Dir(dir), "--storyboard", "capability_discovery")
	want := "adcp-conform: storyboards: fetched release 3.1.19 from " + filepath.Join(dir, "3.1.19.tgz") + " into " + filepath.Join(cache, "3.1.19")
	if res := readResults(t, out); code != ExitOK || !strings.Contains(se, want) || res.StoryboardsRelease != "3.1.19" || len(res.Storyboards) == 0 {
		t.Fatalf("exit %d, storyboards %q; want %q on stderr\n%s%s", code, res.StoryboardsRelease, want, so, se)
	}
	// The mirror holds no schemas/3.1.19/: SCHEMA-01 says so.
	out = t.TempDir()
	if _, _, se := run(t, tokenEnv, "", "run", "--mcp", eps.MCP, "--bearer-env", "T", "--out", out, "--release-mirror", filepath.Dir(dir), "--label-filter", "rule:SCHEMA-01"); !strings.Contains(se, "holds no schemas/3.1.19/") {
		t.Errorf("stderr %q", se)
	}
	if sp := schemaOutcomes(t, out)["SCHEMA-01"]; sp.Outcome != report.Skipped || !strings.Contains(sp.Message, "holds no schemas/3.1.19/") {
		t.Errorf("SCHEMA-01 %s %q", sp.Outcome, sp.Message)
	}
}

// --targets chooses one release per target: each seller is graded on its
// own; and the two faces of one seller listing different versions are
// said to differ, the release following the MCP face, where the
// storyboards run.
func TestEachTargetAndFaceGetsItsOwnRelease(t *testing.T) {
	mirror := specMirror(t)
	e31 := startSeller(t, seller.Options{BearerToken: releaseToken})
	e32 := startSeller(t, seller.Options{Release: seller.Release32, OnlyRelease: true, BearerToken: releaseToken})
	file := filepath.Join(t.TempDir(), "targets.yaml")
	yaml := "- {name: old, mcp: " + e31.MCP + ", bearer_env: T}\n- {name: new, mcp: " + e32.MCP + ", bearer_env: T}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, so, se := run(t, tokenEnv, "", "run", "--targets", file, "--out", out, "--release-mirror", mirror, "--storyboard", "capability_discovery")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	for name, want := range map[string]string{"old": "3.1.19", "new": "3.2.0-beta.5"} {
		res := readResults(t, filepath.Join(out, name))
		if res.Release == nil || res.Release.Version != want || res.StoryboardsRelease != want {
			t.Errorf("%s: release %+v, storyboards %q; want %s", name, res.Release, res.StoryboardsRelease, want)
		}
	}
	out = t.TempDir()
	code, so, se = run(t, tokenEnv, "", "run", "--mcp", e31.MCP, "--a2a", e32.A2A10, "--bearer-env", "T", "--out", out, "--release-mirror", mirror, "--storyboard", "capability_discovery")
	res := readResults(t, out)
	want := "; the seller's A2A face lists [3.2-beta.5], its MCP face, where the storyboards run, [3.0, 3.1]: the release follows the MCP face"
	if code != ExitOK || res.Release == nil || res.Release.Version != "3.1.19" || !strings.HasSuffix(res.Release.Reason, want) {
		t.Errorf("two faces: exit %d, release %+v; want 3.1.19 and %q\n%s%s", code, res.Release, want, so, se)
	}
}

// The bundled reference seller follows --release (3.2 is the beta it
// serves) and, by default, stays the 3.1 seller it was: each of its two
// passes chooses, and says so.
func TestTheReferenceRunChoosesPerPass(t *testing.T) {
	mirror := specMirror(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "3.1.19"},
		{[]string{"--release", "3.2"}, "3.2.0-beta.5"},
	} {
		out := t.TempDir()
		args := append([]string{"run", "--out", out, "--release-mirror", mirror, "--storyboard", "capability_discovery"}, tc.args...)
		code, so, se := run(t, nil, "", args...)
		if code != ExitOK || strings.Count(se, "adcp-conform: release: "+tc.want+" — ") != 2 {
			t.Fatalf("%v: exit %d, want two passes choosing %s\n%s%s", tc.args, code, tc.want, so, se)
		}
		for _, dir := range []string{out, filepath.Join(out, ReferenceA2A03Dir)} {
			if res := readResults(t, dir); res.Release == nil || res.Release.Version != tc.want || res.StoryboardsRelease != tc.want {
				t.Errorf("%v %s: release %+v, storyboards %q", tc.args, dir, res.Release, res.StoryboardsRelease)
			}
		}
	}
}

// Without a mirror, a machine that cannot read the published index (here:
// no cache folder, as every test of this package) chooses among the
// releases this build knows, says so, and skips what it cannot fetch.
func TestWithoutTheIndexTheRunChoosesAmongTheReleasesItKnows(t *testing.T) {
	eps := startSeller(t, seller.Options{Release: seller.Release32, OnlyRelease: true, BearerToken: releaseToken})
	out := t.TempDir()
	code, so, se := run(t, tokenEnv, "", "run", "--mcp", eps.MCP, "--bearer-env", "T", "--out", out, "--label-filter", "rule:SCHEMA-01 || storyboard:capability_discovery")
	res := readResults(t, out)
	for _, want := range []string{
		"adcp-conform: release: 3.2.0-beta.5 — 3.2.0-beta.5 is the newest release of 3.2-beta.5",
		"(the release index https://adcontextprotocol.org/schemas/index.json could not be read: there is no cache folder to fetch into",
		"adcp-conform: storyboards: the spec's compliance storyboards were not run: no cache folder for https://adcontextprotocol.org/protocol/3.2.0-beta.5.tgz",
		"adcp-conform: schemas: no cache folder for https://adcontextprotocol.org/schemas/3.2.0-beta.5/",
	} {
		if !strings.Contains(se, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if code == ExitOK || res.Release == nil || !slices.Equal(res.Release.Available, []string{"3.2.0-beta.5", "3.1.19"}) || len(res.Storyboards) != 0 {
		t.Errorf("exit %d (a run that graded nothing), release %+v, %d storyboards\n%s%s", code, res.Release, len(res.Storyboards), so, se)
	}
}

// A storyboard named on the command line is looked for in the release the
// seller chooses, once it has: one it does not hold is a usage error then.
func TestAStoryboardTheChosenReleaseLacksIsAUsageError(t *testing.T) {
	mirror := specMirror(t)
	eps := startSeller(t, seller.Options{BearerToken: releaseToken})
	code, _, se := run(t, tokenEnv, "", "run", "--mcp", eps.MCP, "--bearer-env", "T", "--out", t.TempDir(), "--release-mirror", mirror, "--storyboard", "no_such_storyboard")
	if code != ExitUsage || !strings.Contains(se, "--storyboard: no storyboard no_such_storyboard in 3.1.19") {
		t.Errorf("exit %d, %q", code, se)
	}
}
