package cli

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

// MaxTargets bounds the targets of one --targets file.
const MaxTargets = conform.MaxTargets

// The files of a multi-target run: the index across targets, and in each
// target's folder its console output and its completion record.
const (
	FileIndexHTML = conform.FileIndexHTML
	FileIndexJSON = conform.FileIndexJSON
	FileRunLog    = conform.FileRunLog
	FileTarget    = conform.FileTarget
)

// Index and IndexEntry are index.json and its entries.
type (
	Index      = conform.Index
	IndexEntry = conform.IndexEntry
)

// verdictMissing is the verdict of an entry without a readable results.json.
const verdictMissing = conform.VerdictMissing

// Target is one seller of a --targets file.
type Target struct {
	// Name labels the target in the index; default: its folder name.
	Name string `json:"name,omitempty"`
	// MCP and A2A are the seller's endpoints, as --mcp and --a2a; at least
	// one is required.
	MCP string `json:"mcp,omitempty"`
	A2A string `json:"a2a,omitempty"`
	// BearerEnv names the environment variable holding this target's
	// bearer token, as --bearer-env.
	BearerEnv string `json:"bearer_env,omitempty"`
	// OAuthKeys are its OAuth client credentials, as the --oauth-* flags
	// (oauth_token_url, oauth_client_id, …; oauthcc.go).
	OAuthKeys
	// Out is the target's folder under --out; default: from Name, else the
	// endpoint's host, made unique.
	Out string `json:"out,omitempty"`
}

// LoadTargets reads a targets file, YAML or JSON: a list of targets, or an
// object {"targets": [...]}. Each target gets a unique, safe Out.
func LoadTargets(path string) ([]Target, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ts []Target
	if err := yaml.UnmarshalStrict(b, &ts); err != nil {
		var wrapped struct {
			Targets []Target `json:"targets"`
		}
		if err2 := yaml.UnmarshalStrict(b, &wrapped); err2 != nil {
			return nil, fmt.Errorf("%s: want a list of targets or {targets: [...]}: %v", path, err)
		}
		ts = wrapped.Targets
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("%s: no targets", path)
	}
	if len(ts) > MaxTargets {
		return nil, fmt.Errorf("%s: %d targets, at most %d", path, len(ts), MaxTargets)
	}
	used := map[string]bool{}
	for i := range ts {
		t := &ts[i]
		for _, f := range [][2]string{{"mcp", t.MCP}, {"a2a", t.A2A}} {
			if f[1] != "" && strings.TrimSpace(f[1]) == "" { // an unexpanded template variable, say
				return nil, fmt.Errorf("%s: target %d: %s is blank: give the seller's URL, or leave %s out", path, i+1, f[0], f[0])
			}
		}
		if t.MCP == "" && t.A2A == "" {
			return nil, fmt.Errorf("%s: target %d has neither mcp nor a2a", path, i+1)
		}
		if t.Out != "" && safeName(t.Out) != t.Out {
			return nil, fmt.Errorf("%s: target %d: out %q must be a plain folder name ([A-Za-z0-9._-], not . or ..)", path, i+1, wire.Sanitize(t.Out, 80))
		}
		if t.BearerEnv != "" && (!envNameRE.MatchString(t.BearerEnv) || looksLikeSecret(t.BearerEnv)) {
			return nil, fmt.Errorf("%s: target %d: bearer_env wants the name of an environment variable holding the token, not the token itself (the value is not repeated here)", path, i+1)
		}
		if err := t.OAuthKeys.check(t.BearerEnv); err != nil {
			return nil, fmt.Errorf("%s: target %d: %v", path, i+1, err)
		}
		base := t.Out
		if base == "" {
			base = safeName(t.Name)
		}
		if base == "" {
			base = safeName(hostOf(t.MCP, t.A2A))
		}
		if base == "" {
			base = "target"
		}
		name := base
		for n := 2; used[name]; n++ {
			if t.Out != "" {
				return nil, fmt.Errorf("%s: target %d: out %q is used twice", path, i+1, t.Out)
			}
			name = fmt.Sprintf("%s-%d", base, n)
		}
		used[name] = true
		t.Out = name
		if t.Name == "" {
			t.Name = name
		}
	}
	return ts, nil
}

var (
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	unsafeChar = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
)

// safeName turns s into a folder name: [A-Za-z0-9._-], at most 64 bytes,
// never "." or "..".
func safeName(s string) string {
	s = strings.Trim(unsafeChar.ReplaceAllString(s, "-"), "-.")
	if len(s) > 64 {
		s = strings.Trim(s[:64], "-.")
	}
	return s
}

func hostOf(urls ...string) string {
	for _, u := range urls {
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			return p.Host
		}
	}
	return ""
}

// runTargets runs every target of --targets (of its --shard), resuming
// where an earlier run over the same --out stopped, through
// conform.Targets, and prints the index. Its exit code is the signal's
// that interrupted it, else the worst of the targets'.
func runTargets(c *runConfig, stdio Stdio) error {
	if c.mcpURL != "" || c.a2aURL != "" || c.bearerEnv != "" {
		return usagef("--targets names each target's --mcp, --a2a and --bearer-env; do not give them too")
	}
	if c.liveBearerEnv != "" {
		return usagef("--live-bearer-env is the live-mode credential of one seller: run that target on its own (--mcp or --a2a), not with --targets")
	}
	opts, err := c.tune.targetsOptions(c.out) // tune.go
	if err != nil {
		return err
	}
	targets, err := LoadTargets(c.tune.targets)
	if err != nil {
		return usagef("--targets: %v", err)
	}
	base, err := c.config(stdio)
	if err != nil {
		return err
	}
	base.MCP, base.A2A, base.Out = "", "", ""
	// The terminal never shows a target's token, nor its client secret.
	var secrets []string
	for _, t := range targets {
		if t.BearerEnv != "" {
			secrets = append(secrets, wire.Secrets(stdio.getenv(t.BearerEnv), nil)...)
		}
		if t.OAuthClientSecretEnv != "" {
			secrets = append(secrets, wire.Secrets(stdio.getenv(t.OAuthClientSecretEnv), nil)...)
		}
	}
	secrets = append(secrets, wire.Secrets("", base.Header)...)
	stdio.redact(secrets, nil)
	opts.Secrets, opts.Progress, opts.Summary = secrets, stdio.Err, stdio.Out
	run := make([]conform.Target, len(targets))
	for i, t := range targets {
		keys := t.OAuthKeys.flags()
		run[i] = conform.Target{Name: t.Name, Dir: t.Out, MCP: t.MCP, A2A: t.A2A, OAuth: keys.config(), // its secret read by Prepare
			Prepare: func(cfg *conform.Config) error {
				got, err := c.target(*cfg, t, cfg.Out, stdio)
				*cfg = got
				return err
			}}
	}
	ctx, sig := onSignal() // signal.go
	defer sig.stop()
	sum, err := conform.Targets(ctx, base, run, opts)
	if err != nil {
		return runError(err)
	}
	fmt.Fprintf(stdio.Out, "index: %s\n", wire.Sanitize(sum.HTML+" "+sum.JSON, 1000))
	if sum.Kept > 0 {
		fmt.Fprintf(stdio.Err, "adcp-conform: %d of %d targets kept the complete result their folder held (--rerun all runs them again)\n", sum.Kept, sum.Targets)
	}
	if code := sig.exitCode(); code != ExitOK {
		return &codeError{code: code}
	}
	if sum.ExitCode != 0 {
		return &codeError{code: ExitCode(sum.ExitCode)}
	}
	return nil
}

// target is base for the target t, into the folder dir: its endpoints,
// and its credential, read from the variable its bearer_env (or its
// oauth_client_secret_env) names.
func (c *runConfig) target(base conform.Config, t Target, dir string, stdio Stdio) (conform.Config, error) {
	tc, tune := *c, *c.tune
	tune.targets, tc.tune = "", &tune
	tc.mcpURL, tc.a2aURL, tc.bearerEnv, tc.oauth = t.MCP, t.A2A, t.BearerEnv, t.OAuthKeys.flags()
	if err := tc.check(stdio); err != nil {
		return base, err
	}
	cfg := base
	cfg.MCP, cfg.A2A, cfg.Out = t.MCP, t.A2A, dir
	if t.BearerEnv != "" {
		tok, err := bearerFromEnv(t.BearerEnv, stdio)
		if err != nil {
			return cfg, err
		}
		cfg.BearerToken = tok
	}
	cfg.OAuth = tc.oauth.config()
	return cfg, nil
}
