package browsertest

import (
	"bytes"
	"context"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/cli"
)

// terminalPage shows a command and its output as a terminal would.
var terminalPage = template.Must(template.New("terminal").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>terminal</title><style>
body { margin: 0; background: #0d1117; }
pre { margin: 0; padding: 16px 20px; color: #e6edf3; font: 13px/1.4 "DejaVu Sans Mono", ui-monospace, monospace; white-space: pre; display: inline-block; }
.prompt { color: #7ee787; }
</style></head><body><pre><span class="prompt">$</span> {{.Command}}
{{.Output}}</pre></body></html>`))

// TestDocsScreenshots regenerates the screenshots of the README and docs/running.md, docs/screenshots/:
// a run against the reference seller with the CTX-01/context-dropped fault,
// its terminal summary, and its report.html at a laptop's and a phone's
// width. It runs only when ADCP_CONFORM_DOCS_SCREENSHOTS=1 (the images are
// committed; regenerate them when the outputs change, and look at them).
func TestDocsScreenshots(t *testing.T) {
	if os.Getenv("ADCP_CONFORM_DOCS_SCREENSHOTS") == "" {
		t.Skip("set ADCP_CONFORM_DOCS_SCREENSHOTS=1 to regenerate docs/screenshots/")
	}
	bin := findBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ep, stop, err := seller.StartAll(ctx, seller.Options{Faults: []seller.Fault{"CTX-01/context-dropped"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	out := t.TempDir()
	schemas := "off"
	if d, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "spec", "schemas", "3.1.19")); err == nil {
		if _, err := os.Stat(d); err == nil {
			schemas = d
		}
	}
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"run", "--mcp", ep.MCP, "--a2a", ep.A2A10, "--schemas", schemas, "--storyboards", "off", "--out", out},
		cli.Stdio{In: strings.NewReader(""), Out: &stdout, Err: &stderr})
	if code != 1 {
		t.Fatalf("exit %d, want 1 (non-conformant):\n%s\n%s", code, stdout.String(), stderr.String())
	}
	// The URLs' ports change from run to run; the picture keeps one.
	port := strings.TrimPrefix(ep.MCP[:strings.LastIndex(ep.MCP, "/")], "http://127.0.0.1:")
	terminal := strings.NewReplacer(port, "8931", out, "adcp-conform-report").Replace(stderr.String() + stdout.String())

	docs, err := filepath.Abs(filepath.Join("..", "..", "docs", "screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := terminalPage.Execute(&page, map[string]string{
		"Command": "adcp-conform run --mcp http://127.0.0.1:8931/mcp --a2a http://127.0.0.1:8931/a2a/v1",
		"Output":  terminal}); err != nil {
		t.Fatal(err)
	}
	termHTML := filepath.Join(t.TempDir(), "terminal.html")
	if err := os.WriteFile(termHTML, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tab := browser(t, bin)
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1100, 600), chromedp.Navigate("file://"+termHTML),
		chromedp.WaitVisible(chromedp.CSS("pre"))); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(docs, "terminal-failing-run.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)

	if err := chromedp.Do(tab, chromedp.Navigate("file://"+filepath.Join(out, "report.html")),
		chromedp.WaitReady(chromedp.CSS(`html[data-filters="ready"]`))); err != nil {
		t.Fatal(err)
	}
	for _, s := range screenshots(t, tab, docs, "report-failing") {
		t.Logf("screenshot: %s", s)
	}
}
