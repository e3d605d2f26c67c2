package conform

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/fuzz"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

// FuzzConfig is one fuzz run (`adcp-conform fuzz`): the seller, its
// credentials, limits and report folder as a run's Config gives them, and
// what the fuzzing adds. Of the Config, the fields of run's probes and
// storyboards (Release, ReleaseMirror, Storyboards, StoryboardIDs,
// LabelFilter, Certify, Agents) are refused; the others it does not read
// (RateBurst, Inputs, the webhook's, …) are ignored. Schemas is the
// release the requests are generated from: "" the default release's,
// fetched once into the user's cache.
type FuzzConfig struct {
	Config
	// Turns is the budget of requests per tool (--turns; 0:
	// fuzz.DefaultTurns).
	Turns int
	// Tools, when set, limits the run to these tools (--tool).
	Tools []string
	// Pools are ids of existing resources by entity (--pool
	// media_buy=mb_1): the requests draw ids from them.
	Pools map[string][]string
	// Tenant2BearerToken is a second tenant's token on the same seller
	// (the token the variable --tenant2-bearer-env names): the cross-tenant
	// probe (FUZZ-05) asks it for the first tenant's ids and for unknown
	// ones. "": no cross-tenant probe.
	Tenant2BearerToken string
	// ShrinkCalls bounds the calls one shrink makes (--shrink-calls; 0:
	// fuzz.DefaultShrinkCalls). MaxShrinks bounds the failed turns shrunk
	// (--max-shrinks; 0: fuzz.DefaultMaxShrinks, negative: none).
	ShrinkCalls, MaxShrinks int
	// BearerEnv and Tenant2Env are the names of the variables the
	// reproductions' curl commands read the two tokens from ("": a
	// placeholder name).
	BearerEnv, Tenant2Env string
}

// Fuzz fuzzes the seller fc names with schema-valid requests generated
// from the release's request schemas, shrinks every failure to a minimal
// request by calling the seller again, and judges the FUZZ rules over
// what it recorded. The report (written into fc.Out when set) is a run's:
// judge, diff, verify and baselines read its folder; report.Run.Fuzz is
// the fuzzing's account, its reproductions included.
//
// Errors and cancellation are Run's: a *ConfigError for a configuration
// refused, another error when the harness could not start (no schemas to
// generate from, a token endpoint refusing the client); a seller that
// fails is no error. Cancelling ctx stops the turns; the rules are judged
// over what was recorded by then, and the report says why it stopped.
func Fuzz(ctx context.Context, fc FuzzConfig) (*report.Run, error) {
	started := time.Now()
	c := fc.Config.withDefaults()
	if err := fc.check(c); err != nil {
		return nil, err
	}
	set, err := material.RequireSchemas(c.Schemas, c.Log) // the requests' release: before any call
	if err != nil {
		return nil, configErr(err)
	}
	pc := c.probeConfig().WithGuard()
	if c.OAuth != nil {
		if err := c.OAuth.apply(c, &pc); err != nil { // the first token
			return nil, err
		}
	}
	// Every transport and the store redact the run's credentials, the
	// second tenant's too.
	secrets := append(slices.Clip(pc.Secrets()), wire.Secrets(fc.Tenant2BearerToken, nil)...)
	pc.MCP.Limits.Secrets, pc.A2A.Limits.Secrets = secrets, secrets
	if c.Redact != nil {
		c.Redact(secrets, pc.MCP.Limits.LiveSecrets)
	}
	if c.Out != "" {
		if err := WritableOut(c.Out); err != nil { // before a single call
			return nil, err
		}
	}
	opts := suites.Options{Fuzz: true, Transports: c.transports()}
	sel, err := runner.Select("", opts)
	if err != nil {
		return nil, err
	}
	sel.Options.Schemas = set
	seed := c.Seed
	if seed == 0 {
		seed = rand.Uint64() >> 11 // a seed a person can type
	}
	fmt.Fprintf(c.Log, "adcp-conform: fuzzing %s with release %s, seed %d (repeat with --seed %d), %d turns per tool\n",
		wire.Sanitize(strings.TrimSpace(pc.MCP.Endpoint+" "+pc.A2A.BaseURL), 400), set.Release(), seed, seed, fc.turns())

	red := wire.NewLiveRedactor(secrets, pc.MCP.Limits.LiveSecrets, nil)
	store := evidence.NewStoreWith(evidence.Target{MCP: pc.MCP.Endpoint, A2A: pc.A2A.BaseURL, Credential: pc.MCP.BearerToken != "",
		AllowMutations: c.AllowMutations, Sandbox: c.Sandbox, LocalFetch: c.LocalFetch}, red)
	var onCall func(evidence.Call)
	if c.Verbose {
		onCall = verbosePrinter(c.Log)
	}
	add := func(call evidence.Call) {
		call = store.Add(call)
		if onCall != nil {
			onCall(call)
		}
	}
	intr := watch(ctx)
	defer intr.stop()
	reserve := min(c.Deadline/5, 30*time.Second)
	tctx, cancel := context.WithDeadline(ctx, started.Add(c.Deadline-reserve))
	defer cancel()
	cfg := fuzz.Config{Set: set, Seed: seed, Turns: fc.Turns, AllowMutations: c.AllowMutations, Sandbox: c.Sandbox,
		Tools: fc.Tools, Pools: fc.Pools, ShrinkCalls: fc.ShrinkCalls, MaxShrinks: fc.MaxShrinks}
	acct, ferr := fuzzFaces(tctx, pc, fc.Tenant2BearerToken, cfg, add)

	meta := runner.Meta{Tool: "adcp-conform", Version: c.Version, AdcpRelease: AdcpRelease, MCPProtocolVersion: MCPProtocolVersion,
		Target: strings.TrimSpace(pc.MCP.Endpoint + " " + pc.A2A.BaseURL), StartedAt: started, TargetKind: report.TargetSeller}
	switch why := intr.why(); {
	case why != "":
		meta.HarnessError = why + " while fuzzing"
	case ferr != nil:
		meta.HarnessError = wire.Sanitize(red.String(ferr.Error()), 500)
	}
	if errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		acct.Notes = append(acct.Notes, fmt.Sprintf("the run deadline (%s) ended the turns", c.Deadline))
	}
	deadline := started.Add(c.Deadline - reserve/2)
	sel.Options.Stop = func() string {
		if why := intr.why(); why != "" {
			return why
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("the run deadline (%s) was hit", c.Deadline)
		}
		return ""
	}
	results, err := runner.Judge(store, sel)
	if err != nil {
		return nil, err
	}
	meta.Duration = time.Since(started)
	run := runner.Report(meta, store, sel, results)
	run.Sandbox = c.Sandbox
	acct.Reproductions = fuzz.Reproductions(store, set, fc.BearerEnv, fc.Tenant2Env)
	run.Fuzz = &acct
	fin := Finish{Baseline: c.Baseline, SignKey: c.SignKey}
	if c.Out == "" {
		fin.settle(run, sel)
		return run, nil
	}
	if err := WriteReports(c.Out, run, store, sel, fin); err != nil {
		return nil, err
	}
	return run, nil
}

// check refuses a fuzz run's configuration that cannot run: the Config's
// own checks, the run's fields a fuzz run has no use for, and the
// fuzzing's bounds. c is fc.Config with its defaults.
func (fc FuzzConfig) check(c Config) error {
	if err := c.check(); err != nil {
		return err
	}
	for _, f := range []struct {
		flag string
		set  bool
	}{{"--release", c.Release != ""}, {"--release-mirror", c.ReleaseMirror != ""}, {"--storyboards", c.Storyboards != ""},
		{"--storyboard", len(c.StoryboardIDs) > 0}, {"--label-filter", c.LabelFilter != ""}, {"--certify", c.Certify}, {"--agent", len(c.Agents) > 0}} {
		if f.set {
			return configf("%s is run's: a fuzz run judges the FUZZ rules over the requests it generates", f.flag)
		}
	}
	switch {
	case fc.Turns < 0 || fc.Turns > fuzz.MaxTurns:
		return configf("--turns must be between 1 and %d", fuzz.MaxTurns)
	case fc.ShrinkCalls < 0:
		return configf("--shrink-calls must be positive")
	case c.Sandbox && !c.AllowMutations:
		return configf("--sandbox seeds the account by creating resources: give --allow-mutations too")
	case fc.Tenant2BearerToken != "" && fc.Tenant2BearerToken == c.BearerToken:
		return configf("the second tenant's token (--tenant2-bearer-env) is the run's own token: give a second tenant's")
	}
	return nil
}

// turns is the budget of requests per tool the run uses.
func (fc FuzzConfig) turns() int {
	if fc.Turns == 0 {
		return fuzz.DefaultTurns
	}
	return fc.Turns
}

// fuzzFaces fuzzes each face the run was given, MCP first, and merges
// their accounts.
func fuzzFaces(ctx context.Context, cfg plan.Config, tenant2 string, fc fuzz.Config, add func(evidence.Call)) (report.Fuzz, error) {
	acct := report.Fuzz{Seed: fc.Seed, TurnsPerTool: fc.Turns, CrossTenant: tenant2 != ""}
	if acct.TurnsPerTool == 0 {
		acct.TurnsPerTool = fuzz.DefaultTurns
	}
	var errs []string
	for _, t := range []evidence.Transport{evidence.MCP, evidence.A2A} {
		face, other, err := dialFaces(ctx, cfg, t, tenant2, add)
		if err != nil {
			errs = append(errs, err.Error())
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
			errs = append(errs, err.Error())
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
	if len(errs) > 0 {
		return acct, errors.New(strings.Join(errs, "; ")) // one line: the report's harness error
	}
	return acct, nil
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
