package release

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
)

// This file is how the package reads release material: one bounded GET,
// one bounded file read, the client a fetch uses when given none.

// Client is the client a fetch from u uses when given none: the release's
// host may move it (redirects followed), every hop connecting through a
// guard like the probes', each request bounded by timeout.
func Client(u string, timeout time.Duration) *http.Client {
	client := fetch.For(u).Client(fetch.AnyRedirects)
	client.Timeout = timeout
	return client
}

// StatusError is a reply other than 200 OK to a GET of release material.
type StatusError struct {
	Code int
	// Name is what was asked for, as errors name it (a URL, or a path in
	// a release).
	Name string
}

func (e StatusError) Error() string { return fmt.Sprintf("%s: HTTP %d", e.Name, e.Code) }

// get downloads u, at most limit bytes, asking for accept ("" for any),
// naming it name in its errors. A reply other than 200 OK is a StatusError.
func get(ctx context.Context, client *http.Client, u, name, accept string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, StatusError{Code: resp.StatusCode, Name: name}
	}
	return readAll(resp.Body, name, limit)
}

// readFile reads at most limit bytes of a file.
func readFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path, limit)
}

// readAll reads r, failing past limit bytes; name names it in errors.
func readAll(r io.Reader, name string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, limit)
	}
	return b, nil
}

// httpURL parses u and checks it is an http(s) URL.
func httpURL(u string) (*url.URL, error) {
	p, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return nil, fmt.Errorf("%s is not an http(s) URL", u)
	}
	return p, nil
}
