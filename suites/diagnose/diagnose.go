// Package diagnose walks a seller's authentication as a client would and
// says why a token is refused: the call without a credential and its
// challenge (RFC 6750 §3, RFC 9728 §5.1), the protected-resource metadata
// (RFC 9728), the authorization-server metadata (RFC 8414), the token
// request (RFC 6749 §4.4) and the token's claims when it is a JWT (read
// without verifying), the call with the token; then ranks the hypotheses
// the evidence supports, the most likely first. Apart from it, it walks the
// seller's signing-key chain: capabilities → brand.json → the agent's
// jwks_uri → keys with adcp_use. Every fetch goes through the fetch policy
// the storyboards use (probes/fetch: https and public addresses only unless
// Config.LocalFetch), every call through the run's guard.
//
//	rep := diagnose.Run(ctx, diagnose.Config{MCP: mcp.Config{Endpoint: url, BearerToken: tok, Guard: g}})
//	_ = rep.WriteText(os.Stdout)
//	os.Exit(rep.ExitCode()) // 0 nothing wrong, 1 a cause found, 3 the seller was not reached
//
// It is the engine of `adcp-conform diagnose`; nothing in it judges a rule.
package diagnose

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/auth"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// Config says what to diagnose and with which credential.
type Config struct {
	// MCP is the seller's MCP endpoint and its credential (a BearerToken
	// given, or none); its Guard is the run's connection policy. When its
	// Endpoint is "", A2A is diagnosed instead.
	MCP mcp.Config
	A2A a2a.Config
	// Source, when set, obtains the credential with the OAuth client
	// credentials grant (TokenURL is its token endpoint; Scope, Resources
	// and Audience what it asks for); the BearerToken of MCP or A2A is
	// then ignored.
	Source    *auth.Source
	TokenURL  string
	Scope     string
	Resources []string
	Audience  string
	// LocalFetch is --allow-local-fetch: the discovery documents, brand.json
	// and the JWKS may be http and on loopback or private addresses (never
	// link-local).
	LocalFetch bool
	// TLS is the client TLS configuration of those fetches (--ca-cert).
	TLS *tls.Config
	// Task is the task called to see whether the credential is taken;
	// "" picks one the seller lists that needs a credential.
	Task string
	// BrandJSON is the operator-configured brand.json URL, read when the
	// capabilities name none.
	BrandJSON string
	// Now is the clock the token's claims are read against; nil is
	// time.Now.
	Now func() time.Time
}

// Mark is what a line of a step found.
type Mark string

// The marks.
const (
	OK   Mark = "ok"   // as expected
	Bad  Mark = "bad"  // not as expected
	Info Mark = "info" // read, nothing expected of it
)

// Line is one thing a step read, and what was expected of it.
type Line struct {
	Mark     Mark   `json:"mark"`
	What     string `json:"what"`
	Read     string `json:"read"`
	Expected string `json:"expected,omitempty"`
}

// Step is one step of a walk.
type Step struct {
	Title string `json:"title"`
	Lines []Line `json:"lines,omitempty"`
}

func (s *Step) add(m Mark, what, read, expected string) {
	s.Lines = append(s.Lines, Line{Mark: m, What: what, Read: read, Expected: expected})
}

// Report is a diagnosis.
type Report struct {
	Endpoint  string `json:"endpoint"`
	Transport string `json:"transport"`
	// Credential is what the walk was given: none, a bearer token, OAuth
	// client credentials.
	Credential string `json:"credential"`
	// Now is the clock the token was read against.
	Now time.Time `json:"now"`
	// Handshake is the authentication walk, step by step.
	Handshake []Step `json:"handshake"`
	// Causes are the hypotheses the evidence supports, the most likely
	// first; RuledOut those it rules out.
	Causes   []Hypothesis `json:"causes"`
	RuledOut []Hypothesis `json:"ruled_out,omitempty"`
	// Keys is the signing-key chain, step by step.
	Keys []Step `json:"keys"`
	// Notes are remarks that are no cause.
	Notes []string `json:"notes,omitempty"`
	// Unreachable says why the harness could not reach the seller at all.
	Unreachable string `json:"unreachable,omitempty"`
}

// ExitCode is 3 when the seller was not reached, 1 when a likely cause was
// found, else 0.
func (r *Report) ExitCode() int {
	switch {
	case r.Unreachable != "":
		return 3
	case slices.ContainsFunc(r.Causes, func(h Hypothesis) bool { return h.Verdict == Likely }):
		return 1
	}
	return 0
}

// walker is one diagnosis under way.
type walker struct {
	cfg    Config
	now    time.Time
	red    *wire.Redactor
	policy fetch.Policy
	rep    *Report
	f      facts
	caps   any // the capabilities, decoded; nil when none were read
}

// clean makes a string the seller (or the network) wrote fit to print:
// the run's secrets redacted, control characters gone, at most max runes.
func (w *walker) clean(s string, max int) string {
	return wire.Sanitize(w.red.String(s), max)
}

// Run diagnoses the seller cfg names. It never fails: what it could not do
// is in the report.
func Run(ctx context.Context, cfg Config) *Report {
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	var live *wire.SecretSet
	if cfg.Source != nil {
		live = cfg.Source.Secrets()
	}
	secrets := append(wire.Secrets(cfg.MCP.BearerToken, cfg.MCP.Header), wire.Secrets(cfg.A2A.BearerToken, cfg.A2A.Header)...)
	w := &walker{cfg: cfg, now: now().UTC(), red: wire.NewLiveRedactor(secrets, live, nil)}
	for _, c := range []*wire.Limits{&w.cfg.MCP.Limits, &w.cfg.A2A.Limits} {
		c.Secrets = append(slices.Clip(c.Secrets), secrets...)
		if live != nil {
			c.LiveSecrets = live
		}
	}
	w.policy = fetch.Policy{Local: cfg.LocalFetch, TLS: cfg.TLS, Limits: wire.Limits{Secrets: secrets, LiveSecrets: live}}
	if g := cfg.MCP.Guard; g != nil {
		n := g.Net()
		w.policy.Resolve, w.policy.Dial = n.Resolve, n.Dial
	} else if g := cfg.A2A.Guard; g != nil {
		n := g.Net()
		w.policy.Resolve, w.policy.Dial = n.Resolve, n.Dial
	}
	w.rep = &Report{Endpoint: w.clean(w.endpoint(), 300), Transport: "mcp", Now: w.now}
	if cfg.MCP.Endpoint == "" {
		w.rep.Transport = "a2a"
	}
	w.f = facts{endpoint: w.endpoint(), now: w.now, tokenURL: cfg.TokenURL, scopeAsked: cfg.Scope, resourcesAsked: cfg.Resources, audienceAsked: cfg.Audience}
	switch {
	case cfg.Source != nil:
		w.rep.Credential, w.f.credential = "OAuth client credentials", credOAuth
	case cfg.MCP.BearerToken != "" || cfg.A2A.BearerToken != "":
		w.rep.Credential, w.f.credential = "a bearer token", credBearer
	default:
		w.rep.Credential = "none"
	}
	w.walk(ctx)
	w.rep.Causes, w.rep.RuledOut = rank(w.f)
	w.keys(ctx)
	// The key chain's causes come after the handshake's of their verdict.
	slices.SortStableFunc(w.rep.Causes, func(a, b Hypothesis) int { return tier(a.Verdict) - tier(b.Verdict) })
	w.cleanReport()
	return w.rep
}

// cleanReport passes every string of the report through clean once more:
// the hypotheses quote the facts (the seller's strings, the token's
// claims), which must show no secret and no control character either.
func (w *walker) cleanReport() {
	r := w.rep
	each := func(ss []string) {
		for i := range ss {
			ss[i] = w.clean(ss[i], 0)
		}
	}
	for _, hs := range [][]Hypothesis{r.Causes, r.RuledOut} {
		for i := range hs {
			hs[i].Title, hs[i].Fix = w.clean(hs[i].Title, 0), w.clean(hs[i].Fix, 0)
			each(hs[i].Evidence)
		}
	}
	for _, steps := range [][]Step{r.Handshake, r.Keys} {
		for i := range steps {
			steps[i].Title = w.clean(steps[i].Title, 0)
			for j := range steps[i].Lines {
				l := &steps[i].Lines[j]
				l.What, l.Read, l.Expected = w.clean(l.What, 0), w.clean(l.Read, 0), w.clean(l.Expected, 0)
			}
		}
	}
	each(r.Notes)
	r.Unreachable = w.clean(r.Unreachable, 0)
}

// endpoint is the URL the credential is for: the MCP endpoint, or the
// A2A base URL.
func (w *walker) endpoint() string {
	if w.cfg.MCP.Endpoint != "" {
		return w.cfg.MCP.Endpoint
	}
	return w.cfg.A2A.BaseURL
}

func (w *walker) walk(ctx context.Context) {
	// 1. The call without a credential.
	step := Step{Title: "the call without a credential"}
	w.f.noCred = w.calls(ctx, &step, false)
	w.rep.Handshake = append(w.rep.Handshake, step)
	if nc := w.f.noCred; nc.failure != "" && nc.status == 0 {
		w.rep.Unreachable = w.clean(nc.failure, 400)
		return
	}
	// 2 and 3. The discovery documents.
	w.discovery(ctx)
	// 4. The token, and what it says of itself.
	tok := w.token(ctx)
	if tok == "" {
		if w.f.credential == credNone {
			w.rep.Notes = append(w.rep.Notes, "no credential was given (--bearer-env, or --oauth-token-url with its client): the token and the call with it were not tried")
		}
		return
	}
	// 5. The call with it.
	step = Step{Title: "the call with the token"}
	w.f.withCred = w.calls(ctx, &step, true, tok)
	w.rep.Handshake = append(w.rep.Handshake, step)
	// 6. The token's claims against what the seller and its documents say.
	if c := w.f.claims; c != nil {
		step = Step{Title: "the token's claims (a JWT, alg " + w.clean(orNone(c.Alg), 40) + ", read WITHOUT verifying its signature)"}
		w.claimLines(&step, c)
		w.rep.Handshake = append(w.rep.Handshake, step)
	}
}

// callFact is what one attempt (without or with the credential) got: the
// call that decided it (the first refused, else the last).
type callFact struct {
	label      string
	status     int
	challenges []Challenge
	rpcCode    int64
	adcpCode   string
	refused    bool
	// failure says the call got no answer.
	failure string
}

// refusalCodes are the AdCP error codes of a refused credential
// (authentication.mdx, "Error Responses"; the error-code catalogue).
var refusalCodes = []string{"AUTH_REQUIRED", "AUTH_MISSING", "AUTH_INVALID", "PERMISSION_DENIED", "INSUFFICIENT_PERMISSIONS"}

// preferredTasks are the tasks the credential is tried on, the first the
// seller lists: read-only tasks authentication.mdx lists as needing
// credentials (a full get_products last: it may be public).
var preferredTasks = []string{"get_media_buys", "list_creatives", "list_accounts", "get_media_buy_delivery", "get_products"}

// taskArgs are the arguments each is called with.
func taskArgs(task string) map[string]any {
	if task == "get_products" {
		return map[string]any{"brief": "adcp-conform diagnose: is the credential taken?"}
	}
	return map[string]any{}
}

// pickTask chooses the task among those listed.
func (w *walker) pickTask(listed []string) string {
	if w.cfg.Task != "" {
		return w.cfg.Task
	}
	for _, t := range preferredTasks {
		if slices.Contains(listed, t) {
			return t
		}
	}
	return preferredTasks[0]
}

// calls makes the attempt: MCP initialize, tools/list,
// get_adcp_capabilities and the task (A2A: the agent card, then the two
// tasks), stopping at the first refused or unanswered call.
func (w *walker) calls(ctx context.Context, step *Step, withCred bool, tok ...string) *callFact {
	var run []labelled
	if w.cfg.MCP.Endpoint != "" {
		cfg := w.cfg.MCP
		cfg.BearerToken, cfg.Token = "", nil
		if withCred {
			cfg.BearerToken = tok[0]
		} else {
			cfg.Header = withoutCredentials(cfg.Header)
		}
		run = w.mcpCalls(ctx, cfg, withCred)
	} else {
		cfg := w.cfg.A2A
		cfg.BearerToken, cfg.Token = "", nil
		if withCred {
			cfg.BearerToken = tok[0]
		} else {
			cfg.Header = withoutCredentials(cfg.Header)
		}
		run = w.a2aCalls(ctx, cfg, withCred)
	}
	var fact *callFact
	for _, l := range run {
		fact = w.factOf(l)
		w.describe(step, fact, withCred)
		if fact.refused || fact.failure != "" {
			break
		}
	}
	return fact
}

// withoutCredentials drops the headers that carry a credential from the
// user's extra headers.
func withoutCredentials(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		if !wire.SensitiveHeader(k) {
			out[k] = v
		}
	}
	return out
}

// labelled is a recorded call and what it was.
type labelled struct {
	label string
	call  evidence.Call
	t     extract.Transport
}

func (w *walker) mcpCalls(ctx context.Context, cfg mcp.Config, withCred bool) []labelled {
	tag := "diagnose/no-credential/"
	if withCred {
		tag = "diagnose/credential/"
	}
	s, init, err := mcp.Dial(ctx, cfg, tag+"initialize")
	out := []labelled{{"initialize", init, extract.TransportMCP}}
	if err != nil {
		if out[0].call.HarnessError == "" && out[0].call.HTTPStatus == 0 {
			out[0].call.HarnessError = err.Error()
		}
		return out
	}
	defer s.Close()
	list := s.ListTools(ctx, tag+"tools/list")
	out = append(out, labelled{"tools/list", list, extract.TransportMCP})
	if w.factOf(out[1]).refused {
		return out
	}
	var listed []string
	var tools struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if json.Unmarshal(list.Result, &tools) == nil {
		for _, t := range tools.Tools {
			listed = append(listed, t.Name)
		}
	}
	caps := s.CallTool(ctx, tag+"get_adcp_capabilities", "get_adcp_capabilities", map[string]any{})
	out = append(out, labelled{"tools/call get_adcp_capabilities", caps, extract.TransportMCP})
	w.readCaps(caps.Message, extract.TransportMCP)
	if w.factOf(out[2]).refused {
		return out
	}
	task := w.pickTask(listed)
	c := s.CallTool(ctx, tag+task, task, taskArgs(task))
	return append(out, labelled{"tools/call " + task, c, extract.TransportMCP})
}

func (w *walker) a2aCalls(ctx context.Context, cfg a2a.Config, withCred bool) []labelled {
	tag := "diagnose/no-credential/"
	if withCred {
		tag = "diagnose/credential/"
	}
	card, cc, err := a2a.Discover(ctx, cfg, tag+"card")
	out := []labelled{{"GET the agent card", cc, extract.TransportA2A}}
	if err != nil {
		if cc.HarnessError == "" && cc.HTTPStatus/100 == 2 {
			out[0].call.HarnessError = err.Error()
		}
		return out
	}
	client := a2a.NewClient(cfg, card)
	caps := client.Send(ctx, tag+"get_adcp_capabilities", "get_adcp_capabilities", map[string]any{})
	out = append(out, labelled{"get_adcp_capabilities", caps, extract.TransportA2A})
	w.readCaps(caps.Message, extract.TransportA2A)
	if w.factOf(out[1]).refused {
		return out
	}
	task := w.pickTask(card.Skills)
	return append(out, labelled{task, client.Send(ctx, tag+task, task, taskArgs(task)), extract.TransportA2A})
}

// readCaps keeps the first capabilities read.
func (w *walker) readCaps(msg json.RawMessage, t extract.Transport) {
	if w.caps != nil || len(msg) == 0 {
		return
	}
	out, err := extract.FromJSONRPCResponse(t, msg)
	if err != nil || out.Data == nil {
		return
	}
	var v any
	if json.Unmarshal(out.Data, &v) == nil {
		if _, ok := v.(map[string]any); ok {
			w.caps = v
		}
	}
}

// factOf reads one call: its status, its challenges, its JSON-RPC and
// AdCP error codes, and whether it refused the credential.
func (w *walker) factOf(l labelled) *callFact {
	c := l.call
	f := &callFact{label: l.label, status: c.HTTPStatus}
	if n := len(c.Exchanges); n > 0 {
		x := c.Exchanges[n-1]
		if f.status == 0 {
			f.status = x.Status
		}
		f.challenges = ParseChallenges(x.ResponseHeaders.Values("WWW-Authenticate"))
	}
	if f.status == 0 {
		f.failure = c.HarnessError
		if c.Blocked != "" {
			f.failure = "blocked by the fetch policy: " + c.Blocked
		}
		if f.failure == "" {
			f.failure = "no answer"
		}
		return f
	}
	var rpc struct {
		Code int64 `json:"code"`
	}
	if len(c.RPCError) > 0 && json.Unmarshal(c.RPCError, &rpc) == nil {
		f.rpcCode = rpc.Code
	}
	if len(c.Message) > 0 {
		if out, err := extract.FromJSONRPCResponse(l.t, c.Message); err == nil && out.Error != nil {
			f.adcpCode = out.Error.Code
		}
	}
	f.refused = f.status == http.StatusUnauthorized || f.status == http.StatusForbidden || f.rpcCode == -32028 || slices.Contains(refusalCodes, f.adcpCode)
	if c.HarnessError != "" && !f.refused && f.status/100 == 2 && len(c.Message) == 0 {
		f.failure = c.HarnessError
	}
	return f
}

// answer renders what a call got: the status, its challenges, the error
// codes.
func (w *walker) answer(f *callFact) string {
	if f.status == 0 {
		return "no answer: " + w.clean(f.failure, 200)
	}
	parts := []string{fmt.Sprintf("HTTP %d", f.status)}
	for _, c := range f.challenges {
		parts = append(parts, "WWW-Authenticate: "+w.clean(challengeString(c), 300))
	}
	if f.status == http.StatusUnauthorized && len(f.challenges) == 0 {
		parts = append(parts, "no WWW-Authenticate")
	}
	if f.rpcCode != 0 {
		parts = append(parts, fmt.Sprintf("JSON-RPC error %d", f.rpcCode))
	}
	if f.adcpCode != "" {
		parts = append(parts, "AdCP error "+w.clean(f.adcpCode, 64))
	}
	if f.failure != "" {
		parts = append(parts, w.clean(f.failure, 200))
	}
	return strings.Join(parts, ", ")
}

// challengeString renders a challenge back in its header form, parameters
// in a stable order.
func challengeString(c Challenge) string {
	if v, ok := c.Params[""]; ok {
		return c.Scheme + " " + v
	}
	keys := make([]string, 0, len(c.Params))
	for k := range c.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var ps []string
	for _, k := range keys {
		ps = append(ps, fmt.Sprintf("%s=%q", k, c.Params[k]))
	}
	if len(ps) == 0 {
		return c.Scheme
	}
	return c.Scheme + " " + strings.Join(ps, ", ")
}

// describe adds a call's line to its step.
func (w *walker) describe(step *Step, f *callFact, withCred bool) {
	read := w.answer(f)
	switch {
	case f.status == 0:
		step.add(Bad, f.label, read, "an answer")
	case !withCred && f.status == http.StatusUnauthorized && len(f.challenges) == 0:
		step.add(Bad, f.label, read, "a WWW-Authenticate challenge with the 401 (RFC 9110 §11.6.1, RFC 6750 §3)")
	case !withCred && f.refused:
		step.add(OK, f.label, read, "a refusal with a Bearer challenge (RFC 6750 §3), naming resource_metadata (RFC 9728 §5.1)")
	case !withCred:
		step.add(Info, f.label, read, "")
	case f.refused:
		step.add(Bad, f.label, read, "the credential taken")
	default:
		step.add(OK, f.label, read, "the credential taken")
	}
}

// token obtains (or takes) the credential, and reads it.
func (w *walker) token(ctx context.Context) string {
	step := Step{Title: "the token"}
	defer func() { w.rep.Handshake = append(w.rep.Handshake, step) }()
	var tok string
	switch w.f.credential {
	case credNone:
		step.add(Info, "credential", "none given", "")
		return ""
	case credBearer:
		tok = w.cfg.MCP.BearerToken
		if w.cfg.MCP.Endpoint == "" {
			tok = w.cfg.A2A.BearerToken
		}
		step.add(Info, "credential", "a bearer token from --bearer-env (not shown)", "")
	case credOAuth:
		what := "POST " + w.clean(fetch.RedactURL(w.cfg.TokenURL), 300) + " (client credentials grant, RFC 6749 §4.4)"
		t, err := w.cfg.Source.Token(ctx)
		var ae *auth.Error
		switch {
		case errors.As(err, &ae):
			w.f.tokenErr = ae
			step.add(Bad, what, w.clean(ae.Error(), 400), "a Bearer access token (RFC 6749 §5.1)")
			return ""
		case err != nil:
			w.f.tokenErr = &auth.Error{URL: fetch.RedactURL(w.cfg.TokenURL), Reason: err.Error()}
			step.add(Bad, what, w.clean(err.Error(), 400), "a Bearer access token (RFC 6749 §5.1)")
			return ""
		}
		tok = t
		step.add(OK, what, "a Bearer access token (not shown)", "a Bearer access token (RFC 6749 §5.1)")
		if ads := w.f.advertisedTokenEndpoints(); len(ads) > 0 {
			m, exp := OK, "an endpoint the authorization server advertises (its token_endpoint)"
			if !slices.Contains(ads, w.cfg.TokenURL) {
				m = Bad
			}
			step.add(m, "token endpoint", w.clean(fetch.RedactURL(w.cfg.TokenURL), 300), exp+": "+w.clean(strings.Join(ads, ", "), 300))
		}
	}
	claims, err := DecodeJWT(tok)
	if err != nil {
		w.f.opaque = err.Error()
		step.add(Info, "form", err.Error()+": its claims cannot be read; the seller's answer is the evidence", "")
		return tok
	}
	w.f.claims = claims
	step.add(Info, "form", "a JWT: its claims are read after the call, WITHOUT verifying its signature", "")
	return tok
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// claimLines compares the claims with what the seller expects.
func (w *walker) claimLines(step *Step, c *Claims) {
	f := &w.f
	resources := f.expectedResources()
	switch {
	case !c.HasAud:
		step.add(Bad, "aud", "absent", "the seller's resource "+w.clean(strings.Join(resources, " or "), 300)+" (RFC 9068 §2.2, RFC 8707)")
	case f.audienceOK(c):
		step.add(OK, "aud", w.clean(strings.Join(c.Aud, ", "), 300), "the seller's resource "+w.clean(strings.Join(resources, " or "), 300))
	default:
		step.add(Bad, "aud", w.clean(strings.Join(c.Aud, ", "), 300), "the seller's resource "+w.clean(strings.Join(resources, " or "), 300)+" (RFC 9068 §2.2, RFC 8707)")
	}
	if issuers := f.expectedIssuers(); len(issuers) > 0 {
		m := OK
		if !c.HasIss || !slices.Contains(issuers, c.Iss) {
			m = Bad
		}
		step.add(m, "iss", w.clean(orNone(c.Iss), 300), "an authorization server the seller names: "+w.clean(strings.Join(issuers, ", "), 300))
	} else {
		step.add(Info, "iss", w.clean(orNone(c.Iss), 300), "")
	}
	switch {
	case c.Exp == nil:
		step.add(Info, "exp", "absent", "")
	case !f.now.Before(*c.Exp):
		step.add(Bad, "exp", fmt.Sprintf("%s, %s ago", c.Exp.Format(time.RFC3339), f.now.Sub(*c.Exp).Round(time.Second)), "later than now, "+f.now.Format(time.RFC3339)+" (the harness's clock)")
	default:
		step.add(OK, "exp", fmt.Sprintf("%s, in %s", c.Exp.Format(time.RFC3339), c.Exp.Sub(f.now).Round(time.Second)), "later than now, "+f.now.Format(time.RFC3339)+" (the harness's clock)")
	}
	if t := c.Nbf; t != nil && t.After(f.now.Add(clockSkew)) {
		step.add(Bad, "nbf", t.Format(time.RFC3339), "no later than now, "+f.now.Format(time.RFC3339))
	}
	if t := c.Iat; t != nil {
		m := Info
		if t.After(f.now.Add(clockSkew)) {
			m = Bad
		}
		step.add(m, "iat", t.Format(time.RFC3339), "")
	}
	need, from := f.requiredScopes()
	switch {
	case !c.HasScope && len(need) == 0:
		step.add(Info, "scope", "absent", "")
	case len(need) == 0:
		step.add(Info, "scope", w.clean(strings.Join(c.Scopes, " "), 300), "")
	case len(missing(need, c.Scopes)) > 0:
		step.add(Bad, "scope", w.clean(orNone(strings.Join(c.Scopes, " ")), 300), w.clean(strings.Join(need, " "), 300)+" ("+from+")")
	default:
		step.add(OK, "scope", w.clean(strings.Join(c.Scopes, " "), 300), w.clean(strings.Join(need, " "), 300)+" ("+from+")")
	}
}

// clockSkew is the leeway given to iat and nbf in the future.
const clockSkew = time.Minute
