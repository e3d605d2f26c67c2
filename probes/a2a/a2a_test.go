package a2a

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
)

// TestACardCannotSteerTheTokenOffOrigin: a card naming an interface on
// another host gets the call without the run's credentials.
func TestACardCannotSteerTheTokenOffOrigin(t *testing.T) {
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" {
			leaked.Store(true)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"status":{"state":"TASK_STATE_COMPLETED"}}}}`))
	}))
	defer other.Close()
	seller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"supportedInterfaces":[{"url":"` + other.URL + `/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"skills":[{"id":"get_products"}]}`))
	}))
	defer seller.Close()
	cfg := Config{BaseURL: seller.URL, BearerToken: "a2a-test-token-0123456789", Header: http.Header{"X-Api-Key": {"k-0123456789"}}, Timeout: 2 * time.Second}
	ctx := context.Background()
	card, _, err := Discover(ctx, cfg, "a2a/card")
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(cfg, card).Send(ctx, "a2a/get_products/valid", "get_products", map[string]any{})
	if c.HTTPStatus != 200 {
		t.Fatalf("the call did not reach the interface: %+v", c)
	}
	if leaked.Load() {
		t.Fatal("the run's credentials went to the card's off-origin interface")
	}
}

// TestACardCannotSteerTheHarnessIntoTheUsersNetwork: a public agent's card
// naming an interface on another origin at a private address, by literal
// or by a name that resolves to one, gets no call; an agent on loopback
// may name another loopback origin (local development).
func TestACardCannotSteerTheHarnessIntoTheUsersNetwork(t *testing.T) {
	var reached atomic.Bool
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Store(true)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"status":{"state":"TASK_STATE_COMPLETED"}}}}`))
	}))
	defer inside.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(inside.URL, "http://"))
	toLoopback := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "seller.example.com" {
			return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil // the agent is public
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, base, endpoint, want string
	}{
		{"a private literal", "https://seller.example.com/a2a", "http://10.0.0.5/rpc", "10.0.0.5 is not a public address"},
		{"the cloud metadata service", "https://seller.example.com/a2a", "http://169.254.169.254/latest", "169.254.169.254 is not a public address"},
		{"a name resolving to loopback", "https://seller.example.com/a2a", "http://rpc.example.net:" + port + "/rpc", "resolves to 127.0.0.1, not globally routable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{BaseURL: tc.base, Timeout: 2 * time.Second,
				Guard: fetch.NewGuard(fetch.GuardConfig{Agents: []string{tc.base}, Net: fetch.Network{Resolve: toLoopback}})}
			c := NewClient(cfg, Card{Endpoint: tc.endpoint, Version: V10}).Send(ctx, "a2a/get_products/valid", "get_products", map[string]any{})
			if !strings.Contains(c.HarnessError, tc.want) || c.HTTPStatus != 0 {
				t.Errorf("got status %d, harness error %q; want a refusal saying %q", c.HTTPStatus, c.HarnessError, tc.want)
			}
		})
	}
	if reached.Load() {
		t.Fatal("the card steered a call onto loopback")
	}
	local := Config{BaseURL: "http://localhost:1/a2a", Timeout: 2 * time.Second}
	if c := NewClient(local, Card{Endpoint: inside.URL + "/rpc", Version: V10}).Send(ctx, "a2a/get_products/valid", "get_products", map[string]any{}); c.HTTPStatus != 200 {
		t.Errorf("an agent on localhost naming a loopback interface: %+v", c)
	}
}

func TestSameOrigin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"https://s.example/a2a", "https://s.example:443/rpc", true},
		{"http://127.0.0.1:8080/a2a/v1", "http://127.0.0.1:8080/a2a/v1/rpc", true},
		{"https://s.example/a2a", "https://evil.example/rpc", false},
		{"https://s.example/a2a", "http://s.example/rpc", false},
		{"https://s.example/a2a", "https://s.example:8443/rpc", false},
	} {
		if got := sameOrigin(c.a, c.b); got != c.want {
			t.Errorf("sameOrigin(%s, %s) = %v", c.a, c.b, got)
		}
	}
}

// TestRedirectsFollowTheCallSite: the card follows no redirect (it is
// served at its well-known path, A2A-09), a call follows a 307 or 308 on
// its interface's origin and takes a 302 as the reply.
func TestRedirectsFollowTheCallSite(t *testing.T) {
	var elsewhere atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case CardPath:
			http.Redirect(w, r, "/card.json", http.StatusTemporaryRedirect)
		case "/card.json":
			elsewhere.Store(true)
		case "/rpc307":
			http.Redirect(w, r, "/rpc", http.StatusTemporaryRedirect)
		case "/rpc302":
			http.Redirect(w, r, "/rpc", http.StatusFound)
		case "/rpc":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"status":{"state":"TASK_STATE_COMPLETED"}}}}`))
		}
	}))
	defer srv.Close()
	cfg := Config{BaseURL: srv.URL, Timeout: 2 * time.Second}
	ctx := context.Background()
	if _, call, err := Discover(ctx, cfg, "a2a/card"); err == nil || call.HTTPStatus != http.StatusTemporaryRedirect || elsewhere.Load() {
		t.Errorf("the card's redirect: err %v, HTTP %d, followed %v; want the 307 as the reply", err, call.HTTPStatus, elsewhere.Load())
	}
	for path, want := range map[string]int{"/rpc307": 200, "/rpc302": http.StatusFound} {
		c := NewClient(cfg, Card{Endpoint: srv.URL + path, Version: V10}).Send(ctx, "a2a/get_products/valid", "get_products", map[string]any{})
		if c.HTTPStatus != want {
			t.Errorf("%s: HTTP %d, want %d", path, c.HTTPStatus, want)
		}
	}
}
