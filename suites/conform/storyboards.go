package conform

import (
	"context"
	"fmt"
	"slices"

	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/live"
)

// Prefetch returns cfg prepared for several runs (one per seller, say):
// the storyboards its Storyboards names — a published bundle, fetched
// now, once, its notice written to cfg.Log, or a local folder — are read
// once, and so are the schemas a local Schemas folder holds; every run of
// a copy of the returned Config shares them (each selects in a copy of
// its own), saying where they came from as that fetch did. A Config that
// names neither is returned as it is.
func (cfg Config) Prefetch() (Config, error) {
	if cfg.shared == nil && cfg.Storyboards != "" && cfg.Storyboards != material.Off {
		p, err := material.LoadStoryboards(cfg.Storyboards)
		if err != nil {
			return cfg, configErr(err)
		}
		if cfg.Log != nil {
			fmt.Fprint(cfg.Log, p.Notice)
		}
		cfg.shared = p.Shared(true)
	}
	if cfg.sharedSchemas == nil && cfg.Schemas != "" && cfg.Schemas != material.Off && !material.Remote(cfg.Schemas) {
		set, err := schemas.Load(cfg.Schemas)
		if err != nil {
			return cfg, configf("--schemas: %v", err)
		}
		cfg.sharedSchemas = set
	}
	return cfg, nil
}

// runStoryboards runs the storyboards after the probes, through the same
// clients and limits, into the same store.
// aloneDone is called once the storyboards that run alone are done
// (live.Config.AloneDone), or at once when there are none.
func runStoryboards(ctx context.Context, p *material.Storyboards, cfg plan.Config, store *evidence.Store, set *schemas.Set,
	aloneDone func()) []storyboard.StoryboardResult {
	if p.Release == nil {
		aloneDone()
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
		AloneDone: aloneDone,
		Env: storyboard.Env{AllowMutations: cfg.AllowMutations, Sandbox: cfg.Sandbox, LocalFetch: cfg.LocalFetch, BrandJSON: cfg.BrandJSON, Schemas: set, RunnerVersion: AdcpRelease,
			Credential: cfg.MCP.BearerToken != "" || cfg.A2A.BearerToken != "" || len(cfg.MCP.Header) > 0, LiveCredential: cfg.LiveBearerToken != ""},
	})
}
