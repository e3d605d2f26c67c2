package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
)

// The benchmarks measure the harness against the bundled reference seller
// on loopback (docs/performance.md):
//
//	go test -run '^$' -bench . -benchtime 10x ./internal/cli/
//
// BenchmarkFullRun: the full default run (seller start, MCP and A2A
// probes, the rate-limit burst, the judges, four report files), wall time
// per run, and its memory (see memWatch: bytes allocated per run, sampled
// peak heap growth).
func BenchmarkFullRun(b *testing.B) {
	dir := b.TempDir()
	var peak uint64
	var allocated uint64
	for b.Loop() {
		w := startMemWatch()
		code := Main([]string{"run", "--out", dir}, Stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard,
			Getenv: func(string) string { return "" }})
		a, p := w.stop()
		allocated += a
		peak = max(peak, p)
		if code != ExitOK {
			b.Fatalf("exit %d", code)
		}
	}
	b.ReportMetric(float64(allocated)/float64(b.N)/(1<<20), "alloc-MB/run")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// BenchmarkProbeOverhead compares one harness probe — a tools/call of
// get_adcp_capabilities on a go-sdk session (probes/mcp's own JSON-RPC
// POST), the capturing transport, the redaction, the reply matching and the
// recording — with a bare net/http
// JSON-RPC round trip of the same call to the same endpoint, in the same
// process, interleaved so both see the same machine. It reports both times
// and their ratio.
func BenchmarkProbeOverhead(b *testing.B) {
	ctx := context.Background()
	url, stop, err := seller.Start(ctx, seller.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	s, _, err := mcp.Dial(ctx, mcp.Config{Endpoint: url}, "bench/initialize")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	bare := newBareClient(b, url)
	args := map[string]any{}
	var bareNS, harnessNS time.Duration
	for b.Loop() {
		t0 := time.Now()
		bare.call(b)
		t1 := time.Now()
		call := s.CallTool(ctx, "bench/get_adcp_capabilities", "get_adcp_capabilities", args)
		t2 := time.Now()
		if call.HarnessError != "" || call.Result == nil {
			b.Fatalf("harness call: %s", call.HarnessError)
		}
		bareNS += t1.Sub(t0)
		harnessNS += t2.Sub(t1)
	}
	b.ReportMetric(float64(bareNS.Microseconds())/float64(b.N), "bare-µs/call")
	b.ReportMetric(float64(harnessNS.Microseconds())/float64(b.N), "harness-µs/call")
	b.ReportMetric(float64(harnessNS)/float64(bareNS), "ratio")
}

// bareClient speaks just enough MCP over net/http to call one tool:
// initialize (for the session id), the initialized notification, then
// tools/call, reading each reply whole.
type bareClient struct {
	url, session string
	client       *http.Client
	id           int
}

func newBareClient(b *testing.B, url string) *bareClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true // as the harness's transport
	c := &bareClient{url: url, client: &http.Client{Transport: tr}}
	resp := c.post(b, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bare","version":"0"}}}`)
	c.session = resp.Header.Get("Mcp-Session-Id")
	c.post(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *bareClient) post(b *testing.B, body string) *http.Response {
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.ProtocolVersion)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		b.Fatalf("bare %s: HTTP %d", body[:min(40, len(body))], resp.StatusCode)
	}
	return resp
}

func (c *bareClient) call(b *testing.B) {
	c.id++
	c.post(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_adcp_capabilities","arguments":{}}}`, c.id))
}

// BenchmarkTargets20 runs --targets over 20 reference-seller instances
// (MCP and A2A 1.0 faces each, bearer token each) with the default
// --parallel-targets, and reports runs per minute.
func BenchmarkTargets20(b *testing.B) {
	const n = 20
	var yaml bytes.Buffer
	yaml.WriteString("targets:\n")
	env := map[string]string{}
	for i := range n {
		tok := fmt.Sprintf("bench-token-%02d-0123456789", i)
		ep, stop, err := seller.StartAll(context.Background(), seller.Options{BearerToken: tok})
		if err != nil {
			b.Fatal(err)
		}
		defer stop()
		env[fmt.Sprintf("TOKEN_%d", i)] = tok
		fmt.Fprintf(&yaml, "  - {name: seller-%02d, mcp: %q, a2a: %q, bearer_env: TOKEN_%d}\n", i, ep.MCP, ep.A2A10, i)
	}
	dir := b.TempDir()
	file := filepath.Join(dir, "targets.yaml")
	if err := os.WriteFile(file, yaml.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		code := Main([]string{"run", "--targets", file, "--out", filepath.Join(dir, "out")}, Stdio{In: strings.NewReader(""),
			Out: io.Discard, Err: io.Discard, Getenv: func(k string) string { return env[k] }})
		total += time.Since(start)
		if code != ExitOK {
			b.Fatalf("exit %d", code)
		}
	}
	b.ReportMetric(float64(n*b.N)/total.Minutes(), "runs/min")
}
