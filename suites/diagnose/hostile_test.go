package diagnose_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/suites/diagnose"
)

// TestHostileStringsReachNoTerminal: a seller whose challenge, metadata and
// brand.json carry terminal escapes, bidi overrides and the token it was
// sent gets them printed as '?' and REDACTED — in the text and the JSON.
// (Control characters cannot come in a header: the HTTP client refuses the
// reply, and that failure is printed cleaned too.)
func TestHostileStringsReachNoTerminal(t *testing.T) {
	const token = "eyJhbGciOiJub25lIn0.eyJhdWQiOiJ4In0.c2VjcmV0LXRva2Vu"
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prm := srv.URL + "/.well-known/oauth-protected-resource/mcp"
		switch r.URL.Path {
		case "/mcp":
			echo := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			w.Header().Set("WWW-Authenticate", "Bearer error=\"invalid_token\u202e\", error_description=\"got "+echo+"\", resource_metadata=\""+prm+"\"")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32028,"message":"no"}}`))
		case "/.well-known/oauth-protected-resource/mcp":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"resource":"\u001b[2J` + token + `","authorization_servers":["\u202ehttp://x\u001b]0;title\u0007"],"scopes_supported":["\u001b[5m"]}`))
		case "/.well-known/brand.json":
			w.Header().Set("Content-Type", "application/json\x1b[1m")
			_, _ = w.Write([]byte(`{"agents":[{"url":"` + srv.URL + `/mcp","jwks_uri":"/jwks\u001b[0m"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	endpoint := srv.URL + "/mcp"
	rep := diagnose.Run(context.Background(), diagnose.Config{MCP: mcp.Config{Endpoint: endpoint, BearerToken: token, Timeout: 5 * time.Second,
		Guard: fetch.NewGuard(fetch.GuardConfig{Agents: []string{endpoint}})}, LocalFetch: true, Now: clock})
	var text, js strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "json": js.String()} {
		// (A JSON value is shown JSON-encoded: an escape there is the six
		// characters \u001b, which no terminal acts on.)
		if strings.ContainsAny(out, "\x1b\x07\u202e") {
			t.Errorf("the %s output carries a control or bidi character:\n%s", name, out)
		}
		if strings.Contains(out, "c2VjcmV0LXRva2Vu") {
			t.Errorf("the %s output shows the token", name)
		}
	}
	if rep.ExitCode() != 1 || !strings.Contains(text.String(), `error="invalid_token?"`) || !strings.Contains(text.String(), "?[2J") {
		t.Errorf("exit %d; the refusal is not shown cleaned:\n%s", rep.ExitCode(), text.String())
	}
}
