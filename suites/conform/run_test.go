package conform

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/report"
)

// A configuration that cannot run is refused before any probe, as a
// *ConfigError naming the setting by its flag.
func TestRunRefusesAConfigurationThatCannotRun(t *testing.T) {
	const seller = "http://127.0.0.1:1/mcp"
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no target", Config{}, "no target: give the seller's --mcp endpoint or its --a2a base URL"},
		{"not http", Config{MCP: "ftp://s.example/mcp"}, `--mcp "ftp://s.example/mcp": want an http or https URL`},
		{"credentials in the URL", Config{A2A: "https://u:p@s.example/a2a"}, "--a2a: put credentials in --bearer-env or --header, not in the URL"},
		{"a negative timeout", Config{MCP: seller, Timeout: -1}, "--timeout must be positive"},
		{"too many in flight", Config{MCP: seller, Parallel: 65}, "--parallel must be between 1 and 64"},
		{"a body limit past 1 GiB", Config{MCP: seller, MaxBody: 2 << 30}, "--max-body must be between 1 byte and 1GiB"},
		{"certify and a filter", Config{MCP: seller, Certify: true, LabelFilter: "family:ctx"}, "--certify judges every rule: it cannot be combined with --label-filter"},
		{"certify and a baseline", Config{MCP: seller, Certify: true, Baseline: []report.BaselineEntry{}}, "--certify judges every rule as it is: it cannot be combined with --baseline"},
		{"the live token is the run's", Config{MCP: seller, BearerToken: "t", LiveBearerToken: "t"}, "the live-mode token (--live-bearer-env) is the run's own token (--bearer-env): give a live-mode principal's"},
		{"a header with a line break", Config{MCP: seller, Header: http.Header{"X-A": {"a\r\nb"}}}, `--header "X-A": want 'Name: value'`},
		{"an OAuth client authentication", Config{MCP: seller, OAuth: &OAuth{TokenURL: "https://a.example/token", ClientID: "c", ClientSecret: "s", ClientAuth: "jwt"}},
			`--oauth-client-auth "jwt": want basic or post`},
		{"a filter that does not parse", Config{MCP: seller, LabelFilter: "rule:ENV-02 &&", Storyboards: "off"}, `--label-filter "rule:ENV-02 &&"`},
		{"storyboards that are no folder", Config{MCP: seller, Storyboards: "/nonexistent/compliance"}, "--storyboards /nonexistent/compliance: not a folder"},
	} {
		run, err := Run(t.Context(), tc.cfg)
		var ce *ConfigError
		if run != nil || !errors.As(err, &ce) || !strings.HasPrefix(ce.Msg, tc.want) {
			t.Errorf("%s: %v, %v; want a ConfigError %q", tc.name, run, err, tc.want)
		}
	}
}

// Cancelling Run's context interrupts it: the report says what the
// cause says, the rules not judged are harness errors, and the reports
// are still written, within the budget after the interruption.
func TestACancelledContextInterruptsTheRunWithItsCause(t *testing.T) {
	h := hostile.StartMCP(hostile.NoAnswer) // never answers a tool call
	defer h.Stop()
	out := t.TempDir()
	ctx, cancel := context.WithCancelCause(t.Context())
	time.AfterFunc(500*time.Millisecond, func() { cancel(errors.New("interrupted by the test")) })
	started := time.Now()
	run, err := Run(ctx, Config{MCP: h.URL, Storyboards: "off", Schemas: "off", Timeout: 30 * time.Second, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 10*time.Second {
		t.Errorf("the run took %v after a cancel at 0.5 s", took)
	}
	if run.Verdict != report.HarnessError || run.HarnessError != "interrupted by the test while probing" {
		t.Errorf("verdict %s, harness error %q", run.Verdict, run.HarnessError)
	}
	for _, f := range []string{FileResults, FileEvidence, FileJUnit, FileHTML} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	// Without a cause, the report says the context was cancelled.
	ctx2, cancel2 := context.WithCancel(t.Context())
	cancel2()
	run, err = Run(ctx2, Config{MCP: h.URL, Storyboards: "off", Schemas: "off"})
	if err != nil || run.HarnessError != "interrupted (context canceled) while probing" {
		t.Errorf("%v, %q", err, run.HarnessError)
	}
}

// A --storyboards folder loads beside the seller's discovery: one whose
// storyboards do not load is refused once it has, as a *ConfigError
// naming the flag, and the run goes no further.
func TestStoryboardsThatDoNotLoadAreRefused(t *testing.T) {
	ep, stop, err := seller.StartAll(t.Context(), seller.Options{BearerToken: "refused-token-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	broken := t.TempDir()
	if err := os.MkdirAll(filepath.Join(broken, "universal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "universal", "broken.yaml"), []byte("id: broken\nphases: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"a folder without storyboards", t.TempDir(), "--storyboards "},
		{"a storyboard that does not parse", broken, "--storyboards: "},
	} {
		out := t.TempDir()
		run, err := Run(t.Context(), Config{MCP: ep.MCP, BearerToken: "refused-token-0123456789", Storyboards: tc.dir, Schemas: "off", Out: out})
		var ce *ConfigError
		if run != nil || !errors.As(err, &ce) || !strings.HasPrefix(ce.Msg, tc.want) {
			t.Errorf("%s: %v, %v; want a ConfigError %q…", tc.name, run, err, tc.want)
		}
		if _, err := os.Stat(filepath.Join(out, FileResults)); err == nil {
			t.Errorf("%s: a refused run wrote %s", tc.name, FileResults)
		}
	}
}
