package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

// TestExtractGolden runs `extract` on each captured reply in
// testdata/replies and compares standard output, standard error and the exit
// code with testdata/extract/<case>.golden.
func TestExtractGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"mcp-products", []string{"--transport", "mcp", "testdata/replies/mcp-products.json"}},
		{"mcp-text-fallback", []string{"testdata/replies/mcp-text-fallback.json"}},
		{"mcp-rate-limited", []string{"--transport", "mcp", "testdata/replies/mcp-rate-limited.json"}},
		{"jsonrpc-rate-limited", []string{"--transport", "mcp", "--jsonrpc", "testdata/replies/jsonrpc-rate-limited.json"}},
		{"a2a-completed", []string{"--transport", "a2a", "testdata/replies/a2a-completed.json"}},
		{"a2a-failed", []string{"--transport", "a2a", "testdata/replies/a2a-failed.json"}},
		{"a2a-wrapper", []string{"--transport", "a2a", "testdata/replies/a2a-wrapper.json"}},
		{"not-json", []string{"testdata/replies/not-json.txt"}},
		{"bad-transport", []string{"--transport", "grpc", "testdata/replies/mcp-products.json"}},
		{"missing-file", []string{"testdata/replies/absent.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, nil, "", append([]string{"extract"}, tc.args...)...)
			got := "exit " + strconv.Itoa(int(code)) + "\n-- stdout --\n" + out + "-- stderr --\n" + errOut
			golden.Check(t, filepath.Join("testdata", "extract", tc.name+".golden"), []byte(got))
		})
	}
}

func TestExtractReadsStandardInput(t *testing.T) {
	code, out, _ := run(t, nil, `{"structuredContent":{"status":"completed"}}`, "extract")
	if code != ExitOK || !strings.Contains(out, `"path": "structured_content"`) {
		t.Fatalf("code %d, stdout %q", code, out)
	}
}

func TestExtractRejectsAnOversizedInputWithoutReadingItWhole(t *testing.T) {
	r := &countingReader{}
	_, err := readInput("", r, 1024)
	if err == nil || exitCodeOf(err) != ExitUsage {
		t.Fatalf("err = %v, want a usage error", err)
	}
	if r.n > 1025 {
		t.Fatalf("read %d bytes of an endless input, want at most 1025", r.n)
	}
}

// countingReader is an endless stream of spaces that counts what was read.
type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	c.n += len(p)
	return len(p), nil
}
