package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
)

func TestCallToolReturnsTheSellersRawBytes(t *testing.T) {
	ctx := context.Background()
	url, stop, err := seller.Start(ctx, seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	const token = "s3cret-token-value"
	s, _, err := mcp.Dial(ctx, mcp.Config{Endpoint: url, BearerToken: token, Timeout: 5 * time.Second}, "mcp/initialize")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Initialize.Result == nil || !strings.Contains(string(s.Initialize.Result), `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize result not recorded: %s", s.Initialize.Message)
	}

	call := s.CallTool(ctx, "mcp/get_products/context", "get_products",
		map[string]any{"brief": "sports", "context": map[string]any{"n": 1}}, evidence.PurposeContext)
	if call.HarnessError != "" || call.HTTPStatus != http.StatusOK || call.RPCError != nil {
		t.Fatalf("call = %+v", call)
	}
	var result struct {
		StructuredContent map[string]json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(call.Result, &result); err != nil {
		t.Fatal(err)
	}
	if string(result.StructuredContent["context"]) != `{"n":1}` {
		t.Errorf("context in the raw result = %s", result.StructuredContent["context"])
	}
	if !call.Has(evidence.PurposeContext) || call.Tool != "get_products" || len(call.Exchanges) == 0 {
		t.Errorf("call metadata = %+v", call)
	}
	for _, x := range call.Exchanges {
		if got := x.RequestHeaders.Get("Authorization"); got != "" && strings.Contains(got, token) {
			t.Errorf("the stored exchange holds the token: %q", got)
		}
	}

	list := s.ListTools(ctx, "mcp/tools/list")
	if !strings.Contains(string(list.Result), `"name":"get_products"`) {
		t.Errorf("tools/list result = %s", list.Result)
	}
}

func TestAToolErrorTheSDKCannotDecodeIsStillRecorded(t *testing.T) {
	// An unknown content type makes the go-sdk's CallTool fail; the raw
	// reply must still be the evidence, not a harness error.
	srv := sdk.NewServer(&sdk.Implementation{Name: "odd", Version: "0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "get_products", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "{}"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	odd := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write([]byte(strings.Replace(rec.Body.String(), `"type":"text"`, `"type":"adcp_blob"`, 1)))
	})
	ts := httptest.NewServer(odd)
	defer ts.Close()
	ctx := context.Background()
	s, _, err := mcp.Dial(ctx, mcp.Config{Endpoint: ts.URL, Timeout: 5 * time.Second}, "mcp/initialize")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call := s.CallTool(ctx, "mcp/get_products/valid", "get_products", map[string]any{})
	if call.HarnessError != "" {
		t.Fatalf("harness error %q for a reply the seller sent", call.HarnessError)
	}
	if !strings.Contains(string(call.Result), `"type":"adcp_blob"`) {
		t.Fatalf("raw result = %s", call.Result)
	}
}

func TestASilentSellerIsAHarnessErrorWithinTheTimeout(t *testing.T) {
	url, stop := hostile.Silent()
	defer stop()
	start := time.Now()
	_, _, err := mcp.Dial(context.Background(), mcp.Config{Endpoint: url, Timeout: 300 * time.Millisecond}, "mcp/initialize")
	var he *mcp.HarnessError
	if !errors.As(err, &he) {
		t.Fatalf("err = %v, want a *HarnessError", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Dial took %v against a silent seller with a 300ms timeout", took)
	}
}

func TestAToolCallThatHangsIsAHarnessErrorWithinTheTimeout(t *testing.T) {
	// The tool hangs until the test ends (the go-sdk server does not cancel a
	// tool when the client hangs up).
	done := make(chan struct{})
	srv := sdk.NewServer(&sdk.Implementation{Name: "hang", Version: "0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "get_products", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			select {
			case <-ctx.Done():
			case <-done:
			}
			return nil, errors.New("released")
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	defer close(done)
	ctx := context.Background()
	s, _, err := mcp.Dial(ctx, mcp.Config{Endpoint: ts.URL, Timeout: 400 * time.Millisecond}, "mcp/initialize")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	call := s.CallTool(ctx, "mcp/get_products/valid", "get_products", map[string]any{})
	if call.HarnessError == "" || call.Message != nil {
		t.Fatalf("call = %+v, want a harness error", call)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("CallTool took %v with a 400ms timeout", took)
	}
}

// A seller that sends its response headers and then never the JSON-RPC
// response (an endless SSE stream of progress notifications) gives a call
// that proves nothing: a harness error naming the status and --timeout,
// never an answered call with no message (which a report would show as a
// passed step).
func TestAResponseThatNeverComesAfterItsHeadersIsAHarnessError(t *testing.T) {
	h := hostile.StartMCP(hostile.EndlessStream)
	defer h.Stop()
	ctx := context.Background()
	s, _, err := mcp.Dial(ctx, mcp.Config{Endpoint: h.URL, Timeout: 400 * time.Millisecond}, "mcp/initialize")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call := s.CallTool(ctx, "mcp/get_products/valid", "get_products", map[string]any{})
	if call.Message != nil || !strings.Contains(call.HarnessError, "within the call timeout (HTTP 200") || !strings.Contains(call.HarnessError, "--timeout") {
		t.Fatalf("call: message %q, harness error %q; want a harness error naming HTTP 200 and --timeout", call.Message, call.HarnessError)
	}
	if call.Answered() {
		t.Fatal("a call that timed out counts as answered")
	}
}

// A URL the seller names on another origin (a jwks_uri on a key host) is
// fetched without the user's headers, which may carry credentials; an
// http or private one is not fetched at all.
func TestGetSendsTheUsersHeadersToTheTargetsOriginOnly(t *testing.T) {
	var got http.Header
	keys := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"keys":[]}`))
	}))
	defer keys.Close()
	endpoint := "https://127.0.0.1:1/mcp"
	cfg := mcp.Config{Endpoint: endpoint, Header: http.Header{"X-Api-Key": {"user-api-key-0123456789"}}, Timeout: 2 * time.Second,
		Guard: fetch.NewGuard(fetch.GuardConfig{Agents: []string{endpoint}, TLS: keys.Client().Transport.(*http.Transport).TLSClientConfig})}
	c := mcp.Get(context.Background(), cfg, "mcp/hook/jwks", keys.URL+"/jwks.json", evidence.PurposeHookKeys)
	if c.HTTPStatus != 200 || got == nil {
		t.Fatalf("the cross-origin fetch did not go: %+v", c)
	}
	if v := got.Get("X-Api-Key"); v != "" {
		t.Errorf("the user's X-Api-Key went to another origin: %q", v)
	}
	public := cfg
	public.Endpoint, public.Guard = "https://seller.example.com/mcp", nil
	if c := mcp.Get(context.Background(), public, "mcp/hook/jwks", "https://10.1.2.3/jwks.json"); !strings.Contains(c.HarnessError, "not a public address") {
		t.Errorf("a private address named by a public seller was fetched: %+v", c)
	}
}

// A public seller cannot reach the user's network through a name: the
// name a cross-origin URL carries is resolved once, and any private,
// loopback or link-local answer refuses the fetch before a connection is
// made (the key server below, on loopback, is never reached).
func TestGetRefusesANameThatResolvesToAPrivateAddress(t *testing.T) {
	reached := false
	keys := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"keys":[]}`))
	}))
	defer keys.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(keys.URL, "https://"))
	for _, tc := range []struct {
		name    string
		answers []string
		want    string
	}{
		{"loopback", []string{"127.0.0.1"}, "resolves to 127.0.0.1, not globally routable"},
		{"private among public answers", []string{"93.184.215.14", "10.0.0.9"}, "resolves to 10.0.0.9"},
		{"link-local (the cloud metadata service)", []string{"169.254.169.254"}, "resolves to 169.254.169.254"},
		{"IPv4-mapped loopback", []string{"::ffff:127.0.0.1"}, "resolves to 127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint := "https://seller.example.com/mcp"
			resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
				if host == "seller.example.com" {
					return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil // the agent is public
				}
				var out []netip.Addr
				for _, a := range tc.answers {
					out = append(out, netip.MustParseAddr(a))
				}
				return out, nil
			}
			cfg := mcp.Config{Endpoint: endpoint, Timeout: 2 * time.Second,
				Guard: fetch.NewGuard(fetch.GuardConfig{Agents: []string{endpoint}, Net: fetch.Network{Resolve: resolve},
					TLS: keys.Client().Transport.(*http.Transport).TLSClientConfig})}
			c := mcp.Get(context.Background(), cfg, "mcp/hook/jwks", "https://keys.example.net:"+port+"/jwks.json", evidence.PurposeHookKeys)
			if !strings.Contains(c.HarnessError, tc.want) || c.HTTPStatus != 0 {
				t.Errorf("got status %d, harness error %q; want a refusal saying %q", c.HTTPStatus, c.HarnessError, tc.want)
			}
		})
	}
	if reached {
		t.Error("the key server on loopback was reached through a public name")
	}
}

// TestRedirectsFollowTheCallSite: a session follows a 307 or 308 on its
// own origin (an endpoint moved from /old to /mcp) and takes any other
// redirect as the reply; Get follows none.
func TestRedirectsFollowTheCallSite(t *testing.T) {
	sound := seller.New(seller.Options{})
	var cardAsked atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var code int
		switch {
		case r.URL.Path == "/card.json":
			cardAsked.Store(true)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
		case strings.HasPrefix(r.URL.Path, "/old/"):
			_, _ = fmt.Sscanf(r.URL.Path, "/old/%d", &code)
			http.Redirect(w, r, "/mcp", code)
		case r.URL.Path == "/.well-known/mcp.json":
			http.Redirect(w, r, "/card.json", http.StatusTemporaryRedirect)
		default:
			sound.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, code := range []int{301, 302, 303, 307, 308} {
		s, init, err := mcp.Dial(ctx, mcp.Config{Endpoint: fmt.Sprintf("%s/old/%d", srv.URL, code), Timeout: 5 * time.Second}, "mcp/initialize")
		moved := code == 307 || code == 308
		switch {
		case moved && err != nil:
			t.Errorf("%d to the same origin: %v", code, err)
		case !moved && (err == nil || init.HTTPStatus != code):
			t.Errorf("%d to the same origin: err %v, HTTP %d; want the %d as the reply", code, err, init.HTTPStatus, code)
		}
		if s != nil {
			_ = s.Close()
		}
	}
	c := mcp.Get(ctx, mcp.Config{Endpoint: srv.URL + "/mcp"}, "mcp/server_card/1", srv.URL+"/.well-known/mcp.json")
	if c.HTTPStatus != http.StatusTemporaryRedirect || c.Body != nil || cardAsked.Load() {
		t.Errorf("the server card's redirect: HTTP %d, body %s, followed %v; want the 307 as the reply", c.HTTPStatus, c.Body, cardAsked.Load())
	}
}
