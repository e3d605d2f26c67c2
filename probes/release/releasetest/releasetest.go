// Package releasetest packs and serves release material as AdCP publishes
// it (a compliance folder as a bundle, a schemas folder), over HTTP, for
// the tests of the fetches and of the CLI.
package releasetest

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

// ServeSchemas serves files (release-relative path → body) as a release's
// published folder at /schemas/<release>/, counting the requests.
func ServeSchemas(t testing.TB, release string, files map[string]string) (folder string, hits *atomic.Int64) {
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

// TinySchemas is a release 9.1.0 of a few schemas: the index, the manifest naming one
// task's response schema, which references a core object relatively and the
// error schema root-relatively, and a bundled file nothing fetches.
var TinySchemas = map[string]string{
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

// ServeSchemasFolder serves a schemas folder (a local copy of a release's
// published schemas) at /schemas/<release>/, counting requests; it returns
// the folder's URL and the test server, whose Client reaches it.
func ServeSchemasFolder(t testing.TB, dir, release string) (string, *httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	files := http.StripPrefix("/schemas/"+release+"/", http.FileServer(http.Dir(dir)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/schemas/" + release + "/", srv, &hits
}
