// Package plan is the probe phase for MCP: the probes every run makes, as
// data, and the executor that runs them concurrently against the seller and
// records every call in the evidence store.
//
//	store, err := plan.Execute(ctx, plan.Config{MCP: mcp.Config{Endpoint: url}})
//	if err != nil { ... } // a *mcp.HarnessError: the seller could not be reached
//
// Probes are read-only unless the run allows mutations. A probe that cannot
// run says why (evidence.Call.NotRun); it never passes silently.
package plan

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// DefaultConcurrency bounds the probes in flight when Config.Concurrency is
// zero.
const DefaultConcurrency = 4

// Config is what a probe run needs.
type Config struct {
	MCP mcp.Config
	// Inputs are the user's base arguments (--inputs).
	Inputs Inputs
	// AllowMutations lets probes that create state run.
	AllowMutations bool
	// Concurrency bounds the probes in flight.
	Concurrency int
	// Seed makes the random context reproducible; 0 draws one.
	Seed uint64
	// Sandbox says the target is a sandbox (comply_test_controller may be
	// exposed).
	Sandbox bool
	// LocalFetch is the local-development flag of the OAuth setup kit:
	// URLs the agent names (its OAuth discovery graph) may be http and
	// reach loopback and private addresses (never link-local).
	LocalFetch bool
	// BrandJSON is the operator-configured URL of the agent's brand.json
	// (--brand-json), for the storyboards' signing-keys precheck.
	BrandJSON string
	// A2A says how to reach the seller's A2A face; an empty BaseURL skips
	// the A2A probes.
	A2A a2a.Config
	// OnCall, when set, sees every recorded call as it lands (possibly from
	// several goroutines at once).
	OnCall func(evidence.Call)
	// RateBurst is the number of calls of the opt-in rate-limit burst; 0
	// skips it.
	RateBurst int
	// TLS is the client TLS configuration of every HTTPS connection (trusted
	// roots, for a staging seller's private CA); nil means the system's.
	TLS *tls.Config
	// Guard is the run's connection policy (probes/fetch): every request
	// and connection of the run goes through it. nil: WithGuard makes one.
	Guard *fetch.Guard
	// Net is the network of the guard WithGuard makes; the zero value is
	// the system's (tests replace it).
	Net fetch.Network
	// Webhook is the harness's webhook receiver; nil when the seller cannot
	// reach one (the webhook probes are then recorded as not run).
	Webhook *webhook.Receiver
	// WebhookWait bounds the wait for deliveries; 0 means DefaultWebhookWait.
	WebhookWait time.Duration
	// TaskWait bounds the polling of each MCP task (TASK-02); 0 means
	// mcp.DefaultTaskWait.
	TaskWait time.Duration
	// DiscoveryOnly limits the plan to discovery — the cards, initialize,
	// tools/list (the A2A card's skills) and get_adcp_capabilities: what a
	// run judging storyboards alone needs; no rule would read the rest.
	DiscoveryOnly bool
	// LiveBearerToken is the bearer token of a live-mode (non-sandbox)
	// principal on the same seller (--live-bearer-env): the storyboard
	// steps that authenticate as a live-mode test kit are sent with it; ""
	// leaves them skipped.
	LiveBearerToken string
	// Discovered, when set, is called once every transport's discovery
	// (the cards, initialize, tools/list, the valid get_adcp_capabilities
	// call) is recorded, with the store and why discovery failed (nil: it
	// did not); the rest of the probes wait until it returns. A run starts
	// its storyboards from it, beside the rest of the probes.
	Discovered func(store *evidence.Store, err error)
	// ProbesDone, when set, is called once every probe but the rate-limit
	// bursts (RateBurst) is done; the bursts wait until it returns: a run
	// waits there for its storyboards, so that a burst overlaps nothing.
	ProbesDone func()

	// gate holds the probes of every transport after discovery until
	// Discovered has returned (Execute sets it).
	gate *gate
}

// gate is the barrier between discovery and the rest of the probes.
type gate struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []error
	proceed chan struct{}
}

// discovered says one transport's discovery is over (err: it failed) and
// waits until the rest of the probes may run.
func (g *gate) discovered(err error) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.errs = append(g.errs, err)
	g.mu.Unlock()
	g.wg.Done()
	<-g.proceed
}

// Secrets are the run's credential values (the bearer token and the
// credential headers of both faces, the live-mode principal's token, and
// what the faces' LiveSecrets learnt so far: an OAuth client's secret and
// tokens, and the extra secrets of both faces' limits: another agent's
// token, say): never written to any output.
func (cfg Config) Secrets() []string {
	out := append(wire.Secrets(cfg.MCP.BearerToken, cfg.MCP.Header), wire.Secrets(cfg.A2A.BearerToken, cfg.A2A.Header)...)
	out = append(out, cfg.MCP.Limits.LiveSecrets.List()...)
	out = append(out, cfg.A2A.Limits.LiveSecrets.List()...)
	out = append(out, wire.Secrets(cfg.LiveBearerToken, nil)...)
	return append(append(out, cfg.MCP.Limits.Secrets...), cfg.A2A.Limits.Secrets...)
}

// Redactor redacts the run's secrets (Secrets) and every secret the MCP
// face's LiveSecrets learns later (a token renewed mid-run).
func (cfg Config) Redactor() *wire.Redactor {
	live := cfg.MCP.Limits.LiveSecrets
	if live == nil {
		live = cfg.A2A.Limits.LiveSecrets
	}
	return wire.NewLiveRedactor(cfg.Secrets(), live, nil)
}

// MaxRateBurst bounds RateBurst.
const MaxRateBurst = 500

// Inputs are base arguments for every tool and per tool, merged under each
// probe's own fields: {"all": {…}, "tools": {"get_products": {…}}}.
type Inputs struct {
	All   map[string]any            `json:"all,omitempty"`
	Tools map[string]map[string]any `json:"tools,omitempty"`
}

// LoadInputs reads an inputs file, YAML or JSON.
func LoadInputs(path string) (Inputs, error) {
	var in Inputs
	b, err := os.ReadFile(path)
	if err != nil {
		return in, err
	}
	if err := yaml.UnmarshalStrict(b, &in); err != nil {
		return in, fmt.Errorf("%s: %w", path, err)
	}
	return in, nil
}

// base returns the user's arguments for tool: "all" overlaid by the tool's.
func (in Inputs) base(tool string) map[string]any {
	out := deepCopy(in.All)
	merge(out, in.Tools[tool])
	return out
}

// Case is one probe: a call to one tool, for stated purposes.
type Case struct {
	ID       string
	Tool     string
	Purposes []evidence.Purpose
	// Args are the probe's own fields, merged over the user's inputs.
	Args map[string]any
	// Fresh asks for a session of its own: a malformed reply must not kill
	// the shared one.
	Fresh bool
	// Mutating marks a probe that creates state on the seller.
	Mutating bool
}

// readTools are the read-only AdCP tasks the plan probes, with valid
// arguments of their own.
var readTools = []struct {
	name string
	args map[string]any
}{
	{"get_adcp_capabilities", map[string]any{}},
	{"get_products", map[string]any{"buying_mode": "brief", "brief": "Premium video inventory reaching sports fans in the US."}},
	{"list_creative_formats", map[string]any{}},
	{"get_media_buys", map[string]any{}},
	{"get_media_buy_delivery", map[string]any{}},
}

// Cases returns the probes for the tools the seller lists: the read probes,
// the envelope-field probes (pinned to the harness's release; a run pins one
// the seller advertises), then the error probes. nonce makes the random
// context and the unknown ids unique to the run.
func Cases(listed []string, nonce string) []Case {
	return slices.Concat(ReadCases(listed, nonce), EnvelopeCases(listed, nonce, harnessRelease), ErrorCases(listed, nonce, nil))
}

// contextValue is the random nested context the probes send.
func contextValue(nonce string) map[string]any {
	return map[string]any{"adcp_conform": map[string]any{"nonce": nonce, "nested": map[string]any{"n": 7, "flag": true, "list": []any{"a", 1.5, nil}}}}
}

// ReadCases returns the read probes for the tools the seller lists: valid
// arguments and a random context. The probes carrying every envelope field
// come later (EnvelopeCases): they pin a release the seller advertises.
func ReadCases(listed []string, nonce string) []Case {
	ctxValue := contextValue(nonce)
	var cases []Case
	has := func(tool string) bool { return slices.Contains(listed, tool) }
	for _, t := range readTools {
		if !has(t.name) {
			continue
		}
		cases = append(cases,
			Case{ID: "mcp/" + t.name + "/valid", Tool: t.name, Purposes: []evidence.Purpose{evidence.PurposeValid, evidence.PurposeNoContext}, Args: t.args},
			Case{ID: "mcp/" + t.name + "/context", Tool: t.name, Purposes: []evidence.Purpose{evidence.PurposeContext}, Args: with(t.args, "context", ctxValue)},
		)
	}
	return cases
}

// ErrorCases returns the error probes, each on a fresh session and each
// carrying a context (CTX-02). usable, when not nil, says which tools the
// seller did not refuse on their valid read probe: a probe picks such a tool
// first, so a seller refusing the harness's arguments (a business field it
// requires) is not taken for one refusing the error's cause. A valid probe
// that timed out or failed is no refusal, so a slow first call never moves a
// probe to another tool (the verdicts do not depend on timing).
//
// Two errors are mandatory (ERR-01): the release pin the seller cannot
// serve (VERSION_UNSUPPORTED, on adcp_version and on adcp_major_version) and
// an unknown task id on the task-status tool (REFERENCE_NOT_FOUND). The
// others (a wrong-typed brief, unknown ids on every listed read tool that
// takes one) a lenient seller may answer with a success.
func ErrorCases(listed []string, nonce string, usable func(tool string) bool) []Case {
	ctxValue := contextValue(nonce)
	var cases []Case
	has := func(tool string) bool { return slices.Contains(listed, tool) }
	pick := func(tools ...string) string {
		for _, pass := range []bool{true, false} {
			for _, t := range tools {
				if has(t) && (!pass || usable == nil || usable(t)) {
					return t
				}
			}
		}
		return ""
	}
	errorTool := pick("get_products", "get_adcp_capabilities", "list_creative_formats")
	if errorTool != "" {
		cases = append(cases, Case{ID: "mcp/" + errorTool + "/error_version", Tool: errorTool, Fresh: true,
			Purposes: []evidence.Purpose{evidence.PurposeErrorVersion, evidence.PurposeContext},
			Args:     with(argsOf(errorTool), "adcp_version", "99.0", "context", ctxValue)})
	}
	if has("get_products") {
		cases = append(cases, Case{ID: "mcp/get_products/error_wrong_type", Tool: "get_products", Fresh: true,
			Purposes: []evidence.Purpose{evidence.PurposeErrorWrongType, evidence.PurposeContext},
			Args:     with(argsOf("get_products"), "brief", 42, "context", ctxValue)})
	}
	for _, t := range referenceTools {
		if has(t.name) {
			cases = append(cases, Case{ID: "mcp/" + t.name + "/error_unknown_id", Tool: t.name, Fresh: true,
				Purposes: []evidence.Purpose{evidence.PurposeErrorUnknownID, evidence.PurposeContext},
				Args:     with(argsOf(t.name), t.field, []any{"adcp-conform-unknown-" + nonce}, "context", ctxValue)})
		}
	}
	if t := pick(taskStatusTools...); t != "" {
		cases = append(cases, Case{ID: "mcp/" + t + "/error_unknown_task", Tool: t, Fresh: true,
			Purposes: []evidence.Purpose{evidence.PurposeErrorUnknownTask, evidence.PurposeContext},
			Args:     map[string]any{"task_id": "adcp-conform-unknown-task-" + nonce, "context": ctxValue}})
	}
	return cases
}

// referenceTools are the read tools the plan knows that take a list of
// reference ids, and the field holding it.
var referenceTools = []struct{ name, field string }{
	{"get_media_buys", "media_buy_ids"},
	{"get_media_buy_delivery", "media_buy_ids"},
}

// taskStatusTools are the AdCP task-status tools, in order of preference:
// get_task_status (3.x) and the legacy tasks/get surface MCP sellers may
// still expose (protocol/calling-an-agent.mdx).
var taskStatusTools = []string{"get_task_status", "tasks/get"}

// Has reports whether the case serves purpose p.
func (c Case) Has(p evidence.Purpose) bool { return slices.Contains(c.Purposes, p) }

func argsOf(tool string) map[string]any {
	for _, t := range readTools {
		if t.name == tool {
			return t.args
		}
	}
	return map[string]any{}
}

// with returns a copy of args with the key/value pairs set.
func with(args map[string]any, kv ...any) map[string]any {
	out := deepCopy(args)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// WithGuard returns cfg with its guard, and its clients' (where they have
// none of their own): one for the run's agents — its MCP endpoint, its A2A
// face and the further agents named — with its LocalFetch, TLS and Net.
func (cfg Config) WithGuard(agents ...string) Config {
	if cfg.Guard == nil {
		cfg.Guard = fetch.NewGuard(fetch.GuardConfig{Agents: append([]string{cfg.MCP.Endpoint, cfg.A2A.BaseURL}, agents...),
			LocalFetch: cfg.LocalFetch, TLS: cfg.TLS, Net: cfg.Net})
	}
	if cfg.MCP.Guard == nil {
		cfg.MCP.Guard = cfg.Guard
	}
	if cfg.A2A.Guard == nil {
		cfg.A2A.Guard = cfg.Guard
	}
	return cfg
}

// Execute runs the plan against cfg.MCP.Endpoint: discovery first
// (initialize, tools/list), then every case, at most cfg.Concurrency at a
// time. It returns a *mcp.HarnessError when the seller cannot be reached at
// all; the store holds what was recorded either way.
func Execute(ctx context.Context, cfg Config) (*evidence.Store, error) {
	// Every transport redacts the run's credentials, also one that sends
	// none (the no-credential probes, a fetch on another origin): a seller
	// echoes what it learnt from any earlier request.
	secrets := slices.Clip(cfg.Secrets())
	cfg.MCP.Limits.Secrets, cfg.A2A.Limits.Secrets = secrets, secrets
	cfg = cfg.WithGuard()
	// The store redacts every call it records, the texts the harness
	// writes about a call too (they may quote the seller: an error at
	// initialize, a refusal), and every report written from it — the
	// tokens an OAuth client obtains later too (cfg.Redactor follows them).
	store := evidence.NewStoreWith(evidence.Target{MCP: cfg.MCP.Endpoint, A2A: cfg.A2A.BaseURL,
		Credential:     cfg.MCP.BearerToken != "" || cfg.A2A.BearerToken != "",
		AllowMutations: cfg.AllowMutations, Sandbox: cfg.Sandbox, LocalFetch: cfg.LocalFetch, LiveCredential: cfg.LiveBearerToken != "", BrandJSON: cfg.BrandJSON},
		cfg.Redactor())
	add := func(c evidence.Call) {
		c = store.Add(c)
		if cfg.OnCall != nil {
			cfg.OnCall(c)
		}
	}
	var (
		wg       sync.WaitGroup
		mcpErr   error
		a2aErr   error
		mcpBurst func() evidence.Call
		a2aBurst func() evidence.Call
	)
	g := &gate{proceed: make(chan struct{})}
	cfg.gate = g
	if cfg.MCP.Endpoint != "" {
		g.wg.Add(1)
	}
	if cfg.A2A.BaseURL != "" {
		g.wg.Add(1)
	}
	go func() {
		g.wg.Wait()
		if cfg.Discovered != nil {
			g.mu.Lock()
			err := errors.Join(g.errs...)
			g.mu.Unlock()
			cfg.Discovered(store, err)
		}
		close(g.proceed)
	}()
	// The TLS handshakes come first: a seller the client cannot talk to
	// (TLS 1.1 only, say) still gets its handshake judged.
	if strings.HasPrefix(cfg.MCP.Endpoint, "https:") {
		add(tlsHandshake(ctx, cfg, evidence.MCP, cfg.MCP.Endpoint))
	}
	if strings.HasPrefix(cfg.A2A.BaseURL, "https:") {
		add(tlsHandshake(ctx, cfg, evidence.A2A, cfg.A2A.BaseURL))
	}
	if cfg.MCP.Endpoint != "" {
		wg.Go(func() { mcpBurst, mcpErr = executeMCP(ctx, cfg, add) })
	}
	if cfg.A2A.BaseURL != "" {
		wg.Go(func() { a2aBurst, a2aErr = executeA2A(ctx, cfg, add) })
	}
	wg.Wait()
	<-g.proceed // Discovered has returned, whatever became of the probes
	// The bursts overlap nothing: not the other probes, not each other,
	// not the storyboards (BeforeBurst waits for them): a RATE_LIMITED
	// reply is then the burst's own, and no other call meets the limit
	// the burst trips.
	if cfg.ProbesDone != nil {
		cfg.ProbesDone()
	}
	for _, b := range []func() evidence.Call{mcpBurst, a2aBurst} {
		if b != nil && ctx.Err() == nil {
			add(b())
		}
	}
	return store, errors.Join(mcpErr, a2aErr)
}

// executeMCP runs the MCP probes, and returns the rate-limit burst to
// make once every other call is done (nil: none).
func executeMCP(ctx context.Context, cfg Config, add func(evidence.Call)) (func() evidence.Call, error) {
	for _, c := range cards(ctx, cfg) {
		add(c)
	}
	shared, initCall, err := mcp.Dial(ctx, cfg.MCP, "mcp/initialize")
	add(initCall)
	if err != nil {
		cfg.gate.discovered(err)
		return nil, err
	}
	defer shared.Close()
	list := shared.ListTools(ctx, "mcp/tools/list")
	add(list)
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	nonce := fmt.Sprintf("%016x", rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)).Uint64())
	listed := ToolNames(list.Result)
	reads, capsCase := discoveryCase(ReadCases(listed, nonce))
	if cfg.DiscoveryOnly {
		if capsCase != nil {
			add(run(ctx, cfg, shared, *capsCase))
		}
		cfg.gate.discovered(nil)
		return nil, nil
	}

	limit := cfg.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	var mu sync.Mutex
	usable := map[string]bool{}
	wave := func(cases []Case) {
		for _, c := range cases {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				call := run(ctx, cfg, shared, c)
				if c.Has(evidence.PurposeValid) || c.Has(evidence.PurposeContext) || c.Has(evidence.PurposeEnvelopeFields) {
					if c.Has(evidence.PurposeValid) && refusal(call) == "" { // a timeout is no refusal: see ErrorCases
						mu.Lock()
						usable[c.Tool] = true
						mu.Unlock()
					}
					call.Refused = refusal(call)
				}
				add(call)
			}()
		}
	}
	if capsCase != nil {
		wave([]Case{*capsCase})
		wg.Wait()
	}
	keys := sellerKeysOnce(ctx, Env{Config: cfg, Listed: listed, Add: add}, "mcp/", cfg.MCP.Endpoint)
	cfg.gate.discovered(nil)
	wg.Go(func() {
		for _, c := range authProbes(ctx, cfg, listed) {
			add(c)
		}
	})
	wave(reads)
	wg.Wait()
	wave(ErrorCases(listed, nonce, func(t string) bool { return usable[t] }))
	wg.Wait()
	env := Env{Config: cfg, Listed: listed, Nonce: nonce, Add: add, Shared: shared, keys: keys,
		Usable: func(t string) bool { mu.Lock(); defer mu.Unlock(); return usable[t] }}
	runSets(ctx, env, mcpProbeSets, limit)
	if cfg.RateBurst > 0 && slices.Contains(ToolNames(list.Result), "get_adcp_capabilities") {
		return func() evidence.Call { return rateBurst(ctx, cfg) }, nil
	}
	return nil, nil
}

// discoveryCase splits the valid get_adcp_capabilities case, the last
// call of discovery, from the other read cases (nil when none is there).
func discoveryCase(reads []Case) ([]Case, *Case) {
	for i, c := range reads {
		if c.Tool == "get_adcp_capabilities" && c.Has(evidence.PurposeValid) {
			return slices.Delete(slices.Clone(reads), i, i+1), &c
		}
	}
	return reads, nil
}

// Env is what a registered probe set works with.
type Env struct {
	Config Config
	// Listed are the tools (MCP) or skills (A2A) the seller lists.
	Listed []string
	// Nonce is unique to the run.
	Nonce string
	// Add records a call.
	Add func(evidence.Call)
	// Usable says whether a tool answered its valid read probe.
	Usable func(tool string) bool
	// Shared is the MCP session of the read probes (nil over A2A).
	Shared *mcp.Session
	// A2A is the A2A client (nil over MCP).
	A2A *a2a.Client
	// keys are the seller's webhook-signing keys (sellerKeysOnce).
	keys keysFunc
}

// A ProbeSet runs further probes after the read and error probes; sets
// are registered by the files that define them (registerMCP, registerA2A).
type ProbeSet func(ctx context.Context, env Env)

var mcpProbeSets, a2aProbeSets []ProbeSet

// runSets runs the probe sets: one after the other when limit is 1 (a
// serial run), else all at once. Each set is sequential inside and works on
// its own operation ids, keys and sessions, so they are independent; running
// them together overlaps their waits (a webhook that must not come, a task
// being polled).
func runSets(ctx context.Context, env Env, sets []ProbeSet, limit int) {
	if limit <= 1 {
		for _, set := range sets {
			set(ctx, env)
		}
		return
	}
	var wg sync.WaitGroup
	for _, set := range sets {
		wg.Go(func() { set(ctx, env) })
	}
	wg.Wait()
}

// registerMCP adds a probe set to every MCP run; call it from an init
// function.
func registerMCP(p ProbeSet) { mcpProbeSets = append(mcpProbeSets, p) }

// registerA2A adds a probe set to every A2A run; call it from an init
// function.
func registerA2A(p ProbeSet) { a2aProbeSets = append(a2aProbeSets, p) }

// run makes one case's call, on the shared session or a fresh one.
func run(ctx context.Context, cfg Config, shared *mcp.Session, c Case) evidence.Call {
	args := cfg.Inputs.base(c.Tool)
	merge(args, c.Args)
	call := evidence.Call{ProbeID: c.ID, Transport: evidence.MCP, Kind: evidence.KindToolCall, Tool: c.Tool, Purposes: c.Purposes}
	if c.Mutating && !cfg.AllowMutations {
		call.NotRun = "mutating probes not allowed (--allow-mutations)"
		return call
	}
	s := shared
	if c.Fresh {
		fresh, init, err := mcp.Dial(ctx, cfg.MCP, c.ID+"#initialize")
		if err != nil {
			call.Exchanges, call.HarnessError = init.Exchanges, err.Error()
			return call
		}
		defer fresh.Close()
		s = fresh
	}
	out := s.CallTool(ctx, c.ID, c.Tool, args, c.Purposes...)
	out.Arguments, out.Context = redactedArgs(args)
	out.Credential = "configured"
	return out
}

// redactedArgs returns the arguments as sent, redacted (the user's inputs
// may hold credentials), and the context among them (nil when none).
func redactedArgs(args map[string]any) (arguments, context json.RawMessage) {
	if b, err := json.Marshal(args); err == nil {
		arguments = wire.RedactJSON(b)
	}
	if v, ok := args["context"]; ok {
		context, _ = json.Marshal(v)
	}
	return arguments, context
}

// refusal returns the seller's refusal of a call it answered with an error
// ("CODE: message"), or "" when the call succeeded or was not answered. The
// reply is read as a client reads it: exact-case keys (a "IsError" or
// "Message" is not isError or message), the last of a repeated key, and
// isError by JavaScript truthiness.
func refusal(c evidence.Call) string {
	if !c.Answered() {
		return ""
	}
	if c.RPCError != nil {
		code, _ := rawjson.Field(c.RPCError, "code")
		msg, _ := rawjson.Field(c.RPCError, "message")
		m, _ := rawjson.StringValue(msg)
		return wire.Sanitize(fmt.Sprintf("JSON-RPC %s: %s", bytes.TrimSpace(code), m), 300)
	}
	t := extract.TransportMCP
	if c.Transport == evidence.A2A {
		t = extract.TransportA2A
	}
	out, err := extract.FromJSONRPCResponse(t, c.Message)
	if err != nil || out.Error == nil {
		if t == extract.TransportMCP {
			if v, ok := rawjson.Field(c.Result, "isError"); ok && rawjson.Truthy(v) {
				return "an isError result"
			}
		}
		return ""
	}
	msg, _ := rawjson.Field(out.Error.Raw, "message")
	m, _ := rawjson.StringValue(msg)
	return wire.Sanitize(out.Error.Code+": "+m, 300)
}

// ToolNames reads the tool names from a raw tools/list result.
func ToolNames(result json.RawMessage) []string {
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if rawjson.Decode(result, &r) != nil {
		return nil
	}
	names := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return names
}

// merge deep-merges src into dst: objects merge key by key, anything else
// from src replaces dst's value.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				merge(dv, sv)
				continue
			}
			dst[k] = deepCopy(sv)
			continue
		}
		dst[k] = v
	}
}

func deepCopy(m map[string]any) map[string]any {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range out {
		if sub, ok := v.(map[string]any); ok {
			out[k] = deepCopy(sub)
		}
	}
	return out
}
