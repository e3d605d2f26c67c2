package plan

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
)

func TestCasesCoverEveryListedReadToolAndTheErrorProbes(t *testing.T) {
	cases := Cases([]string{"get_products", "get_media_buys", "create_media_buy"}, "n0")
	var ids []string
	for _, c := range cases {
		ids = append(ids, c.ID)
	}
	want := []string{
		"mcp/get_products/valid", "mcp/get_products/context", "mcp/get_media_buys/valid", "mcp/get_media_buys/context",
		"mcp/get_products/envelope_fields", "mcp/get_media_buys/envelope_fields",
		"mcp/get_products/error_version", "mcp/get_products/error_wrong_type", "mcp/get_media_buys/error_unknown_id",
	}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("case IDs:\n got %v\nwant %v", ids, want)
	}
	for _, c := range cases {
		if strings.Contains(c.ID, "/error_") != c.Fresh {
			t.Errorf("%s: Fresh = %v; error probes, and only they, get a session of their own", c.ID, c.Fresh)
		}
	}
}

func TestInputsMergeUnderTheProbesOwnFields(t *testing.T) {
	in := Inputs{
		All:   map[string]any{"account": map[string]any{"id": "acct-1", "sandbox": true}, "brief": "from all"},
		Tools: map[string]map[string]any{"get_products": {"account": map[string]any{"id": "acct-2"}}},
	}
	args := in.base("get_products")
	merge(args, map[string]any{"brief": "probe's own", "account": map[string]any{"region": "us"}})
	want := map[string]any{"account": map[string]any{"id": "acct-2", "sandbox": true, "region": "us"}, "brief": "probe's own"}
	if !reflect.DeepEqual(args, want) {
		t.Fatalf("merged = %v, want %v", args, want)
	}
	if in.All["account"].(map[string]any)["id"] != "acct-1" {
		t.Fatal("merging changed the user's inputs")
	}
}

func TestLoadInputsReadsYAMLAndRefusesUnknownKeys(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "inputs.yaml")
	if err := os.WriteFile(good, []byte("all:\n  account: {id: acct-1}\ntools:\n  get_products: {brief: hi}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := LoadInputs(good)
	if err != nil || in.Tools["get_products"]["brief"] != "hi" {
		t.Fatalf("LoadInputs = %+v, %v", in, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"everything": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadInputs(bad); err == nil {
		t.Fatal("an unknown top-level key was accepted")
	}
}

func TestExecuteRecordsEveryProbeAgainstTheReferenceSeller(t *testing.T) {
	ctx := context.Background()
	url, stop, err := seller.Start(ctx, seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	store, err := Execute(ctx, Config{MCP: mcp.Config{Endpoint: url, Timeout: 5 * time.Second}, Seed: 1,
		Inputs: Inputs{All: map[string]any{"account": map[string]any{"token": "user-secret-value"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"mcp/initialize", "mcp/tools/list", "mcp/get_products/valid", "mcp/get_products/error_version",
		"mcp/get_products/error_wrong_type", "mcp/get_media_buys/error_unknown_id", "mcp/list_creative_formats/envelope_fields"} {
		c, ok := store.Call(id)
		if !ok {
			t.Errorf("%s was not recorded", id)
			continue
		}
		if !c.Answered() && c.Kind != evidence.KindInitialize {
			t.Errorf("%s: not answered: %+v", id, c)
		}
	}
	for _, c := range store.Calls(evidence.ToolCalls(evidence.MCP)) {
		if c.NotRun != "" {
			if c.NotRun != NotAllowed && c.NotRun != NoReceiver {
				t.Errorf("%s: not run: %s", c.ProbeID, c.NotRun)
			}
			continue
		}
		if c.Result == nil {
			t.Errorf("%s: no raw result", c.ProbeID)
		}
		if strings.Contains(string(c.Arguments), "user-secret-value") {
			t.Errorf("%s: the stored arguments hold the user's credential: %s", c.ProbeID, c.Arguments)
		}
		if c.Has(evidence.PurposeContext) != (c.Context != nil) {
			t.Errorf("%s: context recorded = %s, purposes %v", c.ProbeID, c.Context, c.Purposes)
		}
	}
	errCall, _ := store.Call("mcp/get_products/error_version")
	if !strings.Contains(string(errCall.Result), `"isError":true`) || !strings.Contains(string(errCall.Result), "VERSION_UNSUPPORTED") {
		t.Errorf("error_version result = %s", errCall.Result)
	}
}

func TestExecuteAgainstASilentSellerIsAHarnessError(t *testing.T) {
	url, stop := hostile.Silent()
	defer stop()
	start := time.Now()
	store, err := Execute(context.Background(), Config{MCP: mcp.Config{Endpoint: url, Timeout: 300 * time.Millisecond}})
	var he *mcp.HarnessError
	if !errors.As(err, &he) {
		t.Fatalf("err = %v, want a *mcp.HarnessError", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("Execute took %v against a silent seller", time.Since(start))
	}
	if c, ok := store.Call("mcp/initialize"); !ok || c.HarnessError == "" {
		t.Fatalf("the failed initialize is not in the store: %+v", c)
	}
}

// demandingSeller serves get_products only with an account argument, as a
// real seller may, and get_adcp_capabilities freely.
func demandingSeller(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "demanding", Version: "0"}, nil)
	text := func(body string, isErr bool) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: body}}, IsError: isErr}
	}
	s.AddTool(&sdk.Tool{Name: "get_products", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args map[string]json.RawMessage
			_ = json.Unmarshal(req.Params.Arguments, &args)
			if args["account"] == nil {
				return text(`{"adcp_error":{"code":"INVALID_REQUEST","message":"account is required","recovery":"correctable"}}`, true), nil
			}
			return text(`{"status":"completed","products":[]}`, false), nil
		})
	s.AddTool(&sdk.Tool{Name: "get_adcp_capabilities", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(`{"status":"completed","adcp":{"major_versions":[3]},"supported_protocols":["media_buy"]}`, false), nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestAProbeRefusedForItsArgumentsIsMarkedAndTheErrorProbesAvoidIt(t *testing.T) {
	url := demandingSeller(t)
	store, err := Execute(t.Context(), Config{MCP: mcp.Config{Endpoint: url, Timeout: 5 * time.Second}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	valid, ok := store.Call("mcp/get_products/valid")
	if !ok || valid.Refused != "INVALID_REQUEST: account is required" {
		t.Fatalf("get_products/valid refused = %q", valid.Refused)
	}
	if c, ok := store.Call("mcp/get_adcp_capabilities/valid"); !ok || c.Refused != "" {
		t.Fatalf("get_adcp_capabilities/valid refused = %q", c.Refused)
	}
	if _, ok := store.Call("mcp/get_adcp_capabilities/error_version"); !ok {
		t.Error("the version probe did not move to the tool that answers the harness's arguments")
	}

	// With the account given as an input, get_products is usable again.
	store, err = Execute(t.Context(), Config{MCP: mcp.Config{Endpoint: url, Timeout: 5 * time.Second}, Seed: 1,
		Inputs: Inputs{Tools: map[string]map[string]any{"get_products": {"account": map[string]any{"account_id": "a1"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := store.Call("mcp/get_products/valid"); c.Refused != "" {
		t.Errorf("with --inputs, get_products/valid is still refused: %q", c.Refused)
	}
	if _, ok := store.Call("mcp/get_products/error_version"); !ok {
		t.Error("with --inputs, the version probe does not use get_products")
	}
}

// A seller that refuses initialize without a valid credential still gets
// both authentication probes: the refusal of the no-credential session is
// recorded as that probe's answer, and the random credential is tried too
// (AUTH-03 was skipped as not run).
func TestAuthProbesSurviveARefusedInitialize(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	cfg := Config{MCP: mcp.Config{Endpoint: srv.URL + "/mcp", BearerToken: "the-real-token-0123456789", Timeout: 2 * time.Second}}
	calls := authProbes(t.Context(), cfg, []string{"get_products", "get_adcp_capabilities"})
	got := map[string]string{}
	for _, c := range calls {
		got[c.ProbeID] = c.Credential
	}
	if got["mcp/auth/no_credential"] != "none" || got["mcp/auth/random_credential"] != "random" || len(calls) != 2 {
		t.Fatalf("probes %v, want the no-credential and the random-credential probe", got)
	}
	for _, c := range calls {
		if c.HTTPStatus != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want the 401 recorded", c.ProbeID, c.HTTPStatus)
		}
	}
}

func TestEnvelopeProbesPinAnAdvertisedRelease(t *testing.T) {
	for _, tc := range []struct {
		supported []string
		want      string
	}{
		{[]string{"3.0", "3.1"}, "3.1"},
		{[]string{"3.2"}, "3.2"},
		{[]string{"3.0", "3.2-beta.5", "4.1", "3.9"}, "4.1"},
		{[]string{"3.2-beta.5"}, "3.2-beta.5"},
		{nil, ""},
	} {
		if got := EnvelopePin(tc.supported); got != tc.want {
			t.Errorf("EnvelopePin(%v) = %q, want %q", tc.supported, got, tc.want)
		}
	}
	for _, pin := range []string{"3.2", ""} {
		for _, c := range EnvelopeCases([]string{"get_products"}, "n0", pin) {
			v, ok := c.Args["adcp_version"]
			if pin == "" && ok || pin != "" && v != pin {
				t.Errorf("pin %q: adcp_version = %v", pin, v)
			}
			for _, f := range []string{"idempotency_key", "context_id", "context", "push_notification_config", "governance_context", "ext"} {
				if _, ok := c.Args[f]; !ok {
					t.Errorf("%s lacks %s", c.ID, f)
				}
			}
		}
	}
}

func TestMajorVersionProbePrefersAUsableTool(t *testing.T) {
	c, ok := MajorVersionCase([]string{"get_products", "list_creative_formats"}, "n0", func(t string) bool { return t == "list_creative_formats" })
	if !ok || c.ID != "mcp/list_creative_formats/error_major_version" || c.Args["adcp_major_version"] != 99 || !c.Fresh ||
		!c.Has(evidence.PurposeErrorMajorVersion) {
		t.Fatalf("case = %+v, %v", c, ok)
	}
	if _, ok := MajorVersionCase([]string{"create_media_buy"}, "n0", nil); ok {
		t.Fatal("a major-version probe without a read tool")
	}
}
