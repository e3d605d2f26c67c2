package suites

import (
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// eoHidden is an error reply a client reads as an error although the error
// is not where a reader of the success body looks: on MCP an isError result
// whose structuredContent carries no adcp_error, so the detection order
// (transport-errors.mdx step 5) reads the text fallback; on A2A a completed task whose
// artifact holds the adcp_error DataPart before the real body, which the
// detection (step 2: artifacts[].parts[].data.adcp_error, whatever the
// state) reads although the body is the last DataPart. Every judge of an
// error reads it, as extract does (TestHiddenErrorsAreExtracted).
func eoHidden(t catalogue.Transport, probeID, adcpErr string, ps ...evidence.Purpose) evidence.Call {
	if t == catalogue.A2A {
		return a2aResult(probeID, "get_products", eoA2ATask("completed", `{"adcp_error":`+adcpErr+`}`, eoProducts), ps...)
	}
	return mcpResult(probeID, "get_products",
		`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+adcpErr+`}`)+`}],"isError":true,"structuredContent":{"status":"failed"}}`, ps...)
}

// eoHiddenPtr is where eoHidden puts the adcp_error.
func eoHiddenPtr(t catalogue.Transport) string {
	if t == catalogue.A2A {
		return "/result/artifacts/0/parts/1/data/adcp_error"
	}
	return "/result/content/0/text#/adcp_error"
}

// TestHiddenErrorsAreExtracted holds the hidden shapes to what the client
// flow (extract.FromJSONRPCResponse) reads: an error, at the pointer the
// judges name.
func TestHiddenErrorsAreExtracted(t *testing.T) {
	for _, tr := range []catalogue.Transport{catalogue.MCP, catalogue.A2A} {
		c := eoHidden(tr, "x", eoRateLimited)
		out, err := extract.FromJSONRPCResponse(extract.Transport(tr), c.Message)
		if err != nil || out.Error == nil {
			t.Fatalf("%s: extract reads no error: %v %+v", tr, err, out)
		}
		want := strings.TrimSuffix(eoHiddenPtr(tr), "#/adcp_error")
		if out.Pointer != want {
			t.Errorf("%s: extract reads the error at %s, the judges at %s", tr, out.Pointer, eoHiddenPtr(tr))
		}
		r := parseReply(c)
		if len(r.candidates()) == 0 || r.candidates()[0].ptr != eoHiddenPtr(tr) {
			t.Errorf("%s: the judges' candidates miss the error: %+v", tr, r.candidates())
		}
	}
}

// eoTables runs a table built for each transport of the rule.
func eoTables(t *testing.T, rule string, cases func(tr catalogue.Transport) []judgeCase) {
	for _, tr := range []catalogue.Transport{catalogue.MCP, catalogue.A2A} {
		t.Run(string(tr), func(t *testing.T) { runJudgeTable(t, rule, tr, cases(tr)) })
	}
}

// eoCommon are the rows every error-object judge shares: nothing observed,
// a success only, and a harness failure on an error probe.
func eoCommon(tr catalogue.Transport, none string) []judgeCase {
	return []judgeCase{
		{name: "no calls skip", want: Skip, msg: none},
		{name: "a success only skips", calls: []evidence.Call{eoSuccess(tr, eoProbe(tr, "get_products/valid"), eoProducts)}, want: Skip, msg: none},
		{name: "an error probe not run skips with its reason", calls: []evidence.Call{
			notRun(eoProbe(tr, "get_task_status/error_unknown_task"), eoEvT(tr), evidence.KindToolCall, "get_task_status is not listed", pTask)},
			want: Skip, msg: "get_task_status is not listed"},
		{name: "a harness failure on an error probe is an error", calls: []evidence.Call{
			harnessFailed(eoProbe(tr, "get_products/error_version"), eoEvT(tr), evidence.KindToolCall, "connection reset", pVersion)},
			want: HarnessError, msg: "connection reset"},
	}
}

func eoErr(tr catalogue.Transport, adcpErr string) evidence.Call {
	return eoError(tr, eoProbe(tr, "get_products/error_version"), adcpErr, "", pVersion)
}

func TestEOBJ01Table(t *testing.T) {
	eoTables(t, "EOBJ-01", func(tr catalogue.Transport) []judgeCase {
		p := eoErrPtr(tr)
		return append([]judgeCase{
			{name: "transport-errors.mdx's error passes", calls: []evidence.Call{eoErr(tr, eoRateLimited)}, want: Pass},
			// transport-errors.mdx validate(): code.length counts UTF-16 units; 32 astral characters are 64.
			{name: "a code of 64 UTF-16 units passes", calls: []evidence.Call{eoErr(tr, `{"code":"`+strings.Repeat("😀", 32)+`","message":"m"}`)}, want: Pass},
			// vector mcp-missing-code-field.
			{name: "an absent code fails", calls: []evidence.Call{eoErr(tr, `{"message":"m","recovery":"terminal"}`)}, want: Fail, ptr: p + "/code"},
			// vector mcp-invalid-code-type.
			{name: "a numeric code fails", calls: []evidence.Call{eoErr(tr, `{"code":429,"message":"m"}`)}, want: Fail, ptr: p + "/code"},
			// vector mcp-empty-code.
			{name: "an empty code fails", calls: []evidence.Call{eoErr(tr, `{"code":"","message":"m"}`)}, want: Fail, ptr: p + "/code"},
			{name: "a code of 65 units fails", calls: []evidence.Call{eoErr(tr, `{"code":"X_`+strings.Repeat("A", 63)+`","message":"m"}`)}, want: Fail, ptr: p + "/code", msg: "65"},
			// core/error.json requires message.
			{name: "an absent message fails", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","recovery":"transient"}`)}, want: Fail, ptr: p + "/message"},
			{name: "a numeric message fails", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":42}`)}, want: Fail, ptr: p + "/message"},
			{name: "a null message fails", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":null}`)}, want: Fail, ptr: p + "/message", msg: "null"},
			{name: "a null code fails", calls: []evidence.Call{eoErr(tr, `{"code":null,"message":"m"}`)}, want: Fail, ptr: p + "/code", msg: "null"},
			{name: "a boolean code fails", calls: []evidence.Call{eoErr(tr, `{"code":true,"message":"m"}`)}, want: Fail, ptr: p + "/code"},
			{name: "a code in a list fails", calls: []evidence.Call{eoErr(tr, `{"code":["RATE_LIMITED"],"message":"m"}`)}, want: Fail, ptr: p + "/code"},
			{name: "a repeated code, the first numeric, fails", calls: []evidence.Call{eoErr(tr, `{"code":429,"code":"RATE_LIMITED","message":"m"}`)}, want: Fail, ptr: p + "/code"},
			{name: "a repeated message, the last numeric, fails", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":"m","message":7}`)}, want: Fail, ptr: p + "/message"},
			{name: "an error read past the body fails", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), `{"code":"","message":"m"}`)},
				want: Fail, ptr: eoHiddenPtr(tr) + "/code"},
			{name: "a JSON-RPC error's adcp_error is judged", calls: []evidence.Call{
				eoRPC(tr, `{"code":-32029,"message":"Rate limit exceeded","data":{"adcp_error":{"code":"RATE_LIMITED","message":7}}}`)},
				want: Fail, ptr: "/error/data/adcp_error/message"},
		}, eoCommon(tr, noErrorObject)...)
	})
}

// eoRPC is a JSON-RPC error answering a call of transport tr.
func eoRPC(tr catalogue.Transport, rpcErr string) evidence.Call {
	c := mcpRPCError(eoProbe(tr, "get_products/valid"), "get_products", rpcErr)
	c.Transport = eoEvT(tr)
	return c
}

func TestEOBJ02Table(t *testing.T) {
	eoTables(t, "EOBJ-02", func(tr catalogue.Transport) []judgeCase {
		return append([]judgeCase{
			{name: "a small error passes", calls: []evidence.Call{eoErr(tr, eoRateLimited)}, want: Pass},
			// Policy (one unit with the 1 MB text limit): JSON.stringify(error).length, UTF-16 units.
			{name: "3000 é (6000 bytes, 3000 units) pass", calls: []evidence.Call{eoErr(tr, `{"code":"INVALID_REQUEST","message":"`+strings.Repeat("é", 3000)+`"}`)}, want: Pass},
			{name: "exactly 4096 units pass", calls: []evidence.Call{eoErr(tr, `{"code":"X","message":"`+strings.Repeat("a", 4096-len(`{"code":"X","message":""}`))+`"}`)}, want: Pass},
			{name: "4097 units fail", calls: []evidence.Call{eoErr(tr, `{"code":"X","message":"`+strings.Repeat("a", 4097-len(`{"code":"X","message":""}`))+`"}`)},
				want: Fail, ptr: eoErrPtr(tr), msg: "4097 UTF-16 code units"},
			{name: "2049 astral characters (4098 units) fail", calls: []evidence.Call{eoErr(tr, `{"code":"X","message":"`+strings.Repeat("😀", 2049)+`"}`)},
				want: Fail, ptr: eoErrPtr(tr)},
			{name: "an oversized error read past the body fails", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), `{"code":"X","message":"`+strings.Repeat("a", 4100)+`"}`)},
				want: Fail, ptr: eoHiddenPtr(tr)},
		}, eoCommon(tr, noErrorObject)...)
	})
}

func TestEOBJ03Table(t *testing.T) {
	// details {"note":"…"} serializes to 11 + len bytes.
	withNote := func(note string) string {
		return `{"code":"INVALID_REQUEST","message":"m","recovery":"correctable","details":{"note":"` + note + `"}}`
	}
	eoTables(t, "EOBJ-03", func(tr catalogue.Transport) []judgeCase {
		p := eoErrPtr(tr) + "/details"
		return append([]judgeCase{
			{name: "details of 499 bytes pass", calls: []evidence.Call{eoErr(tr, withNote(strings.Repeat("a", 488)))}, want: Pass},
			// transport-errors.mdx: sellers that omit details entirely are conformant; such an
			// error shows nothing of the size, so alone it skips.
			{name: "no details skip", calls: []evidence.Call{eoErr(tr, eoRateLimited)}, want: Skip, msg: noDetails},
			{name: "no details beside small details pass", calls: []evidence.Call{eoErr(tr, eoRateLimited), eoErr(tr, withNote("a"))}, want: Pass},
			{name: "repeated details, one large, fail", calls: []evidence.Call{eoErr(tr, `{"code":"X_A_B","message":"m","details":{"note":"`+strings.Repeat("a", 600)+`"},"details":{}}`)},
				want: Fail, ptr: p},
			{name: "details of 500 bytes fail", calls: []evidence.Call{eoErr(tr, withNote(strings.Repeat("a", 489)))}, want: Fail, ptr: p, msg: "500 bytes"},
			// transport-errors.mdx Size Guidance: "in UTF-8 — this matters for non-ASCII content".
			{name: "245 é are 490 bytes and fail", calls: []evidence.Call{eoErr(tr, withNote(strings.Repeat("é", 245)))}, want: Fail, ptr: p, msg: "501 bytes"},
			{name: "large details read past the body fail", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), withNote(strings.Repeat("a", 600)))},
				want: Fail, ptr: eoHiddenPtr(tr) + "/details"},
		}, eoCommon(tr, noDetails)...)
	})
}

func TestEOBJ04Table(t *testing.T) {
	eoTables(t, "EOBJ-04", func(tr catalogue.Transport) []judgeCase {
		p := eoErrPtr(tr) + "/recovery"
		return append([]judgeCase{
			{name: "transient passes", calls: []evidence.Call{eoErr(tr, eoRateLimited)}, want: Pass},
			{name: "terminal passes", calls: []evidence.Call{eoErr(tr, `{"code":"ACCOUNT_SUSPENDED","message":"m","recovery":"terminal"}`)}, want: Pass},
			// RULES EOBJ-04: "when present"; presence is EOBJ-10's SHOULD. An error
			// without it shows nothing of the value: alone, it skips.
			{name: "an absent recovery skips", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":"m"}`)}, want: Skip, msg: noRecovery},
			{name: "an absent recovery beside a valid one passes", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":"m"}`), eoErr(tr, eoRateLimited)}, want: Pass},
			{name: "a numeric recovery fails", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":"m","recovery":1}`)}, want: Fail, ptr: p, msg: "a number"},
			{name: "a list of recoveries fails", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":"m","recovery":["transient"]}`)}, want: Fail, ptr: p, msg: "an array"},
			{name: "a repeated recovery, one invalid, fails", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":"m","recovery":"fatal","recovery":"transient"}`)}, want: Fail, ptr: p, msg: `"fatal"`},
			// vector unknown-recovery-value: "deferred" is not a recovery value.
			{name: "an unknown value fails", calls: []evidence.Call{eoErr(tr, `{"code":"X_VENDOR_CUSTOM","message":"m","recovery":"deferred"}`)}, want: Fail, ptr: p},
			// error-compliance storyboard prose says "fatal", which is not in the recovery enum (core/error.json: transient, correctable, terminal).
			{name: "fatal fails", calls: []evidence.Call{eoErr(tr, `{"code":"VERSION_UNSUPPORTED","message":"m","recovery":"fatal"}`)}, want: Fail, ptr: p, msg: `"fatal"`},
			{name: "a different case fails", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":"m","recovery":"Transient"}`)}, want: Fail, ptr: p},
			{name: "null fails", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":"m","recovery":null}`)}, want: Fail, ptr: p, msg: "null"},
			{name: "a bad value read past the body fails", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), `{"code":"RATE_LIMITED","message":"m","recovery":"fatal"}`)},
				want: Fail, ptr: eoHiddenPtr(tr) + "/recovery"},
		}, eoCommon(tr, noRecovery)...)
	})
}

func TestEOBJ05Table(t *testing.T) {
	const none = "no standard error code observed"
	eoTables(t, "EOBJ-05", func(tr catalogue.Transport) []judgeCase {
		return append([]judgeCase{
			{name: "RATE_LIMITED transient passes", calls: []evidence.Call{eoErr(tr, eoRateLimited)}, want: Pass},
			{name: "VERSION_UNSUPPORTED correctable passes", calls: []evidence.Call{eoErr(tr, eoVersion)}, want: Pass},
			{name: "INVALID_REQUEST transient fails", calls: []evidence.Call{eoErr(tr, `{"code":"INVALID_REQUEST","message":"m","recovery":"transient"}`)},
				want: Fail, ptr: eoErrPtr(tr) + "/recovery"},
			// transport-errors.mdx: a vendor code's recovery is the seller's to choose.
			{name: "a vendor code is not judged", calls: []evidence.Call{eoErr(tr, `{"code":"X_STREAMHAUS_FLOOR_NOT_MET","message":"m","recovery":"transient"}`)}, want: Skip, msg: none},
			// One defect, one rule: an invalid value is EOBJ-04's, an absent one EOBJ-10's.
			{name: "an invalid recovery is not judged", calls: []evidence.Call{eoErr(tr, `{"code":"INVALID_REQUEST","message":"m","recovery":"fatal"}`)}, want: Skip, msg: none},
			{name: "an absent recovery is not judged", calls: []evidence.Call{eoErr(tr, `{"code":"INVALID_REQUEST","message":"m"}`)}, want: Skip, msg: none},
			{name: "a wrong recovery read past the body fails", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), `{"code":"RATE_LIMITED","message":"m","recovery":"terminal"}`)},
				want: Fail, ptr: eoHiddenPtr(tr) + "/recovery"},
		}, eoCommon(tr, none)...)
	})
}

func TestEOBJ06Table(t *testing.T) {
	eoTables(t, "EOBJ-06", func(tr catalogue.Transport) []judgeCase {
		p := eoErrPtr(tr) + "/code"
		return append([]judgeCase{
			{name: "a standard code passes", calls: []evidence.Call{eoErr(tr, eoRateLimited)}, want: Pass},
			// transport-errors.mdx's example vendor code.
			{name: "X_STREAMHAUS_FLOOR_NOT_MET passes", calls: []evidence.Call{eoErr(tr, `{"code":"X_STREAMHAUS_FLOOR_NOT_MET","message":"m","recovery":"correctable"}`)}, want: Pass},
			// A code that is absent or no string is EOBJ-01's: no code to judge here.
			{name: "an absent code is EOBJ-01's", calls: []evidence.Call{eoErr(tr, `{"message":"m"}`)}, want: Skip, msg: noStringCode},
			{name: "a numeric code is EOBJ-01's", calls: []evidence.Call{eoErr(tr, `{"code":429,"message":"m"}`)}, want: Skip, msg: noStringCode},
			{name: "a numeric code beside a standard one passes", calls: []evidence.Call{eoErr(tr, `{"code":429,"message":"m"}`), eoErr(tr, eoRateLimited)}, want: Pass},
			{name: "a repeated code, one nonstandard, fails", calls: []evidence.Call{eoErr(tr, `{"code":"Oops","code":"RATE_LIMITED","message":"m"}`)}, want: Fail, ptr: p},
			{name: "a camel-case code fails", calls: []evidence.Call{eoErr(tr, `{"code":"MediaBuyMissing","message":"m"}`)}, want: Fail, ptr: p},
			{name: "a lower-case vendor fails", calls: []evidence.Call{eoErr(tr, `{"code":"X_acme_FLOOR","message":"m"}`)}, want: Fail, ptr: p},
			{name: "a one-letter vendor fails", calls: []evidence.Call{eoErr(tr, `{"code":"X_A_FLOOR","message":"m"}`)}, want: Fail, ptr: p},
			{name: "a custom *_NOT_FOUND fails", calls: []evidence.Call{eoErr(tr, `{"code":"TASK_NOT_FOUND","message":"m"}`)}, want: Fail, ptr: p},
			{name: "a bad code read past the body fails", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), `{"code":"Oops","message":"m"}`)},
				want: Fail, ptr: eoHiddenPtr(tr) + "/code"},
		}, eoCommon(tr, noStringCode)...)
	})
}

func TestEOBJ07Table(t *testing.T) {
	withMsg := func(m string) string {
		return `{"code":"SERVICE_UNAVAILABLE","message":` + quoteJSON(m) + `,"recovery":"transient"}`
	}
	eoTables(t, "EOBJ-07", func(tr catalogue.Transport) []judgeCase {
		p := eoErrPtr(tr) + "/message"
		echoed := eoErr(tr, eoRateLimited)
		echoed.Exchanges = []wire.Exchange{{Method: "POST", Status: 200, SecretEchoed: true}}
		return append([]judgeCase{
			// transport-errors.mdx translateUpstreamError: "An internal error occurred".
			{name: "a generic message passes", calls: []evidence.Call{eoErr(tr, withMsg("An internal error occurred"))}, want: Pass},
			{name: "the agent's own host passes", calls: []evidence.Call{eoErr(tr, withMsg("See https://seller.example.com/status"))}, want: Pass},
			{name: "a public address passes", calls: []evidence.Call{eoErr(tr, withMsg("Resolver 8.8.8.8 is unreachable"))}, want: Pass},
			// Ordinary prose is not SQL or a stack frame; a four-part build version is not an IP.
			{name: "prose with SQL words passes", calls: []evidence.Call{eoErr(tr, `{"code":"PRODUCT_NOT_FOUND","message":"Unknown product.","recovery":"correctable","suggestion":"Select a product from the list get_products returns; update the campaign set-up."}`)}, want: Pass},
			{name: "a time in parentheses passes", calls: []evidence.Call{eoErr(tr, withMsg("Flights start at noon (UTC+2:00)."))}, want: Pass},
			{name: "a four-part build version passes", calls: []evidence.Call{eoErr(tr, `{"code":"VERSION_UNSUPPORTED","message":"m","recovery":"correctable","details":{"supported_versions":["3.1"],"build_version":"10.0.3.1"}}`)}, want: Pass},
			{name: "an SQL query fails", calls: []evidence.Call{eoErr(tr, withMsg("query failed: SELECT id FROM media_buys WHERE id = $1"))}, want: Fail, ptr: p, msg: "SQL"},
			{name: "a stack trace fails", calls: []evidence.Call{eoErr(tr, withMsg("boom at Object.handler (server.js:12:5)"))}, want: Fail, ptr: p, msg: "stack trace"},
			{name: "a file path fails", calls: []evidence.Call{eoErr(tr, withMsg("failed to open /srv/seller/config.yaml"))}, want: Fail, ptr: p, msg: "file path"},
			{name: "an SQL fragment fails", calls: []evidence.Call{eoErr(tr, withMsg(`pq: relation "media_buys" does not exist`))}, want: Fail, ptr: p, msg: "SQL"},
			{name: "an internal hostname fails", calls: []evidence.Call{eoErr(tr, withMsg("upstream db-1.prod.internal timed out"))}, want: Fail, ptr: p, msg: "internal hostname"},
			{name: "a private IP fails", calls: []evidence.Call{eoErr(tr, withMsg("upstream 10.0.3.7 timed out"))}, want: Fail, ptr: p, msg: "private IP"},
			{name: "a leak in details fails", calls: []evidence.Call{eoErr(tr, `{"code":"SERVICE_UNAVAILABLE","message":"m","recovery":"transient","details":{"host":"cache.svc.cluster.local"}}`)},
				want: Fail, ptr: eoErrPtr(tr) + "/details/host"},
			{name: "the caller's credential echoed fails", calls: []evidence.Call{echoed}, want: Fail, msg: "credential"},
			{name: "a leak read past the body fails", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), withMsg("at /home/app/db.py:7"))},
				want: Fail, ptr: eoHiddenPtr(tr) + "/message"},
		}, eoCommon(tr, noErrorObject)...)
	})
}

func TestEOBJ08Table(t *testing.T) {
	const none = "no error with documented details observed"
	rl := func(details string) string {
		return `{"code":"RATE_LIMITED","message":"m","retry_after":5,"recovery":"transient","details":` + details + `}`
	}
	eoTables(t, "EOBJ-08", func(tr catalogue.Transport) []judgeCase {
		p := eoErrPtr(tr) + "/details"
		return append([]judgeCase{
			// transport-errors.mdx's RATE_LIMITED details example.
			{name: "transport-errors.mdx's RATE_LIMITED details pass", calls: []evidence.Call{eoErr(tr, rl(`{"limit":100,"remaining":0,"window_seconds":60,"scope":"account"}`))}, want: Pass},
			// transport-errors.mdx: CONFLICT versions are number | string; unknown keys are open.
			{name: "a CONFLICT ETag and an extra key pass", calls: []evidence.Call{eoErr(tr, `{"code":"CONFLICT","message":"m","recovery":"transient","details":{"resource_id":"mb_1","expected_version":"W/\"3\"","current_version":5,"note":"x"}}`)}, want: Pass},
			{name: "a string limit fails", calls: []evidence.Call{eoErr(tr, rl(`{"limit":"30"}`))}, want: Fail, ptr: p + "/limit"},
			{name: "an unknown scope fails", calls: []evidence.Call{eoErr(tr, rl(`{"scope":"planet"}`))}, want: Fail, ptr: p + "/scope"},
			{name: "a lower-case currency fails", calls: []evidence.Call{eoErr(tr, `{"code":"BUDGET_TOO_LOW","message":"m","recovery":"correctable","details":{"minimum_budget":500,"currency":"usd"}}`)}, want: Fail, ptr: p + "/currency"},
			{name: "numeric setup steps fail", calls: []evidence.Call{eoErr(tr, `{"code":"ACCOUNT_SETUP_REQUIRED","message":"m","recovery":"correctable","details":{"setup_steps":[1]}}`)}, want: Fail, ptr: p + "/setup_steps"},
			{name: "an error without details skips", calls: []evidence.Call{eoErr(tr, eoRateLimited)}, want: Skip, msg: none},
			{name: "details of a code without a documented shape skip", calls: []evidence.Call{eoErr(tr, `{"code":"X_ACME_OOPS","message":"m","details":{"limit":"x"}}`)}, want: Skip, msg: none},
			{name: "bad details read past the body fail", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), rl(`{"remaining":"0"}`))},
				want: Fail, ptr: eoHiddenPtr(tr) + "/details/remaining"},
		}, eoCommon(tr, none)...)
	})
}

func TestEOBJ09Table(t *testing.T) {
	const none = "no error carried on two paths of one response"
	other := `{"code":"X_REFSELLER_OTHER","message":"Request rate exceeded","retry_after":5,"recovery":"transient"}`
	eoTables(t, "EOBJ-09", func(tr catalogue.Transport) []judgeCase {
		twoPaths := func(a, b string) evidence.Call {
			if tr == catalogue.A2A {
				// transport-errors.mdx detection steps 2 and 3: the artifact and the status message.
				return a2aResult("a2a/get_products/error_version", "get_products",
					`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"failed","message":{"role":"agent","messageId":"m1","parts":[{"kind":"data","data":{"adcp_error":`+b+`}}]}},"artifacts":[{"artifactId":"a1","parts":[{"kind":"data","data":{"adcp_error":`+a+`}}]}]}`, pVersion)
			}
			return mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+b+`}`)+`}],"isError":true,"structuredContent":{"adcp_error":`+a+`}}`, pVersion)
		}
		second := "/result/content/0/text#/adcp_error"
		if tr == catalogue.A2A {
			second = "/result/status/message/parts/0/data/adcp_error"
		}
		// withPayload is the error-handling page's example: on MCP
		// structuredContent carries adcp_error and payload.errors; on A2A
		// the artifact's adcp_error DataPart has a sibling DataPart with
		// errors. withRootErrors puts errors at the body's root instead.
		withPayload := func(env, errs string) evidence.Call {
			if tr == catalogue.A2A {
				return a2aResult("a2a/get_products/error_version", "get_products", eoA2ATask("failed", `{"adcp_error":`+env+`}`, `{"errors":`+errs+`}`), pVersion)
			}
			body := `{"adcp_error":` + env + `,"payload":{"errors":` + errs + `}}`
			return mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(eoProse)+`}],"isError":true,"structuredContent":`+body+`}`, pVersion)
		}
		withRootErrors := func(env, errs string) evidence.Call {
			if tr == catalogue.A2A {
				return a2aResult("a2a/get_products/error_version", "get_products", eoA2ATask("failed", `{"adcp_error":`+env+`,"errors":`+errs+`}`), pVersion)
			}
			body := `{"adcp_error":` + env + `,"errors":` + errs + `}`
			return mcpResult("mcp/get_products/error_version", "get_products",
				`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+env+`}`)+`}],"isError":true,"structuredContent":`+body+`}`, pVersion)
		}
		errorsAt, rootErrorsAt := "/result/structuredContent/payload/errors", "/result/structuredContent/errors"
		if tr == catalogue.A2A {
			errorsAt, rootErrorsAt = "/result/artifacts/0/parts/2/data/errors", "/result/artifacts/0/parts/1/data/errors"
		}
		return []judgeCase{
			{name: "two equal paths pass", calls: []evidence.Call{twoPaths(eoRateLimited, eoRateLimited)}, want: Pass},
			// Only code and recovery are compared: a message may differ.
			{name: "paths differing in message only pass", calls: []evidence.Call{twoPaths(eoRateLimited, `{"code":"RATE_LIMITED","message":"slow down","retry_after":5,"recovery":"transient"}`)}, want: Pass},
			{name: "paths disagreeing on code fail", calls: []evidence.Call{twoPaths(eoRateLimited, other)}, want: Fail, ptr: second + "/code"},
			{name: "paths disagreeing on recovery fail", calls: []evidence.Call{twoPaths(eoRateLimited, `{"code":"RATE_LIMITED","message":"m","recovery":"terminal"}`)}, want: Fail, ptr: second + "/recovery"},
			{name: "recovery on one path only fails", calls: []evidence.Call{twoPaths(eoRateLimited, `{"code":"RATE_LIMITED","message":"m"}`)}, want: Fail, ptr: second + "/recovery"},
			{name: "one path skips", calls: []evidence.Call{eoA2AOrMCPOnePath(tr)}, want: Skip, msg: none},
			// error-handling.mdx, the two-layer model: the envelope and the payload's errors[].
			{name: "an envelope and an agreeing errors[] pass", calls: []evidence.Call{withPayload(eoRateLimited, `[`+eoRateLimited+`]`)}, want: Pass},
			{name: "an errors[] entry without recovery passes", calls: []evidence.Call{withPayload(eoRateLimited, `[{"code":"RATE_LIMITED","message":"m","field":"budget"}]`)}, want: Pass},
			{name: "the envelope's error after a warning in errors[] passes", calls: []evidence.Call{withPayload(eoRateLimited,
				`[{"code":"STALE_RESPONSE","message":"cached","recovery":"transient"},`+eoRateLimited+`]`)}, want: Pass},
			{name: "errors[] disagreeing on code fails", calls: []evidence.Call{withPayload(eoRateLimited, `[`+other+`]`)}, want: Fail, ptr: errorsAt + "/0/code"},
			{name: "errors[] disagreeing on recovery fails", calls: []evidence.Call{withPayload(eoRateLimited,
				`[{"code":"RATE_LIMITED","message":"m","recovery":"terminal"}]`)}, want: Fail, ptr: errorsAt + "/0/recovery"},
			{name: "errors[] at the body's root is compared too", calls: []evidence.Call{withRootErrors(eoRateLimited, `[`+other+`]`)}, want: Fail, ptr: rootErrorsAt + "/0/code"},
			// Nothing readable to compare: items without a string code.
			{name: "errors[] without a string code skips", calls: []evidence.Call{withPayload(eoRateLimited, `[{"code":7},"RATE_LIMITED",null]`)}, want: Skip, msg: none},
			{name: "an errors[] that is not a list skips", calls: []evidence.Call{withPayload(eoRateLimited, `{"code":"X_A_B"}`)}, want: Skip, msg: none},
			{name: "no calls skip", want: Skip, msg: none},
			{name: "a harness failure on an error probe is an error", calls: []evidence.Call{
				harnessFailed(eoProbe(tr, "get_products/error_version"), eoEvT(tr), evidence.KindToolCall, "connection reset", pVersion)},
				want: HarnessError},
		}
	})
}

// eoA2AOrMCPOnePath is an error carried on one path only: transport-errors.mdx's A2A
// failed task; on MCP the text fallback of an older server.
func eoA2AOrMCPOnePath(tr catalogue.Transport) evidence.Call {
	if tr == catalogue.A2A {
		return eoA2AError("a2a/get_products/error_version", eoRateLimited, "", pVersion)
	}
	return mcpResult("mcp/get_products/error_version", "get_products",
		`{"content":[{"type":"text","text":`+quoteJSON(`{"adcp_error":`+eoRateLimited+`}`)+`}],"isError":true}`, pVersion)
}

func TestEOBJ10Table(t *testing.T) {
	eoTables(t, "EOBJ-10", func(tr catalogue.Transport) []judgeCase {
		return append([]judgeCase{
			{name: "recovery present passes", calls: []evidence.Call{eoErr(tr, eoRateLimited)}, want: Pass},
			// Its value is EOBJ-04's.
			{name: "an invalid recovery is present", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":"m","recovery":"fatal"}`)}, want: Pass},
			// vector mcp-missing-recovery-transient-code: a Level 1 server's error.
			{name: "an absent recovery fails", calls: []evidence.Call{eoErr(tr, `{"code":"RATE_LIMITED","message":"m"}`)}, want: Fail, ptr: eoErrPtr(tr) + "/recovery"},
			{name: "an absent recovery read past the body fails", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), `{"code":"RATE_LIMITED","message":"m"}`)},
				want: Fail, ptr: eoHiddenPtr(tr) + "/recovery"},
		}, eoCommon(tr, noErrorObject)...)
	})
}
