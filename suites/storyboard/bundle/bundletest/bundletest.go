// Package bundletest packs a compliance folder as AdCP publishes it and
// serves it over HTTP, for the tests of the bundle fetch and of the CLI.
package bundletest

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
	"sync/atomic"
	"testing"
)

// Pack packs the files of a compliance folder as the release's bundle:
// adcp-<release>/compliance/... in a gzipped tarball.
func Pack(t testing.TB, dir, release string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		h := &tar.Header{Name: "adcp-" + release + "/compliance/" + filepath.ToSlash(r), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Serve serves a bundle and its checksum sidecar under
// /protocol/<release>.tgz, counting requests; it returns the bundle's URL.
func Serve(t testing.TB, tgz []byte, release string) (string, *atomic.Int64) {
	t.Helper()
	sum := sha256.Sum256(tgz)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/protocol/" + release + ".tgz":
			_, _ = w.Write(tgz)
		case "/protocol/" + release + ".tgz.sha256":
			_, _ = w.Write([]byte(hex.EncodeToString(sum[:]) + "  " + release + ".tgz\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/protocol/" + release + ".tgz", &hits
}
