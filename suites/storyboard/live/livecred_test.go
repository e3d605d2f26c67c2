package live

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// TestALiveStepCarriesTheLiveTokenAlone: a step marked Live reaches the
// seller with the live-mode principal's token as its only credential and
// none of the run's headers, on either face, and is recorded as "live".
func TestALiveStepCarriesTheLiveTokenAlone(t *testing.T) {
	const runTok, liveTok = "run-token-0123456789", "live-token-9876543210"
	var mu sync.Mutex
	var auths, runHeaders []string
	h := seller.New(seller.Options{BearerToken: runTok, LiveBearerToken: liveTok, Sandbox: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			auths = append(auths, r.Header.Values("Authorization")...)
			runHeaders = append(runHeaders, r.Header.Values("X-Run")...)
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	runHeader := http.Header{"X-Run": {"run-header"}}
	for _, face := range []string{"mcp", "a2a"} {
		t.Run(face, func(t *testing.T) {
			auths, runHeaders = nil, nil
			cfg := Config{LiveBearerToken: liveTok}
			if face == "mcp" {
				cfg.MCP = mcp.Config{Endpoint: srv.URL + "/mcp", BearerToken: runTok, Header: runHeader}
			} else {
				cfg.A2A = a2a.Config{BaseURL: srv.URL + "/a2a/v1", BearerToken: runTok, Header: runHeader}
			}
			var got []evidence.Call
			d := &dispatcher{cfg: cfg, add: func(c evidence.Call) evidence.Call { got = append(got, c); return c }}
			o := d.Call(t.Context(), storyboard.Request{ProbeID: "storyboard/gate/deny/deny_live_caller", Storyboard: "gate", Task: "comply_test_controller",
				Auth: &spec.Auth{Type: "api_key", FromTestKit: true}, Live: true,
				Args: map[string]any{"scenario": "force_creative_status", "account": map[string]any{"sandbox": true},
					"params": map[string]any{"creative_id": "comply-live-mode-probe-000", "status": "approved"}}})
			if o.Failure != "" {
				t.Fatalf("the call failed: %s", o.Failure)
			}
			if e, _ := o.Payload.(map[string]any)["error"].(string); e != "FORBIDDEN" {
				t.Errorf("the controller answered %v, want FORBIDDEN", o.Payload)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(auths) == 0 || slices.ContainsFunc(auths, func(a string) bool { return a != "Bearer "+liveTok }) {
				t.Errorf("Authorization sent: %q, want only the live token", auths)
			}
			if len(runHeaders) != 0 {
				t.Errorf("the run's --header went with the live step: %q", runHeaders)
			}
			i := slices.IndexFunc(got, func(c evidence.Call) bool { return c.ProbeID == "storyboard/gate/deny/deny_live_caller" })
			if i < 0 || got[i].Credential != "live" {
				t.Errorf("recorded %+v", got)
			}
		})
	}
}

// TestARefusedLiveCredentialIsAnErrorNamingTheFlag: a 401 on the live
// token proves nothing about the controller's gate; the step errs.
func TestARefusedLiveCredentialIsAnErrorNamingTheFlag(t *testing.T) {
	srv := httptest.NewServer(seller.New(seller.Options{BearerToken: "run-token-0123456789", LiveBearerToken: "live-token-9876543210", Sandbox: true}))
	defer srv.Close()
	d := &dispatcher{cfg: Config{MCP: mcp.Config{Endpoint: srv.URL + "/mcp", BearerToken: "run-token-0123456789"}, LiveBearerToken: "not-the-live-token"},
		add: func(c evidence.Call) evidence.Call { return c }}
	o := d.Call(t.Context(), storyboard.Request{ProbeID: "storyboard/gate/deny/deny_live_caller", Storyboard: "gate", Task: "comply_test_controller",
		Auth: &spec.Auth{Type: "api_key", FromTestKit: true}, Live: true,
		Args: map[string]any{"scenario": "force_creative_status", "account": map[string]any{"sandbox": true}}})
	if !strings.Contains(o.Failure, "--live-bearer-env") || !strings.Contains(o.Failure, "401") {
		t.Errorf("failure %q", o.Failure)
	}
}
