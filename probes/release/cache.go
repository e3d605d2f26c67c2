package release

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Mark is written last into a fetched release's folder: a folder without
// it is an interrupted fetch, fetched again.
const Mark = ".complete"

// releaseName is what a release folder may be called ("3.1.19",
// "3.2.0-beta.5"): nothing that could climb out of the cache.
var releaseName = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$`)

// ValidRelease reports whether a release name is safe as a cache folder
// name.
func ValidRelease(release string) bool {
	return releaseName.MatchString(release) && !strings.Contains(release, "..")
}

// Material is one kind of release material the harness fetches, named as
// the cache folder it is kept in.
type Material string

// The release material.
const (
	// Schemas are a release's published JSON Schemas.
	Schemas Material = "schemas"
	// Storyboards are the compliance tree of a release's published bundle.
	Storyboards Material = "compliance"
)

// CacheRoot is the folder fetched material of this kind is kept in:
// os.UserCacheDir()/adcp-conform/<material>.
func (m Material) CacheRoot() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "adcp-conform", string(m)), nil
}

// Cached returns the folder of a release fetched earlier into root, or ""
// when there is none (or only an interrupted fetch).
func Cached(root, release string) string {
	if !ValidRelease(release) {
		return ""
	}
	dir := filepath.Join(root, release)
	if _, err := os.Stat(filepath.Join(dir, Mark)); err != nil {
		return ""
	}
	return dir
}

// List returns the releases fetched completely into root, in directory
// order; none when root cannot be read.
func List(root string) []string {
	entries, _ := os.ReadDir(root)
	var out []string
	for _, e := range entries {
		if e.IsDir() && Cached(root, e.Name()) != "" {
			out = append(out, e.Name())
		}
	}
	return out
}

// Fill makes root/<release>: fill writes the release into a temporary
// folder inside root (its error is returned as it is), mark is written
// last, and the folder is renamed into place. A folder another run
// completed meanwhile is taken as it is.
func Fill(root, release string, mark []byte, fill func(tmp string) error) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, "."+release+".fetching-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // after a successful rename there is nothing left
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := fill(tmp); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, Mark), mark, 0o644); err != nil {
		return "", err
	}
	dir := filepath.Join(root, release)
	_ = os.RemoveAll(dir) // an interrupted fetch of an earlier run
	if err := os.Rename(tmp, dir); err != nil {
		if Cached(root, release) != "" { // another run finished first
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}

// ReleaseOf returns the release a published URL of this material names:
// a schemas folder by its last segment
// ("https://adcontextprotocol.org/schemas/3.1.19/" → "3.1.19"), a bundle
// by its name ("https://adcontextprotocol.org/protocol/3.1.19.tgz" →
// "3.1.19").
func (m Material) ReleaseOf(u string) (string, error) {
	switch m {
	case Schemas:
		return schemasReleaseOf(u)
	case Storyboards:
		return bundleReleaseOf(u)
	}
	return "", fmt.Errorf("no release material %q", string(m))
}

// Fetch makes the material published at src (a schemas folder URL, a
// bundle URL) available as root/<release>, downloading it only when no
// complete copy is there. It returns the folder and whether it downloaded
// anything. client nil means Client(src, …): 30 s a schema file, 60 s a
// bundle.
func Fetch(ctx context.Context, client *http.Client, m Material, src, root string) (dir string, fetched bool, err error) {
	release, err := m.ReleaseOf(src)
	if err != nil {
		return "", false, err
	}
	if dir := Cached(root, release); dir != "" {
		return dir, false, nil
	}
	if m == Schemas {
		if client == nil {
			client = Client(src, schemasGetTimeout)
		}
		dir, err = fetchSchemas(ctx, client, src, release, root)
	} else {
		if client == nil {
			client = Client(src, bundleGetTimeout)
		}
		dir, err = fetchBundle(ctx, client, src, release, root)
	}
	return dir, err == nil, err
}
