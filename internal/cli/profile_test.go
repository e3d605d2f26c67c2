package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
)

// --cpu-profile and --block-profile write pprof files (gzipped protocol
// buffers) once the run ends, whatever its verdict; a profile that cannot
// be created is a usage error before anything is probed.
func TestARunWritesItsProfiles(t *testing.T) {
	h := hostile.StartMCP(hostile.NoAnswer)
	defer h.Stop()
	dir := t.TempDir()
	cpu, block := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "block.pprof")
	code, _, errOut := run(t, nil, "", "run", "--mcp", h.URL, "--out", filepath.Join(dir, "r"), "--timeout", "200ms", "--deadline", "5s",
		"--schemas", "off", "--storyboards", "off", "--cpu-profile", cpu, "--block-profile", block)
	if code == ExitUsage {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	for _, p := range []string{cpu, block} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Errorf("%s is not a pprof file (gzip): % x", filepath.Base(p), b[:min(len(b), 8)])
		}
	}
	code, _, errOut = run(t, nil, "", "run", "--mcp", h.URL, "--out", filepath.Join(dir, "r2"), "--cpu-profile", filepath.Join(dir, "no", "such", "cpu.pprof"))
	if code != ExitUsage {
		t.Errorf("an uncreatable --cpu-profile: exit %d, want %d\n%s", code, ExitUsage, errOut)
	}
}
