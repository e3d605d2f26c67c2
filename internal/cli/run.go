package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/internal/release"
	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
	"github.com/adcp-conform/adcp-conform/suites/conform"
	"github.com/adcp-conform/adcp-conform/suites/runner"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/bundle"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/live"
)

// The run's defaults.
const (
	DefaultOut      = "adcp-conform-report"
	DefaultDeadline = 5 * time.Minute
	// referenceBurst is the rate-limit burst a run against the bundled
	// reference seller makes (it is the harness's own seller; a burst
	// against a real seller is opt-in).
	referenceBurst = 40
	// signalWriteTime is how long after Ctrl-C the evidence is still
	// written: probing and judging stop at once and the other reports come
	// first (each bounded, and small), and what is left of the 2 s the
	// README promises goes to sealing results.json and the terminal's
	// summary (it took 0.1 s after 150 calls of 1 MB replies).
	signalWriteTime = 1500 * time.Millisecond
	// minEvidenceWrite is how long the evidence is written at least, however
	// late its turn comes (see signalWriteTime, deadlineWriteTime).
	minEvidenceWrite = 500 * time.Millisecond
	// deadlineWriteTime is how long past --deadline the evidence is still
	// written (judging stops before the deadline; the run ends within it
	// plus 5 s).
	deadlineWriteTime = 2 * time.Second
)

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
	oauth          oauthFlags // --oauth-* (oauthcc.go)
}

func runRun(args []string, stdio Stdio) error {
	// --deadline counts from here: loading the storyboards and compiling
	// the schemas are part of the run (a second or more on a busy machine).
	started := time.Now()
	var c runConfig
	fs := newFlagSet("run", "run [flags]", stdio.Err)
	fs.Var(&targetValue{&c.mcpURL, "the seller's MCP endpoint"}, "mcp", "the seller's MCP endpoint `URL` (Streamable HTTP); none: test the bundled reference seller (an empty value is refused)")
	fs.Var(&targetValue{&c.a2aURL, "the seller's A2A base URL"}, "a2a", "the seller's A2A base `URL` (its agent card is at URL/.well-known/agent-card.json); may be given with --mcp (an empty value is refused)")
	fs.StringVar(&c.out, "out", DefaultOut, "folder for junit.xml, report.html, results.json and evidence.json")
	fs.StringVar(&c.bearerEnv, "bearer-env", "", "the `NAME` of the environment variable holding the bearer token (not the token itself)")
	fs.StringVar(&c.liveBearerEnv, "live-bearer-env", "", liveBearerHelp)
	fs.Var(&c.headers, "header", "extra request header 'Name: value', repeatable")
	fs.StringVar(&c.labelFilter, "label-filter", "", "Ginkgo label filter over rule:, transport:, level:, family: labels, e.g. 'rule:ENV-02'")
	fs.DurationVar(&c.timeout, "timeout", mcp.DefaultTimeout, "per-call timeout")
	fs.DurationVar(&c.deadline, "deadline", DefaultDeadline, "deadline of the whole run")
	fs.BoolVar(&c.allowMutations, "allow-mutations", false, "allow probes that create state on the seller")
	fs.BoolVar(&c.strict, "strict", false, "SHOULD failures also fail the run")
	fs.StringVar(&c.inputs, "inputs", "", "YAML or JSON file of base arguments per tool")
	fs.BoolVar(&c.verbose, "v", false, "print each exchange as it happens, each family's progress and the full table of rules")
	fs.BoolVar(&c.sandbox, "sandbox", false, "the target is a sandbox (comply_test_controller may be exposed)")
	fs.StringVar(&c.brandJSON, "brand-json", "", "URL of the seller's brand.json when its capabilities advertise no identity.brand_json_url (operator configuration), for the storyboards' signing-keys precheck")
	fs.BoolVar(&c.localFetch, "allow-local-fetch", false, "local development only: every connection of the run may reach loopback and private addresses (never link-local), and the URLs of the seller's OAuth discovery graph may be http (production conformance never allows it; not with --certify)")
	fs.IntVar(&c.rateBurst, "rate-burst", 0, fmt.Sprintf("opt-in rate-limit burst: up to N calls to provoke RATE_LIMITED (max %d)", plan.MaxRateBurst))
	fs.Var(&c.allowDomains, "allow-domain", "registrable domain seller URLs may point to besides the agent's own, repeatable")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the random context (0: random)")
	fs.StringVar(&c.schemasDir, "schemas", "", schemasHelp)
	fs.StringVar(&c.storyboards, "storyboards", "", storyboardsHelp)
	fs.StringVar(&c.release, "release", "", releaseHelp)
	fs.StringVar(&c.releaseMirror, "release-mirror", "", releaseMirrorHelp)
	fs.Var(&c.storyboardIDs, "storyboard", "run only the storyboard `ID` (repeatable); the label filter also takes storyboard:ID and category:NAME")
	fs.Var(&c.agents, "agent", agentHelp)                        // agents.go
	fs.Var(&c.agentBearers, "agent-bearer-env", agentBearerHelp) // agents.go
	fs.StringVar(&c.webhookListen, "webhook-listen", "127.0.0.1:0", "address of the harness's webhook receiver")
	fs.DurationVar(&c.webhookWait, "webhook-wait", plan.DefaultWebhookWait, "how long to wait for webhooks a seller should, or should not, send")
	fs.DurationVar(&c.taskWait, "task-wait", mcp.DefaultTaskWait, "how long to poll each MCP task the seller creates before judging it unfinished")
	fs.StringVar(&c.webhookURL, "webhook-url", "", "public URL of the webhook receiver, for a seller that cannot reach --webhook-listen (e.g. through your own tunnel)")
	fs.StringVar(&c.caCert, "ca-cert", "", "PEM file of CA certificates to trust for HTTPS targets besides the system's (a staging seller's private CA)")
	post := addPostFlags(fs, true) // --sign-key, --certify, --baseline (finish.go)
	tune := addTuneFlags(fs)       // --parallel, --max-body, --max-event, --max-evidence, --targets (tune.go)
	addOAuthFlags(fs, &c.oauth)    // --oauth-token-url, --oauth-client-id, … (oauthcc.go)
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if post.certify && c.localFetch {
		return usagef("--certify judges production conformance: it cannot be combined with --allow-local-fetch")
	}
	if post.certify && stdio.face == nil && tune.targets == "" && c.mcpURL == "" && c.a2aURL == "" {
		return usagef("--certify certifies a seller: give its --mcp or --a2a (a run with neither tests the bundled reference seller, which proves the harness and is never certified)")
	}
	agents, err := parseAgents(c.agents, c.agentBearers, stdio.getenv) // agents.go
	if err != nil {
		return err
	}
	if err := c.oauth.check(&c, tune.targets != "", stdio); err != nil {
		return err
	}
	if len(agents) > 0 && (tune.targets != "" || (c.mcpURL == "" && c.a2aURL == "")) {
		return usagef("--agent names the other agents of one agent under test: give it with --mcp or --a2a, not --targets or the bundled reference seller")
	}
	if tune.targets != "" {
		return runTargets(&c, tune, fs, stdio) // one run per target, then the index (targets.go)
	}
	if c.mcpURL == "" && c.a2aURL == "" {
		return runReference(args, c, post, stdio) // every face of the bundled seller (reference.go)
	}
	if err := post.prepare(c.labelFilter); err != nil {
		return err
	}
	if post.baseline == "" && !post.certify {
		post.expected = stdio.ledger
	}
	cfg, err := c.probeConfig(stdio)
	if err != nil {
		return err
	}
	if err := tune.apply(&cfg); err != nil {
		return err
	}
	// One guard for every connection of the run, its further agents' too.
	cfg.Net = stdio.network
	cfg = cfg.WithGuard(agentURLs(agents)...)
	if err := c.oauth.apply(&c, &cfg, stdio); err != nil { // the first token, or exit 3 (oauthcc.go)
		return err
	}
	// The other agents' credentials are the run's secrets too: every
	// client, the evidence store and every output redact them
	// (plan.Config.Secrets), the terminal from here on — an OAuth client's
	// tokens too, as it obtains them.
	cfg.MCP.Limits.Secrets = append(slices.Clip(cfg.MCP.Limits.Secrets), agentSecrets(agents)...)
	cfg.A2A.Limits.Secrets = append(slices.Clip(cfg.A2A.Limits.Secrets), agentSecrets(agents)...)
	stdio.redact(cfg.Secrets(), cfg.MCP.Limits.LiveSecrets)
	if err := writableOut(c.out); err != nil { // before a single probe
		return err
	}
	cfg.TaskWait = c.taskWait
	if c.webhookURL != "" || loopbackTargets(cfg) {
		rec, err := webhook.Listen(c.webhookListen, c.webhookURL)
		if err != nil {
			return usagef("--webhook-listen %s: %v", c.webhookListen, err)
		}
		defer rec.Close()
		cfg.Webhook, cfg.WebhookWait = rec, c.webhookWait
	}
	opts := suites.Options{Strict: c.strict, AllowedDomains: c.allowDomains, Transports: c.transports()}
	sel, err := runner.Select(c.labelFilter, opts)
	var fe *runner.FilterError
	if err != nil && !errors.As(err, &fe) {
		return err
	}
	if fe != nil {
		sel = runner.SelectNone(c.labelFilter, opts) // unless the filter names no storyboard either (material.NewPlan)
	}
	// The release, storyboards and schemas the flags decide now; without
	// them the seller's capabilities decide, after the probes (release.go).
	rp, err := material.NewPlan(material.Inputs{Release: c.release, Mirror: c.releaseMirror, Storyboards: c.storyboards, Schemas: c.schemasDir,
		IDs: c.storyboardIDs, Filter: c.labelFilter, Agents: agents, Loaded: stdio.storyboards}, &sel, fe, stdio.Err)
	if err != nil {
		return err
	}
	if post.baseline == "" && !post.certify {
		fmt.Fprint(stdio.Err, stdio.ledgerNotice)
	}

	// --deadline bounds the whole run: the probes stop early enough to
	// leave a fifth of it (at most 30 s) for judging and writing the
	// reports, and judging stops halfway through that reserve. Fetching
	// the release the seller chose, after the probes, is not counted (a
	// fetch before them never was).
	reserve := min(c.deadline/5, 30*time.Second)
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	probeEnd := started.Add(c.deadline - reserve)
	ctx, cancel := context.WithDeadline(runCtx, probeEnd)
	defer cancel()
	sig := onSignal(stopRun) // signal.go
	defer sig.stop()
	fmt.Fprintf(stdio.Err, "adcp-conform: probing %s\n", wire.Sanitize(strings.TrimSpace(cfg.MCP.Endpoint+" "+cfg.A2A.BaseURL), 400))
	if c.verbose {
		cfg.OnCall = verbosePrinter(stdio.Err)
	}
	cfg.DiscoveryOnly = len(sel.Selected) == 0 // storyboards only: no rule reads the other probes
	store, perr := plan.Execute(ctx, cfg)
	var paused time.Duration
	if rp.Deferred {
		if perr != nil || ctx.Err() != nil {
			rp.Unchosen(&sel)
		} else {
			at := time.Now()
			if err := rp.Choose(runCtx, store, cfg, &sel, stdio.Err); err != nil {
				return err
			}
			paused = time.Since(at)
			var cancelSB context.CancelFunc
			ctx, cancelSB = context.WithDeadline(runCtx, probeEnd.Add(paused))
			defer cancelSB()
		}
	}
	sbPlan := rp.Storyboards
	var sbResults []storyboard.StoryboardResult
	if perr == nil && ctx.Err() == nil {
		sbResults = runStoryboards(sbPlan, ctx, cfg, store, sel.Options.Schemas)
	}
	meta := runner.Meta{Tool: "adcp-conform", Version: currentVersion().Version, AdcpRelease: AdcpRelease, MCPProtocolVersion: MCPProtocolVersion,
		Target: strings.TrimSpace(cfg.MCP.Endpoint + " " + cfg.A2A.BaseURL), StartedAt: started, Strict: c.strict, TargetKind: report.TargetSeller}
	if stdio.face != nil {
		meta.TargetKind, meta.Face = report.TargetBundledReference, stdio.face.Name
	}
	diag := runner.Diagnose(store)
	switch {
	case sig.name() != "":
		meta.HarnessError = "interrupted by " + sig.name() + " while probing"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		meta.HarnessError = fmt.Sprintf("the run deadline (%s) was hit", c.deadline)
	case diag.WrongTarget() != "":
		// Before perr: "sending initialize: Not Implemented" says less.
		meta.HarnessError = diag.WrongTarget()
	case perr != nil:
		// The seller may have put the credential in its error (at
		// initialize, say): redacted before the terminal or a report.
		meta.HarnessError = wire.Sanitize(store.Redactor().String(perr.Error()), 500)
	case diag.Harness != "":
		meta.HarnessError = diag.Harness
	}
	for _, n := range diag.Notes {
		fmt.Fprintf(stdio.Err, "adcp-conform: %s\n", n)
	}
	deadline := started.Add(c.deadline - reserve/2 + paused)
	sel.Options.Stop = func() string {
		if n := sig.name(); n != "" {
			return "interrupted by " + n
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("the run deadline (%s) was hit", c.deadline)
		}
		return ""
	}
	// The evidence stops being written 2 s past the deadline, or 1.5 s
	// after a signal, whatever it holds: Ctrl-C ends a run in 2 s, and a
	// run within its deadline + 5 s. But it always gets minEvidenceWrite:
	// on a loaded machine the reports before it can take the whole budget,
	// and a report that holds none of the calls recorded is no report.
	var writing time.Time
	fin := post.finish()
	fin.Stop = func() string {
		if writing.IsZero() {
			writing = time.Now()
		}
		if time.Since(writing) < minEvidenceWrite {
			return ""
		}
		if d, ok := sig.since(); ok && d > signalWriteTime {
			return "interrupted by " + sig.name()
		}
		if time.Now().After(started.Add(c.deadline + deadlineWriteTime)) {
			return fmt.Sprintf("the run deadline (%s) was hit", c.deadline)
		}
		return ""
	}
	results, err := runner.Judge(store, sel)
	if err != nil {
		return err
	}
	if why := sel.Options.Stop(); meta.HarnessError == "" && why != "" {
		meta.HarnessError = why + " while judging"
	}
	if c.verbose {
		printProgress(stdio.Err, results)
	}
	meta.Duration = time.Since(started)
	run := runner.Report(meta, store, sel, results)
	runner.AddStoryboards(run, sbResults, sbPlan.Unavailable)
	run.Sandbox = c.sandbox // baseline entries may be scoped to sandbox runs
	if sbPlan.Release != nil {
		run.StoryboardsRelease, run.StoryboardIDs = filepath.Base(filepath.Clean(sbPlan.Release.Dir)), c.storyboardIDs
	}
	run.Release = rp.Release()
	runner.BlameTheTarget(run, diag.Wrong)
	if err := conform.WriteReports(c.out, run, store, sel, fin); err != nil { // baseline, certification, hashes, signature
		return err
	}
	if meta.HarnessError != "" {
		fmt.Fprintf(stdio.Err, "adcp-conform: harness error: %s\n", meta.HarnessError)
	}
	if stdio.face != nil {
		stdio.face.Run = run // runReference summarizes every face at once
	} else {
		if err := report.WriteText(stdio.Out, run, report.TextOptions{Verbose: c.verbose, Dir: c.out}); err != nil {
			return err
		}
		if err := appendStepSummary(stdio.getenv("GITHUB_STEP_SUMMARY"), store.Redactor(), run); err != nil {
			fmt.Fprintf(stdio.Err, "adcp-conform: step summary: %s\n", wire.Sanitize(err.Error(), 200))
		}
	}
	if code := sig.exitCode(); code != ExitOK {
		return &codeError{code: code}
	}
	return certifyOutcome(post.certify, run)
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

// loopbackTargets reports whether every target is on this machine, so a
// receiver on a loopback port is reachable without --webhook-url.
func loopbackTargets(cfg plan.Config) bool {
	for _, u := range []string{cfg.MCP.Endpoint, cfg.A2A.BaseURL} {
		if u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil {
			return false
		}
		if ip := net.ParseIP(p.Hostname()); p.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return false
		}
	}
	return true
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

// probeConfig turns the flags into the probe plan's configuration.
func (c *runConfig) probeConfig(stdio Stdio) (plan.Config, error) {
	cfg := plan.Config{AllowMutations: c.allowMutations, Seed: c.seed, Sandbox: c.sandbox, LocalFetch: c.localFetch, BrandJSON: c.brandJSON, RateBurst: c.rateBurst}
	if c.timeout <= 0 {
		return cfg, usagef("--timeout must be positive")
	}
	if c.deadline <= 0 {
		return cfg, usagef("--deadline must be positive")
	}
	if c.rateBurst < 0 || c.rateBurst > plan.MaxRateBurst {
		return cfg, usagef("--rate-burst must be between 0 and %d", plan.MaxRateBurst)
	}
	if c.brandJSON != "" {
		u, err := url.Parse(c.brandJSON)
		if err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return cfg, usagef("--brand-json %s: want an absolute http(s) URL without credentials", wire.Sanitize(c.brandJSON, 200))
		}
	}
	cfg.MCP = mcp.Config{Endpoint: c.mcpURL, Timeout: c.timeout}
	cfg.A2A = a2a.Config{BaseURL: strings.TrimRight(c.a2aURL, "/"), Timeout: c.timeout}
	for flag, v := range map[string]string{"--mcp": c.mcpURL, "--a2a": c.a2aURL} {
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return cfg, usagef("%s %q: want an http or https URL", flag, v)
		}
		if u.User != nil {
			return cfg, usagef("%s: put credentials in --bearer-env or --header, not in the URL", flag)
		}
	}
	if c.bearerEnv != "" {
		tok, err := bearerFromEnv(c.bearerEnv, stdio)
		if err != nil {
			return cfg, err
		}
		cfg.MCP.BearerToken, cfg.A2A.BearerToken = tok, tok
	}
	if c.liveBearerEnv != "" {
		tok, err := tokenFromEnv("--live-bearer-env", c.liveBearerEnv, stdio)
		if err != nil {
			return cfg, err
		}
		if tok == cfg.MCP.BearerToken {
			return cfg, usagef("--live-bearer-env %s holds the run's own token (--bearer-env): give a live-mode principal's", c.liveBearerEnv)
		}
		cfg.LiveBearerToken = tok
	}
	h := http.Header{}
	for _, line := range c.headers {
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return cfg, usagef("--header %q: want 'Name: value'", wire.Sanitize(line, 80))
		}
		h.Add(name, strings.TrimSpace(value))
	}
	if len(h) > 0 {
		cfg.MCP.Header, cfg.A2A.Header = h, h
	}
	if c.caCert != "" {
		pem, err := os.ReadFile(c.caCert)
		if err != nil {
			return cfg, usagef("--ca-cert: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return cfg, usagef("--ca-cert %s: no PEM certificate in the file", c.caCert)
		}
		cfg.TLS = &tls.Config{RootCAs: pool}
	}
	if c.inputs != "" {
		in, err := plan.LoadInputs(c.inputs)
		if err != nil {
			return cfg, usagef("--inputs: %v", err)
		}
		cfg.Inputs = in
	}
	return cfg, nil
}

// writableOut makes the report folder dir and checks that a file can be
// written in it, so a folder that cannot take the reports is refused
// before the seller is probed, not after.
func writableOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("--out %s: %v", wire.Sanitize(dir, 200), unwrapPath(err))
	}
	f, err := os.CreateTemp(dir, ".adcp-conform-probe-*")
	if err != nil {
		return usagef("--out %s: the folder cannot be written: %v", wire.Sanitize(dir, 200), unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// unwrapPath drops the path a *PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// The help of run's --release and --release-mirror.
const (
	releaseHelp = "the AdCP `RELEASE` whose storyboards and schemas the run uses: a published release (3.1.19, 3.2.0-beta.5) or a version as sellers advertise it (3.1, 3.2-beta.5: its newest release the run can get); " +
		"default: the newest release the seller's adcp.supported_versions lists that the run can get. --storyboards and --schemas, when given, win"
	releaseMirrorHelp = "the `DIR|URL` releases come from: a folder holding compliance/<release>/ (or protocol/<release>.tgz with its .sha256) and schemas/<release>/, " +
		"or the URL of a site laid out like " + release.Published + " (its release index at /schemas/index.json); default: " + release.Published
)

// schemasHelp is the help of run's --schemas flag.
var schemasHelp = fmt.Sprintf("the AdCP release's published JSON Schemas for SCHEMA-01/02: a folder laid out like schemas/%[1]s/, "+
	"the URL of a published release folder (%[3]s/<release>/: fetched once into the user's cache), or %[2]q; "+
	"default: the run's release (--release), from --release-mirror, fetched once into the user's cache", schemas.DefaultRelease, material.Off, schemas.PublishedBase)

// storyboardsHelp is the help of run's --storyboards flag.
var storyboardsHelp = fmt.Sprintf("the AdCP release's compliance storyboards: a folder laid out like compliance/%[1]s/ (universal/, protocols/, specialisms/, test-kits/), "+
	"the URL of a published protocol bundle (%[2]s/<release>.tgz: fetched once into the user's cache, its checksum verified), or %[3]q; "+
	"default: the run's release (--release), from --release-mirror, fetched once into the user's cache (when it cannot be had the storyboards are skipped, and the report says so)",
	schemas.DefaultRelease, bundle.PublishedBase, material.Off)

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

// transports are the transports the run judges: those given a target, or
// both for the bundled reference seller.
func (c *runConfig) transports() []catalogue.Transport {
	var ts []catalogue.Transport
	if c.mcpURL != "" || c.a2aURL == "" {
		ts = append(ts, catalogue.MCP)
	}
	if c.a2aURL != "" || c.mcpURL == "" {
		ts = append(ts, catalogue.A2A)
	}
	return ts
}

// verbosePrinter prints one line per recorded call and its exchanges,
// terminal-safe.
func verbosePrinter(w io.Writer) func(evidence.Call) {
	var mu sync.Mutex
	return func(c evidence.Call) {
		mu.Lock()
		defer mu.Unlock()
		state := fmt.Sprintf("HTTP %d", c.HTTPStatus)
		switch {
		case c.NotRun != "":
			state = "not run: " + c.NotRun
		case c.HarnessError != "":
			state = "harness error: " + c.HarnessError
		}
		fmt.Fprintf(w, "  %-48s %s (%.1f ms)\n", wire.Sanitize(c.ProbeID, 80), wire.Sanitize(state, 200), c.DurationMS)
		for _, x := range c.Exchanges {
			fmt.Fprintf(w, "      %s\n", wire.Sanitize(x.String(), 400))
		}
	}
}

// runStoryboards runs the storyboards after the probes, through the same
// clients and limits, into the same store.
func runStoryboards(p *material.Storyboards, ctx context.Context, cfg plan.Config, store *evidence.Store, set *schemas.Set) []storyboard.StoryboardResult {
	if p.Release == nil {
		return nil
	}
	// The storyboards' sessions, the further agents' too, connect through
	// the run's guard like the probes' (its --ca-cert, its agents).
	cfg = cfg.WithGuard(agentURLs(p.Agents)...)
	// cfg.Secrets() holds the agents' credentials too (run.go adds them):
	// every client redacts every credential of the run, and so does the
	// store, whatever the engine records.
	secrets := slices.Clip(cfg.Secrets())
	cfg.MCP.Limits.Secrets, cfg.A2A.Limits.Secrets = secrets, secrets
	add := func(c evidence.Call) evidence.Call {
		c = store.Add(c)
		if cfg.OnCall != nil {
			cfg.OnCall(c)
		}
		return c
	}
	return live.Run(ctx, live.Config{
		MCP: cfg.MCP, A2A: cfg.A2A, Release: p.Release, Store: store, Add: add, Include: p.Include, Concurrency: cfg.Concurrency, Webhook: cfg.Webhook,
		TLS: cfg.TLS, Agents: agentsFor(p.Agents, cfg.MCP, cfg.A2A), LiveBearerToken: cfg.LiveBearerToken,
		Env: storyboard.Env{AllowMutations: cfg.AllowMutations, Sandbox: cfg.Sandbox, LocalFetch: cfg.LocalFetch, BrandJSON: cfg.BrandJSON, Schemas: set, RunnerVersion: AdcpRelease,
			Credential: cfg.MCP.BearerToken != "" || cfg.A2A.BearerToken != "" || len(cfg.MCP.Header) > 0, LiveCredential: cfg.LiveBearerToken != ""},
	})
}
