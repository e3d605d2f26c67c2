// Package mcp is the harness's MCP client: go-sdk sessions over the
// capturing transport, where every call comes back as an evidence.Call
// holding the raw bytes the seller sent — never the SDK's decoded view,
// which hides defects (it drops unknown members and lenient types). The SDK opens the session
// (initialize, the Mcp-Session-Id, the negotiated version), lists the tools
// and speaks MCP Tasks' custom methods; tools/call, the probes' workhorse,
// goes out as the harness's own JSON-RPC POST on that session (raw.go),
// which decodes nothing (see BenchmarkProbeOverhead for what it saves).
//
//	s, _, err := mcp.Dial(ctx, mcp.Config{Endpoint: url, BearerToken: token}, "mcp/initialize")
//	if err != nil { ... } // a *HarnessError: the seller could not be reached
//	defer s.Close()
//	call := s.CallTool(ctx, "mcp/get_products/valid", "get_products", args)
//	// call.Result is the raw `result` member; nil when absent
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// ProtocolVersion is the MCP protocol version the client pins, which also
// keeps the go-sdk from probing with the draft server/discover first.
const ProtocolVersion = "2025-06-18"

// DefaultTimeout bounds one call when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Config says how to reach the seller.
type Config struct {
	Endpoint    string
	BearerToken string
	// Token, when set, is where BearerToken comes from at run time (an
	// OAuth client, probes/auth): see wire.Transport.Token. A copy of the
	// configuration with another BearerToken (none, a random one) sends
	// that one.
	Token  wire.TokenSource
	Header http.Header
	// Timeout bounds each call (initialize included).
	Timeout  time.Duration
	Limits   wire.Limits
	Recorder *wire.Recorder
	// Guard is the run's connection policy: every request of the session
	// and of Get, first or a redirect's hop, connects through it. nil is
	// fetch.For(Endpoint): the Endpoint's host is the run's only agent.
	Guard *fetch.Guard
}

func (c Config) guard() *fetch.Guard {
	if c.Guard != nil {
		return c.Guard
	}
	return fetch.For(c.Endpoint)
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// HarnessError is a failure of the harness or the network: it proves
// nothing about the seller's conformance.
type HarnessError struct {
	Op  string
	Err error
}

func (e *HarnessError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *HarnessError) Unwrap() error { return e.Err }

// Session is one MCP session with the seller.
type Session struct {
	cfg Config
	cs  *sdk.ClientSession
	// hc is the session's capturing HTTP client; nextID numbers the
	// harness's own requests (raw.go).
	hc     *http.Client
	nextID atomic.Int64
	// Initialize is the recorded initialize exchange.
	Initialize evidence.Call
}

// Dial opens a session: initialize and the initialized notification,
// recorded under probeID. It returns a *HarnessError when the seller cannot
// be reached or does not complete the handshake in time; the recorded
// initialize call comes back either way (a refusal such as HTTP 401 is
// evidence too).
func Dial(ctx context.Context, cfg Config, probeID string) (*Session, evidence.Call, error) {
	tr := &wire.Transport{Base: cfg.guard().Transport(), BearerToken: cfg.BearerToken, Token: cfg.Token, Header: cfg.Header, Limits: cfg.Limits, Recorder: cfg.Recorder}
	client := sdk.NewClient(&sdk.Implementation{Name: "adcp-conform", Version: "0.1.0"}, &sdk.ClientOptions{
		Capabilities:   &sdk.ClientCapabilities{},
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	})
	registerTaskMethods(client) // MCP Tasks: see tasks.go
	// Streamable HTTP gives a redirect no meaning; a 307 or 308 within the
	// endpoint's origin (/mcp to /mcp/) still reaches the endpoint the
	// user named with the same request, and is followed. Anything else
	// is the reply (see fetch.SameOriginRedirects), so a seller cannot
	// send a probe — one without credentials above all, which no
	// cross-origin check would hold back — to another host.
	hc := fetch.Client(tr, fetch.SameOriginRedirects)
	hc.Transport = taskPatcher{next: hc.Transport}
	tctx, cancel := context.WithTimeout(ctx, cfg.timeout())
	defer cancel()
	cctx, capture := wire.WithCapture(tctx, probeID)
	started := time.Now()
	cs, err := connect(cctx, client, &sdk.StreamableClientTransport{Endpoint: cfg.Endpoint, HTTPClient: hc,
		DisableStandaloneSSE: true, MaxRetries: -1})
	call := record(tctx, cfg, capture, evidence.Call{ProbeID: probeID, Transport: evidence.MCP, Kind: evidence.KindInitialize,
		Method: "initialize", Purposes: []evidence.Purpose{evidence.PurposeDiscovery}}, started)
	if err != nil {
		return nil, call, &HarnessError{Op: "initialize " + cfg.Endpoint, Err: err}
	}
	return &Session{cfg: cfg, cs: cs, hc: hc, Initialize: call}, call, nil
}

// connectGrace is how long Dial waits, after its deadline, for the SDK's
// Connect to return on its own.
const connectGrace = 100 * time.Millisecond

// connect runs the SDK's Connect but returns by ctx's deadline (plus a short
// grace): a failed Connect can block for seconds more while the SDK tears
// the connection down (a best-effort notifications/cancelled POST to a
// seller that never answers). A session that arrives late is closed in the
// background.
func connect(ctx context.Context, client *sdk.Client, t sdk.Transport) (*sdk.ClientSession, error) {
	type result struct {
		cs  *sdk.ClientSession
		err error
	}
	done := make(chan result, 1)
	go func() {
		cs, err := client.Connect(ctx, t, &sdk.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
		done <- result{cs, err}
	}()
	select {
	case r := <-done:
		return r.cs, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-done:
		return r.cs, r.err
	case <-time.After(connectGrace):
		go func() {
			if r := <-done; r.cs != nil {
				_ = r.cs.Close()
			}
		}()
		return nil, fmt.Errorf("initialize: %w", ctx.Err())
	}
}

// Close ends the session.
func (s *Session) Close() error { return s.cs.Close() }

// CallTool sends tools/call and returns what came back, as raw bytes. The
// request goes out on the session as the harness's own JSON-RPC POST
// (raw.go), not through the SDK: the verdicts read the captured bytes only,
// and a reply the SDK cannot decode then costs nothing, not the session.
// Only a call with no HTTP response at all (refused, timed out) is a
// harness error.
func (s *Session) CallTool(ctx context.Context, probeID, tool string, args any, purposes ...evidence.Purpose) evidence.Call {
	tctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	cctx, capture := wire.WithCapture(tctx, probeID)
	started := time.Now()
	err := s.post(cctx, capture, "tools/call", map[string]any{"name": tool, "arguments": args})
	call := record(tctx, s.cfg, capture, evidence.Call{ProbeID: probeID, Transport: evidence.MCP, Kind: evidence.KindToolCall,
		Method: "tools/call", Tool: tool, Purposes: purposes}, started)
	if call.Message == nil && call.HTTPStatus == 0 && call.HarnessError == "" && err != nil {
		call.HarnessError = err.Error()
	}
	return call
}

// ListTools sends tools/list and returns the raw reply.
func (s *Session) ListTools(ctx context.Context, probeID string) evidence.Call {
	tctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	cctx, capture := wire.WithCapture(tctx, probeID)
	started := time.Now()
	_, err := s.cs.ListTools(cctx, nil)
	call := record(tctx, s.cfg, capture, evidence.Call{ProbeID: probeID, Transport: evidence.MCP, Kind: evidence.KindToolsList,
		Method: "tools/list", Purposes: []evidence.Purpose{evidence.PurposeDiscovery}}, started)
	if call.Message == nil && call.HTTPStatus == 0 && call.HarnessError == "" && err != nil {
		call.HarnessError = err.Error()
	}
	return call
}

// redact applies the report's redaction to a reply before it enters the
// evidence: credential-named keys and the run's own token, wherever they
// appear. Judges read the same redacted bytes a report holds, so a recorded
// run judged again reaches the same verdicts.
func (c Config) redact(b []byte) []byte {
	out, _ := c.Limits.Redactor(nil, wire.Secrets(c.BearerToken, c.Header)...).Body(b, false)
	return out
}

// record fills call from the capture: the JSON-RPC response message and its
// members (redacted), the HTTP status, every exchange, and a harness error
// when the seller sent no HTTP response at all.
func record(ctx context.Context, cfg Config, capture *wire.Capture, call evidence.Call, started time.Time) evidence.Call {
	call.Started = started
	msg, x, err := capture.Response(ctx)
	_ = capture.Wait(ctx)
	call.Exchanges = capture.Exchanges()
	call.DurationMS = float64(time.Since(started).Microseconds()) / 1000
	call.HTTPStatus = x.Status
	if err == nil {
		// msg is already redacted: the capture's transport redacts with
		// cfg.BearerToken and more (see wire.Transport), a superset of
		// cfg.redact.
		call.Message = msg
		result, rpcErr, _, serr := wire.SplitResponse(msg)
		if serr == nil {
			call.Result, call.RPCError = result, rpcErr
		}
		return call
	}
	if d := x.Dropped; d != nil && (d.BodyBytes > 0 || d.Events > 0) {
		call.HarnessError = fmt.Sprintf("the run's evidence budget (--max-total) was spent: the reply was not kept (%d body bytes, %d events)", d.BodyBytes, d.Events)
		return call
	}
	if x.Status != 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// Headers came, the JSON-RPC response did not: the call proves
		// nothing and is never a passed step.
		call.HarnessError = fmt.Sprintf("no JSON-RPC response within the call timeout (HTTP %d; raise --timeout for a slow seller)", x.Status)
		return call
	}
	if x.Status == 0 {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			call.HarnessError = "no response within the call timeout (raise --timeout for a slow seller)"
		case x.Error != "":
			call.HarnessError = x.Error
		default:
			call.HarnessError = fmt.Sprintf("no response: %v", err)
		}
	}
	return call
}

// MaxCardBytes bounds the body of a server card fetched by Get.
const MaxCardBytes = 1 << 20

// Get fetches url with a plain HTTP GET over the capturing transport,
// without the bearer token (a server card is public), and records it:
// the status and, when it is JSON, the body (at most MaxCardBytes). A
// redirect is not followed: its 3xx is the reply (see fetch.NoRedirects).
// An address the run's guard refuses is a harness error saying so: the
// rule that needed the document is in error, never passed.
func Get(ctx context.Context, cfg Config, probeID, url string, purposes ...evidence.Purpose) evidence.Call {
	call := evidence.Call{ProbeID: probeID, Transport: evidence.MCP, Kind: evidence.KindHTTPGet, Method: "GET", URL: url, Purposes: purposes}
	tr := &wire.Transport{Base: cfg.guard().Transport(), Header: cfg.Header, Limits: cfg.Limits, Recorder: cfg.Recorder}
	if !wire.SameOrigin(url, cfg.Endpoint) {
		// A URL the seller named (a jwks_uri on a key host): the user's
		// headers, which may carry credentials, go to the target's own
		// origin only, and it must be https.
		tr.Header = nil
		if why := wire.CrossOriginRefusal(url, cfg.Endpoint); why != "" {
			call.HarnessError, call.Started = why, time.Now()
			return call
		}
	}
	tctx, cancel := context.WithTimeout(ctx, cfg.timeout())
	defer cancel()
	cctx, capture := wire.WithCapture(tctx, probeID)
	call.Started = time.Now()
	defer func() { call.DurationMS = float64(time.Since(call.Started).Microseconds()) / 1000 }()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, url, nil)
	if err != nil {
		call.HarnessError = err.Error()
		return call
	}
	req.Header.Set("Accept", "application/json")
	resp, err := fetch.Client(tr, fetch.NoRedirects).Do(req)
	if err != nil {
		call.HarnessError = err.Error()
		call.Exchanges = capture.Exchanges()
		return call
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, MaxCardBytes+1))
	_ = resp.Body.Close()
	_ = capture.Wait(tctx)
	call.Exchanges = capture.Exchanges()
	call.HTTPStatus = resp.StatusCode
	if rerr == nil && len(body) <= MaxCardBytes && json.Valid(body) {
		call.Body = cfg.redact(body)
	}
	return call
}
