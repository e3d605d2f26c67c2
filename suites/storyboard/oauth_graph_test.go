package storyboard

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

type oauthVector struct {
	ID        string                     `json:"id"`
	AgentURL  string                     `json:"agent_url"`
	DNS       json.RawMessage            `json:"dns"`
	Responses map[string]json.RawMessage `json:"responses"`
	Expected  struct {
		Success   bool   `json:"success"`
		ErrorCode string `json:"error_code"`
	} `json:"expected_outcome"`
}

// TestOAuthGraphVectors runs the deterministic corpus of
// test-vectors/oauth-setup/vectors.json (3.2.0-beta.5) the way a live run
// does — the engine's walk, the real fetcher (probes/fetch) with its
// address policy and peer check, and the oauth_metadata_graph grader —
// over a network of test doubles: the vector's DNS fixtures answer the
// resolver (its fixture_address_classes classify them), every connection
// reaches one local TLS server that answers from the vector's responses
// map (a request not in it is cut: fail closed), and a response's
// connected_peer_address is the peer the fetcher sees. Every positive
// vector passes, every negative one fails with its exact code, and a
// Replay of the recorded fetches (what `judge` does) grades the same.
func TestOAuthGraphVectors(t *testing.T) {
	path := shared.File(t, filepath.Join("spec/compliance", "3.2.0-beta.5", "test-vectors", "oauth-setup", "vectors.json"))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Positive, Negative []oauthVector
	}
	if err := json.Unmarshal(data, &corpus); err != nil {
		t.Fatal(err)
	}
	for _, v := range append(corpus.Positive, corpus.Negative...) {
		t.Run(v.ID, func(t *testing.T) {
			net := newVectorNet(t, v)
			live := vectorFetcher{policy: net.policy()}
			g := oauth.Walk(context.Background(), &live, "storyboard/oauth_setup/metadata_graph/evaluate_oauth_metadata", v.AgentURL, oauth.Graph{})
			first, needs := firstFailure(v.AgentURL, *g)
			if len(needs) > 0 {
				t.Fatalf("the walk left needs: %v", needs)
			}
			switch {
			case v.Expected.Success && first != nil:
				t.Fatalf("positive vector failed: %+v", *first)
			case !v.Expected.Success && first == nil:
				t.Fatalf("negative vector passed, want %s", v.Expected.ErrorCode)
			case !v.Expected.Success && first.Code != v.Expected.ErrorCode:
				t.Fatalf("code %s (%+v), want %s", first.Code, *first, v.Expected.ErrorCode)
			}
			store := evidence.NewStore(evidence.Target{})
			for _, c := range live.calls {
				store.Add(c)
			}
			rg := oauth.Walk(context.Background(), Replay{Store: store}, "storyboard/oauth_setup/metadata_graph/evaluate_oauth_metadata", v.AgentURL, oauth.Graph{})
			again, _ := firstFailure(v.AgentURL, *rg)
			if (first == nil) != (again == nil) || first != nil && again.Code != first.Code {
				t.Fatalf("the replay grades %+v, the walk %+v", again, first)
			}
		})
	}
}

// firstFailure is the failure oauth_metadata_graph reports (nil when
// none), and the URLs the walk left unfetched.
func firstFailure(agentURL string, g oauth.Graph) (*oauth.Failure, []string) {
	fails := oauth.Failures(agentURL, g)
	if len(fails) == 0 {
		return nil, oauth.Fetches(agentURL, g)
	}
	return &fails[0], oauth.Fetches(agentURL, g)
}

// vectorFetcher is the live dispatcher's FetchPublic over a test network.
type vectorFetcher struct {
	policy fetch.Policy
	mu     sync.Mutex
	calls  []evidence.Call
}

func (f *vectorFetcher) FetchPublic(ctx context.Context, probeID, u string, _ spec.FetchOptions) *spec.Response {
	c, r := fetch.Get(ctx, f.policy, probeID, u)
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	return spec.ResponseFrom(r)
}

// vectorNet is one vector's network of test doubles.
type vectorNet struct {
	srv     *httptest.Server
	dns     map[string][]netip.Addr
	classes map[netip.Addr]bool // fixture_address_classes: globally routable or not
	peers   map[netip.Addr]string
}

// fixtureAddr is the answer for a host without DNS fixtures: a
// documentation address the test double classifies as routable.
var fixtureAddr = netip.MustParseAddr("203.0.113.200")

func newVectorNet(t *testing.T, v oauthVector) *vectorNet {
	n := &vectorNet{dns: map[string][]netip.Addr{}, classes: map[netip.Addr]bool{fixtureAddr: true}, peers: map[netip.Addr]string{}}
	var dns map[string]struct {
		Addresses []string `json:"addresses"`
		Classes   []string `json:"fixture_address_classes"`
	}
	_ = json.Unmarshal(v.DNS, &dns)
	for host, d := range dns {
		for i, a := range d.Addresses {
			ip := netip.MustParseAddr(a)
			n.dns[host] = append(n.dns[host], ip)
			if i < len(d.Classes) {
				n.classes[ip] = d.Classes[i] == "globally_routable_fixture_only"
			}
		}
	}
	type response struct {
		Status      int               `json:"status"`
		ContentType string            `json:"content_type"`
		JSON        json.RawMessage   `json:"json"`
		Body        *string           `json:"body"`
		Headers     map[string]string `json:"headers"`
		Peer        string            `json:"connected_peer_address"`
	}
	responses := map[string]response{}
	for k, raw := range v.Responses {
		var x response
		if err := json.Unmarshal(raw, &x); err != nil {
			t.Fatal(err)
		}
		responses[k] = x
		if x.Peer != "" {
			u, _ := url.Parse(strings.TrimPrefix(k, "GET "))
			for _, ip := range n.dns[u.Hostname()] {
				n.peers[ip] = x.Peer
			}
		}
	}
	n.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x, ok := responses[r.Method+" https://"+r.Host+r.URL.RequestURI()]
		if !ok {
			panic(http.ErrAbortHandler) // not in the map: the connection is cut
		}
		for k, h := range x.Headers {
			w.Header().Set(k, h)
		}
		if x.ContentType != "" {
			w.Header().Set("Content-Type", x.ContentType)
		}
		w.WriteHeader(x.Status)
		if x.Body != nil {
			_, _ = w.Write([]byte(*x.Body))
		} else {
			_, _ = w.Write(x.JSON)
		}
	}))
	n.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	t.Cleanup(n.srv.Close)
	return n
}

func (n *vectorNet) policy() fetch.Policy {
	return fetch.Policy{
		TLS: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the test server's certificate names none of the vectors' hosts
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := n.dns[host]; ok {
				return a, nil
			}
			return []netip.Addr{fixtureAddr}, nil
		},
		Allowed: func(a netip.Addr) bool {
			if ok, classified := n.classes[a]; classified {
				return ok
			}
			return fetch.Global(a)
		},
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, n.srv.Listener.Addr().String())
			if err != nil {
				return nil, err
			}
			ap := netip.MustParseAddrPort(address)
			peer := ap.Addr()
			if p, ok := n.peers[peer]; ok {
				peer = netip.MustParseAddr(p)
			}
			return peerConn{Conn: c, peer: netip.AddrPortFrom(peer, ap.Port())}, nil
		},
	}
}

// peerConn is a connection whose remote address is the one the vector
// says the fetcher connected to.
type peerConn struct {
	net.Conn
	peer netip.AddrPort
}

func (c peerConn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(c.peer) }
