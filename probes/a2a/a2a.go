// Package a2a is the harness's own A2A client: JSON-RPC over net/http on the
// capturing transport, for A2A 0.3 (message/send, message/stream) and 1.0
// (SendMessage, SendStreamingMessage, with the A2A-Version header and the
// AdCP profile's extension activation). Every call comes back as an
// evidence.Call holding the raw (redacted) bytes the seller sent; a typed
// SDK would drop what the rules judge (a2a-go v0.3.3 decodes only
// 0.3 and discards JSON-RPC error data).
//
//	card, call, err := a2a.Discover(ctx, cfg, "a2a/card")
//	c := a2a.NewClient(cfg, card)
//	reply := c.Send(ctx, "a2a/get_products/valid", "get_products", args)
package a2a

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// The A2A protocol versions the client speaks.
const (
	V03 = "0.3"
	V10 = "1.0"
)

// ExtensionURI is the AdCP A2A profile extension (profile v3).
const ExtensionURI = "https://adcontextprotocol.org/extensions/adcp/v3"

// CardPath is where an agent card is published, relative to the base URL.
const CardPath = "/.well-known/agent-card.json"

// MaxCardBytes bounds an agent card.
const MaxCardBytes = 1 << 20

// DefaultTimeout bounds one call when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Config says how to reach the seller's A2A face.
type Config struct {
	// BaseURL is what the user gave with --a2a; the card is at
	// BaseURL + CardPath.
	BaseURL     string
	BearerToken string
	// Token, when set, is where BearerToken comes from at run time (an
	// OAuth client, probes/auth): see wire.Transport.Token.
	Token    wire.TokenSource
	Header   http.Header
	Timeout  time.Duration
	Limits   wire.Limits
	Recorder *wire.Recorder
	// Guard is the run's connection policy: every request, first or a
	// redirect's hop, connects through it. nil is fetch.For(BaseURL): the
	// BaseURL's host is the run's only agent.
	Guard *fetch.Guard
}

func (c Config) guard() *fetch.Guard {
	if c.Guard != nil {
		return c.Guard
	}
	return fetch.For(c.BaseURL)
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c Config) redact(b []byte) []byte {
	out, _ := c.Limits.Redactor(nil, wire.Secrets(c.BearerToken, c.Header)...).Body(b, false)
	return out
}

func (c Config) transport() *wire.Transport {
	return &wire.Transport{Base: c.guard().Transport(), BearerToken: c.BearerToken, Token: c.Token, Header: c.Header, Limits: c.Limits, Recorder: c.Recorder}
}

// Card is what the harness reads from an agent card to drive the seller.
type Card struct {
	// Version is the dialect the client speaks to the interface, V03 or
	// V10: the version the chosen interface advertises, else the one the
	// card's shape implies (supportedInterfaces[] is 1.0's, a root url
	// 0.3's).
	Version string
	// Advertised is the protocolVersion the chosen interface (or a 0.3
	// card's root) gives, as received; "" when it gives none.
	Advertised string
	// Endpoint is the JSON-RPC interface URL the card names.
	Endpoint string
	// Skills are the skill ids that are strings.
	Skills []string
	// Extension is true when the card declares the AdCP profile extension.
	Extension bool
	// Streaming is capabilities.streaming.
	Streaming bool
}

// Discover fetches and reads the agent card. The card call is recorded
// either way; err says why the harness cannot drive the seller from it
// (unreachable, not JSON, no interface URL).
func Discover(ctx context.Context, cfg Config, probeID string) (Card, evidence.Call, error) {
	call := evidence.Call{ProbeID: probeID, Transport: evidence.A2A, Kind: evidence.KindHTTPGet, Method: "GET",
		URL: strings.TrimRight(cfg.BaseURL, "/") + CardPath, Purposes: []evidence.Purpose{evidence.PurposeDiscovery}}
	tctx, cancel := context.WithTimeout(ctx, cfg.timeout())
	defer cancel()
	cctx, capture := wire.WithCapture(tctx, probeID)
	call.Started = time.Now()
	defer func() { call.DurationMS = ms(time.Since(call.Started)) }()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, call.URL, nil)
	if err != nil {
		call.HarnessError = err.Error()
		return Card{}, call, err
	}
	req.Header.Set("Accept", "application/json")
	tr := cfg.transport()
	tr.BearerToken = "" // the card is public
	// The card is served at its well-known path (A2A-09): a redirect is
	// not followed, its 3xx is the reply (see fetch.NoRedirects).
	resp, err := fetch.Client(tr, fetch.NoRedirects).Do(req)
	if err != nil {
		call.HarnessError, call.Exchanges = err.Error(), capture.Exchanges()
		return Card{}, call, err
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, MaxCardBytes+1))
	_ = resp.Body.Close()
	_ = capture.Wait(tctx)
	call.Exchanges, call.HTTPStatus = capture.Exchanges(), resp.StatusCode
	if rerr != nil || len(body) > MaxCardBytes || !json.Valid(body) {
		return Card{}, call, fmt.Errorf("agent card %s: HTTP %d, not a JSON document", call.URL, resp.StatusCode)
	}
	call.Body = cfg.redact(body)
	card, err := ParseCard(body, call.URL)
	return card, call, err
}

// KnownVersion returns the A2A version the card advertises for the chosen
// interface when the harness knows its wire format (V03 or V10), or ""
// when the card advertises another one: the version the rules that depend
// on it (task state spellings, part and envelope shapes) judge against. A
// card that gives no protocolVersion is read by its shape.
func (c Card) KnownVersion() string {
	if c.Advertised == "" || versionOf(c.Advertised) == c.Version {
		return c.Version
	}
	return ""
}

// versionOf maps a protocolVersion to the wire format it names: "0.3" and
// "0.3.x" are V03, "1", "1.0" and any "1.x" are V10 (A2A 1.x minors keep
// the 1.0 wire format); anything else is "".
func versionOf(v string) string {
	switch {
	case v == "0.3" || strings.HasPrefix(v, "0.3."):
		return V03
	case v == "1" || strings.HasPrefix(v, "1."):
		return V10
	}
	return ""
}

// ErrNoJSONRPC is ParseCard's error for a card that names interfaces, none
// of them JSON-RPC: the card is well formed, the harness cannot drive it.
var ErrNoJSONRPC = errors.New("agent card names no JSON-RPC interface (the harness drives JSON-RPC only)")

// ParseCard reads a card: a 1.0 card has supportedInterfaces[] (each with
// url, protocolBinding, protocolVersion); a 0.3 card has url with
// preferredTransport, protocolVersion and additionalInterfaces[]. Keys are
// matched exactly, as JSON is case-sensitive: a card spelling "URL" or
// "Skills" names no url and no skills. Of the JSON-RPC interfaces, a 1.0
// one is preferred, then a 0.3 one, then the first. A relative interface
// URL is resolved against the card's own URL.
func ParseCard(body []byte, cardURL string) (Card, error) {
	root, err := rawjson.ParseObject(body)
	if err != nil {
		return Card{}, fmt.Errorf("agent card: %w", err)
	}
	var c Card
	named := false // the card names an interface of some binding
	if ifaces, ok := objects(root, "supportedInterfaces"); ok && len(ifaces) > 0 {
		best := -1
		for _, i := range ifaces {
			u, binding, version := text(i, "url"), text(i, "protocolBinding"), text(i, "protocolVersion")
			if u == "" {
				continue
			}
			named = true
			if binding != "" && !strings.EqualFold(binding, "JSONRPC") {
				continue
			}
			rank := 0
			switch versionOf(version) {
			case V10:
				rank = 2
			case V03:
				rank = 1
			}
			if rank > best {
				best, c.Endpoint, c.Advertised = rank, u, version
			}
		}
		c.Version = V10
		if versionOf(c.Advertised) == V03 {
			c.Version = V03
		}
	} else if u := text(root, "url"); u != "" {
		named = true
		c.Version, c.Advertised = V03, text(root, "protocolVersion")
		if versionOf(c.Advertised) == V10 {
			c.Version = V10
		}
		if t := text(root, "preferredTransport"); t == "" || strings.EqualFold(t, "JSONRPC") {
			c.Endpoint = u
		} else if more, ok := objects(root, "additionalInterfaces"); ok {
			for _, i := range more {
				if strings.EqualFold(text(i, "transport"), "JSONRPC") && text(i, "url") != "" {
					c.Endpoint = text(i, "url")
					break
				}
			}
		}
	}
	if c.Endpoint == "" {
		if named {
			return Card{}, ErrNoJSONRPC
		}
		return Card{}, errors.New("agent card names no interface URL")
	}
	if base, err := url.Parse(cardURL); err == nil {
		if u, err := base.Parse(c.Endpoint); err == nil {
			c.Endpoint = u.String()
		}
	}
	if c.Endpoint == "" { // "//" resolves to nothing
		return Card{}, errors.New("agent card names no usable JSON-RPC interface URL")
	}
	skills, _ := objects(root, "skills")
	for _, s := range skills {
		if id, ok := stringMember(s, "id"); ok {
			c.Skills = append(c.Skills, id)
		}
	}
	caps := objectMember(root, "capabilities")
	exts, _ := objects(caps, "extensions")
	for _, e := range exts {
		if text(e, "uri") == ExtensionURI {
			c.Extension = true
		}
	}
	if v, ok := caps.Get("streaming"); ok && strings.TrimSpace(string(v)) == "true" {
		c.Streaming = true
	}
	return c, nil
}

// objectMember returns o[key] when it is an object, else nil.
func objectMember(o *rawjson.Object, key string) *rawjson.Object {
	v, ok := o.Get(key)
	if !ok {
		return nil
	}
	m, err := rawjson.ParseObject(v)
	if err != nil {
		return nil
	}
	return m
}

// objects returns the object items of the array o[key]; ok is false when
// the member is absent or not an array. Items that are not objects are
// left out.
func objects(o *rawjson.Object, key string) ([]*rawjson.Object, bool) {
	v, found := o.Get(key)
	if !found {
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		return nil, false
	}
	var out []*rawjson.Object
	for _, it := range items {
		if m, err := rawjson.ParseObject(it); err == nil {
			out = append(out, m)
		}
	}
	return out, true
}

// stringMember returns o[key] when it is a JSON string.
func stringMember(o *rawjson.Object, key string) (string, bool) {
	v, found := o.Get(key)
	if v = bytes.TrimSpace(v); !found || len(v) == 0 || v[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// text returns o[key] when it is a string, else "".
func text(o *rawjson.Object, key string) string {
	s, _ := stringMember(o, key)
	return s
}

// Client drives one seller's A2A interface.
type Client struct {
	cfg  Config
	card Card
	id   *atomic.Int64
	// contextID, when set, is sent as every message's contextId.
	contextID string
	// refusal, when set, is why no call goes to the card's interface.
	refusal string
}

// NewClient returns a client for the interface the card names.
//
// The credentials the run was given (the bearer token and the extra
// headers) go only to the origin the user named: when the card names an
// interface on another origin, the client calls it without them, so a card
// cannot steer the token to a host of its choosing. Nor can it steer the
// harness into the user's network: such an interface is not called at a
// loopback, private or link-local address (by literal, or by a name that
// resolves to one) unless the agent itself is on one.
func NewClient(cfg Config, card Card) *Client {
	c := &Client{cfg: cfg, card: card, id: new(atomic.Int64)}
	if !sameOrigin(cfg.BaseURL, card.Endpoint) {
		c.cfg.BearerToken, c.cfg.Header = "", nil
		if u, err := url.Parse(card.Endpoint); err == nil {
			if why := wire.AddressRefusal(u, cfg.BaseURL); why != "" {
				c.refusal = "refused to call the interface the card names on another origin: " + why
			}
		}
	}
	return c
}

// sameOrigin reports whether two URLs share scheme, host and port.
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) && port(ua) == port(ub)
}

// InContext returns a client whose messages all carry contextId id: one A2A
// conversation (a seller may, for example, rate-limit per context).
func (c *Client) InContext(id string) *Client {
	cc := *c
	cc.contextID = id
	return &cc
}

// Card returns the card the client follows.
func (c *Client) Card() Card { return c.card }

// Send invokes skill with input through the non-streaming method.
func (c *Client) Send(ctx context.Context, probeID, skill string, input any, purposes ...evidence.Purpose) evidence.Call {
	method := "message/send"
	if c.card.Version == V10 {
		method = "SendMessage"
	}
	return c.call(ctx, probeID, method, skill, input, false, purposes)
}

// Stream invokes skill with input through the streaming method and records
// every event until the stream ends or the call times out.
func (c *Client) Stream(ctx context.Context, probeID, skill string, input any, purposes ...evidence.Purpose) evidence.Call {
	method := "message/stream"
	if c.card.Version == V10 {
		method = "SendStreamingMessage"
	}
	return c.call(ctx, probeID, method, skill, input, true, purposes)
}

// Invocation returns the JSON-RPC params of an AdCP invocation: one
// DataPart {"skill", "input"} in a user message, in the version's wire shape.
func Invocation(version, skill string, input any, contextID string) map[string]any {
	data := map[string]any{"skill": skill, "input": input}
	var msg map[string]any
	if version == V10 {
		msg = map[string]any{"messageId": newID(), "role": "ROLE_USER", "parts": []any{map[string]any{"data": data}}}
	} else {
		msg = map[string]any{"kind": "message", "messageId": newID(), "role": "user",
			"parts": []any{map[string]any{"kind": "data", "data": data}}}
	}
	if contextID != "" {
		msg["contextId"] = contextID
	}
	return map[string]any{"message": msg}
}

func (c *Client) call(ctx context.Context, probeID, method, skill string, input any, stream bool, purposes []evidence.Purpose) evidence.Call {
	call := evidence.Call{ProbeID: probeID, Transport: evidence.A2A, Kind: evidence.KindToolCall, Method: method, Tool: skill,
		URL: c.card.Endpoint, Purposes: purposes, Started: time.Now()}
	defer func() { call.DurationMS = ms(time.Since(call.Started)) }()
	if c.refusal != "" {
		call.HarnessError = c.refusal
		return call
	}
	id := c.id.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": Invocation(c.card.Version, skill, input, c.contextID)})
	if err != nil {
		call.HarnessError = err.Error()
		return call
	}
	tctx, cancel := context.WithTimeout(ctx, c.cfg.timeout())
	defer cancel()
	cctx, capture := wire.WithCapture(tctx, probeID)
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, c.card.Endpoint, bytes.NewReader(body))
	if err != nil {
		call.HarnessError = err.Error()
		return call
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if c.card.Version == V10 {
		req.Header.Set("A2A-Version", V10)
		if c.card.Extension {
			req.Header.Set("A2A-Extensions", ExtensionURI)
		}
	} else if c.card.Extension {
		req.Header.Set("X-A2A-Extensions", ExtensionURI)
	}
	// JSON-RPC over HTTP gives a redirect no meaning: only a 307 or 308
	// within the interface's origin, which keeps the request, is followed
	// (see fetch.SameOriginRedirects); anything else is the reply.
	resp, err := fetch.Client(c.cfg.transport(), fetch.SameOriginRedirects).Do(req)
	if err != nil {
		call.Exchanges = capture.Exchanges()
		switch {
		case errors.Is(tctx.Err(), context.DeadlineExceeded):
			call.HarnessError = "no response within the call timeout (raise --timeout for a slow seller)"
		default:
			call.HarnessError = err.Error()
		}
		return call
	}
	// The transport bounds what it reads and records; reading to the end
	// (or the timeout) lets a stream's every event land in the capture.
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	_ = capture.Wait(tctx)
	call.HTTPStatus = resp.StatusCode
	call.Exchanges = capture.Exchanges()
	call.Message = c.lastResponse(call.Exchanges, id)
	for _, x := range call.Exchanges {
		if d := x.Dropped; call.Message == nil && d != nil && (d.BodyBytes > 0 || d.Events > 0) {
			call.HarnessError = fmt.Sprintf("the run's evidence budget (--max-total) was spent: the reply was not kept (%d body bytes, %d events)", d.BodyBytes, d.Events)
		}
	}
	if call.Message == nil && call.HarnessError == "" && !stream && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		// Headers came, the JSON-RPC response did not: the call proves
		// nothing. (A stream cut by the timeout stays evidence for A2A-11.)
		call.HarnessError = fmt.Sprintf("no JSON-RPC response within the call timeout (HTTP %d; raise --timeout for a slow seller)", call.HTTPStatus)
	}
	if call.Message != nil {
		if result, rpcErr, _, serr := wire.SplitResponse(call.Message); serr == nil {
			call.Result, call.RPCError = result, rpcErr
		}
	}
	return call
}

// lastResponse returns the JSON-RPC response to request id: the body of a
// JSON reply, or the data of the last SSE event answering id (a stream's
// final word).
func (c *Client) lastResponse(xs []wire.Exchange, id int64) json.RawMessage {
	want := json.RawMessage(fmt.Sprint(id))
	var last json.RawMessage
	for _, x := range xs {
		if x.SSE {
			for _, ev := range x.Events {
				if isResponse([]byte(ev.Data), want) {
					last = json.RawMessage(ev.Data)
				}
			}
			continue
		}
		if isResponse(x.ResponseBody, want) {
			last = json.RawMessage(x.ResponseBody)
		}
	}
	if last == nil {
		return nil
	}
	return c.cfg.redact(last)
}

func isResponse(b []byte, id json.RawMessage) bool {
	result, rpcErr, got, err := wire.SplitResponse(b) // exact keys: "ID" is not "id"
	if err != nil || (result == nil && rpcErr == nil) {
		return false
	}
	got = bytes.TrimSpace(got)
	return got == nil || string(got) == string(id) || string(got) == "null"
}

// Events returns the JSON-RPC responses a streaming call received, in order,
// as recorded (redacted).
func Events(c evidence.Call) []json.RawMessage {
	var out []json.RawMessage
	for _, x := range c.Exchanges {
		for _, ev := range x.Events {
			if ev.HasData && json.Valid([]byte(ev.Data)) {
				out = append(out, json.RawMessage(ev.Data))
			}
		}
	}
	return out
}

// State returns the normalized task state of a result or stream event, ""
// when it has none.
func State(result []byte) string {
	x, _ := extract.A2A(result)
	return x.State
}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "adcp-conform-" + hex.EncodeToString(b)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
