package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// This file fetches the compliance storyboards of a release from the
// bundle the spec publishes for it, <release>.tgz, into a cache folder
// that storyboard.Load reads. A bundle is used only when its SHA-256
// matches the .sha256 sidecar published beside it, and only its
// adcp-<release>/compliance/ tree is extracted: regular files and folders,
// within bounds. Anything else there (a link, a device, a name that climbs
// out) rejects the whole bundle and nothing is cached.

// The bounds of a fetch (variables so that tests can lower them). A
// published bundle is a few MB; its compliance tree a few hundred files.
var (
	maxBundleBytes  int64 = 64 << 20  // the .tgz as downloaded
	maxFiles              = 5000      // files extracted
	maxFileBytes    int64 = 8 << 20   // one extracted file
	maxTotalBytes   int64 = 256 << 20 // decompressed, every entry of the archive
	maxSidecarBytes int64 = 4 << 10
)

// bundleGetTimeout bounds the download of a bundle by a default client.
const bundleGetTimeout = 60 * time.Second

// bundleReleaseOf returns the release a bundle URL names
// ("https://adcontextprotocol.org/protocol/3.1.19.tgz" → "3.1.19").
func bundleReleaseOf(bundleURL string) (string, error) {
	u, err := httpURL(bundleURL)
	if err != nil {
		return "", err
	}
	p := u.EscapedPath() // "a%2Fb.tgz" is no release "b"
	rel, ok := strings.CutSuffix(p[strings.LastIndex(p, "/")+1:], ".tgz")
	if !ok || !ValidRelease(rel) {
		return "", fmt.Errorf("%s does not end in a release bundle such as /protocol/%s.tgz", bundleURL, Default)
	}
	return rel, nil
}

// fetchBundle fills root/<release> with the compliance tree of the bundle
// at bundleURL, checked against its published checksum.
func fetchBundle(ctx context.Context, client *http.Client, bundleURL, release, root string) (string, error) {
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("fetching the %s storyboards from %s: %w", release, bundleURL, err)
	}
	want, err := checksum(ctx, client, bundleURL+".sha256")
	if err != nil {
		return fail(err)
	}
	tgz, err := get(ctx, client, bundleURL, bundleURL, "", maxBundleBytes)
	if err != nil {
		return fail(err)
	}
	dir, err := install(tgz, want, release, bundleURL, root)
	if err != nil {
		return fail(err)
	}
	return dir, nil
}

// FetchFile is Fetch of the Storyboards for a bundle in a folder (a mirror for a machine
// without network): path is <release>.tgz, its checksum is the
// <release>.tgz.sha256 beside it, and it is used, and extracted into the
// cache, only when they match.
func FetchFile(path, root string) (dir string, fetched bool, err error) {
	release, ok := strings.CutSuffix(filepath.Base(path), ".tgz")
	if !ok || !ValidRelease(release) {
		return "", false, fmt.Errorf("%s is not a release bundle such as %s.tgz", path, Default)
	}
	if dir := Cached(root, release); dir != "" {
		return dir, false, nil
	}
	fail := func(err error) (string, bool, error) {
		return "", false, fmt.Errorf("reading the %s storyboards from %s: %w", release, path, err)
	}
	sidecar, err := readFile(path+".sha256", maxSidecarBytes)
	if errors.Is(err, os.ErrNotExist) {
		return fail(fmt.Errorf("no checksum %s.sha256 beside it (a bundle is never used unverified)", filepath.Base(path)))
	}
	if err != nil {
		return fail(err)
	}
	want, err := parseChecksum(sidecar, path+".sha256")
	if err != nil {
		return fail(err)
	}
	tgz, err := readFile(path, maxBundleBytes)
	if err != nil {
		return fail(err)
	}
	dir, err = install(tgz, want, release, path, root)
	if err != nil {
		return fail(err)
	}
	return dir, true, nil
}

// install checks a bundle against the checksum its publisher gave and
// extracts its compliance tree into root/<release>; from names where it
// came from, in the cache folder's mark.
func install(tgz []byte, want, release, from, root string) (string, error) {
	sum := sha256.Sum256(tgz)
	got := hex.EncodeToString(sum[:])
	if got != want {
		return "", fmt.Errorf("the bundle's SHA-256 is %s, the published checksum %s", got, want)
	}
	return Fill(root, release, []byte(from+"\n"+got+"\n"), func(tmp string) error {
		return extract(tgz, release, tmp)
	})
}

// checksum returns the lowercase hex SHA-256 the sidecar at u publishes:
// its first whitespace-separated field. A bundle without one is never used.
func checksum(ctx context.Context, client *http.Client, u string) (string, error) {
	b, err := get(ctx, client, u, u, "", maxSidecarBytes)
	var st StatusError
	if errors.As(err, &st) && st.Code == http.StatusNotFound {
		return "", fmt.Errorf("no checksum is published at %s (a bundle is never used unverified)", u)
	}
	if err != nil {
		return "", err
	}
	return parseChecksum(b, u)
}

// parseChecksum reads a .sha256 sidecar: its first whitespace-separated
// field, a hex SHA-256 (`shasum -a 256` output).
func parseChecksum(b []byte, where string) (string, error) {
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return "", fmt.Errorf("the checksum at %s is empty", where)
	}
	sum := strings.ToLower(fields[0])
	if d, err := hex.DecodeString(sum); err != nil || len(d) != sha256.Size {
		return "", fmt.Errorf("the checksum at %s is not a hex SHA-256", where)
	}
	return sum, nil
}

// extract writes the regular files under adcp-<release>/compliance/ of
// the gzipped tarball tgz into dir, without that prefix.
func extract(tgz []byte, release, dir string) error {
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return fmt.Errorf("the bundle is not gzip: %w", err)
	}
	defer gz.Close()
	tr := tar.NewReader(&boundedReader{r: gz, left: maxTotalBytes})
	prefix := "adcp-" + release + "/compliance/"
	files := 0
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("the bundle: %w", err)
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		if err := checkName(name); err != nil {
			return err
		}
		rel, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue // the schemas and the rest of the bundle
		}
		rel = strings.TrimSuffix(rel, "/")
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(rel)), 0o755); err != nil {
				return err
			}
			continue
		case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // TypeRegA is how old tars mark a regular file
		case tar.TypeSymlink:
			return fmt.Errorf("the bundle's %s is a symbolic link", name)
		case tar.TypeLink:
			return fmt.Errorf("the bundle's %s is a hard link", name)
		default:
			return fmt.Errorf("the bundle's %s is not a regular file (type %q)", name, hdr.Typeflag)
		}
		if rel == "" {
			return fmt.Errorf("the bundle's %s is a file where a folder is expected", name)
		}
		if files++; files > maxFiles {
			return fmt.Errorf("the bundle's compliance tree has more than %d files", maxFiles)
		}
		if hdr.Size > maxFileBytes {
			return fmt.Errorf("the bundle's %s is larger than %d bytes", name, maxFileBytes)
		}
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(rel)), tr, name); err != nil {
			return err
		}
	}
	if files == 0 {
		return fmt.Errorf("the bundle holds no %s", prefix)
	}
	return nil
}

// checkName rejects an entry name that is absolute or could climb out of
// the folder it is extracted into.
func checkName(name string) error {
	if strings.Contains(name, `\`) || strings.HasPrefix(name, "/") || !filepath.IsLocal(filepath.FromSlash(strings.TrimSuffix(name, "/"))) {
		return fmt.Errorf("the bundle holds an unsafe name %q", name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return fmt.Errorf("the bundle holds an unsafe name %q", name)
		}
	}
	return nil
}

// writeFile writes one entry, at most maxFileBytes, mode 0644 whatever
// the archive says.
func writeFile(p string, r io.Reader, name string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("the bundle's %s: %w", name, err)
	}
	n, err := io.Copy(f, io.LimitReader(r, maxFileBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("the bundle's %s: %w", name, err)
	}
	if n > maxFileBytes {
		return fmt.Errorf("the bundle's %s is larger than %d bytes", name, maxFileBytes)
	}
	return os.Chmod(p, 0o644) // whatever the umask
}

// boundedReader fails once more than left bytes have been read through
// it: the decompressed size of the whole archive, entries skipped included.
type boundedReader struct {
	r    io.Reader
	left int64
}

var errTooLarge = errors.New("the bundle decompresses to more than the limit")

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.r.Read(one[:]); n == 0 {
			return 0, err // exactly at the limit
		}
		return 0, fmt.Errorf("%w of %d bytes", errTooLarge, maxTotalBytes)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}
