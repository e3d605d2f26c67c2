package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
)

// entry is one tar entry of a test bundle.
type entry struct {
	name string
	body string
	typ  byte   // tar.TypeReg when 0
	link string // of a link
	size int64  // the header's size when set (a lie about the body)
}

// tgz packs entries into a gzipped tarball.
func tgz(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o600, Size: int64(len(e.body))}
		if e.typ == tar.TypeXGlobalHeader { // as git archive writes
			h = &tar.Header{Name: e.name, Typeflag: e.typ, PAXRecords: map[string]string{"comment": "0123abcd"}}
		}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeXGlobalHeader {
			h.Size = 0
		}
		if h.Typeflag == tar.TypeDir {
			h.Mode = 0o700
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// publisher serves one bundle and its checksum at /protocol/<release>.tgz,
// counting requests.
type publisher struct {
	srv      *httptest.Server
	hits     atomic.Int64
	body     []byte
	sum      string // "" serves no sidecar (404)
	tgzCode  int    // a status other than 200 for the .tgz
	sumExtra string // appended after the sum (a file name, as sha256sum writes)
}

func publish(t *testing.T, body []byte) *publisher {
	t.Helper()
	p := &publisher{body: body, sum: hexSum(body), sumExtra: "  bundle.tgz\n"}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		switch {
		case strings.HasSuffix(r.URL.Path, ".tgz.sha256"):
			if p.sum == "" {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte(p.sum + p.sumExtra))
		case strings.HasSuffix(r.URL.Path, ".tgz"):
			if p.tgzCode != 0 {
				w.WriteHeader(p.tgzCode)
				return
			}
			_, _ = w.Write(p.body)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *publisher) url(release string) string { return p.srv.URL + "/protocol/" + release + ".tgz" }

// good is a small compliance tree with the rest of a bundle around it.
func good() []entry {
	return []entry{
		{name: "pax_global_header", typ: tar.TypeXGlobalHeader},
		{name: "adcp-1.2.3/", typ: tar.TypeDir},
		{name: "adcp-1.2.3/manifest.json", body: "{}"},
		{name: "adcp-1.2.3/schemas/core/error.json", body: "{}"},
		{name: "adcp-1.2.3/compliance/", typ: tar.TypeDir},
		{name: "adcp-1.2.3/compliance/universal/", typ: tar.TypeDir},
		{name: "adcp-1.2.3/compliance/universal/ping.yaml", body: "id: ping\n"},
		{name: "adcp-1.2.3/compliance/index.json", body: "{}"},
	}
}

// files lists the files under dir, relative, with their modes.
func files(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	out := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(r)] = info.Mode()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFetchExtractsTheComplianceTreeOnce(t *testing.T) {
	p := publish(t, tgz(t, good()...))
	root := t.TempDir()
	dir, fetched, err := Fetch(t.Context(), nil, Storyboards, p.url("1.2.3"), root)
	if err != nil || !fetched || dir != filepath.Join(root, "1.2.3") {
		t.Fatalf("Fetch: %q %v %v", dir, fetched, err)
	}
	got := files(t, dir)
	want := map[string]fs.FileMode{".": fs.ModeDir | 0o755, "universal": fs.ModeDir | 0o755, "universal/ping.yaml": 0o644,
		"index.json": 0o644, Mark: 0o644}
	if len(got) != len(want) {
		t.Errorf("files %v, want %v", got, want)
	}
	for f, m := range want {
		if got[f] != m {
			t.Errorf("%s: mode %v, want %v (all: %v)", f, got[f], m, got)
		}
	}
	mark, _ := os.ReadFile(filepath.Join(dir, Mark))
	if !strings.Contains(string(mark), p.url("1.2.3")) || !strings.Contains(string(mark), p.sum) {
		t.Errorf(".complete is %q", mark)
	}
	before := p.hits.Load()
	dir2, fetched, err := Fetch(t.Context(), nil, Storyboards, p.url("1.2.3"), root)
	if err != nil || fetched || dir2 != dir {
		t.Fatalf("second Fetch: %q %v %v", dir2, fetched, err)
	}
	if n := p.hits.Load() - before; n != 0 {
		t.Errorf("the second Fetch made %d requests", n)
	}
	if Cached(root, "1.2.3") != dir {
		t.Errorf("Cached: %q", Cached(root, "1.2.3"))
	}
	if leftovers, _ := filepath.Glob(filepath.Join(root, ".*")); len(leftovers) > 0 {
		t.Errorf("temporary folders left: %v", leftovers)
	}
}

// A folder without its .complete mark is an interrupted fetch: fetched again.
func TestAnInterruptedFetchIsFetchedAgain(t *testing.T) {
	p := publish(t, tgz(t, good()...))
	root := t.TempDir()
	stale := filepath.Join(root, "1.2.3")
	if err := os.MkdirAll(filepath.Join(stale, "universal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "universal", "half.yaml"), []byte("id: half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if Cached(root, "1.2.3") != "" {
		t.Fatal("a folder without .complete counts as cached")
	}
	dir, fetched, err := Fetch(t.Context(), nil, Storyboards, p.url("1.2.3"), root)
	if err != nil || !fetched {
		t.Fatalf("Fetch: %v %v", fetched, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "universal", "half.yaml")); err == nil {
		t.Error("the interrupted fetch's file survived")
	}
	if _, err := os.Stat(filepath.Join(dir, "universal", "ping.yaml")); err != nil {
		t.Error(err)
	}
}

// Every bundle that is wrong is rejected, and nothing is cached.
func TestFetchRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   []byte
		tweak  func(*publisher)
		limits func()
		want   string
	}{
		{name: "checksum mismatch", body: tgz(t, good()...), tweak: func(p *publisher) { p.sum = strings.Repeat("ab", 32) }, want: "the published checksum"},
		{name: "no sidecar", body: tgz(t, good()...), tweak: func(p *publisher) { p.sum = "" }, want: "no checksum is published"},
		{name: "sidecar not a sum", body: tgz(t, good()...), tweak: func(p *publisher) { p.sum = "nope" }, want: "not a hex SHA-256"},
		{name: "tgz 404", body: tgz(t, good()...), tweak: func(p *publisher) { p.tgzCode = http.StatusNotFound }, want: "HTTP 404"},
		{name: "tgz 500", body: tgz(t, good()...), tweak: func(p *publisher) { p.tgzCode = http.StatusInternalServerError }, want: "HTTP 500"},
		{name: "not gzip", body: []byte("<html>not a bundle</html>"), want: "not gzip"},
		{name: "gzip, not tar", body: func() []byte {
			var b bytes.Buffer
			gz := gzip.NewWriter(&b)
			_, _ = gz.Write(bytes.Repeat([]byte("x"), 2000))
			_ = gz.Close()
			return b.Bytes()
		}(), want: "the bundle"},
		{name: "truncated", body: tgz(t, good()...)[:40], want: "the bundle"},
		{name: "dot-dot", body: tgz(t, append(good(), entry{name: "adcp-1.2.3/compliance/../../evil.yaml", body: "x"})...), want: "unsafe name"},
		{name: "dot-dot outside the tree", body: tgz(t, append(good(), entry{name: "../evil", body: "x"})...), want: "unsafe name"},
		{name: "absolute", body: tgz(t, append(good(), entry{name: "/etc/adcp-1.2.3/compliance/x.yaml", body: "x"})...), want: "unsafe name"},
		{name: "backslash", body: tgz(t, append(good(), entry{name: `adcp-1.2.3/compliance/a\..\b.yaml`, body: "x"})...), want: "unsafe name"},
		{name: "symlink", body: tgz(t, append(good(), entry{name: "adcp-1.2.3/compliance/link.yaml", typ: tar.TypeSymlink, link: "/etc/passwd"})...), want: "symbolic link"},
		{name: "hard link", body: tgz(t, append(good(), entry{name: "adcp-1.2.3/compliance/link.yaml", typ: tar.TypeLink, link: "adcp-1.2.3/manifest.json"})...), want: "hard link"},
		{name: "device", body: tgz(t, append(good(), entry{name: "adcp-1.2.3/compliance/dev", typ: tar.TypeChar})...), want: "not a regular file"},
		{name: "fifo", body: tgz(t, append(good(), entry{name: "adcp-1.2.3/compliance/fifo", typ: tar.TypeFifo})...), want: "not a regular file"},
		{name: "no compliance tree", body: tgz(t, entry{name: "adcp-1.2.3/schemas/x.json", body: "{}"}, entry{name: "adcp-9.9.9/compliance/x.yaml", body: "x"}), want: "holds no adcp-1.2.3/compliance/"},
		{name: "too many files", body: tgz(t, good()...), limits: func() { maxFiles = 1 }, want: "more than 1 files"},
		{name: "file too large", body: tgz(t, append(good(), entry{name: "adcp-1.2.3/compliance/big.yaml", body: strings.Repeat("x", 200)})...),
			limits: func() { maxFileBytes = 100 }, want: "larger than 100 bytes"},
		{name: "bundle too large", body: tgz(t, good()...), limits: func() { maxBundleBytes = 10 }, want: "larger than 10 bytes"},
		{name: "decompression bomb outside the tree", body: tgz(t, append(good(), entry{name: "adcp-1.2.3/schemas/bomb.json", body: strings.Repeat("0", 1<<20)})...),
			limits: func() { maxTotalBytes = 64 << 10 }, want: "decompresses to more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := []int64{maxBundleBytes, maxFileBytes, maxTotalBytes, int64(maxFiles)}
			t.Cleanup(func() {
				maxBundleBytes, maxFileBytes, maxTotalBytes, maxFiles = saved[0], saved[1], saved[2], int(saved[3])
			})
			if tc.limits != nil {
				tc.limits()
			}
			p := publish(t, tc.body)
			if tc.tweak != nil {
				tc.tweak(p)
			}
			root := t.TempDir()
			dir, fetched, err := Fetch(t.Context(), nil, Storyboards, p.url("1.2.3"), root)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fetch: %q %v %v, want an error with %q", dir, fetched, err, tc.want)
			}
			if !strings.Contains(err.Error(), p.url("1.2.3")) {
				t.Errorf("the error does not name the URL: %v", err)
			}
			if dir != "" || fetched || Cached(root, "1.2.3") != "" {
				t.Errorf("something was cached: %q %v", dir, fetched)
			}
			if left, _ := os.ReadDir(root); len(left) > 0 {
				t.Errorf("left in the cache: %v", left)
			}
		})
	}
}

func TestReleaseOf(t *testing.T) {
	for u, want := range map[string]string{
		"https://adcontextprotocol.org/protocol/3.1.19.tgz":                          "3.1.19",
		"https://adcontextprotocol.org/protocol/3.2.0-beta.5.tgz":                    "3.2.0-beta.5",
		"http://127.0.0.1:8080/protocol/3.1.19.tgz?x=1":                              "3.1.19",
		"https://adcontextprotocol.org/protocol/3.1.19.tar.gz":                       "",
		"https://adcontextprotocol.org/protocol/3.1.19":                              "",
		"https://adcontextprotocol.org/protocol/..tgz":                               "",
		"https://adcontextprotocol.org/protocol/a..b.tgz":                            "",
		"https://adcontextprotocol.org/protocol/.tgz":                                "",
		"https://adcontextprotocol.org/protocol/-x.tgz":                              "",
		"https://adcontextprotocol.org/protocol/a%2Fb.tgz":                           "",
		"https://adcontextprotocol.org/protocol/a_b.tgz":                             "",
		"https://adcontextprotocol.org/protocol/" + strings.Repeat("1", 65) + ".tgz": "",
		"ftp://adcontextprotocol.org/protocol/3.1.19.tgz":                            "",
		"file:///tmp/3.1.19.tgz":                                                     "",
		"/tmp/3.1.19.tgz":                                                            "",
		"https://adcontextprotocol.org/protocol/3.1.19.tgz/":                         "",
		"::": "",
	} {
		got, err := Storyboards.ReleaseOf(u)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("ReleaseOf(%q) = %q, %v; want %q", u, got, err, want)
		}
	}
	if Cached(t.TempDir(), "../x") != "" {
		t.Error("Cached accepts ../x")
	}
	if got := (Mirror{URL: Published}).BundleURL("3.1.19"); got != "https://adcontextprotocol.org/protocol/3.1.19.tgz" || !strings.HasPrefix(got, PublishedBundles+"/") {
		t.Errorf("BundleURL: %s", got)
	}
}

// The real 3.1.19 compliance tree, packed as the spec packs it, fetches
// into a folder holding the same files, byte for byte, as the original
// (so storyboard.Load reads it as it reads the original).
func TestTheRealComplianceTreeRoundTrips(t *testing.T) {
	src := shared.File(t, "spec/compliance/3.1.19")
	var entries []entry
	want := map[string]string{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		name := "adcp-3.1.19/compliance/" + filepath.ToSlash(r)
		if d.IsDir() {
			entries = append(entries, entry{name: strings.TrimSuffix(name, "/.") + "/", typ: tar.TypeDir})
			return nil
		}
		b, err := os.ReadFile(p)
		entries = append(entries, entry{name: name, body: string(b)})
		want[filepath.ToSlash(r)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	entries = append(entries, entry{name: "adcp-3.1.19/manifest.json", body: "{}"})
	p := publish(t, tgz(t, entries...))
	dir, fetched, err := Fetch(t.Context(), nil, Storyboards, p.url("3.1.19"), t.TempDir())
	if err != nil || !fetched {
		t.Fatalf("Fetch: %v %v", fetched, err)
	}
	if filepath.Base(dir) != "3.1.19" {
		t.Errorf("folder %s is not named after the release", dir)
	}
	got := 0
	for rel, mode := range files(t, dir) {
		if mode.IsDir() || rel == Mark {
			continue
		}
		got++
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if w, ok := want[rel]; err != nil || !ok || string(b) != w {
			t.Errorf("%s: not the original's (in the original: %v; %v)", rel, ok, err)
		}
	}
	if len(want) < 100 || got != len(want) {
		t.Errorf("fetched %d files, the original holds %d", got, len(want))
	}
}

// No bytes make extract panic.
func FuzzExtract(f *testing.F) {
	f.Add(tgz(f, good()...))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = extract(b, "1.2.3", t.TempDir())
	})
}

// A bundle in a folder (a mirror without network) is used only beside a
// matching .sha256, and extracted into the cache like a fetched one.
func TestFetchFileVerifiesTheSidecarBesideTheBundle(t *testing.T) {
	good := tgz(t, entry{name: "adcp-3.1.19/compliance/universal/a.yaml", body: "id: a\n"})
	for _, tc := range []struct {
		name, sidecar, want string
		noSidecar           bool
	}{
		{name: "matching", sidecar: hexSum(good) + "  3.1.19.tgz\n"},
		{name: "no sidecar", noSidecar: true, want: "no checksum 3.1.19.tgz.sha256 beside it"},
		{name: "another checksum", sidecar: strings.Repeat("ab", 32) + "\n", want: "the bundle's SHA-256 is " + hexSum(good)},
		{name: "not a checksum", sidecar: "nope\n", want: "is not a hex SHA-256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, root := t.TempDir(), t.TempDir()
			path := filepath.Join(dir, "3.1.19.tgz")
			if err := os.WriteFile(path, good, 0o644); err != nil {
				t.Fatal(err)
			}
			if !tc.noSidecar {
				if err := os.WriteFile(path+".sha256", []byte(tc.sidecar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, fetched, err := FetchFile(path, root)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || Cached(root, "3.1.19") != "" {
					t.Fatalf("err %v, want %q and nothing cached", err, tc.want)
				}
				return
			}
			if err != nil || !fetched || got != filepath.Join(root, "3.1.19") {
				t.Fatalf("FetchFile: %q, %v, %v", got, fetched, err)
			}
			if b, err := os.ReadFile(filepath.Join(got, "universal", "a.yaml")); err != nil || string(b) != "id: a\n" {
				t.Errorf("extracted a.yaml: %q, %v", b, err)
			}
			if again, fetched, err := FetchFile(path, root); err != nil || fetched || again != got {
				t.Errorf("second FetchFile: %q, fetched %v, %v (want the cache)", again, fetched, err)
			}
		})
	}
	if _, _, err := FetchFile(filepath.Join(t.TempDir(), "latest.zip"), t.TempDir()); err == nil {
		t.Error("a file named no release was accepted")
	}
}
