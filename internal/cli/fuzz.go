package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/release"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/conform"
	"github.com/adcp-conform/adcp-conform/suites/fuzz"
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

// runFuzz turns the command line into a conform.FuzzConfig, fuzzes the
// seller and prints the fuzzing's account, every failure's shrunk
// reproduction and the verdicts.
func runFuzz(args []string, stdio Stdio) error {
	var c runConfig
	var z fuzzConfig
	fs := newFlagSet("fuzz", "fuzz --mcp URL | --a2a URL [flags]", stdio.Err)
	fs.Var(&targetValue{&c.mcpURL, "the seller's MCP endpoint"}, "mcp", "the seller's MCP endpoint `URL` (Streamable HTTP)")
	fs.Var(&targetValue{&c.a2aURL, "the seller's A2A base URL"}, "a2a", "the seller's A2A base `URL` (its agent card is at URL/.well-known/agent-card.json); may be given with --mcp")
	fs.StringVar(&c.out, "out", "adcp-conform-fuzz", "the `DIR` for junit.xml, report.html, results.json and evidence.json")
	fs.StringVar(&c.bearerEnv, "bearer-env", "", "the `NAME` of the environment variable holding the bearer token (not the token itself)")
	fs.StringVar(&z.tenant2Env, "tenant2-bearer-env", "", "the `NAME` of the environment variable holding a second tenant's bearer token on the same seller: the cross-tenant probe (FUZZ-05) asks it for the first tenant's ids and for unknown ones")
	fs.Var(&c.headers, "header", "an extra request header, `'NAME: VALUE'`, repeatable")
	fs.DurationVar(&c.timeout, "timeout", mcp.DefaultTimeout, "per-call timeout (a turn that times out twice fails FUZZ-04)")
	fs.DurationVar(&c.deadline, "deadline", conform.DefaultDeadline, "deadline of the whole run: the turns stop early enough to judge and write the reports")
	fs.BoolVar(&c.allowMutations, "allow-mutations", false, "fuzz the mutating tools (x-mutates-state) too: they create and change state on the seller")
	fs.BoolVar(&c.sandbox, "sandbox", false, "the account is a sandbox: with --allow-mutations, the creating tools are called first so the others have existing ids to work on")
	fs.Uint64Var(&c.seed, "seed", 0, "the `N` seeding every request (0: a random one, printed); the same seed against the same seller sends the same requests")
	fs.IntVar(&z.turns, "turns", fuzz.DefaultTurns, "`N` requests per tool")
	fs.Var(&z.tools, "tool", "fuzz only the tool `NAME` (repeatable)")
	fs.Var(&z.pools, "pool", "an existing resource's id, `ENTITY=ID` (media_buy=mb_1, property_list=pl_1…; repeatable): the requests draw ids from these pools")
	fs.IntVar(&z.shrinkCalls, "shrink-calls", fuzz.DefaultShrinkCalls, "at most `N` calls a shrink makes")
	fs.IntVar(&z.maxShrinks, "max-shrinks", fuzz.DefaultMaxShrinks, "at most `N` failed turns shrunk (0: none)")
	fs.StringVar(&c.schemasDir, "schemas", "", fmt.Sprintf("the release's published JSON Schemas the requests are generated from and the replies judged against, `DIR|URL`: a folder laid out like schemas/%s/, or the URL of a published release folder (fetched once into the user's cache); default: release %s, fetched", release.Default, release.Default))
	fs.StringVar(&c.caCert, "ca-cert", "", "PEM `FILE` of CA certificates to trust for HTTPS targets besides the system's")
	fs.BoolVar(&c.localFetch, "allow-local-fetch", false, "local development only: connections may reach loopback and private addresses")
	fs.BoolVar(&c.verbose, "v", false, "print each exchange as it happens")
	post := addPostFlags(fs, false) // --sign-key (finish.go)
	fs.StringVar(&post.baseline, "baseline", "", "YAML or JSON `FILE` of expected failures: {expected_failures: [{rule: FUZZ-03, reason: …}]}")
	addOAuthFlags(fs, &c.oauth) // --oauth-* (oauthcc.go)
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case c.mcpURL == "" && c.a2aURL == "":
		return &UsageError{Msg: "fuzz needs a seller: give --mcp URL or --a2a URL", ShowUsage: true}
	case z.turns < 1 || z.turns > fuzz.MaxTurns:
		return usagef("--turns must be between 1 and %d", fuzz.MaxTurns)
	case z.shrinkCalls < 1 || z.maxShrinks < 0:
		return usagef("--shrink-calls must be positive and --max-shrinks not negative")
	case c.deadline <= 0:
		return usagef("--deadline must be positive")
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
	fc := conform.FuzzConfig{Config: conform.Config{MCP: c.mcpURL, A2A: c.a2aURL, AllowMutations: c.allowMutations, Sandbox: c.sandbox,
		LocalFetch: c.localFetch, Seed: c.seed, Schemas: c.schemasDir, Timeout: c.timeout, Deadline: c.deadline, Out: c.out, Log: stdio.Err,
		Verbose: c.verbose, Network: stdio.network, Version: currentVersion().Version, Baseline: post.expected, SignKey: post.priv, OAuth: c.oauth.config()},
		Turns: z.turns, Tools: z.tools, Pools: pools, ShrinkCalls: z.shrinkCalls, MaxShrinks: z.maxShrinks, BearerEnv: c.bearerEnv, Tenant2Env: z.tenant2Env}
	if z.maxShrinks == 0 {
		fc.MaxShrinks = -1 // none
	}
	if err := c.credentials(&fc.Config, stdio); err != nil {
		return err
	}
	if z.tenant2Env != "" {
		if fc.Tenant2BearerToken, err = tokenFromEnv("--tenant2-bearer-env", z.tenant2Env, stdio); err != nil {
			return err
		}
	}
	redactInto(&fc.Config, stdio)
	ctx, sig := onSignal() // signal.go
	defer sig.stop()
	run, err := conform.Fuzz(ctx, fc)
	if err != nil {
		return runError(err)
	}
	if run.HarnessError != "" {
		fmt.Fprintf(stdio.Err, "adcp-conform: harness error: %s\n", run.HarnessError)
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
