package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/fuzz"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

// fuzzConfig is the command line of `fuzz` beyond the flags it shares with
// run (runConfig: targets, credentials, timeouts).
type fuzzConfig struct {
	turns       int
	tools       multiValue
	pools       multiValue
	tenant2Env  string
	shrinkCalls int
	maxShrinks  int
}

// runFuzz fuzzes a seller with schema-valid requests from the release's
// request schemas and judges the FUZZ rules over what it recorded; the
// folder it writes is a run's (judge, diff, verify and baselines read it).
func runFuzz(args []string, stdio Stdio) error {
	started := time.Now()
	var c runConfig
	var z fuzzConfig
	fs := newFlagSet("fuzz", "fuzz --mcp URL | --a2a URL [flags]", stdio.Err)
	fs.Var(&targetValue{&c.mcpURL, "the seller's MCP endpoint"}, "mcp", "the seller's MCP endpoint `URL` (Streamable HTTP)")
	fs.Var(&targetValue{&c.a2aURL, "the seller's A2A base URL"}, "a2a", "the seller's A2A base `URL` (its agent card is at URL/.well-known/agent-card.json); may be given with --mcp")
	fs.StringVar(&c.out, "out", "adcp-conform-fuzz", "folder for junit.xml, report.html, results.json and evidence.json")
	fs.StringVar(&c.bearerEnv, "bearer-env", "", "the `NAME` of the environment variable holding the bearer token (not the token itself)")
	fs.StringVar(&z.tenant2Env, "tenant2-bearer-env", "", "the `NAME` of the environment variable holding a second tenant's bearer token on the same seller: the cross-tenant probe (FUZZ-05) asks it for the first tenant's ids and for unknown ones")
	fs.Var(&c.headers, "header", "extra request header 'Name: value', repeatable")
	fs.DurationVar(&c.timeout, "timeout", mcp.DefaultTimeout, "per-call timeout (a turn that times out twice fails FUZZ-04)")
	fs.DurationVar(&c.deadline, "deadline", DefaultDeadline, "deadline of the whole run: the turns stop early enough to judge and write the reports")
	fs.BoolVar(&c.allowMutations, "allow-mutations", false, "fuzz the mutating tools (x-mutates-state) too: they create and change state on the seller")
	fs.BoolVar(&c.sandbox, "sandbox", false, "the account is a sandbox: with --allow-mutations, the creating tools are called first so the others have existing ids to work on")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of every request (0: a random one, printed); the same seed against the same seller sends the same requests")
	fs.IntVar(&z.turns, "turns", fuzz.DefaultTurns, "requests per tool")
	fs.Var(&z.tools, "tool", "fuzz only the tool `NAME` (repeatable)")
	fs.Var(&z.pools, "pool", "an existing resource's id, `ENTITY=ID` (media_buy=mb_1, property_list=pl_1…; repeatable): the requests draw ids from these pools")
	fs.IntVar(&z.shrinkCalls, "shrink-calls", fuzz.DefaultShrinkCalls, "calls one shrink makes at most")
	fs.IntVar(&z.maxShrinks, "max-shrinks", fuzz.DefaultMaxShrinks, "failed turns shrunk at most")
	fs.StringVar(&c.schemasDir, "schemas", "", fmt.Sprintf("the release's published JSON Schemas the requests are generated from and the replies judged against: a folder laid out like schemas/%s/, or the URL of a published release folder (fetched once into the user's cache); default: release %s, fetched", schemas.DefaultRelease, schemas.DefaultRelease))
	fs.StringVar(&c.caCert, "ca-cert", "", "PEM file of CA certificates to trust for HTTPS targets besides the system's")
	fs.BoolVar(&c.localFetch, "allow-local-fetch", false, "local development only: connections may reach loopback and private addresses")
	fs.BoolVar(&c.verbose, "v", false, "print each exchange as it happens")
	post := addPostFlags(fs, false) // --sign-key (finish.go)
	fs.StringVar(&post.baseline, "baseline", "", "YAML or JSON file of expected failures: {expected_failures: [{rule: FUZZ-03, reason: …}]}")
	addOAuthFlags(fs, &c.oauth) // --oauth-* (oauthcc.go)
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case c.mcpURL == "" && c.a2aURL == "":
		return &UsageError{Msg: "fuzz needs a seller: give --mcp URL or --a2a URL", ShowUsage: true}
	case z.turns < 1 || z.turns > 10000:
		return usagef("--turns must be between 1 and 10000")
	case z.shrinkCalls < 1 || z.maxShrinks < 0:
		return usagef("--shrink-calls must be positive and --max-shrinks not negative")
	case c.sandbox && !c.allowMutations:
		return usagef("--sandbox seeds the account by creating resources: give --allow-mutations too")
	case c.schemasDir == schemasOff:
		return usagef("--schemas off: the requests are generated from the schemas; fuzz needs them")
	}
	pools, err := parsePools(z.pools)
	if err != nil {
		return err
	}
	if err := c.oauth.check(&c, false, stdio); err != nil {
		return err
	}
	if err := post.prepare(""); err != nil {
		return err
	}
	cfg, err := c.probeConfig(stdio)
	if err != nil {
		return err
	}
	cfg.Net = stdio.network
	cfg = cfg.WithGuard()
	if err := c.oauth.apply(&c, &cfg, stdio); err != nil {
		return err
	}
	var tenant2 string
	if z.tenant2Env != "" {
		if tenant2, err = tokenFromEnv("--tenant2-bearer-env", z.tenant2Env, stdio); err != nil {
			return err
		}
		if tenant2 == cfg.MCP.BearerToken {
			return usagef("--tenant2-bearer-env %s holds the run's own token: give a second tenant's", z.tenant2Env)
		}
	}
	// Every transport and the store redact the run's credentials, the
	// second tenant's too (as plan.Execute does for a run).
	secrets := append(slices.Clip(cfg.Secrets()), wire.Secrets(tenant2, nil)...)
	cfg.MCP.Limits.Secrets, cfg.A2A.Limits.Secrets = secrets, secrets
	stdio.redact(secrets, cfg.MCP.Limits.LiveSecrets)
	if err := writableOut(c.out); err != nil {
		return err
	}
	opts := suites.Options{Fuzz: true, Transports: c.transports()}
	sel, err := runner.Select("", opts)
	if err != nil {
		return err
	}
	if err := fuzzSchemas(c.schemasDir, &sel, stdio.Err); err != nil {
		return err
	}
	if c.seed == 0 {
		c.seed = rand.Uint64() >> 11 // a seed a person can type
	}
	fmt.Fprintf(stdio.Err, "adcp-conform: fuzzing %s with release %s, seed %d (repeat with --seed %d), %d turns per tool\n",
		wire.Sanitize(strings.TrimSpace(c.mcpURL+" "+c.a2aURL), 400), sel.Options.Schemas.Release(), c.seed, c.seed, z.turns)

	red := wire.NewLiveRedactor(secrets, cfg.MCP.Limits.LiveSecrets, nil)
	store := evidence.NewStoreWith(evidence.Target{MCP: cfg.MCP.Endpoint, A2A: cfg.A2A.BaseURL, Credential: cfg.MCP.BearerToken != "",
		AllowMutations: c.allowMutations, Sandbox: c.sandbox, LocalFetch: c.localFetch}, red)
	var onCall func(evidence.Call)
	if c.verbose {
		onCall = verbosePrinter(stdio.Err)
	}
	add := func(call evidence.Call) {
		call = store.Add(call)
		if onCall != nil {
			onCall(call)
		}
	}
	reserve := min(c.deadline/5, 30*time.Second)
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	ctx, cancel := context.WithDeadline(runCtx, started.Add(c.deadline-reserve))
	defer cancel()
	sig := onSignal(stopRun) // signal.go
	defer sig.stop()
	fc := fuzz.Config{Set: sel.Options.Schemas, Seed: c.seed, Turns: z.turns, AllowMutations: c.allowMutations, Sandbox: c.sandbox,
		Tools: z.tools, Pools: pools, ShrinkCalls: z.shrinkCalls, MaxShrinks: z.maxShrinks}
	acct, ferr := fuzzFaces(ctx, cfg, tenant2, fc, add)

	meta := runner.Meta{Tool: "adcp-conform", Version: currentVersion().Version, AdcpRelease: AdcpRelease, MCPProtocolVersion: MCPProtocolVersion,
		Target: strings.TrimSpace(cfg.MCP.Endpoint + " " + cfg.A2A.BaseURL), StartedAt: started, TargetKind: report.TargetSeller}
	switch {
	case sig.name() != "":
		meta.HarnessError = "interrupted by " + sig.name() + " while fuzzing"
	case ferr != nil:
		meta.HarnessError = wire.Sanitize(red.String(ferr.Error()), 500)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		acct.Notes = append(acct.Notes, fmt.Sprintf("the run deadline (%s) ended the turns", c.deadline))
	}
	deadline := started.Add(c.deadline - reserve/2)
	sel.Options.Stop = func() string {
		if n := sig.name(); n != "" {
			return "interrupted by " + n
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("the run deadline (%s) was hit", c.deadline)
		}
		return ""
	}
	results, err := runner.Judge(store, sel)
	if err != nil {
		return err
	}
	meta.Duration = time.Since(started)
	run := runner.Report(meta, store, sel, results)
	run.Sandbox = c.sandbox
	acct.Reproductions = fuzz.Reproductions(store, sel.Options.Schemas, c.bearerEnv, z.tenant2Env)
	run.Fuzz = &acct
	if err := post.finish(c.out, run, store, sel); err != nil {
		return err
	}
	if meta.HarnessError != "" {
		fmt.Fprintf(stdio.Err, "adcp-conform: harness error: %s\n", meta.HarnessError)
	}
	writeFuzzSummary(stdio.Out, run.Fuzz)
	if err := report.WriteText(stdio.Out, run, report.TextOptions{Verbose: c.verbose, Dir: c.out}); err != nil {
		return err
	}
	if code := sig.exitCode(); code != ExitOK {
		return &codeError{code: code}
	}
	return certifyOutcome(false, run)
}

// fuzzFaces fuzzes each face the run was given, MCP first, and merges
// their accounts.
func fuzzFaces(ctx context.Context, cfg plan.Config, tenant2 string, fc fuzz.Config, add func(evidence.Call)) (report.Fuzz, error) {
	acct := report.Fuzz{Seed: fc.Seed, TurnsPerTool: fc.Turns, CrossTenant: tenant2 != ""}
	var errs []error
	for _, t := range []evidence.Transport{evidence.MCP, evidence.A2A} {
		face, other, err := dialFaces(ctx, cfg, t, tenant2, add)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if face == nil {
			continue
		}
		res, err := fuzz.Run(ctx, fc, face, other, add)
		face.Close()
		if other != nil {
			other.Close()
		}
		if err != nil {
			errs = append(errs, err)
		}
		for _, ts := range res.Tools {
			if t == evidence.A2A {
				ts.Tool = "a2a:" + ts.Tool
			}
			acct.Tools = append(acct.Tools, ts)
		}
		acct.Notes = append(acct.Notes, res.Notes...)
		if acct.Pools == nil {
			acct.Pools = res.Pools
		}
	}
	return acct, errors.Join(errs...)
}

// dialFaces opens the face of transport t (nil when the run has no such
// target) and, with a second tenant's token, that tenant's face.
func dialFaces(ctx context.Context, cfg plan.Config, t evidence.Transport, tenant2 string, add func(evidence.Call)) (face, other fuzz.Face, err error) {
	switch {
	case t == evidence.MCP && cfg.MCP.Endpoint != "":
		if face, err = fuzz.DialMCP(ctx, cfg.MCP, suites.FuzzPrefix, add); err != nil || tenant2 == "" {
			return face, nil, err
		}
		c2 := cfg.MCP
		c2.BearerToken, c2.Token = tenant2, nil
		other, err = fuzz.DialMCP(ctx, c2, suites.FuzzPrefix+"tenant2/", add)
	case t == evidence.A2A && cfg.A2A.BaseURL != "":
		if face, err = fuzz.DialA2A(ctx, cfg.A2A, suites.FuzzPrefix, add); err != nil || tenant2 == "" {
			return face, nil, err
		}
		c2 := cfg.A2A
		c2.BearerToken, c2.Token = tenant2, nil
		other, err = fuzz.DialA2A(ctx, c2, suites.FuzzPrefix+"tenant2/", add)
	}
	if err != nil && face != nil {
		face.Close()
		face = nil
	}
	return face, other, err
}

// parsePools reads the --pool ENTITY=ID flags.
func parsePools(vs []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, v := range vs {
		ent, id, ok := strings.Cut(v, "=")
		if !ok || ent == "" || id == "" || strings.ContainsAny(v, " \t\r\n") {
			return nil, usagef("--pool %q: want ENTITY=ID (media_buy=mb_1)", wire.Sanitize(v, 80))
		}
		out[ent] = append(out[ent], id)
	}
	return out, nil
}

// fuzzSchemas loads the release the requests are generated from: a
// folder, a published release's URL (fetched into the user's cache), or
// by default the harness's release, fetched. Without schemas there is
// nothing to fuzz with: a harness error.
func fuzzSchemas(src string, sel *runner.Selection, errOut io.Writer) error {
	if src == "" {
		src = schemas.PublishedBase + "/" + schemas.DefaultRelease + "/"
	}
	if err := loadSchemas(src, sel, errOut); err != nil {
		return err
	}
	if sel.Options.Schemas == nil && strings.Contains(src, "://") {
		fetchSchemas(context.Background(), src, &sel.Options, errOut)
	}
	if sel.Options.Schemas == nil {
		return &codeError{code: ExitHarness, msg: "no schemas to generate requests from: " + sel.Options.SchemasUnavailable + " (give a local copy with --schemas DIR)"}
	}
	return nil
}

// writeFuzzSummary prints what each tool's turns came to and every
// failure's shrunk reproduction, terminal-safe.
func writeFuzzSummary(w io.Writer, f *report.Fuzz) {
	fmt.Fprintf(w, "fuzz: seed %d, %d turns per tool\n", f.Seed, f.TurnsPerTool)
	for _, t := range f.Tools {
		if t.Skipped != "" {
			fmt.Fprintf(w, "  %-34s skipped: %s\n", wire.Sanitize(t.Tool, 60), wire.Sanitize(t.Skipped, 200))
			continue
		}
		fmt.Fprintf(w, "  %-34s %-11s %3d turns: %3d accepted, %3d rejected, %3d failed", wire.Sanitize(t.Tool, 60), t.Tier, t.Turns, t.Accepted, t.Rejected, t.Failed)
		if t.Unjudged > 0 {
			fmt.Fprintf(w, ", %d unjudged", t.Unjudged)
		}
		if t.Shrinks > 0 {
			fmt.Fprintf(w, " (%d shrink calls)", t.Shrinks)
		}
		fmt.Fprintln(w)
	}
	for _, n := range f.Notes {
		fmt.Fprintf(w, "  note: %s\n", wire.Sanitize(n, 400))
	}
	for _, r := range f.Reproductions {
		fmt.Fprintf(w, "\n%s %s: %s\n", r.Rule, wire.Sanitize(r.Tool, 60), wire.Sanitize(r.What, 400))
		fmt.Fprintf(w, "  turn %s, shrunk in %d calls from %d to %d bytes: %s\n", wire.Sanitize(r.Turn, 120), r.ShrinkCalls, r.TurnBytes, r.Bytes, wire.Sanitize(r.Call, 120))
		for _, line := range strings.Split(strings.TrimRight(r.Shell, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", wire.Sanitize(line, 1<<16))
		}
	}
	if len(f.Reproductions) > 0 {
		fmt.Fprintln(w)
	}
}
