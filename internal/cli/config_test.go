package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
	"github.com/adcp-conform/adcp-conform/suites/conform"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/live"
)

// The README's commands, and what the CLI hands conform.Run for each: the
// flags' values, the credentials read from the variables they name, the
// defaults of the flags not given. Log is the terminal, left out of the
// comparison.
func TestTheReadmeCommandsMakeTheConfigTheySay(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "registry")
	if _, err := certify.WriteKeyPair(prefix); err != nil {
		t.Fatal(err)
	}
	key := prefix + certify.PrivateSuffix
	priv, err := certify.ReadPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	baseline := filepath.Join(t.TempDir(), "baseline.yaml")
	if err := os.WriteFile(baseline, []byte("expected_failures:\n  - rule: CTX-01\n    reason: known\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SELLER_TOKEN": "seller-token-1", "SELLER_CLIENT_SECRET": "client-secret-2", "GOV_TOKEN": "gov-token-3",
		"ADCP_CONFORM_STRICT": "true"}
	// base is a run's Config with no flag given: each flag's default.
	base := func(out string) conform.Config {
		return conform.Config{Timeout: mcp.DefaultTimeout, Deadline: conform.DefaultDeadline, TaskWait: mcp.DefaultTaskWait, WebhookWait: plan.DefaultWebhookWait,
			WebhookListen: "127.0.0.1:0", Parallel: plan.DefaultConcurrency, MaxBody: wire.DefaultMaxBodyBytes, MaxEvent: wire.DefaultMaxEventBytes,
			MaxEvidence: wire.DefaultMaxEvidenceBytes, MaxTotal: wire.DefaultMaxTotalBytes, Out: out, Strict: true, Version: currentVersion().Version}
	}
	with := func(out string, set func(*conform.Config)) conform.Config {
		c := base(out)
		set(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		args []string
		want conform.Config
	}{
		{"the bundled reference seller", []string{}, base(DefaultOut)},
		{"one face", []string{"--mcp", "https://staging.seller.example/mcp", "--bearer-env", "SELLER_TOKEN", "--out", "report/"},
			with("report/", func(c *conform.Config) { c.MCP, c.BearerToken = "https://staging.seller.example/mcp", "seller-token-1" })},
		{"both faces", []string{"--mcp", "https://staging.seller.example/mcp", "--a2a", "https://staging.seller.example/a2a", "--bearer-env", "SELLER_TOKEN", "--out", "report/"},
			with("report/", func(c *conform.Config) {
				c.MCP, c.A2A, c.BearerToken = "https://staging.seller.example/mcp", "https://staging.seller.example/a2a", "seller-token-1"
			})},
		{"OAuth client credentials", []string{"--mcp", "https://seller.example/mcp", "--oauth-token-url", "https://auth.seller.example/oauth/token",
			"--oauth-client-id", "adcp-conform", "--oauth-client-secret-env", "SELLER_CLIENT_SECRET", "--oauth-scope", "adcp", "--oauth-resource", "https://seller.example/mcp"},
			with(DefaultOut, func(c *conform.Config) {
				c.MCP = "https://seller.example/mcp"
				c.OAuth = &conform.OAuth{TokenURL: "https://auth.seller.example/oauth/token", ClientID: "adcp-conform", ClientSecret: "client-secret-2",
					Scope: "adcp", Resources: []string{"https://seller.example/mcp"}, ClientAuth: "basic"}
			})},
		{"storyboards from a folder", []string{"--storyboards", "../shared/spec/compliance/3.1.19", "--allow-mutations"},
			with(DefaultOut, func(c *conform.Config) { c.Storyboards, c.AllowMutations = "../shared/spec/compliance/3.1.19", true })},
		{"a mirror and one storyboard", []string{"--mcp", "https://s.example/mcp", "--bearer-env", "SELLER_TOKEN", "--release-mirror", "../shared/spec", "--storyboard", "error_compliance"},
			with(DefaultOut, func(c *conform.Config) {
				c.MCP, c.BearerToken, c.ReleaseMirror, c.StoryboardIDs = "https://s.example/mcp", "seller-token-1", "../shared/spec", []string{"error_compliance"}
			})},
		{"another agent", []string{"--mcp", "https://seller.example/mcp", "--bearer-env", "SELLER_TOKEN", "--allow-mutations",
			"--agent", "governance=https://governance.example/mcp", "--agent-bearer-env", "governance=GOV_TOKEN"},
			with(DefaultOut, func(c *conform.Config) {
				c.MCP, c.BearerToken, c.AllowMutations = "https://seller.example/mcp", "seller-token-1", true
				c.Agents = []live.Agent{{Name: "governance", MCP: mcp.Config{Endpoint: "https://governance.example/mcp", BearerToken: "gov-token-3"}}}
			})},
		{"the 3.2 beta", []string{"--allow-mutations", "--sandbox", "--release", "3.2"},
			with(DefaultOut, func(c *conform.Config) { c.AllowMutations, c.Sandbox, c.Release = true, true, "3.2" })},
		{"certification", []string{"--certify", "--mcp", "https://seller.example/mcp", "--a2a", "https://seller.example/a2a", "--bearer-env", "SELLER_TOKEN",
			"--sign-key", key, "--out", "cert/"},
			with("cert/", func(c *conform.Config) {
				c.MCP, c.A2A, c.BearerToken, c.Certify, c.SignKey = "https://seller.example/mcp", "https://seller.example/a2a", "seller-token-1", true, priv
			})},
		{"limits, headers and a baseline", []string{"--mcp", "https://s.example/mcp", "--header", "X-Api-Key: k", "--timeout", "3s", "--deadline", "1m",
			"--parallel", "2", "--max-body", "1MiB", "--max-total", "64MiB", "--label-filter", "family:ctx", "--baseline", baseline, "--webhook-url", "https://hooks.example/in",
			"--rate-burst", "20", "--seed", "7", "--allow-domain", "cdn.example", "--schemas", "off"},
			with(DefaultOut, func(c *conform.Config) {
				c.MCP, c.Header, c.Timeout, c.Deadline, c.Parallel = "https://s.example/mcp", http.Header{"X-Api-Key": {"k"}}, 3e9, 60e9, 2
				c.MaxBody, c.MaxTotal, c.LabelFilter, c.WebhookURL, c.RateBurst, c.Seed = 1<<20, 64<<20, "family:ctx", "https://hooks.example/in", 20, 7
				c.AllowedDomains, c.Schemas = []string{"cdn.example"}, "off"
				c.Baseline = []report.BaselineEntry{{Rule: "CTX-01", Reason: "known"}}
			})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseRun(append([]string{}, tc.args...), Stdio{Getenv: func(k string) string { return env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.config(Stdio{Getenv: func(k string) string { return env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			got.Log = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("flags %q\n got %+v\nwant %+v", tc.args, got, tc.want)
			}
		})
	}
}

// A target of --targets is the command line's Config with the target's
// own endpoints, token and folder.
func TestATargetIsTheCommandLinesConfigWithItsOwnSeller(t *testing.T) {
	env := map[string]string{"TOKEN_A": "token-a-1"}
	stdio := Stdio{Getenv: func(k string) string { return env[k] }}
	c, err := parseRun([]string{"--targets", "targets.yaml", "--out", "registry/", "--parallel-targets", "8", "--label-filter", "family:ctx"}, stdio)
	if err != nil {
		t.Fatal(err)
	}
	base, err := c.config(stdio)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.target(base, Target{Name: "alpha", MCP: "https://a.example/mcp", A2A: "https://a.example/a2a", BearerEnv: "TOKEN_A"}, "registry/alpha", stdio)
	if err != nil {
		t.Fatal(err)
	}
	want := base
	want.MCP, want.A2A, want.BearerToken, want.Out = "https://a.example/mcp", "https://a.example/a2a", "token-a-1", "registry/alpha"
	if got.Log, want.Log = nil, nil; !reflect.DeepEqual(got, want) || want.LabelFilter != "family:ctx" || c.tune.parallelTargets != 8 {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if _, err := c.target(base, Target{Name: "beta", MCP: "https://b.example/mcp", BearerEnv: "TOKEN_B"}, "registry/beta", stdio); err == nil ||
		err.Error() != "--bearer-env TOKEN_B: the variable is empty or unset" {
		t.Errorf("a target whose variable is unset: %v", err)
	}
}
