package suites

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// capsBody is a get_adcp_capabilities body the response schema accepts
// (protocol/get-adcp-capabilities-response.json: adcp with major_versions
// and idempotency, supported_protocols with at least one protocol).
const capsBody = `{"adcp":{"major_versions":[3],"supported_versions":["3.0","3.1"],"idempotency":{"supported":true,"replay_ttl_seconds":86400}},` +
	`"supported_protocols":["media_buy"]}`

// salesTools are the tools protocol/required-tasks.mdx requires of a seller
// declaring media_buy, with list_accounts as its account tool.
var salesTools = []string{"get_adcp_capabilities", "get_products", "create_media_buy", "update_media_buy", "get_media_buys",
	"get_media_buy_delivery", "provide_performance_feedback", "list_accounts"}

func capsCall(on catalogue.Transport, body string) evidence.Call {
	return cvOK(on, capabilitiesProbe, "get_adcp_capabilities", body, evidence.PurposeValid)
}

func TestCAP01Table(t *testing.T) {
	for _, on := range cvBoth {
		d := cvData(on)
		listed := cvListing(on, "get_adcp_capabilities", "get_products")
		cases := []judgeCase{
			{name: "adcp and supported_protocols", calls: []evidence.Call{listed, capsCall(on, capsBody)}, want: Pass},
			{name: "adcp absent", calls: []evidence.Call{listed, capsCall(on, `{"supported_protocols":["media_buy"]}`)},
				want: Fail, ptr: d + "/adcp"},
			{name: "adcp not an object", calls: []evidence.Call{listed, capsCall(on, `{"adcp":"3","supported_protocols":["media_buy"]}`)},
				want: Fail, ptr: d + "/adcp"},
			{name: "supported_protocols a string", calls: []evidence.Call{listed, capsCall(on, `{"adcp":{"major_versions":[3]},"supported_protocols":"media_buy"}`)},
				want: Fail, ptr: d + "/supported_protocols"},
			{name: "answered with an error", calls: []evidence.Call{listed,
				cvErr(on, capabilitiesProbe, "get_adcp_capabilities", `{"adcp_error":{"code":"SERVICE_UNAVAILABLE","message":"down"}}`)},
				want: Fail, ptr: "/result"},
			{name: "answered with an HTTP error", calls: []evidence.Call{listed, cvHTTP(on, capabilitiesProbe, "get_adcp_capabilities", 500, "busy")},
				want: Fail, msg: "HTTP 500"},
			// A gateway's 503 never reached the application: no evidence.
			{name: "refused by a gateway", calls: []evidence.Call{listed, cvHTTP(on, capabilitiesProbe, "get_adcp_capabilities", 503, "busy")},
				want: HarnessError, msg: "HTTP 503 Service Unavailable (gateway)"},
			{name: "keys are case-sensitive", calls: []evidence.Call{listed, capsCall(on, `{"ADCP":{"major_versions":[3]},"Supported_Protocols":["media_buy"]}`)},
				want: Fail, ptr: d + "/adcp"},
			{name: "not called", calls: []evidence.Call{listed}, want: Skip, msg: "was not called"},
			{name: "not run", calls: []evidence.Call{listed, notRun(cvID(on, capabilitiesProbe), evidence.Transport(on), evidence.KindToolCall, "the seller requires an account")},
				want: Skip, msg: "requires an account"},
			{name: "harness failed", calls: []evidence.Call{listed, harnessFailed(cvID(on, capabilitiesProbe), evidence.Transport(on), evidence.KindToolCall, "connection reset")},
				want: HarnessError, msg: "connection reset"},
		}
		if on == catalogue.MCP {
			cases = append(cases,
				// Seed 000: a client reads the JSON text item when there is no
				// structuredContent.
				judgeCase{name: "text fallback only", calls: []evidence.Call{listed, mcpResult("mcp/"+capabilitiesProbe, "get_adcp_capabilities",
					`{"content":[{"type":"text","text":`+quoteJSON(capsBody)+`}]}`)}, want: Pass},
				judgeCase{name: "text fallback without adcp", calls: []evidence.Call{listed, mcpResult("mcp/"+capabilitiesProbe, "get_adcp_capabilities",
					`{"content":[{"type":"text","text":`+quoteJSON(`{"supported_protocols":["media_buy"]}`)+`}]}`)}, want: Fail, ptr: "/result/content/0/text#/adcp"},
				judgeCase{name: "tools/list lacks the tool", calls: []evidence.Call{cvListing(on, "get_products")}, want: Fail, ptr: "/result/tools"},
			)
		} else {
			// One defect, one rule: a card without the skill is A2A-09's.
			cases = append(cases, judgeCase{name: "card lacks the skill", calls: []evidence.Call{cvListing(on, "get_products")},
				want: Skip, msg: "A2A-09"})
		}
		cvTable(t, "CAP-01", on, cases)
	}
}

// runSchemaSet is a loaded schema set whose manifest names a task no
// transcription knows (a newer release's).
func runSchemaSet(t *testing.T) *schemas.Set {
	t.Helper()
	rel := filepath.Join(t.TempDir(), "3.9.0")
	if err := os.MkdirAll(filepath.Join(rel, "core"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(rel, "core", "error.json"), []byte(`{"type":"object"}`), 0o644)
	_ = os.WriteFile(filepath.Join(rel, "manifest.json"), []byte(`{"tools":{"forecast_inventory":{"response_schema":"x.json"}}}`), 0o644)
	set, err := schemas.Load(rel)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestCAP02Table(t *testing.T) {
	set := runSchemaSet(t)
	for _, on := range cvBoth {
		l := cvList(on)
		signals := capsCall(on, `{"adcp":{"major_versions":[3]},"supported_protocols":["signals"]}`)
		media := capsCall(on, capsBody)
		cvTable(t, "CAP-02", on, []judgeCase{
			{name: "task names, no media_buy", calls: []evidence.Call{cvListing(on, "get_adcp_capabilities", "get_signals", "activate_signal"), signals}, want: Pass},
			// Tasks of the 3.1 manifest a hand-kept list once missed.
			{name: "validate_property_delivery, search_brands, creative_approval",
				calls: []evidence.Call{cvListing(on, "get_adcp_capabilities", "validate_property_delivery", "search_brands", "creative_approval"), signals}, want: Pass},
			{name: "3.2 lifecycle tasks", calls: []evidence.Call{cvListing(on, "get_adcp_capabilities", "list_products", "buy_products"), signals}, want: Pass},
			{name: "a task of the run's schema set", calls: []evidence.Call{cvListing(on, "get_adcp_capabilities", "forecast_inventory"), signals},
				opts: Options{Schemas: set}, want: Pass},
			{name: "that task without the schema set", calls: []evidence.Call{cvListing(on, "get_adcp_capabilities", "forecast_inventory"), signals},
				want: Fail, ptr: l + "/1"},
			{name: "camelCase name", calls: []evidence.Call{cvListing(on, "getProducts"), signals}, want: Fail, ptr: l + "/0"},
			{name: "media_buy with every required tool", calls: []evidence.Call{cvListing(on, salesTools...), media}, want: Pass},
			{name: "media_buy without update_media_buy", calls: []evidence.Call{cvListing(on, "get_adcp_capabilities", "get_products", "create_media_buy",
				"get_media_buys", "get_media_buy_delivery", "provide_performance_feedback", "sync_accounts"), media}, want: Fail, ptr: l, msg: "update_media_buy"},
			{name: "media_buy beside a protocol of another release", calls: []evidence.Call{cvListing(on, "get_adcp_capabilities", "get_products"),
				capsCall(on, `{"adcp":{"major_versions":[3]},"supported_protocols":[{"name":"future"},"media_buy"]}`)}, want: Fail, ptr: l, msg: "create_media_buy"},
			{name: "media_buy without an account tool", calls: []evidence.Call{cvListing(on, salesTools[:7]...), media}, want: Fail, ptr: l, msg: "sync_accounts"},
			{name: "listing not fetched", calls: []evidence.Call{media}, want: Skip, msg: "not fetched"},
		})
	}
	runJudgeTable(t, "CAP-02", catalogue.MCP, []judgeCase{
		{name: "tools/list answered with a JSON-RPC error", calls: []evidence.Call{{ProbeID: "mcp/tools/list", Transport: evidence.MCP, Kind: evidence.KindToolsList,
			Message: []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`), RPCError: []byte(`{"code":-32601,"message":"no"}`)}},
			want: Fail, ptr: "/error"},
		{name: "tools not a list", calls: []evidence.Call{cvToolsList(`{"get_products":{}}`)}, want: Fail, ptr: "/result/tools"},
		// MCP tools/list: tools is a list of Tool objects; a bare name is no tool.
		{name: "a tool given as a bare name fails", calls: []evidence.Call{cvToolsList(`[{"name":"get_adcp_capabilities","inputSchema":{"type":"object"}},"get_products",null]`)},
			want: Fail, ptr: "/result/tools/1", msg: "is a string, not a tool"},
		{name: "tools/list harness failed", calls: []evidence.Call{harnessFailed("mcp/tools/list", evidence.MCP, evidence.KindToolsList, "timeout")},
			want: HarnessError, msg: "timeout"},
	})
	runJudgeTable(t, "CAP-02", catalogue.A2A, []judgeCase{
		{name: "card fetch harness failed", calls: []evidence.Call{harnessFailed("a2a/card", evidence.A2A, evidence.KindHTTPGet, "timeout")},
			want: HarnessError, msg: "timeout"},
		{name: "skills not a list", calls: []evidence.Call{cvCard(`"get_products"`)}, want: Fail, ptr: "/skills"},
		// One defect, one rule: A2A-09 names a card without
		// get_adcp_capabilities and a skill without an exact "id".
		{name: "a media_buy card without get_adcp_capabilities is A2A-09's", calls: []evidence.Call{cvListing(catalogue.A2A, salesTools[1:]...), capsCall(catalogue.A2A, capsBody)},
			want: Pass},
		{name: "a skill whose id key is spelled ID is A2A-09's", calls: []evidence.Call{cvCard(`[{"id":"get_adcp_capabilities"},{"ID":"get_products"}]`)},
			want: Pass},
		{name: "a skill that is no object is A2A-09's", calls: []evidence.Call{cvCard(`[{"id":"get_adcp_capabilities"},"get_products"]`)},
			want: Pass},
	})
}

// initialize records the MCP initialize answered with capabilities caps.
func initialize(caps string) evidence.Call {
	result := `{"protocolVersion":"2025-06-18","capabilities":` + caps + `,"serverInfo":{"name":"seller","version":"1"}}`
	return evidence.Call{ProbeID: "mcp/initialize", Transport: evidence.MCP, Kind: evidence.KindInitialize, HTTPStatus: 200,
		Message: []byte(`{"jsonrpc":"2.0","id":0,"result":` + result + `}`), Result: []byte(result)}
}

func TestCAP03Table(t *testing.T) {
	tasks := initialize(`{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}}`)
	// Seed 001's taskSupport table: "optional" for long-running tools,
	// "forbidden" (or absent) for instant ones.
	list := func(items string) evidence.Call { return cvToolsList(items) }
	runJudgeTable(t, "CAP-03", catalogue.MCP, []judgeCase{
		{name: "fits the table", calls: []evidence.Call{tasks, list(`[{"name":"get_products","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},` +
			`{"name":"list_creative_formats","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}}]`)}, want: Pass},
		{name: "instant tool without execution", calls: []evidence.Call{tasks, list(`[{"name":"get_adcp_capabilities","inputSchema":{"type":"object"}}]`)}, want: Pass},
		{name: "tool outside the table", calls: []evidence.Call{tasks, list(`[{"name":"get_signals_x","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]`)}, want: Pass},
		{name: "instant tool required", calls: []evidence.Call{tasks, list(`[{"name":"get_adcp_capabilities","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]`)},
			want: Fail, ptr: "/result/tools/0/execution/taskSupport"},
		{name: "long-running tool forbidden", calls: []evidence.Call{tasks, list(`[{"name":"list_creative_formats","inputSchema":{"type":"object"}},` +
			`{"name":"create_media_buy","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}}]`)},
			want: Fail, ptr: "/result/tools/1/execution/taskSupport"},
		{name: "long-running tool without execution", calls: []evidence.Call{tasks, list(`[{"name":"get_products","inputSchema":{"type":"object"}}]`)},
			want: Fail, ptr: "/result/tools/0/execution/taskSupport"},
		{name: "no tasks capability", calls: []evidence.Call{initialize(`{"tools":{}}`), list(`[{"name":"get_products","inputSchema":{"type":"object"}}]`)},
			want: Skip, msg: "tasks capability"},
		{name: "initialize not answered", calls: []evidence.Call{list(`[]`)}, want: Skip, msg: "initialize"},
		{name: "tools/list harness failed", calls: []evidence.Call{tasks, harnessFailed("mcp/tools/list", evidence.MCP, evidence.KindToolsList, "reset")},
			want: HarnessError, msg: "reset"},
		{name: "initialize harness failed", calls: []evidence.Call{harnessFailed("mcp/initialize", evidence.MCP, evidence.KindInitialize, "TLS handshake timeout")},
			want: HarnessError, msg: "TLS handshake timeout"},
	})
}

func TestCAP04Table(t *testing.T) {
	sandbox := tableTarget
	sandbox.Sandbox = true
	for _, on := range cvBoth {
		cvTable(t, "CAP-04", on, []judgeCase{
			{name: "no test controller", calls: []evidence.Call{cvListing(on, "get_adcp_capabilities", "get_products")}, want: Pass},
			{name: "test controller exposed", calls: []evidence.Call{cvListing(on, "get_adcp_capabilities", "comply_test_controller")},
				want: Fail, ptr: cvList(on) + "/1"},
			{name: "sandbox run", calls: []evidence.Call{cvListing(on, "comply_test_controller")}, target: &sandbox, want: Skip, msg: "sandbox"},
			{name: "listing not fetched", want: Skip, msg: "not fetched"},
		})
	}
}

func TestCAP05Table(t *testing.T) {
	const mcpJSON, serverJSON = "https://seller.example.com/.well-known/mcp.json", "https://seller.example.com/.well-known/server.json"
	card := func(url string, status int, body string) evidence.Call {
		return httpGet("mcp/card/"+filepath.Base(url), evidence.MCP, url, status, body, evidence.PurposeDiscovery)
	}
	// mcp-guide.mdx (AdCP Extension via MCP Server Card).
	const declared = `{"name":"seller","_meta":{"adcontextprotocol.org":{"adcp_version":"3.1","protocols_supported":["media_buy"]}}}`
	runJudgeTable(t, "CAP-05", catalogue.MCP, []judgeCase{
		{name: "mcp.json declares AdCP", calls: []evidence.Call{card(mcpJSON, 200, declared), card(serverJSON, 404, "")}, want: Pass},
		{name: "only server.json declares AdCP", calls: []evidence.Call{card(mcpJSON, 404, "not found"), card(serverJSON, 200, declared)}, want: Pass},
		{name: "card without the AdCP key", calls: []evidence.Call{card(mcpJSON, 200, `{"name":"seller","_meta":{"other.org":{}}}`)},
			want: Fail, ptr: "/_meta/adcontextprotocol.org"},
		{name: "no card", calls: []evidence.Call{card(mcpJSON, 404, ""), card(serverJSON, 404, "")}, want: Fail, msg: "HTTP 404"},
		{name: "card not JSON", calls: []evidence.Call{card(mcpJSON, 200, "<html>")}, want: Fail, msg: "not a JSON object"},
		{name: "not fetched", want: Skip, msg: "not fetched"},
		{name: "harness failed", calls: []evidence.Call{{ProbeID: "mcp/card/mcp.json", Transport: evidence.MCP, Kind: evidence.KindHTTPGet,
			Purposes: []evidence.Purpose{evidence.PurposeDiscovery}, HarnessError: "dial tcp: refused"}}, want: HarnessError, msg: "refused"},
	})
}
