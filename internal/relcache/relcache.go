// Package relcache keeps the AdCP release material a run fetches (the
// JSON Schemas, the compliance storyboards) in the user's cache: one
// folder per release, filled in a temporary folder and renamed into place
// with a mark written last, so an interrupted fetch is never used and two
// runs fetching at once both end with the one copy.
package relcache

import (
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

// Root is the folder fetched material of one kind is kept in:
// os.UserCacheDir()/adcp-conform/<kind>.
func Root(kind string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "adcp-conform", kind), nil
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
