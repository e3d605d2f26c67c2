// Package fetch is where the harness meets the network. Its Guard is the
// one connection policy of every request the harness makes — the probes',
// the storyboards', the fetches', first request or redirect hop — and
// Client the one http.Client constructor, over a guard's transport, with
// the call site's redirect policy (a test holds every other package to
// them):
//
//	g := fetch.NewGuard(fetch.GuardConfig{Agents: []string{endpoint}})
//	hc := fetch.Client(&wire.Transport{Base: g.Transport()}, fetch.NoRedirects)
//
// Get GETs public documents an agent names — its OAuth
// discovery graph — under the fetch policy of the spec's OAuth setup
// runner (compliance/3.2.0-beta.5/test-kits/oauth-setup-runner.yaml,
// fetch_policy and dns_policy): no credentials, cookies or proxies, https
// only, redirects returned rather than followed, every resolved address
// checked before connecting (one blocked answer blocks the host), the
// connection made to a checked address only and its peer checked again,
// bounded time and bytes. A run flagged for local development also
// reaches http URLs and loopback and private addresses (never link-local:
// the cloud metadata service is there).
//
//	call := fetch.Get(ctx, fetch.Policy{}, "storyboard/oauth_setup/…#oauth/0", url)
package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// The kit's fetch_policy bounds.
const (
	ConnectTimeout = 5 * time.Second
	Timeout        = 10 * time.Second
	MaxBytes       = 262144
)

// Policy is how one walk fetches. The zero value is the production
// policy over the real network.
type Policy struct {
	// Local is the explicit local-development flag
	// (allow_http_only_with_explicit_local_dev_flag): http URLs, and
	// loopback and private addresses, are allowed (never link-local).
	Local bool
	// NoIPLiterals refuses any IP-literal host, whatever its range (the
	// substitution observer kit's host_literal_policy_verified: reject;
	// Local relaxes it), and DenyHosts refuses hosts by name (its
	// hosts_denied_metadata), compared without case.
	NoIPLiterals bool
	DenyHosts    []string
	// TLS, when set, is the client TLS configuration (a staging agent's
	// private CA); the server name is always the URL's host.
	TLS *tls.Config
	// Limits bound what is kept as evidence (the run's budget and
	// secrets); the body limit is always MaxBytes.
	Limits wire.Limits
	// Recorder keeps every exchange of the run.
	Recorder *wire.Recorder
	// Transport is the face of the run the fetch belongs to.
	Transport evidence.Transport

	// Resolve, Allowed and Dial replace the network for tests (the kit's
	// vector corpus runs with no live network): Resolve answers a host's
	// addresses, Allowed classifies one (nil: Global, or Local too), Dial
	// connects to a checked "ip:port".
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	Allowed func(netip.Addr) bool
	Dial    func(ctx context.Context, network, address string) (net.Conn, error)
}

// BlockedError is the policy's refusal of a URL, an address or a peer.
type BlockedError struct{ Reason string }

func (e *BlockedError) Error() string { return "blocked by the fetch policy: " + e.Reason }

func (p Policy) allowed(a netip.Addr) bool {
	if Never(a) {
		return false
	}
	if p.Allowed != nil {
		return p.Allowed(a)
	}
	return Global(a) || p.Local && Local(a)
}

// Refusal is the URL-level policy: an absolute URL, https (http too when
// Local), no userinfo (reject_url_credentials), no fragment
// (reject_fragments), and an IP-literal host checked as an address.
// "" when the URL may be fetched.
func (p Policy) Refusal(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "not an absolute URL"
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
	case scheme == "http" && p.Local:
	default:
		return wire.Sanitize(u.Scheme, 20) + " is not https"
	}
	if u.User != nil {
		return "the URL carries credentials"
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "the URL carries a fragment"
	}
	ip, literal := IPLiteral(u.Hostname())
	if literal && !p.allowed(ip) {
		return "address " + ip.String() + " is not globally routable"
	}
	if literal && p.NoIPLiterals && !p.Local {
		return "the host is a bare IP literal (" + ip.String() + "), not a DNS name"
	}
	for _, h := range p.DenyHosts {
		if strings.EqualFold(strings.TrimSuffix(u.Hostname(), "."), h) {
			return "the host " + wire.Sanitize(h, 100) + " is a cloud metadata name"
		}
	}
	return ""
}

// dial connects under the policy, through its Resolve and Dial (see
// dialChecked).
func (p Policy) dial(ctx context.Context, network, address string) (net.Conn, error) {
	return dialChecked(ctx, Network{Resolve: p.Resolve, Dial: p.Dial}, ConnectTimeout, network, address, p.allowed)
}

// Client returns a client under p for a request the harness makes on its
// own account to a URL the user named (an OAuth token endpoint): no proxy,
// no cookie jar, every address checked before connecting and the peer
// after, no redirect followed (a 3xx is returned). The caller checks the
// URL (Refusal) and bounds the body and the time; done closes the idle
// connections.
func (p Policy) Client() (c *http.Client, done func()) {
	t := p.transport()
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, t.CloseIdleConnections
}

// transport is one walk's stateless client transport: no proxy
// (ambient_auth disabled), no cookie jar, no compression asked for.
func (p Policy) transport() *http.Transport {
	t := &http.Transport{
		Proxy:                  nil,
		DialContext:            p.dial,
		TLSClientConfig:        p.TLS.Clone(),
		TLSHandshakeTimeout:    ConnectTimeout,
		ResponseHeaderTimeout:  Timeout,
		DisableCompression:     true,
		MaxResponseHeaderBytes: wire.MaxResponseHeaderBytes,
		IdleConnTimeout:        wire.IdleConnTimeout,
		ForceAttemptHTTP2:      true,
	}
	return t
}

// Response is what a fetch returned, unredacted, for the caller to walk
// on; the evidence call keeps the redacted record.
type Response struct {
	Status      int
	ContentType string
	// Location is a 3xx's target as sent.
	Location string
	Body     []byte
	// TooLarge says the body exceeded MaxBytes (Body holds the first
	// MaxBytes).
	TooLarge bool
	// Blocked is the policy's refusal; Failed a network failure.
	Blocked, Failed string
}

// Get fetches raw under p and records it as probeID: no credentials, no
// redirect followed (a 3xx is returned with its Location for the caller
// to validate and follow), at most MaxBytes of body. A URL or address the
// policy refuses is Call.Blocked, the agent's doing; a network failure is
// HarnessError.
func Get(ctx context.Context, p Policy, probeID, raw string) (evidence.Call, Response) {
	var out Response
	call := get(ctx, p, probeID, raw, &out)
	out.Blocked, out.Failed = call.Blocked, call.HarnessError
	return call, out
}

func get(ctx context.Context, p Policy, probeID, raw string, out *Response) evidence.Call {
	call := evidence.Call{ProbeID: probeID, Transport: p.Transport, Kind: evidence.KindHTTPGet, Method: http.MethodGet,
		URL: RedactURL(raw), Credential: "none", Started: time.Now()}
	defer func() { call.DurationMS = float64(time.Since(call.Started).Microseconds()) / 1000 }()
	if why := p.Refusal(raw); why != "" {
		call.Blocked = why
		return call
	}
	lim := p.Limits
	lim.MaxBodyBytes, lim.MaxRedirects = MaxBytes, 0
	if lim.MaxEvidenceBytes <= 0 || lim.MaxEvidenceBytes > MaxBytes {
		lim.MaxEvidenceBytes = MaxBytes
	}
	base := p.transport()
	defer base.CloseIdleConnections()
	tr := &wire.Transport{Base: base, Limits: lim, Recorder: p.Recorder}
	client := Client(tr, NoRedirects) // the kit's redirect_policy: returned, the walker validates and follows
	tctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cctx, capture := wire.WithCapture(tctx, probeID)
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, raw, nil)
	if err != nil {
		call.Blocked = "not a valid request URL"
		return call
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := client.Do(req) //nolint:bodyclose // readBounded closes it
	if err != nil {
		call.Exchanges = redacted(capture.Exchanges())
		var blocked *BlockedError
		switch {
		case errors.As(err, &blocked):
			call.Blocked = blocked.Reason
		case errors.Is(tctx.Err(), context.DeadlineExceeded):
			call.HarnessError = fmt.Sprintf("no response within %s", Timeout)
		default:
			call.HarnessError = wire.Sanitize(err.Error(), 300)
		}
		return call
	}
	out.Status, out.ContentType, out.Location = resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Location")
	out.Body, out.TooLarge = readBounded(resp)
	_ = capture.Wait(tctx)
	call.Exchanges = redacted(capture.Exchanges())
	call.HTTPStatus = resp.StatusCode
	return call
}

// RedactURL renders raw the way the kit's redaction_policy asks: every
// query value replaced with REDACTED (names kept), userinfo REDACTED.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return wire.Sanitize(raw, 300)
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	if u.RawQuery != "" {
		var parts []string
		for _, kv := range strings.Split(u.RawQuery, "&") {
			name, _, _ := strings.Cut(kv, "=")
			parts = append(parts, name+"=REDACTED")
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	return u.String()
}

// redacted applies RedactURL to the exchanges' URLs and Location headers.
func redacted(xs []wire.Exchange) []wire.Exchange {
	for i := range xs {
		xs[i].URL = RedactURL(xs[i].URL)
		if loc := xs[i].ResponseHeaders.Values("Location"); len(loc) > 0 {
			h := xs[i].ResponseHeaders.Clone()
			h.Del("Location")
			for _, l := range loc {
				h.Add("Location", RedactURL(l))
			}
			xs[i].ResponseHeaders = h
		}
	}
	return xs
}

// readBounded reads at most MaxBytes of the body (through the capturing
// transport, which records it) and closes it; too large when more came.
func readBounded(resp *http.Response) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
	_ = resp.Body.Close()
	var limit *wire.LimitError
	if len(body) > MaxBytes || errors.As(err, &limit) {
		return body[:min(len(body), MaxBytes)], true
	}
	return body, false
}
