package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/release"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

// DefaultOut is the report folder of a run given no --out.
const DefaultOut = "adcp-conform-report"

// runConfig is the parsed command line of `run`.
type runConfig struct {
	mcpURL         string
	a2aURL         string
	out            string
	bearerEnv      string
	liveBearerEnv  string
	headers        multiValue
	labelFilter    string
	timeout        time.Duration
	deadline       time.Duration
	allowMutations bool
	strict         bool
	inputs         string
	verbose        bool
	sandbox        bool
	localFetch     bool
	brandJSON      string
	rateBurst      int
	allowDomains   multiValue
	seed           uint64
	caCert         string
	schemasDir     string
	webhookListen  string
	webhookURL     string
	webhookWait    time.Duration
	taskWait       time.Duration
	storyboards    string
	release        string
	releaseMirror  string
	storyboardIDs  multiValue
	agents         multiValue
	agentBearers   multiValue
	oauth          oauthFlags  // --oauth-* (oauthcc.go)
	post           *postConfig // --sign-key, --certify, --baseline (finish.go)
	tune           *tuneFlags  // --parallel, --max-*, --targets (tune.go)
	profiles       profiles    // --cpu-profile, --block-profile (profile.go)
}

// runRun turns the command line into a conform.Config, runs it — one
// seller, every target of --targets (targets.go), or, with no target, the
// bundled reference seller (reference.go) — and prints its end.
func runRun(args []string, stdio Stdio) error {
	c, err := parseRun(args, stdio)
	if err != nil {
		return err
	}
	stop, err := c.profiles.start(stdio)
	if err != nil {
		return err
	}
	defer stop()
	switch {
	case c.tune.targets != "":
		return runTargets(c, stdio) // one run per target, then the index
	case c.mcpURL == "" && c.a2aURL == "":
		return runReference(c, stdio) // every face of the bundled seller
	}
	cfg, err := c.config(stdio)
	if err != nil {
		return err
	}
	ctx, sig := onSignal() // signal.go
	defer sig.stop()
	return runOne(ctx, sig, cfg, c, stdio, true)
}

// runOne runs cfg and prints its end: the harness error, the summary and,
// with stepSummary, the GitHub step summary. Its exit code is the
// signal's that interrupted it, else the verdict's.
func runOne(ctx context.Context, sig *runSignals, cfg conform.Config, c *runConfig, stdio Stdio, stepSummary bool) error {
	red := redactInto(&cfg, stdio)
	run, err := conform.Run(ctx, cfg)
	if err != nil {
		return runError(err)
	}
	if run.HarnessError != "" {
		fmt.Fprintf(stdio.Err, "adcp-conform: harness error: %s\n", run.HarnessError)
	}
	if err := report.WriteText(stdio.Out, run, report.TextOptions{Verbose: c.verbose, Dir: cfg.Out}); err != nil {
		return err
	}
	if stepSummary {
		if err := appendStepSummary(stdio.getenv("GITHUB_STEP_SUMMARY"), red.redactor(), run); err != nil {
			fmt.Fprintf(stdio.Err, "adcp-conform: step summary: %s\n", wire.Sanitize(err.Error(), 200))
		}
	}
	if code := sig.exitCode(); code != ExitOK {
		return &codeError{code: code}
	}
	return certifyOutcome(c.post.certify, run)
}

// parseRun parses run's flags and refuses the combinations no run takes.
func parseRun(args []string, stdio Stdio) (*runConfig, error) {
	c := &runConfig{}
	fs := newFlagSet("run", "run [flags]", stdio.Err)
	fs.Var(&targetValue{&c.mcpURL, "the seller's MCP endpoint"}, "mcp", "the seller's MCP endpoint `URL` (Streamable HTTP); none: test the bundled reference seller (an empty value is refused)")
	fs.Var(&targetValue{&c.a2aURL, "the seller's A2A base URL"}, "a2a", "the seller's A2A base `URL` (its agent card is at URL/.well-known/agent-card.json); may be given with --mcp (an empty value is refused)")
	fs.StringVar(&c.out, "out", DefaultOut, "the `DIR` for junit.xml, report.html, results.json and evidence.json")
	fs.StringVar(&c.bearerEnv, "bearer-env", "", "the `NAME` of the environment variable holding the bearer token (not the token itself)")
	fs.StringVar(&c.liveBearerEnv, "live-bearer-env", "", liveBearerHelp)
	fs.Var(&c.headers, "header", "an extra request header, `'NAME: VALUE'`, repeatable")
	fs.StringVar(&c.labelFilter, "label-filter", "", "a Ginkgo label filter `EXPR` over rule:, transport:, level:, family: labels, e.g. 'rule:ENV-02'")
	fs.DurationVar(&c.timeout, "timeout", mcp.DefaultTimeout, "per-call timeout")
	fs.DurationVar(&c.deadline, "deadline", conform.DefaultDeadline, "deadline of the whole run")
	fs.BoolVar(&c.allowMutations, "allow-mutations", false, "allow probes that create state on the seller")
	fs.BoolVar(&c.strict, "strict", false, "SHOULD failures also fail the run")
	fs.StringVar(&c.inputs, "inputs", "", "YAML or JSON `FILE` of base arguments per tool")
	fs.BoolVar(&c.verbose, "v", false, "print each exchange as it happens, each family's progress and the full table of rules")
	fs.BoolVar(&c.sandbox, "sandbox", false, "the target is a sandbox (comply_test_controller may be exposed)")
	fs.StringVar(&c.brandJSON, "brand-json", "", "the `URL` of the seller's brand.json when its capabilities advertise no identity.brand_json_url (operator configuration), for the storyboards' signing-keys precheck")
	fs.BoolVar(&c.localFetch, "allow-local-fetch", false, "local development only: every connection of the run may reach loopback and private addresses (never link-local), and the URLs of the seller's OAuth discovery graph may be http (production conformance never allows it; not with --certify)")
	fs.IntVar(&c.rateBurst, "rate-burst", 0, fmt.Sprintf("opt-in rate-limit burst: up to `N` calls to provoke RATE_LIMITED (max %d)", plan.MaxRateBurst))
	fs.Var(&c.allowDomains, "allow-domain", "a registrable `DOMAIN` seller URLs may point to besides the agent's own, repeatable")
	fs.Uint64Var(&c.seed, "seed", 0, "the `N` seeding the random context (0: random)")
	fs.StringVar(&c.schemasDir, "schemas", "", schemasHelp)
	fs.StringVar(&c.storyboards, "storyboards", "", storyboardsHelp)
	fs.StringVar(&c.release, "release", "", releaseHelp)
	fs.StringVar(&c.releaseMirror, "release-mirror", "", releaseMirrorHelp)
	fs.Var(&c.storyboardIDs, "storyboard", "run only the storyboard `ID` (repeatable); the label filter also takes storyboard:ID and category:NAME")
	fs.Var(&c.agents, "agent", agentHelp)                        // agents.go
	fs.Var(&c.agentBearers, "agent-bearer-env", agentBearerHelp) // agents.go
	fs.StringVar(&c.webhookListen, "webhook-listen", "127.0.0.1:0", "the `ADDR` (host:port) of the harness's webhook receiver")
	fs.DurationVar(&c.webhookWait, "webhook-wait", plan.DefaultWebhookWait, "how long to wait for webhooks a seller should, or should not, send")
	fs.DurationVar(&c.taskWait, "task-wait", mcp.DefaultTaskWait, "how long to poll each MCP task the seller creates before judging it unfinished")
	fs.StringVar(&c.webhookURL, "webhook-url", "", "the public `URL` of the webhook receiver, for a seller that cannot reach --webhook-listen (e.g. through your own tunnel)")
	fs.StringVar(&c.caCert, "ca-cert", "", "PEM `FILE` of CA certificates to trust for HTTPS targets besides the system's (a staging seller's private CA)")
	fs.StringVar(&c.profiles.cpu, "cpu-profile", "", "write a CPU profile of the run to `FILE` (go tool pprof)")
	fs.StringVar(&c.profiles.block, "block-profile", "", "write a profile of where the run's goroutines waited to `FILE` (go tool pprof)")
	c.post = addPostFlags(fs, true) // --sign-key, --certify, --baseline (finish.go)
	c.tune = addTuneFlags(fs)       // --parallel, --max-body, --max-event, --max-evidence, --targets (tune.go)
	addOAuthFlags(fs, &c.oauth)     // --oauth-token-url, --oauth-client-id, … (oauthcc.go)
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	if err := c.check(stdio); err != nil {
		return nil, err
	}
	if len(c.agents) > 0 && (c.tune.targets != "" || (c.mcpURL == "" && c.a2aURL == "")) {
		return nil, usagef("--agent names the other agents of one agent under test: give it with --mcp or --a2a, not --targets or the bundled reference seller")
	}
	return c, nil
}

// check refuses the combinations of flags no run takes: it is run again
// for each target of --targets, with the target's own flags.
func (c *runConfig) check(stdio Stdio) error {
	if c.post.certify && c.localFetch {
		return usagef("--certify judges production conformance: it cannot be combined with --allow-local-fetch")
	}
	if c.post.certify && c.tune.targets == "" && c.mcpURL == "" && c.a2aURL == "" {
		return usagef("--certify certifies a seller: give its --mcp or --a2a (a run with neither tests the bundled reference seller, which proves the harness and is never certified)")
	}
	if _, err := parseAgents(c.agents, c.agentBearers, stdio.getenv); err != nil { // agents.go
		return err
	}
	return c.oauth.check(c, c.tune.targets != "", stdio) // oauthcc.go
}

// config turns the flags into the run's configuration: it reads the
// credentials the variables they name hold, and the files they name.
func (c *runConfig) config(stdio Stdio) (conform.Config, error) {
	cfg := conform.Config{MCP: c.mcpURL, A2A: c.a2aURL, LabelFilter: c.labelFilter, Strict: c.strict, AllowedDomains: c.allowDomains,
		AllowMutations: c.allowMutations, Sandbox: c.sandbox, LocalFetch: c.localFetch, BrandJSON: c.brandJSON, RateBurst: c.rateBurst, Seed: c.seed,
		Release: c.release, ReleaseMirror: c.releaseMirror, Storyboards: c.storyboards, Schemas: c.schemasDir, StoryboardIDs: c.storyboardIDs,
		Timeout: c.timeout, Deadline: c.deadline, TaskWait: c.taskWait, WebhookWait: c.webhookWait, WebhookListen: c.webhookListen, WebhookURL: c.webhookURL,
		Out: c.out, Log: stdio.Err, Verbose: c.verbose, Network: stdio.network, Version: currentVersion().Version}
	var err error
	if cfg.Agents, err = parseAgents(c.agents, c.agentBearers, stdio.getenv); err != nil { // agents.go
		return cfg, err
	}
	if err := c.post.prepare(c.labelFilter); err != nil { // finish.go
		return cfg, err
	}
	cfg.Certify, cfg.SignKey, cfg.Baseline = c.post.certify, c.post.priv, c.post.expected
	if c.post.baseline != "" && cfg.Baseline == nil {
		cfg.Baseline = []report.BaselineEntry{} // given, if empty: it replaces the reference seller's ledger
	}
	// 0 is a Config's default, but no value of these flags.
	if c.deadline <= 0 {
		return cfg, usagef("--deadline must be positive")
	}
	if err := c.credentials(&cfg, stdio); err != nil {
		return cfg, err
	}
	if c.inputs != "" {
		if cfg.Inputs, err = plan.LoadInputs(c.inputs); err != nil {
			return cfg, usagef("--inputs: %v", err)
		}
	}
	if err := c.tune.apply(&cfg); err != nil { // tune.go
		return cfg, err
	}
	cfg.OAuth = c.oauth.config()
	return cfg, nil
}

// credentials reads the credentials the flags name into cfg — the token
// of --bearer-env and --live-bearer-env, --header — and the CA
// certificates of --ca-cert. run and diagnose share it.
func (c *runConfig) credentials(cfg *conform.Config, stdio Stdio) error {
	if c.timeout <= 0 { // 0 is a Config's default, but no value of --timeout
		return usagef("--timeout must be positive")
	}
	var err error
	if c.bearerEnv != "" {
		if cfg.BearerToken, err = bearerFromEnv(c.bearerEnv, stdio); err != nil {
			return err
		}
	}
	if c.liveBearerEnv != "" {
		if cfg.LiveBearerToken, err = tokenFromEnv("--live-bearer-env", c.liveBearerEnv, stdio); err != nil {
			return err
		}
		if cfg.LiveBearerToken == cfg.BearerToken {
			return usagef("--live-bearer-env %s holds the run's own token (--bearer-env): give a live-mode principal's", c.liveBearerEnv)
		}
	}
	h := http.Header{}
	for _, line := range c.headers {
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return usagef("--header %q: want 'Name: value'", wire.Sanitize(line, 80))
		}
		h.Add(name, strings.TrimSpace(value))
	}
	if len(h) > 0 {
		cfg.Header = h
	}
	if c.caCert != "" {
		pem, err := os.ReadFile(c.caCert)
		if err != nil {
			return usagef("--ca-cert: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return usagef("--ca-cert %s: no PEM certificate in the file", c.caCert)
		}
		cfg.TLS = &tls.Config{RootCAs: pool}
	}
	return nil
}

// runError maps an error of conform.Run to the command's: a configuration
// refused is a usage error (exit 2), any other a harness error (exit 3).
func runError(err error) error {
	var ce *conform.ConfigError
	if errors.As(err, &ce) {
		return &UsageError{Msg: ce.Msg}
	}
	return err
}

// runRedaction is what a run's credentials are, once conform.Run says.
type runRedaction struct {
	secrets []string
	learnt  *wire.SecretSet
}

// redactInto makes cfg tell the terminal the run's credentials (it
// redacts them from then on) and returns where they are kept for the
// step summary.
func redactInto(cfg *conform.Config, stdio Stdio) *runRedaction {
	r := &runRedaction{}
	cfg.Redact = func(secrets []string, learnt *wire.SecretSet) {
		r.secrets, r.learnt = secrets, learnt
		stdio.redact(secrets, learnt)
	}
	return r
}

func (r *runRedaction) redactor() *wire.Redactor {
	return wire.NewLiveRedactor(r.secrets, r.learnt, nil)
}

// certifyOutcome is the run's end: its verdict's exit code and, for a
// certification run the harness cannot certify (plain HTTP, schemas it
// could not load, rules it could not judge), the reasons in one line and
// a non-zero exit even when every judged rule passed (3: the harness's
// reason, never the seller's failure).
func certifyOutcome(certifying bool, run *report.Run) error {
	code := ExitCode(run.ExitCode())
	if certifying && !run.Publishable {
		if code == ExitOK {
			code = ExitHarness
		}
		return &codeError{code: code, msg: "cannot certify this seller: " + wire.Sanitize(run.PublishableReason, 1000)}
	}
	if code != ExitOK {
		return &codeError{code: code}
	}
	return nil
}

// appendStepSummary appends the Markdown summary of each run to the file
// GitHub Actions names in $GITHUB_STEP_SUMMARY, redacted by red; nothing
// when it is unset.
func appendStepSummary(path string, red *wire.Redactor, runs ...*report.Run) error {
	if path == "" {
		return nil
	}
	var b bytes.Buffer
	for _, run := range runs {
		if err := report.WriteStepSummary(&b, run); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(red.Bytes(b.Bytes())); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// The help of run's --release and --release-mirror.
const (
	releaseHelp = "the AdCP `RELEASE` whose storyboards and schemas the run uses: a published release (3.1.19, 3.2.0-beta.5) or a version as sellers advertise it (3.1, 3.2-beta.5: its newest release the run can get); " +
		"default: the newest release the seller's adcp.supported_versions lists that the run can get. --storyboards and --schemas, when given, win"
	releaseMirrorHelp = "the `DIR|URL` releases come from: a folder holding compliance/<release>/ (or protocol/<release>.tgz with its .sha256) and schemas/<release>/, " +
		"or the URL of a site laid out like " + release.Published + " (its release index at /schemas/index.json); default: " + release.Published
)

// schemasHelp is the help of run's --schemas flag.
var schemasHelp = fmt.Sprintf("the AdCP release's published JSON Schemas for SCHEMA-01/02, `DIR|URL|off`: a folder laid out like schemas/%[1]s/, "+
	"the URL of a published release folder (%[3]s/<release>/: fetched once into the user's cache), or %[2]q; "+
	"default: the run's release (--release), from --release-mirror, fetched once into the user's cache", release.Default, material.Off, release.PublishedSchemas)

// storyboardsHelp is the help of run's --storyboards flag.
var storyboardsHelp = fmt.Sprintf("the AdCP release's compliance storyboards, `DIR|URL|off`: a folder laid out like compliance/%[1]s/ (universal/, protocols/, specialisms/, test-kits/), "+
	"the URL of a published protocol bundle (%[2]s/<release>.tgz: fetched once into the user's cache, its checksum verified), or %[3]q; "+
	"default: the run's release (--release), from --release-mirror, fetched once into the user's cache (when it cannot be had the storyboards are skipped, and the report says so)",
	release.Default, release.PublishedBundles, material.Off)

// liveBearerHelp is the help of run's --live-bearer-env.
const liveBearerHelp = "the `NAME` of the environment variable holding the bearer token of a live-mode (non-sandbox) principal on the same seller (not the token itself): the storyboard steps that authenticate as a live-mode test kit are sent with it (comply_controller_mode_gate); without it they are skipped"

// bearerFromEnv reads the token from the variable --bearer-env names. A
// value that is no variable name (a token given in its place, say) is
// refused without being repeated: it may be the secret itself.
func bearerFromEnv(name string, stdio Stdio) (string, error) {
	return tokenFromEnv("--bearer-env", name, stdio)
}

// tokenFromEnv reads a token from the variable the flag names, refusing a
// value that is no variable name without repeating it.
func tokenFromEnv(flag, name string, stdio Stdio) (string, error) {
	if !envNameRE.MatchString(name) || looksLikeSecret(name) {
		return "", usagef("%s wants the name of an environment variable holding the token (e.g. %s SELLER_TOKEN), not the token itself; the value given is not repeated here", flag, flag)
	}
	tok := stdio.getenv(name)
	if tok == "" {
		return "", usagef("%s %s: the variable is empty or unset", flag, name)
	}
	return tok, nil
}

// looksLikeSecret reports whether a string that is a valid variable name
// still looks like a token: long, with digits, and mixing upper and lower
// case (variable names seldom do) or with no separator at all.
func looksLikeSecret(s string) bool {
	if len(s) > 64 {
		return true
	}
	lower, upper, digit := 0, 0, 0
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			lower++
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= '0' && r <= '9':
			digit++
		}
	}
	return len(s) >= 20 && digit >= 4 && (lower > 0 && upper > 0 || !strings.Contains(s, "_"))
}
