package conform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/report"
)

// A fuzz configuration that cannot run is refused before any call, as a
// *ConfigError naming the setting by its flag: the Config's own checks,
// run's settings a fuzz run has no use for, the fuzzing's bounds.
func TestFuzzRefusesAConfigurationThatCannotRun(t *testing.T) {
	const seller = "http://127.0.0.1:1/mcp"
	for _, tc := range []struct {
		name string
		fc   FuzzConfig
		want string
	}{
		{"no target", FuzzConfig{}, "no target: give the seller's --mcp endpoint or its --a2a base URL"},
		{"certify", FuzzConfig{Config: Config{MCP: seller, Certify: true}}, "--certify is run's"},
		{"a label filter", FuzzConfig{Config: Config{MCP: seller, LabelFilter: "rule:FUZZ-01"}}, "--label-filter is run's"},
		{"storyboards", FuzzConfig{Config: Config{MCP: seller, Storyboards: "off"}}, "--storyboards is run's"},
		{"too many turns", FuzzConfig{Config: Config{MCP: seller}, Turns: 10001}, "--turns must be between 1 and 10000"},
		{"a sandbox without mutations", FuzzConfig{Config: Config{MCP: seller, Sandbox: true}}, "--sandbox seeds the account by creating resources: give --allow-mutations too"},
		{"the second tenant is the first", FuzzConfig{Config: Config{MCP: seller, BearerToken: "t"}, Tenant2BearerToken: "t"},
			"the second tenant's token (--tenant2-bearer-env) is the run's own token"},
		{"schemas off", FuzzConfig{Config: Config{MCP: seller, Schemas: "off"}}, "--schemas off: the requests are generated from the schemas"},
		{"schemas that are no folder", FuzzConfig{Config: Config{MCP: seller, Schemas: "/nonexistent/schemas"}}, "--schemas: "},
	} {
		run, err := Fuzz(t.Context(), tc.fc)
		var ce *ConfigError
		if run != nil || !errors.As(err, &ce) || !strings.HasPrefix(ce.Msg, tc.want) {
			t.Errorf("%s: %v, %v; want a ConfigError %q", tc.name, run, err, tc.want)
		}
	}
}

// Cancelling Fuzz's context stops the turns: the report says what the
// cause says, and the reports are still written.
func TestACancelledContextInterruptsTheFuzzWithItsCause(t *testing.T) {
	schemas := shared.File(t, "spec/schemas/3.1.19")
	h := hostile.StartMCP(hostile.NoAnswer) // never answers a tool call
	defer h.Stop()
	out := t.TempDir()
	ctx, cancel := context.WithCancelCause(t.Context())
	time.AfterFunc(500*time.Millisecond, func() { cancel(errors.New("interrupted by the test")) })
	started := time.Now()
	run, err := Fuzz(ctx, FuzzConfig{Config: Config{MCP: h.URL, Schemas: schemas, Timeout: 30 * time.Second, Out: out}, Turns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 15*time.Second {
		t.Errorf("the fuzz run took %v after a cancel at 0.5 s", took)
	}
	if run.Verdict != report.HarnessError || run.HarnessError != "interrupted by the test while fuzzing" || run.Fuzz == nil {
		t.Errorf("verdict %s, harness error %q, fuzz %v", run.Verdict, run.HarnessError, run.Fuzz)
	}
	for _, f := range []string{FileResults, FileEvidence, FileJUnit, FileHTML} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
}
