package fetch

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// Network is how the harness resolves names and opens connections. The
// zero value is the system's; tests replace it, so they need no real DNS
// and can record every connection the harness attempts.
type Network struct {
	// Resolve answers a host name's addresses; nil is the system
	// resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an "ip:port" the policy has checked; nil is a
	// net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

func (n Network) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if n.Resolve != nil {
		return n.Resolve(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

func (n Network) dialer(timeout time.Duration) func(ctx context.Context, network, address string) (net.Conn, error) {
	if n.Dial != nil {
		return n.Dial
	}
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return d.DialContext
}

// never are the addresses no run reaches, whatever its flags or where its
// agent is: link-local (169.254.0.0/16, where the cloud metadata service
// answers at 169.254.169.254, and fe80::/10) and the AWS metadata
// service's IPv6 address (security.mdx §Webhook URL validation (SSRF)).
var never = []netip.Prefix{netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("fd00:ec2::254/128")}

// Never reports whether a is an address no run may connect to: link-local
// or the cloud metadata service, in any form (IPv4-mapped, zoned).
func Never(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range never {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// dialChecked resolves host once (an IP literal is its own answer),
// refuses it when any answer is not allowed (reject_if_any_answer_is_blocked),
// connects only to a checked address, and checks the connected peer again
// (verify_connected_peer_address).
func dialChecked(ctx context.Context, n Network, timeout time.Duration, network, address string, allowed func(netip.Addr) bool) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if ip, ok := IPLiteral(host); ok {
		addrs = []netip.Addr{ip}
	} else {
		if addrs, err = n.lookup(ctx, host); err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%s has no address", wire.Sanitize(host, 100))
		}
	}
	_, literal := IPLiteral(host)
	for _, a := range addrs {
		switch {
		case allowed(a.Unmap()):
		case literal:
			return nil, &BlockedError{Reason: fmt.Sprintf("address %s is %s", a.Unmap(), unreachable(a))}
		default:
			return nil, &BlockedError{Reason: fmt.Sprintf("%s resolves to %s, %s", wire.Sanitize(host, 100), a.Unmap(), unreachable(a))}
		}
	}
	dial := n.dialer(timeout)
	var last error
	for _, a := range addrs {
		conn, err := dial(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err != nil {
			last = err
			continue
		}
		peer, perr := netip.ParseAddrPort(conn.RemoteAddr().String())
		if perr != nil || !allowed(peer.Addr().Unmap()) {
			_ = conn.Close()
			return nil, &BlockedError{Reason: fmt.Sprintf("the connected peer %s is not an allowed address", conn.RemoteAddr())}
		}
		return conn, nil
	}
	return nil, last
}

// unreachable says why a refused address is refused.
func unreachable(a netip.Addr) string {
	if Never(a) {
		return "link-local, never reached (the cloud metadata service is there)"
	}
	return "not globally routable"
}

// GuardConfig is what a Guard is made from.
type GuardConfig struct {
	// Agents are the URLs the user named for the run (--mcp, --a2a,
	// --agent): when one of them is on a loopback, private or otherwise
	// non-global address — localhost, such a literal, or a name that
	// resolves to one — the agent is on the user's own network, and so
	// may the run be (see Guard).
	Agents []string
	// LocalFetch is --allow-local-fetch: the run is local whatever its
	// agents' addresses.
	LocalFetch bool
	// TLS is the client TLS configuration (--ca-cert); nil is the
	// system's roots.
	TLS *tls.Config
	// Net is the network; the zero value is the system's.
	Net Network
}

// Guard is the one connection policy of every HTTP request the harness
// makes — the probes', the storyboards', the fetches' — whichever origin
// it goes to and whether it is a first request or a redirect's hop: every
// address a name resolves to is checked before connecting, the connection
// goes to a checked address only, and its peer is checked again.
//
//   - Link-local addresses (169.254.0.0/16, the cloud metadata service,
//     and fe80::/10) are never reached.
//   - Globally routable addresses always are.
//   - Loopback and private addresses are reached only when the run is
//     local: an agent the user named is on one, or --allow-local-fetch
//     says so. An agent's own host is then reached at whatever it
//     resolves to (0.0.0.0, a carrier-grade NAT address), link-local
//     excepted.
//
// A request sent through the user's proxy (HTTPS_PROXY) is checked by its
// host's literal address only: the proxy resolves the name. Make one with
// NewGuard; it is safe for concurrent use, and its Transport is shared by
// every client of the run.
type Guard struct {
	agents     []string // host names, lower case
	localFetch bool
	tls        *tls.Config
	net        Network

	localOnce sync.Once
	local     bool
	baseOnce  sync.Once
	base      *http.Transport
	proxies   sync.Map // "host:port" of the proxies the environment named
}

// NewGuard returns the guard of a run.
func NewGuard(c GuardConfig) *Guard {
	g := &Guard{localFetch: c.LocalFetch, tls: c.TLS, net: c.Net}
	for _, a := range c.Agents {
		if u, err := url.Parse(a); err == nil && u.Hostname() != "" {
			g.agents = append(g.agents, hostKey(u.Hostname()))
		}
	}
	return g
}

func hostKey(h string) string { return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".") }

var defaultGuards sync.Map // agent host → *Guard

// For returns the guard of a run whose only agent is agentURL, on the
// system's network: shared by every caller naming the same host, so their
// connections are pooled as one run's. A caller with a run of its own
// (several agents, --ca-cert, --allow-local-fetch) makes one with
// NewGuard.
func For(agentURL string) *Guard {
	key := ""
	if u, err := url.Parse(agentURL); err == nil {
		key = hostKey(u.Hostname())
	}
	if g, ok := defaultGuards.Load(key); ok {
		return g.(*Guard)
	}
	g, _ := defaultGuards.LoadOrStore(key, NewGuard(GuardConfig{Agents: []string{agentURL}}))
	return g.(*Guard)
}

// Net is the guard's network (a fetch under a stricter policy, such as the
// OAuth setup kit's, resolves and dials through it too).
func (g *Guard) Net() Network { return g.net }

// Local reports whether the run may reach loopback and private addresses
// (see Guard). The agents' names are resolved once, at the first call (at
// the latest, the run's first connection).
func (g *Guard) Local() bool {
	g.localOnce.Do(func() {
		g.local = g.localFetch
		ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
		defer cancel()
		for _, h := range g.agents {
			if g.local {
				return
			}
			if h == "localhost" || strings.HasSuffix(h, ".localhost") {
				g.local = true
				continue
			}
			if ip, ok := IPLiteral(h); ok {
				g.local = !Global(ip)
				continue
			}
			addrs, err := g.net.lookup(ctx, h)
			if err != nil {
				continue
			}
			for _, a := range addrs {
				if !Global(a) && !Never(a) {
					g.local = true
				}
			}
		}
	})
	return g.local
}

// Allowed reports whether the guard connects to a when host (a name or a
// literal) resolves to it.
func (g *Guard) Allowed(host string, a netip.Addr) bool {
	a = a.Unmap()
	switch {
	case Never(a):
		return false
	case Global(a):
		return true
	case !g.Local():
		return false
	}
	return Local(a) || g.isAgent(host) && !a.IsMulticast()
}

func (g *Guard) isAgent(host string) bool {
	h := hostKey(host)
	for _, a := range g.agents {
		if a == h {
			return true
		}
	}
	return false
}

// DialContext connects to address ("host:port") under the guard: the
// dial function of every connection the harness opens (a TLS handshake
// probe's too). A proxy the environment named is dialled as it is.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if _, ok := g.proxies.Load(address); ok {
		return g.net.dialer(dialTimeout)(ctx, network, address)
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	// Whether the run is local is decided before its first connection, so
	// an agent's name that answers a public address first and a private
	// one later (DNS rebinding) does not make it local.
	g.Local()
	return dialChecked(ctx, g.net, dialTimeout, network, address, func(a netip.Addr) bool { return g.Allowed(host, a) })
}

// dialTimeout bounds a connection of the guard's transport (as
// http.DefaultTransport's); each call's context bounds it further.
const dialTimeout = 30 * time.Second

// proxy is the transport's Proxy: the environment's (HTTPS_PROXY,
// NO_PROXY); a request it sends through a proxy is checked by its host's
// literal address, the only one the harness sees.
func (g *Guard) proxy(req *http.Request) (*url.URL, error) {
	p, err := http.ProxyFromEnvironment(req)
	if err != nil || p == nil {
		return p, err
	}
	host := req.URL.Hostname()
	if ip, ok := IPLiteral(host); ok && !g.Allowed(host, ip) {
		return nil, &BlockedError{Reason: fmt.Sprintf("address %s is %s", ip, unreachable(ip))}
	}
	port := p.Port()
	if port == "" {
		port = map[string]string{"https": "443", "socks5": "1080", "socks5h": "1080"}[p.Scheme]
		if port == "" {
			port = "80"
		}
	}
	g.proxies.Store(net.JoinHostPort(p.Hostname(), port), true)
	return p, nil
}

// Transport is the guard's base transport, shared by every client of the
// run: connections through DialContext only, the environment's proxy
// (checked as proxy says), no transparent decompression (the capture
// decodes gzip itself, through its body limit), idle connections closed
// before a seller would close them (wire.IdleConnTimeout).
func (g *Guard) Transport() *http.Transport {
	g.baseOnce.Do(func() {
		g.base = &http.Transport{
			Proxy:                  g.proxy,
			DialContext:            g.DialContext,
			TLSClientConfig:        g.tls.Clone(),
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  wire.DefaultResponseHeaderTimeout,
			ExpectContinueTimeout:  time.Second,
			DisableCompression:     true,
			MaxIdleConns:           100,
			IdleConnTimeout:        wire.IdleConnTimeout,
			MaxResponseHeaderBytes: wire.MaxResponseHeaderBytes,
			ForceAttemptHTTP2:      true,
		}
	})
	return g.base
}

// Redirects is which redirects a call site follows. Whatever it says, a
// followed hop goes through the same transport, so through the guard.
type Redirects int

const (
	// NoRedirects follows none: a 3xx is the reply, recorded with its
	// Location. The default for a document the seller serves (a server
	// card, an agent card, brand.json, a JWKS, OAuth metadata):
	// security.mdx §Webhook URL validation (SSRF) tells a fetcher of a
	// counterparty-controlled URL to refuse redirects, and §Client /
	// outbound TLS hardening says JWKS and brand.json fetches MUST NOT
	// follow them.
	NoRedirects Redirects = iota
	// SameOriginRedirects follows a 307 or 308 within the origin of the
	// call's first request (an endpoint moved under its own origin, such
	// as /mcp to /mcp/): those keep the method and body (RFC 9110 §15.4.8,
	// §15.4.9), so the call the harness made is the one answered. A 301,
	// 302 or 303 would turn a JSON-RPC POST into a GET without its body,
	// and another origin is not the agent the user named: those are
	// returned as the reply.
	SameOriginRedirects
	// AnyRedirects follows every redirect, at most wire.DefaultMaxRedirects
	// (the release material the harness downloads from the project's
	// site, whose hosting may move it).
	AnyRedirects
)

// Client is the http.Client of every request the harness makes: rt — a
// capturing wire.Transport over a guard's Transport, or a guard's
// Transport itself — and the call site's redirect policy. A redirect not
// followed comes back as the reply (http.ErrUseLastResponse); one
// followed is also held to the wire.Transport's own rules (how many, no
// credentials to another origin).
func Client(rt http.RoundTripper, r Redirects) *http.Client {
	tr, _ := rt.(*wire.Transport)
	return &http.Client{Transport: rt, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if !r.follows(req, via) {
			return http.ErrUseLastResponse
		}
		if tr != nil {
			return tr.CheckRedirect(req, via)
		}
		if len(via) > wire.DefaultMaxRedirects {
			return fmt.Errorf("more than %d redirects", wire.DefaultMaxRedirects)
		}
		return nil
	}}
}

// Client returns a client of the guard's Transport alone (no capture):
// for the release material a run downloads.
func (g *Guard) Client(r Redirects) *http.Client { return Client(g.Transport(), r) }

func (r Redirects) follows(req *http.Request, via []*http.Request) bool {
	switch r {
	case AnyRedirects:
		return true
	case SameOriginRedirects:
		if req.Response == nil || len(via) == 0 {
			return false
		}
		st := req.Response.StatusCode
		return (st == http.StatusTemporaryRedirect || st == http.StatusPermanentRedirect) && wire.Origin(via[0].URL) == wire.Origin(req.URL)
	}
	return false
}
