package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// metadataName is a public-looking name that resolves to the cloud
// metadata service (through the test network's resolver).
const metadataName = "metadata.example.test"

// testNet is a Network whose resolver knows a few names and whose dialer
// records every address it is asked to connect to, connecting for real
// only to loopback (the test servers).
type testNet struct {
	names map[string][]netip.Addr

	mu     sync.Mutex
	dialed []string
}

func newTestNet() *testNet {
	return &testNet{names: map[string][]netip.Addr{
		metadataName:          {netip.MustParseAddr("169.254.169.254")},
		"seller.example.com":  {netip.MustParseAddr("93.184.215.14")},
		"compose-seller":      {netip.MustParseAddr("172.18.0.3")},
		"rebound.example.com": {netip.MustParseAddr("93.184.215.15"), netip.MustParseAddr("10.0.0.9")},
	}}
}

func (n *testNet) network() Network {
	return Network{
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := n.names[host]; ok {
				return a, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		},
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			n.mu.Lock()
			n.dialed = append(n.dialed, address)
			n.mu.Unlock()
			if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().IsLoopback() {
				return nil, fmt.Errorf("test network: %s is not reachable", address)
			}
			return (&net.Dialer{}).DialContext(ctx, network, address)
		},
	}
}

func (n *testNet) dials() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.dialed...)
}

// TestGuardNeverReachesLinkLocal: whatever the run — a public agent, one
// on loopback, one on a private network, --allow-local-fetch — no form of
// a link-local or cloud-metadata address is allowed.
func TestGuardNeverReachesLinkLocal(t *testing.T) {
	for _, g := range []*Guard{
		NewGuard(GuardConfig{Agents: []string{"https://seller.example.com/mcp"}, Net: newTestNet().network()}),
		NewGuard(GuardConfig{Agents: []string{"http://127.0.0.1:8080/mcp"}}),
		NewGuard(GuardConfig{Agents: []string{"http://compose-seller:8080/mcp"}, Net: newTestNet().network()}),
		NewGuard(GuardConfig{Agents: []string{"http://169.254.1.1/mcp"}}), // the agent itself: still never
		NewGuard(GuardConfig{LocalFetch: true}),
	} {
		for _, a := range []string{"169.254.169.254", "169.254.1.1", "::ffff:169.254.169.254", "fe80::1", "fe80::1%eth0", "fd00:ec2::254"} {
			if g.Allowed("169.254.1.1", netip.MustParseAddr(a)) {
				t.Errorf("agents %v, local fetch %v: %s is allowed", g.agents, g.localFetch, a)
			}
		}
	}
}

// TestGuardReachesLoopbackAndPrivateOnlyWhenTheAgentIsThere: a run is
// local when an agent the user named is on localhost, a non-global
// literal or a name resolving to one, or --allow-local-fetch says so;
// the agent's own host is then reached at whatever non-link-local
// address it has.
func TestGuardReachesLoopbackAndPrivateOnlyWhenTheAgentIsThere(t *testing.T) {
	for _, tc := range []struct {
		name   string
		agents []string
		flag   bool
		local  bool
	}{
		{"a public agent", []string{"https://seller.example.com/mcp"}, false, false},
		{"an agent whose name answers a public and a private address", []string{"https://rebound.example.com/mcp"}, false, true},
		{"a public agent with --allow-local-fetch", []string{"https://seller.example.com/mcp"}, true, true},
		{"an agent on loopback", []string{"http://127.0.0.1:3000/mcp"}, false, true},
		{"an agent on localhost", []string{"http://localhost:3000/mcp"}, false, true},
		{"an agent on 0.0.0.0", []string{"http://0.0.0.0:3000/mcp"}, false, true},
		{"an agent named in a compose network", []string{"http://compose-seller:8080/mcp"}, false, true},
		{"a public agent and a further one on loopback", []string{"https://seller.example.com/mcp", "http://[::1]:9000/mcp"}, false, true},
		{"an agent whose name does not resolve", []string{"https://nowhere.example/mcp"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGuard(GuardConfig{Agents: tc.agents, LocalFetch: tc.flag, Net: newTestNet().network()})
			if g.Local() != tc.local {
				t.Fatalf("Local() = %v, want %v", g.Local(), tc.local)
			}
			for _, a := range []string{"127.0.0.1", "10.0.0.5", "192.168.1.2", "::1", "fd12::1"} {
				if got := g.Allowed("other.example", netip.MustParseAddr(a)); got != tc.local {
					t.Errorf("%s allowed %v, want %v", a, got, tc.local)
				}
			}
			if !g.Allowed("other.example", netip.MustParseAddr("8.8.8.8")) {
				t.Error("a global address is refused")
			}
		})
	}
	g := NewGuard(GuardConfig{Agents: []string{"http://100.64.1.1:8080/mcp"}})
	if !g.Allowed("100.64.1.1", netip.MustParseAddr("100.64.1.1")) {
		t.Error("the agent's own carrier-grade NAT address is refused")
	}
	if g.Allowed("100.64.1.2", netip.MustParseAddr("100.64.1.2")) {
		t.Error("another host's carrier-grade NAT address is allowed")
	}
}

// TestGuardDialsOnlyCheckedAddresses: a name is resolved once and
// refused when any answer is; a literal is checked as the address it is;
// nothing refused reaches the dialer.
func TestGuardDialsOnlyCheckedAddresses(t *testing.T) {
	n := newTestNet()
	g := NewGuard(GuardConfig{Agents: []string{"https://seller.example.com/mcp"}, Net: n.network()})
	for address, want := range map[string]string{
		metadataName + ":80":         "metadata.example.test resolves to 169.254.169.254, link-local",
		"rebound.example.com:443":    "rebound.example.com resolves to 10.0.0.9, not globally routable",
		"169.254.169.254:80":         "address 169.254.169.254 is link-local",
		"0xa9.0xfe.0xa9.0xfe:80":     "address 169.254.169.254 is link-local",
		"[::ffff:a9fe:a9fe]:80":      "address 169.254.169.254 is link-local",
		"127.0.0.1:1":                "address 127.0.0.1 is not globally routable",
		"seller.example.com:443":     "", // allowed, then unreachable on the test network
		"[fe80::1%25eth0]:80":        "link-local",
		"nowhere.example:443":        "no such host",
		"seller.example.com:notport": "",
	} {
		_, err := g.DialContext(context.Background(), "tcp", address)
		var blocked *BlockedError
		switch {
		case want == "" && errors.As(err, &blocked):
			t.Errorf("%s: refused: %v", address, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want a refusal saying %q", address, err, want)
		}
	}
	for _, d := range n.dials() {
		if d != "93.184.215.14:443" && d != "93.184.215.14:notport" {
			t.Errorf("the dialer was asked for %s", d)
		}
	}
}

// redirectServer answers every request under /go/<code>/<target> with
// that redirect, /same/<code> with that redirect to /landed on its own
// origin, and /landed with 200.
func redirectServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		var code int
		var target string
		switch {
		case r.URL.Path == "/landed":
			fmt.Fprint(w, r.Method)
			return
		case strings.HasPrefix(r.URL.Path, "/same/"):
			_, _ = fmt.Sscanf(r.URL.Path, "/same/%d", &code)
			target = "/landed"
		default:
			_, _ = fmt.Sscanf(r.URL.Path, "/go/%d/", &code)
			target = "http://" + strings.SplitN(r.URL.Path, "/", 4)[3] + "/latest/meta-data/"
		}
		w.Header().Set("Location", target)
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var redirectCodes = []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect}

// TestEveryRedirectHopIsChecked: a redirect to the cloud metadata service,
// by literal or by a name resolving there, with each redirect status, is
// not followed where the call site follows none (or only 307/308 on its
// own origin), and is refused before connecting where it follows every
// redirect: no connection is ever attempted to it.
func TestEveryRedirectHopIsChecked(t *testing.T) {
	srv := redirectServer(t)
	n := newTestNet()
	g := NewGuard(GuardConfig{Agents: []string{srv.URL}, Net: n.network()})
	for _, r := range []Redirects{NoRedirects, SameOriginRedirects, AnyRedirects} {
		for _, code := range redirectCodes {
			for _, target := range []string{"169.254.169.254", metadataName} {
				for _, method := range []string{http.MethodGet, http.MethodPost} {
					name := fmt.Sprintf("policy %d, %s %d to %s", r, method, code, target)
					tr := &wire.Transport{Base: g.Transport()}
					req, _ := http.NewRequest(method, fmt.Sprintf("%s/go/%d/%s", srv.URL, code, target), strings.NewReader("{}"))
					resp, err := Client(tr, r).Do(req)
					if r == AnyRedirects {
						var blocked *BlockedError
						if !errors.As(err, &blocked) || !strings.Contains(blocked.Reason, "169.254.169.254") {
							t.Errorf("%s: %v, want a refusal naming 169.254.169.254", name, err)
						}
						if resp != nil {
							_ = resp.Body.Close()
						}
						continue
					}
					if err != nil {
						t.Errorf("%s: %v, want the %d as the reply", name, err, code)
						continue
					}
					_ = resp.Body.Close()
					if resp.StatusCode != code || !strings.Contains(resp.Header.Get("Location"), target) {
						t.Errorf("%s: HTTP %d to %q, want the %d as the reply", name, resp.StatusCode, resp.Header.Get("Location"), code)
					}
				}
			}
		}
	}
	for _, d := range n.dials() {
		if !strings.HasPrefix(d, "127.0.0.1:") {
			t.Errorf("a connection was attempted to %s", d)
		}
	}
}

// TestSameOriginRedirectsFollowsOnlyAMoveThatKeepsTheRequest: a 307 or
// 308 on the call's own origin is followed with its method; a 301, 302
// or 303 there is the reply.
func TestSameOriginRedirectsFollowsOnlyAMoveThatKeepsTheRequest(t *testing.T) {
	srv := redirectServer(t)
	g := NewGuard(GuardConfig{Agents: []string{srv.URL}})
	for _, code := range redirectCodes {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/same/%d", srv.URL, code), strings.NewReader("{}"))
		resp, err := Client(&wire.Transport{Base: g.Transport()}, SameOriginRedirects).Do(req)
		if err != nil {
			t.Fatalf("%d: %v", code, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		followed := code == http.StatusTemporaryRedirect || code == http.StatusPermanentRedirect
		switch {
		case followed && (resp.StatusCode != 200 || string(body) != http.MethodPost):
			t.Errorf("%d on the same origin: HTTP %d %q, want the POST followed to /landed", code, resp.StatusCode, body)
		case !followed && resp.StatusCode != code:
			t.Errorf("%d on the same origin: HTTP %d, want the %d as the reply", code, resp.StatusCode, code)
		}
	}
}

// TestGuardIsNotMadeLocalByARebindingName: the agent's name answers a
// public address first (the run's first connection decides the run is
// not local) and a private one after: that address is refused.
func TestGuardIsNotMadeLocalByARebindingName(t *testing.T) {
	var mu sync.Mutex
	asked := 0
	var dialed []string
	g := NewGuard(GuardConfig{Agents: []string{"https://rebinding.example.com/mcp"}, Net: Network{
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			mu.Lock()
			defer mu.Unlock()
			asked++
			if asked == 1 {
				return []netip.Addr{netip.MustParseAddr("93.184.215.16")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("10.0.0.9")}, nil
		},
		Dial: func(_ context.Context, _, address string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, address)
			mu.Unlock()
			return nil, errors.New("test network: unreachable")
		},
	}})
	_, err := g.DialContext(context.Background(), "tcp", "rebinding.example.com:443")
	var blocked *BlockedError
	if !errors.As(err, &blocked) || !strings.Contains(blocked.Reason, "resolves to 10.0.0.9, not globally routable") {
		t.Errorf("the rebound name: %v, want a refusal", err)
	}
	if g.Local() || len(dialed) != 0 {
		t.Errorf("local %v, dialled %v", g.Local(), dialed)
	}
}
