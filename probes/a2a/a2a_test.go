package a2a

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
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
