// Package live runs a release's storyboards against a seller through the
// project's raw-byte MCP and A2A clients: every step's call is recorded in
// the run's evidence store, and every verdict is read from those bytes.
//
//	results := live.Run(ctx, live.Config{MCP: cfg.MCP, Release: rel, Env: env, Store: store, Add: add})
package live

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/observer"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// DefaultConcurrency bounds the storyboards run at once: each is one
// session of sequential calls, so the run's wall time is mostly waiting.
const DefaultConcurrency = 8

// Config is what a storyboard run needs.
type Config struct {
	// MCP reaches the seller's MCP face; an empty Endpoint runs the
	// storyboards over A2A.
	MCP mcp.Config
	// A2A reaches the seller's A2A face (when MCP has no endpoint).
	A2A a2a.Config
	// Release is the loaded compliance release.
	Release *spec.Release
	// Env carries the run's options (mutations, sandbox, schemas, …);
	// Tools, Capabilities, AgentURL, TestKits and MacroVectors are filled
	// from the store and the release.
	Env storyboard.Env
	// Store holds the probe phase's calls: the tool list and the
	// capabilities are read from it, not asked again.
	Store *evidence.Store
	// Add records a step's call and returns it as recorded (redacted): the
	// engine reads what the evidence holds, never more.
	Add func(evidence.Call) evidence.Call
	// Include selects storyboards (--storyboard, labels); nil selects all.
	Include func(*spec.Storyboard) bool
	// Concurrency bounds the storyboards in flight; 0 means
	// DefaultConcurrency.
	Concurrency int
	// Dispatcher, when set, replaces the live clients: a storyboard.Replay
	// over a recorded store re-judges a run offline (nothing is recorded).
	Dispatcher storyboard.Dispatcher
	// Transport says which face the recorded run used, for a replay
	// ("mcp" or "a2a"); a live run takes it from MCP.Endpoint.
	Transport evidence.Transport
	// Webhook is the run's webhook receiver (nil: none, the webhook
	// storyboards and steps are skipped); a replay reads the recorded run's.
	Webhook *webhook.Receiver
	// TLS is the run's client TLS configuration (--ca-cert), for the
	// fetches of URLs the agent names (its OAuth discovery graph).
	TLS *tls.Config
	// Agents are the run's further logical agents (--agent NAME=URL,
	// NAME=a2a:URL): a multi-agent storyboard's step whose agent: names
	// one goes to it, through an MCP session of its own or its A2A
	// face; the agent under test answers for the storyboard's
	// default_agent. A replay reads the recorded run's names.
	Agents []Agent
	// LiveBearerToken is the bearer token of a live-mode (non-sandbox)
	// principal on the same seller (--live-bearer-env): a step marked
	// Live is sent with it alone, on a session of its own. Its value
	// must be among the Limits' secrets.
	LiveBearerToken string
	// AloneDone, when set, is called once the storyboards that run alone
	// (storyboard.ShapesNextCall) are done, before the others start: a run
	// holds its other calls to the seller until then.
	AloneDone func()
}

// Agent is a further logical agent of the run: its key and how to reach
// it, at its MCP endpoint or its A2A face (with its own credential, never
// the run's), independently of the agent under test's transport.
type Agent struct {
	Name string
	// MCP reaches its MCP endpoint (when A2A has no BaseURL).
	MCP mcp.Config
	// A2A reaches its A2A face when BaseURL is set: its card is at
	// BaseURL + a2a.CardPath, fetched once per run.
	A2A a2a.Config
}

// Transport is the face the agent is reached on.
func (a Agent) Transport() evidence.Transport {
	if a.A2A.BaseURL != "" {
		return evidence.A2A
	}
	return evidence.MCP
}

// URL is where the agent is reached: its A2A base URL or its MCP
// endpoint.
func (a Agent) URL() string {
	if a.Transport() == evidence.A2A {
		return a.A2A.BaseURL
	}
	return a.MCP.Endpoint
}

// Run runs every storyboard of the release: the ones Include leaves out
// are reported not selected, the others run (or skip at their gates). The
// results are in the release's storyboard order.
func Run(ctx context.Context, cfg Config) []storyboard.StoryboardResult {
	env := cfg.Env
	live := &dispatcher{cfg: cfg, add: cfg.Add}
	var d storyboard.Dispatcher = live
	if cfg.Dispatcher != nil {
		d, live.add = cfg.Dispatcher, nil
	}
	t := transport(cfg)
	if env.AgentURL == "" {
		env.AgentURL = cfg.MCP.Endpoint
		if t == evidence.A2A {
			env.AgentURL = cfg.A2A.BaseURL
		}
	}
	env.Tools, env.Capabilities = fromStore(cfg.Store, t)
	switch {
	case cfg.Dispatcher != nil && env.Agents == nil:
		env.Agents, env.AgentURLs = storyboard.ReplayAgents(cfg.Store), storyboard.ReplayAgentURLs(cfg.Store)
	case cfg.Dispatcher == nil && len(cfg.Agents) > 0:
		env.Agents, env.AgentURLs = nil, map[string]string{}
		faces := map[string]evidence.Transport{}
		for _, a := range cfg.Agents {
			env.Agents = append(env.Agents, a.Name)
			env.AgentURLs[a.Name], faces[a.Name] = a.URL(), a.Transport()
		}
		live.record(storyboard.AgentsCall(env.Agents, env.AgentURLs, faces, t))
	}
	if cfg.Dispatcher == nil {
		// The steps of a live-mode principal run only with its token.
		env.LiveCredential = cfg.LiveBearerToken != ""
	}
	if env.Mutating == nil {
		env.Mutating = storyboard.Mutating
	}
	env.TestKits = TestKits(cfg.Release)
	if env.MacroVectors == nil {
		// A fixture that cannot be read leaves the observer's steps
		// skipped with the reason; vectors that load are kept.
		env.MacroVectors, _ = observer.LoadMacroVectors(cfg.Release.Dir)
	}
	switch {
	case cfg.Dispatcher != nil && env.Webhooks == nil:
		env.Webhooks = storyboard.ReplayWebhooks(cfg.Store)
	case cfg.Dispatcher == nil && cfg.Webhook != nil:
		env.Webhooks = newReceiver(cfg.Webhook, cfg.Store, t, cfg.Add)
		live.record(storyboard.ReceiverCall(cfg.Webhook.Base(), t))
	}
	versionSkip := storyboard.VersionGate(cfg.Release, env.Capabilities)
	results := make([]storyboard.StoryboardResult, len(cfg.Release.Storyboards))
	// runs reports whether the storyboard runs, else records why not.
	runs := func(i int) bool {
		sb := cfg.Release.Storyboards[i]
		switch {
		case cfg.Include != nil && !cfg.Include(sb):
			results[i] = storyboard.StoryboardResult{Storyboard: sb, Outcome: storyboard.Skipped,
				NotSelected: &spec.Skip{Reason: storyboard.ScopeExcluded, Detail: "not selected by --storyboard or the label filter"}}
		case versionSkip != nil:
			results[i] = storyboard.StoryboardResult{Storyboard: sb, Outcome: storyboard.Skipped, NotSelected: versionSkip}
		default:
			if skip := storyboard.Gate(sb, &env); skip != nil {
				results[i] = storyboard.StoryboardResult{Storyboard: sb, Outcome: storyboard.Skipped, Skip: skip}
				return false
			}
			return true
		}
		return false
	}
	run := func(i int) {
		sb := cfg.Release.Storyboards[i]
		e := env
		results[i] = storyboard.Run(ctx, sb, &e, d)
		results[i].Slim(report.Embed) // graded: only what the report reads is kept
		live.end(sb.ID)
		if len(results[i].Generated) > 0 {
			b, _ := json.Marshal(results[i].Generated)
			live.record(evidence.Call{ProbeID: GeneratedProbeID(sb.ID), Transport: t, Kind: evidence.KindStoryboardContext, Arguments: b})
		}
	}
	// The order they run in; the results keep the release's. A storyboard
	// that shapes the account's next call (storyboard.ShapesNextCall:
	// every storyboard of a run is the same account, so another's call in
	// between would consume the instruction) runs alone, before the
	// others. Then the others side by side, those that wait on purpose
	// (storyboard.Waits: webhook deliveries and settles, a rate-limit
	// trip's retry_after) first, so their waiting overlaps the rest of
	// the run instead of trailing it, the longest of them first (Calls),
	// so that the run does not end with one long storyboard making its
	// calls one by one while the seller idles between them. The others
	// keep the release's order: their state is the one account's, and
	// which of them overlap decides what some read (the 3.2 release's
	// product_filter_behavior, run beside another seeding storyboard,
	// lists that one's product too).
	var alone, waiting, other []int
	for i, sb := range cfg.Release.Storyboards {
		switch {
		case storyboard.ShapesNextCall(sb):
			alone = append(alone, i)
		case storyboard.Waits(sb):
			waiting = append(waiting, i)
		default:
			other = append(other, i)
		}
	}
	sort.SliceStable(waiting, func(a, b int) bool {
		return storyboard.Calls(cfg.Release.Storyboards[waiting[a]]) > storyboard.Calls(cfg.Release.Storyboards[waiting[b]])
	})
	for _, i := range alone {
		if runs(i) {
			run(i)
		}
	}
	if cfg.AloneDone != nil {
		cfg.AloneDone()
	}
	limit := cfg.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, i := range append(waiting, other...) {
		if !runs(i) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			run(i)
		}()
	}
	wg.Wait()
	live.close()
	return results
}

// GeneratedProbeID is the probe ID of the record of a storyboard's
// generated values.
func GeneratedProbeID(id string) string { return evidence.StoryboardPrefix + id + "#generated" }

// Generated reads the generated values a recorded run kept, by storyboard.
func Generated(store *evidence.Store) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, c := range store.Calls(evidence.OfKind(evidence.KindStoryboardContext)) {
		var m map[string]string
		if json.Unmarshal(c.Arguments, &m) == nil {
			id := strings.TrimSuffix(strings.TrimPrefix(c.ProbeID, evidence.StoryboardPrefix), "#generated")
			out[id] = m
		}
	}
	return out
}

func transport(cfg Config) evidence.Transport {
	if cfg.Transport != "" {
		return cfg.Transport
	}
	if cfg.MCP.Endpoint == "" {
		return evidence.A2A
	}
	return evidence.MCP
}

// TestKits decodes the release's test kits by path.
func TestKits(rel *spec.Release) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, k := range rel.TestKits {
		if m, ok := k.Raw().(map[string]any); ok {
			out[k.Path] = m
		}
	}
	return out
}

// fromStore reads the tools the seller listed and its capabilities from
// the probe phase's calls.
func fromStore(store *evidence.Store, t evidence.Transport) ([]string, any) {
	var tools []string
	var caps any
	for _, c := range store.Calls() {
		if c.Transport != t || c.OtherAgent() {
			continue
		}
		switch {
		case c.Kind == evidence.KindToolsList && tools == nil:
			if names := plan.ToolNames(c.Result); len(names) > 0 {
				tools = names
			}
		case t == evidence.A2A && c.Kind == evidence.KindHTTPGet && tools == nil && c.Has(evidence.PurposeDiscovery):
			if card, err := a2a.ParseCard(c.Body, c.URL); err == nil {
				tools = card.Skills
			}
		case c.Kind == evidence.KindToolCall && c.Tool == "get_adcp_capabilities" && caps == nil && c.Has(evidence.PurposeValid):
			if o := spec.Observe(c, c.Tool, nil, false); o.Failure == "" && !o.Refused {
				caps = o.Payload
			}
		}
	}
	sort.Strings(tools)
	return tools, caps
}

// dispatcher makes the steps' calls. Each storyboard is one buyer's
// conversation: its calls with the run's credentials share one MCP session
// of its own (a seller may key its state and its rate limit on the
// session); a step overriding the credentials (auth: none, a random
// invalid key) gets a session of its own, and a refusal at its initialize
// is the step's evidence.
type dispatcher struct {
	cfg Config
	add func(evidence.Call) evidence.Call

	mu       sync.Mutex
	sessions map[string]*session
	// once and nonce make the run's A2A contextIds (contextID).
	once  sync.Once
	nonce string
	// cards are the agent cards by agent ("" is the agent under test),
	// each fetched once per run.
	cards map[string]*agentCard
}

// agentCard is an agent's card, fetched on its first A2A call.
type agentCard struct {
	once sync.Once
	card a2a.Card
	call evidence.Call
	err  error
}

// session is one storyboard's MCP session, dialled on its first call.
type session struct {
	once    sync.Once
	s       *mcp.Session
	dialErr evidence.Call
}

func (d *dispatcher) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.sessions {
		if s.s != nil {
			_ = s.s.Close()
		}
	}
	d.sessions = nil
}

// record records c and returns it as recorded.
func (d *dispatcher) record(c evidence.Call) evidence.Call {
	if d.add != nil {
		return d.add(c)
	}
	return c
}

// entry returns (*m)[key], made (a zero T) under d.mu on first use.
func entry[T any](d *dispatcher, m *map[string]*T, key string) *T {
	d.mu.Lock()
	defer d.mu.Unlock()
	if *m == nil {
		*m = map[string]*T{}
	}
	v, ok := (*m)[key]
	if !ok {
		v = new(T)
		(*m)[key] = v
	}
	return v
}

// shared returns the storyboard's session with agent ("" is the agent
// under test), dialled with cfg on first use.
func (d *dispatcher) shared(ctx context.Context, storyboardID, agent string, cfg mcp.Config) (*mcp.Session, *evidence.Call) {
	key := sessionKey(storyboardID, agent)
	s := entry(d, &d.sessions, key)
	s.once.Do(func() {
		sess, init, err := mcp.Dial(ctx, cfg, evidence.StoryboardPrefix+key+"#initialize")
		init.Agent = agent
		init = d.record(init)
		if err != nil {
			s.dialErr = init
			if s.dialErr.HarnessError == "" {
				s.dialErr.HarnessError = err.Error()
			}
			return
		}
		s.s = sess
	})
	if s.s == nil {
		c := s.dialErr
		return nil, &c
	}
	return s.s, nil
}

// sessionKey names a storyboard's session with agent: the storyboard's id
// for the agent under test, "<id>@<agent>" for another.
func sessionKey(storyboardID, agent string) string {
	if agent == "" {
		return storyboardID
	}
	return storyboardID + "@" + agent
}

// end closes a storyboard's sessions, with every agent, once the
// storyboard is done.
func (d *dispatcher) end(storyboardID string) {
	d.mu.Lock()
	var done []*session
	for k, s := range d.sessions {
		if k == storyboardID || strings.HasPrefix(k, storyboardID+"@") {
			done = append(done, s)
			delete(d.sessions, k)
		}
	}
	d.mu.Unlock()
	for _, s := range done {
		if s.s != nil {
			_ = s.s.Close()
		}
	}
}

// agent returns the run's agent name.
func (d *dispatcher) agent(name string) (Agent, bool) {
	for _, a := range d.cfg.Agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// Call sends one AdCP task.
func (d *dispatcher) Call(ctx context.Context, req storyboard.Request) *spec.Observation {
	override := req.Auth != nil && (req.Auth.None || req.Auth.ValueStrategy != "")
	var call evidence.Call
	switch {
	case req.Agent != "":
		a, ok := d.agent(req.Agent)
		switch {
		case !ok:
			call = evidence.Call{ProbeID: req.ProbeID, Transport: evidence.MCP, Tool: req.Task, Kind: evidence.KindToolCall,
				HarnessError: "the run names no agent " + req.Agent}
		case a.Transport() == evidence.A2A:
			call = d.callA2A(ctx, req, req.Agent, a.A2A, override)
		default:
			call = d.callMCP(ctx, req, a.MCP, override)
		}
		call.Agent = req.Agent
	case req.Live:
		call = d.callLive(ctx, req)
	case d.cfg.MCP.Endpoint == "":
		call = d.callA2A(ctx, req, "", d.cfg.A2A, override)
	default:
		call = d.callMCP(ctx, req, d.cfg.MCP, override)
	}
	if b, err := json.Marshal(req.Args); err == nil {
		call.Arguments = wire.RedactJSON(b)
	}
	if v, ok := req.Args["context"]; ok {
		call.Context, _ = json.Marshal(v)
	}
	call.Credential = credentialName(req.Auth, override)
	if req.Live {
		call.Credential = "live"
		if st := refusal(call); st != 0 {
			// Like a refusal of the run's own credential: the step is
			// an error, not a verdict on the controller's gate.
			call.HarnessError = fmt.Sprintf("the seller refused the live-mode principal's credential (--live-bearer-env) with HTTP %d: the step proves nothing about what it does for a live account", st)
		}
	}
	return spec.Observe(d.record(call), req.Task, req.Args, override)
}

func (d *dispatcher) callMCP(ctx context.Context, req storyboard.Request, cfg mcp.Config, override bool) evidence.Call {
	if !override {
		s, failed := d.shared(ctx, req.Storyboard, req.Agent, cfg)
		if failed != nil {
			c := *failed
			c.ProbeID, c.Tool, c.Kind = req.ProbeID, req.Task, evidence.KindToolCall
			return c
		}
		return s.CallTool(ctx, req.ProbeID, req.Task, req.Args)
	}
	cfg.BearerToken, cfg.Header = bogus(req.Auth)
	return callOwnSession(ctx, cfg, req)
}

// callOwnSession sends req on an MCP session of its own, made with cfg's
// credentials. A refusal at initialize answers the step: the credential
// was rejected before any tool was reached.
func callOwnSession(ctx context.Context, cfg mcp.Config, req storyboard.Request) evidence.Call {
	s, init, err := mcp.Dial(ctx, cfg, req.ProbeID+"#initialize")
	if err != nil {
		init.ProbeID, init.Tool, init.Kind = req.ProbeID, req.Task, evidence.KindToolCall
		return init
	}
	defer s.Close()
	return s.CallTool(ctx, req.ProbeID, req.Task, req.Args)
}

// refusal is the HTTP status of a call refused for its credential (401),
// or 0.
func refusal(c evidence.Call) int {
	st := c.HTTPStatus
	if n := len(c.Exchanges); st == 0 && n > 0 {
		st = c.Exchanges[n-1].Status
	}
	if st == http.StatusUnauthorized {
		return st
	}
	return 0
}

// callLive sends a step as the live-mode principal: its token alone as
// "Authorization: Bearer", none of the run's --header values, on an MCP
// session (an A2A client) of its own. A refusal of that credential is
// graded like one of the run's own (the step is no auth probe).
func (d *dispatcher) callLive(ctx context.Context, req storyboard.Request) evidence.Call {
	if d.cfg.LiveBearerToken == "" {
		return evidence.Call{ProbeID: req.ProbeID, Transport: transport(d.cfg), Tool: req.Task, Kind: evidence.KindToolCall,
			HarnessError: "the step authenticates as a live-mode principal and the run has no live-mode credential"}
	}
	if d.cfg.MCP.Endpoint == "" {
		cfg := d.cfg.A2A
		card, failed, ok := d.discover(ctx, req, "", d.cfg.A2A)
		if !ok {
			return failed
		}
		cfg.BearerToken, cfg.Header = d.cfg.LiveBearerToken, nil
		return a2a.NewClient(cfg, card).Send(ctx, req.ProbeID, req.Task, req.Args)
	}
	cfg := d.cfg.MCP
	cfg.BearerToken, cfg.Header = d.cfg.LiveBearerToken, nil
	return callOwnSession(ctx, cfg, req)
}

// callA2A sends a step to agent's A2A face ("" is the agent under test's),
// reached with cfg.
func (d *dispatcher) callA2A(ctx context.Context, req storyboard.Request, agent string, cfg a2a.Config, override bool) evidence.Call {
	card, failed, ok := d.discover(ctx, req, agent, cfg)
	if !ok {
		return failed
	}
	client := a2a.NewClient(cfg, card)
	if override {
		// The card is public; the bogus credential goes to the task.
		cfg.BearerToken, cfg.Header = bogus(req.Auth)
		client = a2a.NewClient(cfg, card)
	} else {
		// One buyer's conversation, as over MCP one session: the
		// storyboard's calls share a contextId (a seller may key its
		// state and its rate limit on it).
		client = client.InContext(d.contextID(req.Storyboard, agent))
	}
	return client.Send(ctx, req.ProbeID, req.Task, req.Args)
}

// contextID is the A2A contextId of a storyboard's conversation with
// agent: unique to the run, so two runs against one seller never share
// one.
func (d *dispatcher) contextID(storyboardID, agent string) string {
	d.once.Do(func() {
		b := make([]byte, 6)
		_, _ = rand.Read(b) // never fails
		d.nonce = hex.EncodeToString(b)
	})
	return "adcp-conform-" + d.nonce + "-" + sessionKey(storyboardID, agent)
}

// cardProbeID is the probe ID of the fetch of agent's card: "storyboard/card"
// for the agent under test, "storyboard/card@<agent>" for another.
func cardProbeID(agent string) string {
	return evidence.StoryboardPrefix + sessionKey("card", agent)
}

// discover fetches agent's card (reached with cfg) once per run, recording
// the fetch as the agent's; when it cannot be had it returns the call that
// answers req instead, and false.
func (d *dispatcher) discover(ctx context.Context, req storyboard.Request, agent string, cfg a2a.Config) (a2a.Card, evidence.Call, bool) {
	ac := entry(d, &d.cards, agent)
	ac.once.Do(func() {
		ac.card, ac.call, ac.err = a2a.Discover(ctx, cfg, cardProbeID(agent))
		ac.call.Agent = agent
		ac.call = d.record(ac.call)
	})
	if ac.err != nil {
		c := ac.call
		c.ProbeID, c.Tool, c.Kind = req.ProbeID, req.Task, evidence.KindToolCall
		if c.HarnessError == "" {
			c.HarnessError = ac.err.Error()
		}
		return a2a.Card{}, c, false
	}
	return ac.card, evidence.Call{}, true
}

// Get fetches a well-known document: a path on the agent's origin, or a
// full URL named by an earlier reply (fetched without the run's headers,
// https and public hosts only unless it is the agent's own origin).
func (d *dispatcher) Get(ctx context.Context, probeID, path string) *spec.Observation {
	cfg := d.cfg.MCP
	base := cfg.Endpoint
	a2aFace := base == ""
	if a2aFace {
		// The A2A face's origin is the agent's: its documents are
		// same-origin fetches (the run's headers go there, nowhere else).
		base = d.cfg.A2A.BaseURL
		cfg = mcp.Config{Endpoint: base, Header: d.cfg.A2A.Header, Timeout: d.cfg.A2A.Timeout, Limits: d.cfg.A2A.Limits,
			Guard: d.cfg.A2A.Guard, Recorder: d.cfg.A2A.Recorder}
	}
	url := path
	if strings.HasPrefix(path, "/") {
		url = origin(base) + path
	}
	c := mcp.Get(ctx, cfg, probeID, url)
	if a2aFace {
		c.Transport = evidence.A2A
	}
	return spec.Observe(d.record(c), "", nil, true)
}

// FetchPublic GETs a public URL the agent named (its OAuth discovery graph, a preview) under the
// OAuth setup kit's fetch policy (probes/fetch) and records it.
func (d *dispatcher) FetchPublic(ctx context.Context, probeID, url string, opt spec.FetchOptions) *spec.Response {
	p := fetch.Policy{Local: d.cfg.Env.LocalFetch, NoIPLiterals: opt.NoIPLiterals, DenyHosts: opt.DenyHosts,
		TLS: d.cfg.TLS, Limits: d.cfg.MCP.Limits, Recorder: d.cfg.MCP.Recorder, Transport: evidence.MCP}
	g := d.cfg.MCP.Guard
	if d.cfg.MCP.Endpoint == "" {
		p.Limits, p.Recorder, p.Transport, g = d.cfg.A2A.Limits, d.cfg.A2A.Recorder, evidence.A2A, d.cfg.A2A.Guard
	}
	if g != nil {
		// The kit's policy is stricter than the run's guard; it resolves
		// and dials over the same network.
		n := g.Net()
		p.Resolve, p.Dial = n.Resolve, n.Dial
	}
	c, r := fetch.Get(ctx, p, probeID, url)
	d.record(c)
	// The walk reads the document as the evidence holds it.
	red := d.cfg.Store.Redactor()
	o := spec.ResponseFrom(r)
	o.Body, o.Location, o.Blocked, o.Failed = red.Bytes(o.Body), red.String(o.Location), red.String(o.Blocked), red.String(o.Failed)
	return o
}

func origin(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
		return u[:i+3+j]
	}
	return u
}

// bogus returns the credentials a negative auth probe sends: none, or a
// per-run random value of the requested shape (storyboard-schema.yaml,
// step `auth`).
func bogus(a *spec.Auth) (token string, h http.Header) {
	if a == nil || a.None {
		return "", nil
	}
	switch a.ValueStrategy {
	case "random_invalid_jwt":
		enc := base64.RawURLEncoding
		return enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." +
			enc.EncodeToString([]byte(`{"sub":"invalid"}`)) + "." + enc.EncodeToString(random(32)), nil
	case "random_invalid":
		if a.Type == "basic" {
			creds := hex.EncodeToString(random(8)) + ":" + hex.EncodeToString(random(16))
			return "", http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(creds))}}
		}
		return "invalid-" + hex.EncodeToString(random(32)), nil
	}
	return "", nil
}

func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func credentialName(a *spec.Auth, override bool) string {
	switch {
	case !override:
		return "configured"
	case a.None:
		return "none"
	}
	return "random"
}
