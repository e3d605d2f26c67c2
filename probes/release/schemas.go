package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Default is the release a run uses when nothing else decides: the latest
// stable release this build is written against. Patches never change a
// stable schema, so it serves every 3.1 seller.
const Default = "3.1.19"

// The bounds of a schemas fetch: a published release holds under a
// thousand files of a few MB in all; the pre-resolved bundled/ tree is
// never fetched.
const (
	maxFetchFiles     = 4000
	maxSchemaBytes    = 8 << 20
	maxFetchBytes     = 128 << 20
	fetchWorkers      = 8
	schemasGetTimeout = 30 * time.Second
)

// schemasReleaseOf returns the release a published schemas folder URL
// names: its last path segment
// ("https://adcontextprotocol.org/schemas/3.1.19/" → "3.1.19").
func schemasReleaseOf(folderURL string) (string, error) {
	u, err := httpURL(folderURL)
	if err != nil {
		return "", err
	}
	rel := path.Base(strings.TrimRight(u.Path, "/"))
	if !ValidRelease(rel) {
		return "", fmt.Errorf("%s does not end in a release folder such as /schemas/%s/", folderURL, Default)
	}
	return rel, nil
}

// fetchSchemas fills root/<release> with the release published at
// folderURL: index.json, manifest.json, core/error.json, every task's
// response schemas the manifest lists, and everything they reference,
// transitively.
func fetchSchemas(ctx context.Context, client *http.Client, folderURL, release, root string) (string, error) {
	return Fill(root, release, []byte(folderURL+"\n"), func(tmp string) error {
		f := &fetcher{ctx: ctx, client: client, base: strings.TrimRight(folderURL, "/") + "/", release: release, into: tmp, seen: map[string]bool{}}
		if err := f.run(); err != nil {
			return fmt.Errorf("fetching the %s schemas from %s: %w", release, folderURL, err)
		}
		return nil
	})
}

type fetcher struct {
	ctx           context.Context
	client        *http.Client
	base, release string
	into          string

	mu    sync.Mutex
	seen  map[string]bool
	total int64
	err   error
}

// run downloads the seeds and then every file they reference, a wave at a
// time, fetchWorkers files at once.
func (f *fetcher) run() error {
	index, err := f.get("index.json")
	if err != nil {
		return err
	}
	wave := f.fresh(append(refsIn("index.json", index, f.release), "core/error.json"))
	if manifest, err := f.get("manifest.json"); err == nil {
		wave = append(wave, f.fresh(manifestSchemas(manifest))...)
	} else if !errors.Is(err, errNotFound) {
		return err
	}
	for len(wave) > 0 {
		var next []string
		var mu sync.Mutex
		jobs := make(chan string)
		var wg sync.WaitGroup
		for range min(fetchWorkers, len(wave)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for rel := range jobs {
					b, err := f.get(rel)
					if err != nil {
						f.fail(err)
						continue
					}
					refs := refsIn(rel, b, f.release)
					mu.Lock()
					next = append(next, refs...)
					mu.Unlock()
				}
			}()
		}
		for _, rel := range wave {
			if f.failed() {
				break
			}
			jobs <- rel
		}
		close(jobs)
		wg.Wait()
		if f.failed() {
			return f.err
		}
		wave = f.fresh(next)
	}
	return nil
}

// fresh returns the paths not seen before, marking them seen.
func (f *fetcher) fresh(rels []string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, rel := range rels {
		if rel == "" || f.seen[rel] {
			continue
		}
		f.seen[rel] = true
		out = append(out, rel)
	}
	if len(f.seen) > maxFetchFiles && f.err == nil {
		f.err = fmt.Errorf("more than %d schema files are referenced", maxFetchFiles)
	}
	return out
}

func (f *fetcher) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *fetcher) failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err != nil
}

var errNotFound = errors.New("not found")

// get downloads one file of the release, checks that it is JSON and
// writes it under the fetch folder.
func (f *fetcher) get(rel string) ([]byte, error) {
	b, err := get(f.ctx, f.client, f.base+rel, rel, "application/schema+json, application/json", maxSchemaBytes)
	var st StatusError
	if errors.As(err, &st) && st.Code == http.StatusNotFound {
		return nil, fmt.Errorf("%s: %w", rel, errNotFound)
	}
	if err != nil {
		return nil, err
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("%s is not JSON", rel)
	}
	f.mu.Lock()
	f.total += int64(len(b))
	over := f.total > maxFetchBytes
	f.mu.Unlock()
	if over {
		return nil, fmt.Errorf("the release is larger than %d bytes", maxFetchBytes)
	}
	p := filepath.Join(f.into, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	return b, os.WriteFile(p, b, 0o644)
}

// refsIn returns the release-relative paths of the files a schema at rel
// references ($ref values other than same-document fragments), root-relative
// ("/schemas/<release>/core/x.json") or relative to rel ("../core/x.json").
// References outside the release are left out: the loader refuses them.
func refsIn(rel string, doc []byte, release string) []string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				if s, ok := c.(string); ok && k == "$ref" {
					if p := releasePath(rel, s, release); p != "" {
						out = append(out, p)
					}
					continue
				}
				walk(c)
			}
		case []any:
			for _, c := range t {
				walk(c)
			}
		}
	}
	walk(v)
	return out
}

// releasePath resolves a $ref found in the file at rel to a path inside the
// release, "" when it points elsewhere.
func releasePath(rel, ref, release string) string {
	ref, _, _ = strings.Cut(ref, "#")
	if ref == "" || strings.Contains(ref, "://") || strings.HasPrefix(ref, "//") {
		return ""
	}
	var p string
	if strings.HasPrefix(ref, "/") {
		var ok bool
		if p, ok = strings.CutPrefix(ref, "/schemas/"+release+"/"); !ok {
			return ""
		}
	} else {
		p = path.Join(path.Dir(rel), ref)
	}
	p = path.Clean(p)
	if p == "." || strings.HasPrefix(p, "../") || p == ".." || strings.HasPrefix(p, "/") || !strings.HasSuffix(p, ".json") ||
		strings.HasPrefix(p, "bundled/") {
		return ""
	}
	return p
}

// manifestSchemas returns every response schema manifest.json lists.
func manifestSchemas(doc []byte) []string {
	var m Manifest
	if json.Unmarshal(doc, &m) != nil {
		return nil
	}
	var out []string
	for _, t := range m.Tools {
		out = append(out, SchemaPath(t.ResponseSchema))
		for _, a := range t.AsyncResponseSchemas {
			out = append(out, SchemaPath(a))
		}
	}
	return out
}

// SchemaPath returns a path a schemas manifest names when it stays inside
// the release (a relative path to a .json file), else "".
func SchemaPath(p string) string {
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") || !strings.HasSuffix(p, ".json") {
		return ""
	}
	return p
}

// Manifest is the part of a release's schemas manifest.json the harness
// reads: each task's schemas and whether it mutates state.
type Manifest struct {
	Tools map[string]ManifestTool `json:"tools"`
}

// ManifestTool is one task of a Manifest.
type ManifestTool struct {
	RequestSchema        string   `json:"request_schema"`
	ResponseSchema       string   `json:"response_schema"`
	AsyncResponseSchemas []string `json:"async_response_schemas"`
	Mutating             bool     `json:"mutating"`
}
