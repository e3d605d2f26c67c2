package plan

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
)

// mutatingTasks are the AdCP tasks that create or change state.
var mutatingTasks = []string{"create_media_buy", "update_media_buy", "sync_accounts", "sync_creatives", "provide_performance_feedback"}

// calledTasks runs a full plan over MCP and A2A against the reference
// seller behind a recorder and returns which mutating tasks any request
// body named.
func calledTasks(t *testing.T, allow bool) []string {
	t.Helper()
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	h := seller.New(seller.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		for _, name := range mutatingTasks {
			if bytes.Contains(body, []byte(`"`+name+`"`)) && !strings.Contains(r.URL.Path, ".well-known") {
				mu.Lock()
				seen[name] = true
				mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	eps := seller.EndpointsAt(srv.URL)
	_, err := Execute(t.Context(), Config{MCP: mcp.Config{Endpoint: eps.MCP, Timeout: 5 * time.Second},
		A2A: a2a.Config{BaseURL: eps.A2A10, Timeout: 5 * time.Second}, AllowMutations: allow, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range mutatingTasks {
		if seen[name] {
			out = append(out, name)
		}
	}
	return out
}

// TestNoMutatingCallLeavesTheHarnessWithoutTheFlag: with mutations off, no
// request body names a mutating task, over MCP or A2A; with them on, the
// same recorder sees create_media_buy (so it would have noticed).
func TestNoMutatingCallLeavesTheHarnessWithoutTheFlag(t *testing.T) {
	if got := calledTasks(t, false); len(got) > 0 {
		t.Fatalf("mutating tasks called without --allow-mutations: %v", got)
	}
	if got := calledTasks(t, true); len(got) == 0 || got[0] != "create_media_buy" {
		t.Fatalf("with --allow-mutations the recorder saw %v; it cannot prove the negative", got)
	}
}
