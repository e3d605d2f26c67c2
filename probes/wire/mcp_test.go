package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func newMCPServer(t *testing.T, jsonResponse bool) (*httptest.Server, *serverLog, *[]string) {
	t.Helper()
	var authSeen []string
	s := mcp.NewServer(&mcp.Implementation{Name: "wire-test-seller", Version: "0.0.1"}, nil)
	s.AddTool(&mcp.Tool{Name: "get_products", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			authSeen = append(authSeen, req.Extra.Header.Get("Authorization"))
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "2 products"}},
				StructuredContent: map[string]any{"products": []any{map[string]any{"product_id": "p1"}, map[string]any{"product_id": "p2"}}},
			}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
	log := &serverLog{}
	srv := httptest.NewServer(log.wrap(h))
	t.Cleanup(srv.Close)
	return srv, log, &authSeen
}

func TestMCPCallToolCapture(t *testing.T) {
	for _, tc := range []struct {
		name         string
		jsonResponse bool
	}{{"sse", false}, {"json", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			srv, log, authSeen := newMCPServer(t, tc.jsonResponse)
			rec := &Recorder{}
			tr := &Transport{Recorder: rec, BearerToken: testToken}
			client := mcp.NewClient(&mcp.Implementation{Name: "adcp-conform", Version: "0.0.1"}, &mcp.ClientOptions{
				MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
				Capabilities:   &mcp.ClientCapabilities{},
			})
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint: srv.URL, HTTPClient: tr.client(), DisableStandaloneSSE: true, MaxRetries: -1,
			}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer cs.Close()

			cctx, capt := WithCapture(ctx, "get_products/basic")
			res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "get_products", Arguments: map[string]any{"brief": "shoes"}})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if len(res.Content) != 1 {
				t.Fatalf("SDK view: %d content items, want 1", len(res.Content))
			}
			msg, x, err := capt.Response(ctx)
			if err != nil {
				t.Fatalf("Response: %v", err)
			}
			if x.ProbeID != "get_products/basic" || x.Method != http.MethodPost || x.Status != http.StatusOK {
				t.Errorf("exchange = %s (probe %q)", x, x.ProbeID)
			}
			if x.SSE == tc.jsonResponse {
				t.Errorf("SSE = %v with JSONResponse %v", x.SSE, tc.jsonResponse)
			}

			// The stored body is byte-identical to what the server wrote.
			sv := log.find(`"tools/call"`)
			if sv == nil {
				t.Fatal("server saw no tools/call")
			}
			if !bytes.Equal(x.ResponseBody, sv.respBody) {
				t.Errorf("stored body differs from the served bytes:\nstored %q\nserved %q", x.ResponseBody, sv.respBody)
			}
			if !bytes.Equal(x.RequestBody, sv.reqBody) {
				t.Errorf("stored request differs from the received bytes:\nstored %q\nreceived %q", x.RequestBody, sv.reqBody)
			}
			// The message is the exact JSON-RPC response inside those bytes.
			if !bytes.Contains(sv.respBody, msg) {
				t.Errorf("message %q is not a slice of the served bytes %q", msg, sv.respBody)
			}
			result, rpcErr, id, err := SplitResponse(msg)
			if err != nil || rpcErr != nil || id == nil {
				t.Fatalf("SplitResponse: result %s error %s id %s err %v", result, rpcErr, id, err)
			}
			wantResult := `{"content":[{"type":"text","text":"2 products"}],"structuredContent":{"products":[{"product_id":"p1"},{"product_id":"p2"}]}}`
			if string(result) != wantResult {
				t.Errorf("result bytes\n got %s\nwant %s", result, wantResult)
			}

			// The token was sent, and stored nowhere.
			if len(*authSeen) != 1 || (*authSeen)[0] != "Bearer "+testToken {
				t.Errorf("server saw Authorization %q", *authSeen)
			}
			if got := x.RequestHeaders.Values("Authorization"); len(got) != 1 || got[0] != Redacted {
				t.Errorf("stored Authorization = %q, want [%q]", got, Redacted)
			}
			if x.RequestHeaders.Get("Mcp-Protocol-Version") != "2025-06-18" {
				t.Errorf("Mcp-Protocol-Version = %q: the tee must not hide the session from the SDK", x.RequestHeaders.Get("Mcp-Protocol-Version"))
			}
			all, _ := json.Marshal(rec.Exchanges())
			if strings.Contains(string(all), testToken) {
				t.Error("the bearer token appears in the recorded exchanges")
			}
			if x.SecretEchoed {
				t.Error("SecretEchoed set although the server never echoed the token")
			}
			// initialize, notifications/initialized, tools/call at least.
			if n := len(rec.Exchanges()); n < 3 {
				t.Errorf("recorder holds %d exchanges, want >= 3", n)
			}
		})
	}
}

func TestMCPStandaloneStreamIsRecorded(t *testing.T) {
	ctx := testCtx(t)
	srv, _, _ := newMCPServer(t, false)
	rec := &Recorder{}
	tr := &Transport{Recorder: rec, BearerToken: testToken}
	client := mcp.NewClient(&mcp.Implementation{Name: "adcp-conform", Version: "0.0.1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: tr.client(), MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_products"}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	var get *Exchange
	for _, x := range rec.Exchanges() {
		if x.Method == http.MethodGet {
			get = &x
		}
	}
	if get == nil {
		t.Fatal("the standalone GET stream was not recorded")
	}
	if get.ProbeID != "" || !get.SSE || get.RequestHeaders.Get("Authorization") != Redacted {
		t.Errorf("GET exchange %s probe %q sse %v", get, get.ProbeID, get.SSE)
	}
}
