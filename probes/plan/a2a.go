package plan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
)

// a2aID turns a probe ID of the MCP plan into the A2A one.
func a2aID(id string) string { return "a2a/" + strings.TrimPrefix(id, "mcp/") }

// executeA2A runs the A2A probes: the card, the read and error probes as
// AdCP invocations, one read tool through the streaming method, the auth
// probes and the opt-in burst. A2A has no session to break, so every probe
// is a plain request. The burst is returned, to make once every other call
// is done (nil: none).
func executeA2A(ctx context.Context, cfg Config, add func(evidence.Call)) (func() evidence.Call, error) {
	card, cardCall, err := a2a.Discover(ctx, cfg.A2A, "a2a/card")
	add(cardCall)
	if err != nil {
		err = fmt.Errorf("a2a: %w", err)
		cfg.gate.discovered(err)
		return nil, err
	}
	client := a2a.NewClient(cfg.A2A, card)
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	nonce := fmt.Sprintf("%016x", rand.New(rand.NewPCG(seed, seed^0x7f4a7c159e3779b9)).Uint64())
	// get_adcp_capabilities is every agent's required task (CAP-01): it
	// is invoked even when the card does not list it as a skill (that
	// omission is A2A-09's to judge; a card describes, the agent answers).
	listed := card.Skills
	if !slices.Contains(listed, "get_adcp_capabilities") {
		listed = append(slices.Clone(listed), "get_adcp_capabilities")
	}

	limit := cfg.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	sem := make(chan struct{}, limit)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		usable = map[string]bool{}
	)
	send := func(c Case, fn func() evidence.Call) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			call := fn()
			if c.Has(evidence.PurposeValid) || c.Has(evidence.PurposeContext) || c.Has(evidence.PurposeEnvelopeFields) {
				call.Refused = refusal(call)
				if c.Has(evidence.PurposeValid) && call.Refused == "" { // a timeout is no refusal: see ErrorCases
					mu.Lock()
					usable[c.Tool] = true
					mu.Unlock()
				}
			}
			add(call)
		}()
	}
	invoke := func(c Case) {
		send(c, func() evidence.Call {
			args := cfg.Inputs.base(c.Tool)
			merge(args, c.Args)
			call := client.Send(ctx, a2aID(c.ID), c.Tool, args, c.Purposes...)
			call.Arguments, call.Context = redactedArgs(args)
			call.Credential = "configured"
			return call
		})
	}
	reads, capsCase := discoveryCase(ReadCases(listed, nonce))
	if capsCase != nil {
		invoke(*capsCase)
		wg.Wait()
	}
	if cfg.DiscoveryOnly {
		cfg.gate.discovered(nil)
		return nil, nil
	}
	keys := sellerKeysOnce(ctx, Env{Config: cfg, Listed: listed, Add: add}, "a2a/", cfg.A2A.BaseURL)
	cfg.gate.discovered(nil)
	wg.Go(func() {
		for _, c := range a2aAuthProbes(ctx, cfg, card) {
			add(c)
		}
	})
	for _, c := range reads {
		invoke(c)
	}
	if t := pickStreamTool(listed); t != "" && card.Streaming {
		c := Case{ID: "a2a/" + t + "/stream", Tool: t, Purposes: []evidence.Purpose{evidence.PurposeStream, evidence.PurposeNoContext}, Args: argsOf(t)}
		send(c, func() evidence.Call {
			args := cfg.Inputs.base(c.Tool)
			merge(args, c.Args)
			call := client.Stream(ctx, c.ID, c.Tool, args, c.Purposes...)
			call.Arguments, _ = redactedArgs(args)
			call.Credential = "configured"
			return call
		})
	}
	wg.Wait()
	for _, c := range ErrorCases(listed, nonce, func(t string) bool { return usable[t] }) {
		invoke(c)
	}
	wg.Wait()
	env := Env{Config: cfg, Listed: listed, Nonce: nonce, Add: add, A2A: client, keys: keys,
		Usable: func(t string) bool { mu.Lock(); defer mu.Unlock(); return usable[t] }}
	runSets(ctx, env, a2aProbeSets, limit)
	if cfg.RateBurst > 0 && slices.Contains(listed, "get_adcp_capabilities") {
		return func() evidence.Call {
			return a2aRateBurst(ctx, client.InContext("adcp-conform-burst-"+nonce), min(cfg.RateBurst, MaxRateBurst))
		}, nil
	}
	return nil, nil
}

func pickStreamTool(listed []string) string {
	for _, t := range []string{"get_products", "get_adcp_capabilities", "list_creative_formats"} {
		if slices.Contains(listed, t) {
			return t
		}
	}
	return ""
}

// a2aAuthProbes mirrors the MCP auth probes: a protected invocation and
// get_adcp_capabilities without any credential, and a protected invocation
// with a random bearer token.
func a2aAuthProbes(ctx context.Context, cfg Config, card a2a.Card) []evidence.Call {
	if cfg.A2A.BearerToken == "" {
		return nil
	}
	protected := ""
	for _, t := range []string{"get_products", "get_media_buys", "list_creative_formats"} {
		if slices.Contains(card.Skills, t) {
			protected = t
			break
		}
	}
	anon := cfg.A2A
	anon.BearerToken, anon.Header = "", nil
	noCred := a2a.NewClient(anon, card)
	random := cfg.A2A
	random.BearerToken = randomToken()
	badCred := a2a.NewClient(random, card)
	var out []evidence.Call
	if protected != "" {
		c := noCred.Send(ctx, "a2a/auth/no_credential", protected, argsOf(protected), evidence.PurposeAuthNone)
		c.Credential = "none"
		out = append(out, c)
		c = badCred.Send(ctx, "a2a/auth/random_credential", protected, argsOf(protected), evidence.PurposeAuthRandom)
		c.Credential = "random"
		out = append(out, c)
	}
	// Every agent has get_adcp_capabilities, listed on its card or not.
	c := noCred.Send(ctx, "a2a/auth/no_credential/capabilities", "get_adcp_capabilities", map[string]any{}, evidence.PurposeAuthCapabilities)
	c.Credential = "none"
	return append(out, c)
}

// a2aRateBurst invokes get_adcp_capabilities up to n times until the seller
// answers RATE_LIMITED (or HTTP 429) and records that answer, or the last.
func a2aRateBurst(ctx context.Context, client *a2a.Client, n int) evidence.Call {
	return burst("a2a/rate_burst", n, extract.TransportA2A, func() evidence.Call {
		return client.Send(ctx, "a2a/rate_burst", "get_adcp_capabilities", map[string]any{}, evidence.PurposeRateBurst)
	})
}
