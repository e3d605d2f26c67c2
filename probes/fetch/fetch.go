// Package fetch GETs public documents an agent names — its OAuth
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

// dial resolves host once, refuses it when any answer is blocked
// (reject_if_any_answer_is_blocked), connects only to a checked address
// and checks the connected peer (verify_connected_peer_address).
func (p Policy) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if ip, ok := IPLiteral(host); ok {
		addrs = []netip.Addr{ip}
	} else {
		resolve := p.Resolve
		if resolve == nil {
			resolve = func(ctx context.Context, h string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", h)
			}
		}
		if addrs, err = resolve(ctx, host); err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%s has no address", wire.Sanitize(host, 100))
		}
	}
	for _, a := range addrs {
		if !p.allowed(a.Unmap()) {
			return nil, &BlockedError{Reason: fmt.Sprintf("%s resolves to %s, not globally routable", wire.Sanitize(host, 100), a.Unmap())}
		}
	}
	dial := p.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: ConnectTimeout}
		dial = d.DialContext
	}
	var last error
	for _, a := range addrs {
		conn, err := dial(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err != nil {
			last = err
			continue
		}
		peer, perr := netip.ParseAddrPort(conn.RemoteAddr().String())
		if perr != nil || !p.allowed(peer.Addr().Unmap()) {
			_ = conn.Close()
			return nil, &BlockedError{Reason: fmt.Sprintf("the connected peer %s is not globally routable", conn.RemoteAddr())}
		}
		return conn, nil
	}
	return nil, last
}

// CrossOriginBase is the base transport of a request to target, a URL the
// seller named on another origin than agent's (a jwks_uri, a card's
// interface URL): base's copy (nil: the wire package's default),
// connecting only where the policy allows — every address the name
// resolves to checked before connecting, the connection made to a checked
// address and its peer checked again — so a seller cannot aim the harness
// at the user's network through a public name that resolves to a private
// address. Loopback and private addresses stay reachable when the agent
// itself is on one (Local); link-local never. A request the base sends
// through a proxy is not re-checked here, since the proxy resolves the
// name (callers check the URL's host: wire.AddressRefusal); a
// RoundTripper that is not an *http.Transport is used as it is. resolve
// replaces DNS (tests; nil: the system resolver). done closes the copy's
// idle connections.
func CrossOriginBase(base http.RoundTripper, agent, target string, resolve func(ctx context.Context, host string) ([]netip.Addr, error)) (http.RoundTripper, func()) {
	var t *http.Transport
	switch b := base.(type) {
	case nil:
		t = wire.DefaultBase()
	case *http.Transport:
		t = b.Clone()
	default:
		return base, func() {}
	}
	if t.Proxy != nil {
		if req, err := http.NewRequest(http.MethodGet, target, nil); err == nil {
			if p, err := t.Proxy(req); err == nil && p != nil {
				return t, t.CloseIdleConnections
			}
		}
	}
	p := Policy{Resolve: resolve}
	if a, err := url.Parse(agent); err == nil {
		p.Local = wire.Internal(a.Hostname())
	}
	t.DialContext = p.dial
	return t, t.CloseIdleConnections
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
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
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
