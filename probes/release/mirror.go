package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Published is the site AdCP publishes its releases on: the release index
// at /schemas/index.json, each release's bundle at
// /protocol/<release>.tgz with its .sha256, and its schemas under
// /schemas/<release>/.
const Published = "https://adcontextprotocol.org"

// Where the published site keeps each release's material.
const (
	// PublishedSchemas holds each release's schemas, as
	// <PublishedSchemas>/<release>/core/error.json and so on.
	PublishedSchemas = Published + "/schemas"
	// PublishedBundles holds each release's bundle, as
	// <PublishedBundles>/<release>.tgz with a <release>.tgz.sha256 beside it.
	PublishedBundles = Published + "/protocol"
)

// maxIndexBytes bounds the release index (a few hundred releases of
// metadata are tens of KB).
const maxIndexBytes = 1 << 20

// Mirror is where a run gets releases: a site laid out like the published
// one (URL), or a folder (Dir) laid out like the site or like the spec
// repository's dist/ — compliance/<release>/ (the storyboards, extracted)
// or protocol/<release>.tgz with its .sha256 beside it, schemas/<release>/,
// and optionally the index schemas/index.json. One of the two is set.
type Mirror struct {
	URL, Dir string
}

// ParseMirror reads --release-mirror: "" is the published site, an http(s)
// URL a site laid out like it, anything else a folder, which must exist.
func ParseMirror(s string) (Mirror, error) {
	if s == "" {
		return Mirror{URL: Published}, nil
	}
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return Mirror{}, fmt.Errorf("%s: want the http(s) URL of a site laid out like %s, without credentials, query or fragment", s, Published)
		}
		return Mirror{URL: strings.TrimRight(s, "/")}, nil
	}
	st, err := os.Stat(s)
	if err != nil || !st.IsDir() {
		return Mirror{}, fmt.Errorf("%s: not a folder (want one holding compliance/<release>/ or protocol/<release>.tgz, and schemas/<release>/)", s)
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return Mirror{}, err
	}
	return Mirror{Dir: abs}, nil
}

// String names the mirror as a user gave it.
func (m Mirror) String() string {
	if m.Dir != "" {
		return m.Dir
	}
	return m.URL
}

// IndexURL is the release index of a site mirror.
func (m Mirror) IndexURL() string { return m.URL + "/schemas/index.json" }

// BundleURL is the published bundle of a release on a site mirror.
func (m Mirror) BundleURL(release string) string { return m.URL + "/protocol/" + release + ".tgz" }

// SchemasURL is the published schemas folder of a release on a site
// mirror.
func (m Mirror) SchemasURL(release string) string { return m.URL + "/schemas/" + release + "/" }

// Storyboards returns where a folder mirror holds a release's
// storyboards: its extracted compliance folder, else its bundle; both ""
// when it holds neither.
func (m Mirror) Storyboards(release string) (dir, tgz string) {
	if !safe(release) {
		return "", ""
	}
	if d := filepath.Join(m.Dir, "compliance", release); isDir(d) {
		return resolved(d), ""
	}
	if f := filepath.Join(m.Dir, "protocol", release+".tgz"); isFile(f) {
		return "", f
	}
	return "", ""
}

// Schemas returns a folder mirror's schemas folder of a release, "" when
// it has none.
func (m Mirror) Schemas(release string) string {
	if d := filepath.Join(m.Dir, "schemas", release); safe(release) && isDir(d) {
		return resolved(d)
	}
	return ""
}

// Releases lists the releases a folder mirror holds, newest first: the
// names of compliance/<release>/, protocol/<release>.tgz and
// schemas/<release>/ that are releases, less those its index, when it has
// one, marks withdrawn or unpublished.
func (m Mirror) Releases() []string {
	var names []string
	for _, sub := range []string{"compliance", "schemas"} {
		entries, _ := os.ReadDir(filepath.Join(m.Dir, sub))
		for _, e := range entries {
			if isDir(filepath.Join(m.Dir, sub, e.Name())) { // a link to a folder too
				names = append(names, e.Name())
			}
		}
	}
	entries, _ := os.ReadDir(filepath.Join(m.Dir, "protocol"))
	for _, e := range entries {
		if rel, ok := strings.CutSuffix(e.Name(), ".tgz"); ok && !e.IsDir() {
			names = append(names, rel)
		}
	}
	if b, err := readFile(filepath.Join(m.Dir, "schemas", "index.json"), maxIndexBytes); err == nil {
		if _, barred, err := Index(b); err == nil {
			names = without(names, barred)
		}
	}
	return Sort(names)
}

// FetchIndex reads a site mirror's release index: the releases it lists
// that may be chosen.
func FetchIndex(ctx context.Context, client *http.Client, m Mirror) ([]string, error) {
	b, err := get(ctx, client, m.IndexURL(), m.IndexURL(), "application/json", maxIndexBytes)
	if err != nil {
		return nil, err
	}
	listed, _, err := Index(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.IndexURL(), err)
	}
	return listed, nil
}

// Index reads a release index laid out as the published
// /schemas/index.json (building/by-layer/L0/schemas.mdx §Version
// discovery): its versions, each a release name or an object with
// "version". It returns the releases that may be chosen, newest first,
// and those the index bars — withdrawn (3.1.3), or listed but not
// published (3.2.0 before its release): their exact artifacts may stay
// reachable, but they never win a choice.
func Index(b []byte) (listed, barred []string, err error) {
	var idx struct {
		Versions []json.RawMessage `json:"versions"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, nil, fmt.Errorf("not a release index: %w", err)
	}
	if len(idx.Versions) == 0 {
		return nil, nil, errors.New("the release index lists no versions")
	}
	for _, raw := range idx.Versions {
		var name string
		if json.Unmarshal(raw, &name) == nil {
			listed = append(listed, name)
			continue
		}
		var e struct {
			Version   string `json:"version"`
			Stability string `json:"stability"`
			Withdrawn bool   `json:"withdrawn"`
			Published *bool  `json:"published"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Version == "" {
			continue
		}
		if e.Withdrawn || (e.Published != nil && !*e.Published) || e.Stability == "withdrawn" || e.Stability == "unpublished" {
			barred = append(barred, e.Version)
			continue
		}
		listed = append(listed, e.Version)
	}
	listed = Sort(without(listed, barred))
	if len(listed) == 0 {
		return nil, barred, errors.New("the release index lists no release that may be chosen")
	}
	return listed, barred, nil
}

// safe reports whether a release name is a release, so that joining it
// to a path stays inside the mirror.
func safe(release string) bool { _, ok := Parse(release); return ok }

// without returns names less those in drop.
func without(names, drop []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(drop, n) })
}

// resolved is p with its symbolic links resolved: a mirror may link its
// release folders to where they live, and the loaders walk no link.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
