package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// goreleaserVersion is the GoReleaser the release uses (.goreleaser.yaml
// and .github/workflows/release.yml name the same one).
const goreleaserVersion = "v2.13.0"

// TestSnapshotRelease builds a snapshot release with .goreleaser.yaml, as a
// tag would: an archive per OS and architecture, a checksums file listing
// each, and a binary whose `version` shows the release's version and
// commit. It is slow (GoReleaser itself is fetched and built from the Go
// module proxy, then six targets), so it runs only with
// ADCP_CONFORM_RELEASE_TEST=1 (.ci/run sets it); it skips with a message
// when GoReleaser cannot be fetched or built in time
// (ADCP_CONFORM_RELEASE_FETCH_TIMEOUT, default 10m).
func TestSnapshotRelease(t *testing.T) {
	if os.Getenv("ADCP_CONFORM_RELEASE_TEST") == "" {
		t.Skip("set ADCP_CONFORM_RELEASE_TEST=1 to build a snapshot release with GoReleaser (slow)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	fetch := 10 * time.Minute
	if d, err := time.ParseDuration(os.Getenv("ADCP_CONFORM_RELEASE_FETCH_TIMEOUT")); err == nil {
		fetch = d
	}
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), fetch)
	defer cancel()
	install := exec.CommandContext(ctx, "go", "install", "github.com/goreleaser/goreleaser/v2@"+goreleaserVersion)
	install.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=")
	if out, err := install.CombinedOutput(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Skipf("GoReleaser %s was not built within %s; skipping the snapshot release", goreleaserVersion, fetch)
		}
		t.Skipf("GoReleaser %s could not be fetched or built from the module proxy (%v); skipping the snapshot release:\n%s",
			goreleaserVersion, err, tail(out))
	}

	dist := filepath.Join(t.TempDir(), "dist")
	rctx, rcancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer rcancel()
	cfg := filepath.Join(t.TempDir(), "goreleaser.yaml")
	orig, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The same configuration, building into the test's own folder.
	if err := os.WriteFile(cfg, append(orig, []byte("\ndist: "+dist+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	rel := exec.CommandContext(rctx, filepath.Join(bin, "goreleaser"), "release", "--snapshot", "--clean", "--skip=before", "--config", cfg)
	rel.Dir = root
	// GoReleaser reads the commit through git and gives up (commit "none")
	// in a clone without a remote, such as a git worktree; a remote given
	// in the environment changes no file.
	if out, _ := exec.Command("git", "-C", root, "remote").Output(); strings.TrimSpace(string(out)) == "" {
		rel.Env = append(os.Environ(), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=remote.origin.url",
			"GIT_CONFIG_VALUE_0=https://github.com/adcp-conform/adcp-conform.git")
	}
	if out, err := rel.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser release --snapshot: %v\n%s", err, tail(out))
	}

	sums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var archives []string
	sc := bufio.NewScanner(strings.NewReader(string(sums)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || len(f[0]) != 64 {
			t.Errorf("checksums.txt line %q is not <sha256> <file>", sc.Text())
			continue
		}
		archives = append(archives, f[1])
	}
	for _, osArch := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64", "windows_arm64"} {
		ext := ".tar.gz"
		if strings.HasPrefix(osArch, "windows") {
			ext = ".zip"
		}
		found := false
		for _, a := range archives {
			if strings.HasPrefix(a, "adcp-conform_") && strings.HasSuffix(a, "_"+osArch+ext) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s archive in checksums.txt: %v", osArch+ext, archives)
		}
	}

	// The binary for this machine says which release and commit it is.
	host, _ := filepath.Glob(filepath.Join(dist, "adcp-conform_"+runtime.GOOS+"_"+runtime.GOARCH+"*", "adcp-conform*"))
	if len(host) == 0 {
		t.Skipf("no binary for %s/%s in %s", runtime.GOOS, runtime.GOARCH, dist)
	}
	out, err := exec.Command(host[0], "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", host[0], err, out)
	}
	commit, _ := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if !strings.Contains(string(out), "-snapshot+") || !strings.Contains(string(out), "commit:        "+strings.TrimSpace(string(commit))) {
		t.Errorf("version of the snapshot binary does not show the snapshot version and the commit %s:\n%s", commit, out)
	}
	t.Logf("snapshot release in %s:\n%s", dist, out)
}

// tail is the end of a command's output, enough to say what went wrong.
func tail(b []byte) string {
	if len(b) > 4000 {
		return "…" + string(b[len(b)-4000:])
	}
	return string(b)
}
