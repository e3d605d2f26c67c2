package suites

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The SCHEMA tables run twice: on a tiny crafted schema set in testdata
// (release 9.9.0, so they run without ../shared: a closed product object,
// a submitted variant, an error schema) and on the published 3.1.19
// schemas from ../shared (skipped when absent). Shapes:
// media-buy/get-products-response.json (products, cache_scope required on a
// standard response; the status "failed" branch needs errors[]),
// get-products-async-response-submitted.json (status, task_id),
// core/error.json (code, message required; retry_after 1..3600; recovery
// an enum; additionalProperties true).

func craftedSchemas(t *testing.T) *schemas.Set {
	t.Helper()
	set, err := schemas.Load(filepath.Join("testdata", "schemas", "9.9.0"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// brokenSchemas is a crafted set whose get-products response and error
// schemas do not compile (a $ref to a file the release lacks).
func brokenSchemas(t *testing.T) Options {
	t.Helper()
	set, err := schemas.Load(filepath.Join("testdata", "schemas-broken", "9.9.0"))
	if err != nil {
		t.Fatal(err)
	}
	return Options{Schemas: set}
}

func publishedSchemas(t *testing.T) *schemas.Set {
	t.Helper()
	set, err := schemas.Load(shared.File(t, "spec/schemas/3.1.19"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// longProducts is a completed get_products body of n products, the one at
// bad (if any) carrying a member the closed product object refuses.
func longProducts(n, bad int) string {
	items := make([]string, n)
	for i := range items {
		extra := ""
		if i == bad {
			extra = `,"x_extra":true`
		}
		items[i] = fmt.Sprintf(`{"product_id":"p%d"%s}`, i, extra)
	}
	return `{"status":"completed","products":[` + strings.Join(items, ",") + `]}`
}

// stopAfter is o with a Stop that lets n replies be validated, then says
// the run's deadline was hit.
func stopAfter(o Options, n int) Options {
	asked := 0
	o.Stop = func() string {
		if asked++; asked > n {
			return "the run deadline (30s) was hit"
		}
		return ""
	}
	return o
}

// schemaNoSet are the cases without schemas, the same for every set.
func schemaNoSet(call evidence.Call) []judgeCase {
	return []judgeCase{
		{name: "no schemas loaded skips", calls: []evidence.Call{call}, want: Skip, msg: "no schemas were loaded"},
		{name: "schemas that could not be fetched skip with the reason", calls: []evidence.Call{call},
			opts: Options{SchemasUnavailable: "fetching https://adcontextprotocol.org/schemas/3.1.19/: 404"}, want: Skip, msg: SchemasUnavailablePrefix + "fetching"},
	}
}

func TestSCHEMA01CraftedTable(t *testing.T) {
	o := Options{Schemas: craftedSchemas(t)}
	ok := `{"status":"completed","products":[{"product_id":"p1","name":"Sports video"}],"adcp_version":"9.9"}`
	mcp := func(body string) evidence.Call {
		return mcpBody("mcp/get_products/valid", "get_products", body, false, evidence.PurposeValid)
	}
	a2a := func(state, body string) evidence.Call {
		return a2aResult("a2a/get_products/valid", "get_products", a2aTask(state, body), evidence.PurposeValid)
	}
	sc := "/result/structuredContent"
	runJudgeTable(t, "SCHEMA-01", catalogue.MCP, append([]judgeCase{
		{name: "a conformant body passes", calls: []evidence.Call{mcp(ok)}, opts: o, want: Pass},
		{name: "an extra member where the schema leaves additionalProperties open passes", calls: []evidence.Call{mcp(`{"status":"completed","products":[],"x_extra":1}`)}, opts: o, want: Pass},
		{name: "no adcp_version echo is judged against the loaded release", calls: []evidence.Call{mcp(`{"status":"completed","products":[]}`)}, opts: o, want: Pass},
		{name: "a submitted body is judged against the submitted variant", calls: []evidence.Call{mcp(`{"status":"submitted","task_id":"task_1"}`)}, opts: o, want: Pass},
		{name: "a submitted body without task_id fails its variant", calls: []evidence.Call{mcp(`{"status":"submitted"}`)}, opts: o, want: Fail, ptr: sc,
			msg: "get-products-async-response-submitted.json"},
		{name: "a required member absent fails", calls: []evidence.Call{mcp(`{"status":"completed"}`)}, opts: o, want: Fail, ptr: sc},
		{name: "a wrong type fails at its pointer", calls: []evidence.Call{mcp(`{"status":"completed","products":{"product_id":"p1"}}`)}, opts: o, want: Fail, ptr: sc + "/products"},
		{name: "a closed object's extra member fails (additionalProperties false honoured)",
			calls: []evidence.Call{mcp(`{"status":"completed","products":[{"product_id":"p1","x_extra":true}]}`)}, opts: o, want: Fail, ptr: sc + "/products/0", msg: "product.json"},
		{name: "the text fallback alone is validated at its pointer", calls: []evidence.Call{mcpResult("mcp/get_products/valid", "get_products",
			`{"content":[{"type":"text","text":`+quoteJSON(`{"status":"completed","products":[{"name":7}]}`)+`}]}`, evidence.PurposeValid)},
			opts: o, want: Fail, ptr: "/result/content/0/text#/products/0"},
		{name: "a body served in another release is not judged", calls: []evidence.Call{mcp(`{"status":"completed","products":7,"adcp_version":"3.0"}`)}, opts: o, want: Skip, msg: noSuccess},
		{name: "a task the release has no schema for is not judged", calls: []evidence.Call{mcpBody("mcp/list_creative_formats/valid", "list_creative_formats", `{"status":"completed","formats":7}`, false, evidence.PurposeValid)},
			opts: o, want: Skip, msg: noSuccess},
		{name: "an error result is SCHEMA-02's", calls: []evidence.Call{mcpBody("mcp/get_products/unknown_id", "get_products", `{"adcp_error":{"code":"X","message":"m"}}`, true, evidence.PurposeErrorUnknownID)},
			opts: o, want: Skip, msg: noSuccess},
		{name: "a success carrying an adcp_error is not validated as a success", calls: []evidence.Call{mcp(`{"status":"completed","products":7,"adcp_error":{"code":"X","message":"m"}}`)},
			opts: o, want: Skip},
		{name: "no evidence skips", opts: o, want: Skip, msg: noSuccess},
		{name: "a harness error is the harness's", calls: []evidence.Call{harnessFailed("mcp/get_products/valid", evidence.MCP, evidence.KindToolCall, "EOF", evidence.PurposeValid)}, opts: o, want: HarnessError},
		{name: "a schema that does not compile is a harness error, never the seller's failure", calls: []evidence.Call{mcp(ok)}, opts: brokenSchemas(t),
			want: HarnessError, msg: "could not be applied"},
		{name: "a violation found elsewhere still fails beside an unvalidated reply", calls: []evidence.Call{mcp(ok),
			mcpBody("mcp/get_signals/valid", "get_signals", `{"status":"completed"}`, false, evidence.PurposeValid)}, opts: brokenSchemas(t),
			want: Fail, ptr: sc},
		{name: "a list broken only past its detailed items fails at the list, saying so", calls: []evidence.Call{mcp(longProducts(20, 18))}, opts: o, want: Fail,
			ptr: sc + "/products", msg: "breaks the schema past its first 16 items, or as a whole: it holds 20 items"},
		{name: "a long list of sound items passes", calls: []evidence.Call{mcp(longProducts(20, -1))}, opts: o, want: Pass},
		{name: "a reply left unvalidated at the run's deadline is a harness error saying so, never a pass", calls: []evidence.Call{mcp(ok)},
			opts: stopAfter(o, 0), want: HarnessError, msg: "the run deadline (30s) was hit before this reply was judged"},
		{name: "a violation found before the deadline stands", calls: []evidence.Call{
			mcpBody("mcp/get_products/a", "get_products", `{"status":"completed"}`, false, evidence.PurposeValid),
			mcpBody("mcp/get_products/b", "get_products", ok, false, evidence.PurposeValid)},
			opts: stopAfter(o, 1), want: Fail, ptr: sc},
	}, schemaNoSet(mcp(`{"status":"completed","products":7}`))...))
	runJudgeTable(t, "SCHEMA-01", catalogue.A2A, append([]judgeCase{
		{name: "a conformant DataPart passes", calls: []evidence.Call{a2a("completed", ok)}, opts: o, want: Pass},
		{name: "a wrong type in the DataPart fails at its pointer", calls: []evidence.Call{a2a("completed", `{"status":"completed","products":"none"}`)},
			opts: o, want: Fail, ptr: "/result/artifacts/0/parts/0/data/products"},
		{name: "a failed task is SCHEMA-02's", calls: []evidence.Call{a2a("failed", `{"adcp_error":{"code":"X","message":"m"}}`)}, opts: o, want: Skip},
		{name: "a harness error is the harness's", calls: []evidence.Call{harnessFailed("a2a/get_products/valid", evidence.A2A, evidence.KindToolCall, "EOF", evidence.PurposeValid)}, opts: o, want: HarnessError},
	}, schemaNoSet(a2a("completed", ok))...))
}

func TestSCHEMA01PublishedTable(t *testing.T) {
	o := Options{Schemas: publishedSchemas(t)}
	mcp := func(body string) evidence.Call {
		return mcpBody("mcp/get_products/valid", "get_products", body, false, evidence.PurposeValid)
	}
	sc := "/result/structuredContent"
	runJudgeTable(t, "SCHEMA-01", catalogue.MCP, []judgeCase{
		{name: "a standard response with products and cache_scope passes", calls: []evidence.Call{mcp(`{"status":"completed","products":[],"cache_scope":"public","adcp_version":"3.1"}`)}, opts: o, want: Pass},
		{name: "a submitted response with task_id passes its variant", calls: []evidence.Call{mcp(`{"status":"submitted","task_id":"task_1","adcp_version":"3.1"}`)}, opts: o, want: Pass},
		{name: "a standard response without cache_scope fails", calls: []evidence.Call{mcp(`{"status":"completed","products":[],"adcp_version":"3.1"}`)}, opts: o, want: Fail, ptr: sc},
		{name: "cache_scope outside its enum fails at its pointer", calls: []evidence.Call{mcp(`{"status":"completed","products":[],"cache_scope":"global","adcp_version":"3.1"}`)},
			opts: o, want: Fail, ptr: sc + "/cache_scope"},
		{name: "a body echoing 3.0 is not judged against 3.1.19", calls: []evidence.Call{mcp(`{"status":"completed","products":[],"adcp_version":"3.0"}`)}, opts: o, want: Skip},
	})
}

func TestSCHEMA02Table(t *testing.T) {
	crafted := Options{Schemas: craftedSchemas(t)}
	mcpErr := func(adcpErr string) evidence.Call {
		return mcpBody("mcp/get_products/unknown_id", "get_products", `{"adcp_error":`+adcpErr+`}`, true, evidence.PurposeErrorUnknownID)
	}
	a2aErr := func(adcpErr string) evidence.Call {
		return a2aResult("a2a/get_products/unknown_id", "get_products", a2aTask("failed", `{"adcp_error":`+adcpErr+`}`), evidence.PurposeErrorUnknownID)
	}
	good := `{"code":"PRODUCT_NOT_FOUND","message":"No such product","recovery":"correctable","details":{"product_id":"p9"}}`
	sc := "/result/structuredContent/adcp_error"
	cases := func(o Options) []judgeCase {
		return []judgeCase{
			{name: "a conformant error passes", calls: []evidence.Call{mcpErr(good)}, opts: o, want: Pass},
			{name: "an unknown code passes (the vocabulary is open)", calls: []evidence.Call{mcpErr(`{"code":"X_SELLER_SPECIFIC","message":"m"}`)}, opts: o, want: Pass},
			{name: "extra members pass (additionalProperties true)", calls: []evidence.Call{mcpErr(`{"code":"X","message":"m","trace":"abc"}`)}, opts: o, want: Pass},
			{name: "code not a string fails", calls: []evidence.Call{mcpErr(`{"code":42,"message":"m"}`)}, opts: o, want: Fail, ptr: sc + "/code", msg: "error.json"},
			{name: "message absent fails", calls: []evidence.Call{mcpErr(`{"code":"X"}`)}, opts: o, want: Fail, ptr: sc},
			{name: "retry_after 0 fails", calls: []evidence.Call{mcpErr(`{"code":"RATE_LIMITED","message":"m","retry_after":0}`)}, opts: o, want: Fail, ptr: sc + "/retry_after"},
			{name: "recovery outside its enum fails", calls: []evidence.Call{mcpErr(`{"code":"X","message":"m","recovery":"retry"}`)}, opts: o, want: Fail, ptr: sc + "/recovery"},
			{name: "an error in a JSON-RPC error's data is validated", calls: []evidence.Call{mcpRPCError("mcp/get_products/unknown_id", "get_products",
				`{"code":-32000,"message":"m","data":{"adcp_error":{"code":"X","message":7}}}`, evidence.PurposeErrorUnknownID)},
				opts: o, want: Fail, ptr: "/error/data/adcp_error/message"},
			{name: "an error in the text fallback alone is validated", calls: []evidence.Call{mcpTextOnly("mcp/get_products/unknown_id", `{"adcp_error":{"code":"","message":"m"}}`, true)},
				opts: o, want: Fail, ptr: "/result/content/0/text#/adcp_error/code"},
			{name: "no error skips", calls: []evidence.Call{urlNoURL}, opts: o, want: Skip, msg: noErrorObject},
			{name: "an error probe not run skips with its reason", calls: []evidence.Call{urlNotRun}, opts: o, want: Skip, msg: "not listed"},
			{name: "a harness error on an error probe is the harness's", calls: []evidence.Call{urlHarness}, opts: o, want: HarnessError},
		}
	}
	runJudgeTable(t, "SCHEMA-02", catalogue.MCP, append(cases(crafted), schemaNoSet(mcpErr(`{"code":42}`))...))
	runJudgeTable(t, "SCHEMA-02", catalogue.A2A, append([]judgeCase{
		{name: "a conformant error in the failed task passes", calls: []evidence.Call{a2aErr(good)}, opts: crafted, want: Pass},
		{name: "code not a string fails at its pointer", calls: []evidence.Call{a2aErr(`{"code":42,"message":"m"}`)}, opts: crafted, want: Fail,
			ptr: "/result/artifacts/0/parts/0/data/adcp_error/code"},
		{name: "no error skips", calls: []evidence.Call{a2aFile10("https://seller.example.com/x")}, opts: crafted, want: Skip, msg: noErrorObject},
		{name: "a harness error is the harness's", calls: []evidence.Call{a2aURLHarness}, opts: crafted, want: HarnessError},
		{name: "an error schema that does not compile is a harness error, never the seller's failure", calls: []evidence.Call{a2aErr(good)}, opts: brokenSchemas(t),
			want: HarnessError, msg: "could not be applied"},
		{name: "an error left unvalidated at the run's deadline is a harness error saying so", calls: []evidence.Call{a2aErr(good)}, opts: stopAfter(crafted, 0),
			want: HarnessError, msg: "the run deadline (30s) was hit before this reply was judged"},
	}, schemaNoSet(a2aErr(`{"code":42}`))...))
	t.Run("published", func(t *testing.T) {
		runJudgeTable(t, "SCHEMA-02", catalogue.MCP, cases(Options{Schemas: publishedSchemas(t)}))
	})
}
