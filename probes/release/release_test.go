package release

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseReadsPublishedReleasesOnly(t *testing.T) {
	for s, want := range map[string]bool{
		"3.1.19": true, "3.2.0-beta.5": true, "3.0.0": true, "3.2.0-rc.1": true, "10.20.30": true,
		"3.1": false, "3": false, "v3.1.0": false, "3.1.19+build": false, "03.1.0": false, "3.1.0-": false,
		"3.1.0-beta..1": false, "latest": false, "3.1.0-be ta": false, "../3.1.0": false, "": false,
	} {
		v, ok := Parse(s)
		if ok != want || (ok && v.String() != s) {
			t.Errorf("Parse(%q) = %v, %v; want ok %v", s, v, ok, want)
		}
	}
	for s, want := range map[string]bool{"3.1": true, "3.2-beta.5": true, "3.1-beta": true, "3.1.19": false, "3": false, "v3.1": false, "3.x": false} {
		if _, ok := ParseWire(s); ok != want {
			t.Errorf("ParseWire(%q) ok %v, want %v", s, ok, want)
		}
	}
	if v, _ := Parse("3.2.0-beta.5"); v.Wire() != "3.2-beta.5" {
		t.Errorf("Wire of 3.2.0-beta.5 is %q", v.Wire())
	}
}

// Sort orders by semver precedence: numeric pre-release identifiers as
// numbers, a pre-release before its final release.
func TestSortOrdersBySemverPrecedence(t *testing.T) {
	got := Sort([]string{"3.1.2", "3.2.0-beta.10", "3.2.0-beta.9", "3.1.19", "3.2.0", "3.2.0-beta", "3.2.0-rc.1", "3.1.19", "nope", "3.2.0-beta.x"})
	want := []string{"3.2.0", "3.2.0-rc.1", "3.2.0-beta.x", "3.2.0-beta.10", "3.2.0-beta.9", "3.2.0-beta", "3.1.19", "3.1.2"}
	if !slices.Equal(got, want) {
		t.Errorf("Sort = %v, want %v", got, want)
	}
}

func TestChooseTakesTheNewestReleaseOfTheNewestAdvertisedVersion(t *testing.T) {
	both := []string{"3.0.26", "3.1.18", "3.1.19", "3.2.0-beta.4", "3.2.0-beta.5"}
	for _, tc := range []struct {
		name             string
		advertised, have []string
		release, matched string
		standIn          bool
		missed, ignored  []string
		why              string
	}{
		{name: "a 3.1 seller", advertised: []string{"3.0", "3.1"}, have: both, release: "3.1.19", matched: "3.1",
			why: "3.1.19 is the newest release of 3.1, the newest version the seller's adcp.supported_versions [3.0, 3.1] lists that the harness can get from M"},
		{name: "the 3.2 reference seller", advertised: []string{"3.0", "3.1", "3.2-beta.5"}, have: both, release: "3.2.0-beta.5", matched: "3.2-beta.5"},
		{name: "a 3.2 beta only seller", advertised: []string{"3.2-beta.5"}, have: both, release: "3.2.0-beta.5", matched: "3.2-beta.5"},
		{name: "a pre-release matches exactly", advertised: []string{"3.1", "3.2-beta.3"}, have: both, release: "3.1.19", matched: "3.1", missed: []string{"3.2-beta.3"}},
		{name: "a final without a final release takes the newest pre-release", advertised: []string{"3.1", "3.2"}, have: both,
			release: "3.2.0-beta.5", matched: "3.2", standIn: true,
			why: "the newest version the seller's adcp.supported_versions [3.1, 3.2] lists that the harness can get from M is 3.2, which has no final release there: its newest pre-release 3.2.0-beta.5 stands in"},
		{name: "a final release wins over pre-releases", advertised: []string{"3.2"}, have: append([]string{"3.2.0", "3.2.1-rc.1"}, both...), release: "3.2.0", matched: "3.2"},
		{name: "the final beats its pre-release when both are advertised", advertised: []string{"3.2-beta.5", "3.2"}, have: append([]string{"3.2.1"}, both...), release: "3.2.1", matched: "3.2"},
		{name: "a newer version the harness cannot get", advertised: []string{"3.1", "3.3"}, have: both, release: "3.1.19", matched: "3.1", missed: []string{"3.3"},
			why: "3.1.19 is the newest release of 3.1, the newest version the seller's adcp.supported_versions [3.1, 3.3] lists that the harness can get from M; it has no release of 3.3"},
		{name: "nothing the harness can get", advertised: []string{"4.0"}, have: both,
			why: "the seller's adcp.supported_versions [4.0] lists no release the harness can get from M (it has 3.2.0-beta.5, 3.2.0-beta.4, 3.1.19, 3.1.18, 3.0.26)"},
		{name: "no releases at all", advertised: []string{"3.1"}, why: "the seller's adcp.supported_versions [3.1] lists no release the harness can get from M (it has none)"},
		{name: "nothing advertised", have: both, why: "the seller advertises no adcp.supported_versions"},
		{name: "no version advertised", advertised: []string{"3", "latest"}, have: both, ignored: []string{"3", "latest"},
			why: `the seller's adcp.supported_versions ["3" "latest"] holds no release-precision version`},
		{name: "entries that are no version", advertised: []string{"3.1.2", "3", "3.1"}, have: both, release: "3.1.19", matched: "3.1", ignored: []string{"3.1.2", "3"},
			why: `3.1.19 is the newest release of 3.1, the newest version the seller's adcp.supported_versions [3.1.2, 3, 3.1] lists that the harness can get from M; ["3.1.2" "3"] are not release-precision`},
		{name: "duplicates", advertised: []string{"3.1", "3.1"}, have: []string{"3.1.19", "3.1.19", "garbage"}, release: "3.1.19", matched: "3.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Choose(tc.advertised, tc.have)
			if c.Release != tc.release || c.Matched != tc.matched || c.StandIn != tc.standIn || !slices.Equal(c.Missed, tc.missed) || !slices.Equal(c.Ignored, tc.ignored) {
				t.Errorf("Choose = %+v; want release %q matched %q stand-in %v missed %v ignored %v", c, tc.release, tc.matched, tc.standIn, tc.missed, tc.ignored)
			}
			if why := c.Why(Sort(tc.have), " from M"); tc.why != "" && why != tc.why {
				t.Errorf("Why =\n  %s\nwant\n  %s", why, tc.why)
			}
		})
	}
}

// The published index lists withdrawn and unpublished releases beside
// the others; neither may be chosen.
func TestIndexBarsWithdrawnAndUnpublishedReleases(t *testing.T) {
	idx := `{"latest_stable":"3.1.19","versions":[
		{"version":"3.2.0","stability":"unpublished","prerelease":false,"published":false},
		{"version":"3.2.0-beta.5","stability":"beta","prerelease":true},
		{"version":"3.1.19","stability":"stable"},
		{"version":"3.1.3","stability":"withdrawn","withdrawn":true,"deprecated":true},
		{"version":"latest"}, {"nope":1}, "3.0.26"]}`
	listed, barred, err := Index([]byte(idx))
	if err != nil || !slices.Equal(listed, []string{"3.2.0-beta.5", "3.1.19", "3.0.26"}) || !slices.Equal(barred, []string{"3.2.0", "3.1.3"}) {
		t.Errorf("Index = %v, barred %v, %v", listed, barred, err)
	}
	for _, bad := range []string{`[]`, `{}`, `{"versions":[]}`, `{"versions":[{"version":"3.1.3","withdrawn":true}]}`, `not json`} {
		if _, _, err := Index([]byte(bad)); err == nil {
			t.Errorf("Index(%s) accepted", bad)
		}
	}
}

func TestFetchIndexIsBoundedAndNamesTheIndex(t *testing.T) {
	body := `{"versions":["3.1.19"]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/schemas/index.json":
			_, _ = w.Write([]byte(body))
		case "/big/schemas/index.json":
			_, _ = w.Write([]byte(`{"versions":["` + strings.Repeat("x", maxIndexBytes) + `"]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	if got, err := FetchIndex(context.Background(), srv.Client(), Mirror{URL: srv.URL}); err != nil || !slices.Equal(got, []string{"3.1.19"}) {
		t.Errorf("FetchIndex = %v, %v", got, err)
	}
	for _, base := range []string{srv.URL + "/big", srv.URL + "/gone"} {
		if _, err := FetchIndex(context.Background(), srv.Client(), Mirror{URL: base}); err == nil || !strings.Contains(err.Error(), base+"/schemas/index.json") {
			t.Errorf("FetchIndex(%s): %v", base, err)
		}
	}
}

func TestAFolderMirrorListsTheReleasesItHolds(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"compliance/3.1.19/universal", "compliance/3.2.0-beta.5", "schemas/3.1.19", "schemas/3.1.3", "schemas/building", "protocol"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"protocol/3.3.0.tgz": "x", "protocol/3.3.0.tgz.sha256": "x", "protocol/latest.tgz": "x",
		"schemas/index.json": `{"versions":[{"version":"3.1.3","withdrawn":true},"3.1.19"]}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A release folder may be a link to where it lives.
	if err := os.MkdirAll(filepath.Join(dir, "elsewhere", "3.0.26"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere", "3.0.26"), filepath.Join(dir, "compliance", "3.0.26")); err != nil {
		t.Fatal(err)
	}
	m, err := ParseMirror(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Releases(); !slices.Equal(got, []string{"3.3.0", "3.2.0-beta.5", "3.1.19", "3.0.26"}) {
		t.Errorf("Releases = %v", got)
	}
	if d, f := m.Storyboards("3.1.19"); d != filepath.Join(dir, "compliance", "3.1.19") || f != "" {
		t.Errorf("Storyboards(3.1.19) = %q, %q", d, f)
	}
	if d, f := m.Storyboards("3.3.0"); d != "" || f != filepath.Join(dir, "protocol", "3.3.0.tgz") {
		t.Errorf("Storyboards(3.3.0) = %q, %q", d, f)
	}
	if d, _ := m.Storyboards("3.0.26"); d != filepath.Join(dir, "elsewhere", "3.0.26") {
		t.Errorf("Storyboards(3.0.26) = %q, want the link resolved", d)
	}
	if d, f := m.Storyboards("../3.1.19"); d != "" || f != "" {
		t.Errorf("a name that is no release reached %q %q", d, f)
	}
	if m.Schemas("3.1.19") == "" || m.Schemas("3.2.0-beta.5") != "" {
		t.Errorf("Schemas: %q, %q", m.Schemas("3.1.19"), m.Schemas("3.2.0-beta.5"))
	}
}

func TestParseMirror(t *testing.T) {
	if m, err := ParseMirror(""); err != nil || m.URL != Published {
		t.Errorf(`ParseMirror("") = %+v, %v`, m, err)
	}
	if m, err := ParseMirror("https://mirror.example/adcp/"); err != nil || m.BundleURL("3.1.19") != "https://mirror.example/adcp/protocol/3.1.19.tgz" ||
		m.SchemasURL("3.1.19") != "https://mirror.example/adcp/schemas/3.1.19/" || m.IndexURL() != "https://mirror.example/adcp/schemas/index.json" {
		t.Errorf("a site mirror: %+v, %v", m, err)
	}
	for _, bad := range []string{"https://user:pw@mirror.example", "https://mirror.example/?a=b", "http://", filepath.Join(t.TempDir(), "absent")} {
		if _, err := ParseMirror(bad); err == nil {
			t.Errorf("ParseMirror(%q) accepted", bad)
		}
	}
}

// A seller's list is untrusted: only its first entries are read.
func TestChooseReadsABoundedList(t *testing.T) {
	long := make([]string, 10000)
	for i := range long {
		long[i] = "9.9"
	}
	long = append(long, "3.1")
	if c := Choose(long, []string{"3.1.19"}); c.Release != "" || len(c.Listed) != maxListed {
		t.Errorf("Choose read %d entries, chose %q", len(c.Listed), c.Release)
	}
}
