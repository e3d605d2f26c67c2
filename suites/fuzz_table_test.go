package suites

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The FUZZ tables run on the crafted 9.9.0 schemas (a closed product
// object in get_products' response, core/error.json requiring code and
// message). A turn is judged by the two-path oracle from its raw reply.

// fuzzFace builds a face's replies for the tables: accepted (a success
// whose body is given), rejected (an error result or failed task carrying
// adcp_error), with the probe IDs and purposes of a fuzz run.
type fuzzFace struct{ on catalogue.Transport }

func (f fuzzFace) id(id string) string {
	if f.on == catalogue.A2A {
		return "a2a/" + id
	}
	return id
}

func (f fuzzFace) ok(id, tool, body string, ps ...evidence.Purpose) evidence.Call {
	if f.on == catalogue.A2A {
		return a2aResult(f.id(id), tool, a2aTask("completed", body), ps...)
	}
	return mcpBody(id, tool, body, false, ps...)
}

func (f fuzzFace) err(id, tool, adcpErr string, ps ...evidence.Purpose) evidence.Call {
	body := `{"status":"failed","adcp_error":` + adcpErr + `}`
	if f.on == catalogue.A2A {
		return a2aResult(f.id(id), tool, a2aTask("failed", body), ps...)
	}
	return mcpBody(id, tool, body, true, ps...)
}

// bare is a reply with no JSON-RPC response: HTTP status and body text.
func (f fuzzFace) bare(id string, status int, ps ...evidence.Purpose) evidence.Call {
	t := evidence.MCP
	if f.on == catalogue.A2A {
		t = evidence.A2A
	}
	return evidence.Call{ProbeID: f.id(id), Transport: t, Kind: evidence.KindToolCall, Tool: "get_products", Purposes: ps, HTTPStatus: status,
		Exchanges: []wire.Exchange{{Method: "POST", Status: status, ResponseBody: wire.Bytes("internal error")}}}
}

func (f fuzzFace) timeout(id string, ps ...evidence.Purpose) evidence.Call {
	c := f.bare(id, 0, ps...)
	c.HarnessError, c.Exchanges = "no response within the call timeout (raise --timeout for a slow seller)", nil
	return c
}

// withHeaders sets a call's last exchange's response headers.
func withHeaders(c evidence.Call, kv ...string) evidence.Call {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	c.Exchanges = []wire.Exchange{{Method: "POST", Status: c.HTTPStatus, ResponseHeaders: h}}
	return c
}

// withArgs sets a call's recorded arguments.
func withArgs(c evidence.Call, args string) evidence.Call {
	c.Arguments = json.RawMessage(args)
	return c
}

const (
	fzTurn     = "fuzz/s1/get_products/t000"
	fzProducts = `{"status":"completed","products":[{"product_id":"p1"}]}`
	fzOpen     = `{"status":"completed","products":[{"product_id":"p1","x_extra":true}]}`
	fzInvalid  = `{"code":"INVALID_REQUEST","message":"brief is too long","recovery":"correctable"}`
)

var fzP = evidence.PurposeFuzz

func fuzzCases01(f fuzzFace, crafted Options) []judgeCase {
	return []judgeCase{
		{name: "an accepted turn whose payload validates", calls: []evidence.Call{f.ok(fzTurn, "get_products", fzProducts, fzP)}, opts: crafted, want: Pass},
		{name: "a rejected turn is not the accepted path's", calls: []evidence.Call{f.ok(fzTurn, "get_products", fzProducts, fzP),
			f.err("fuzz/s1/get_products/t001", "get_products", fzInvalid, fzP)}, opts: crafted, want: Pass},
		{name: "an accepted turn whose payload breaks the response schema", calls: []evidence.Call{f.ok(fzTurn, "get_products", fzOpen, fzP)},
			opts: crafted, want: Fail, msg: "x_extra"},
		{name: "the finding names the smallest request that still fails", calls: []evidence.Call{
			withArgs(f.ok(fzTurn, "get_products", fzOpen, fzP), `{"brief":"a long brief","filters":{}}`),
			withArgs(f.ok(fzTurn+"/shrink/000", "get_products", fzOpen, evidence.PurposeFuzzShrink), `{"brief":"a long brief","filters":{}}`),
			withArgs(f.ok(fzTurn+"/shrink/001", "get_products", fzOpen, evidence.PurposeFuzzShrink), `{}`)},
			opts: crafted, want: Fail, msg: "shrunk in 2 calls from 37 to 2 bytes: " + f.id(fzTurn) + "/shrink/001"},
		{name: "calls of a run are not fuzz turns", calls: []evidence.Call{f.ok("read/get_products/valid", "get_products", fzOpen, evidence.PurposeValid)},
			opts: crafted, want: Skip, msg: "no fuzz turn was accepted"},
		{name: "only rejected turns", calls: []evidence.Call{f.err(fzTurn, "get_products", fzInvalid, fzP)}, opts: crafted, want: Skip, msg: "no fuzz turn was accepted"},
		{name: "no schemas", calls: []evidence.Call{f.ok(fzTurn, "get_products", fzOpen, fzP)}, want: Skip, msg: "no schemas"},
	}
}

func fuzzCases02(f fuzzFace, crafted Options) []judgeCase {
	return []judgeCase{
		{name: "a rejection with a well-formed error", calls: []evidence.Call{f.err(fzTurn, "get_products", fzInvalid, fzP)}, opts: crafted, want: Pass},
		{name: "a vendor code is uppercase snake case too", calls: []evidence.Call{f.err(fzTurn, "get_products", `{"code":"X_ACME_FLOOR_NOT_MET","message":"m"}`, fzP)},
			opts: crafted, want: Pass},
		{name: "a 5xx carrying an AdCP error (CONFIGURATION_ERROR flips the marker)", calls: []evidence.Call{func() evidence.Call {
			c := f.err(fzTurn, "get_products", `{"code":"CONFIGURATION_ERROR","message":"m","recovery":"terminal"}`, fzP)
			c.HTTPStatus = 500
			return c
		}()}, opts: crafted, want: Pass},
		{name: "a lowercase code", calls: []evidence.Call{f.err(fzTurn, "get_products", `{"code":"invalid_status","message":"m"}`, fzP)},
			opts: crafted, want: Fail, msg: `"invalid_status" is not an uppercase snake case code`},
		{name: "an error without its message", calls: []evidence.Call{f.err(fzTurn, "get_products", `{"code":"INVALID_REQUEST"}`, fzP)},
			opts: crafted, want: Fail, msg: "message"},
		{name: "only accepted turns", calls: []evidence.Call{f.ok(fzTurn, "get_products", fzProducts, fzP)}, opts: crafted, want: Skip, msg: "no fuzz turn was rejected"},
		{name: "no schemas", calls: []evidence.Call{f.err(fzTurn, "get_products", fzInvalid, fzP)}, want: Skip, msg: "no schemas"},
	}
}

func fuzzCases03(f fuzzFace, crafted Options) []judgeCase {
	// get_products stands for any tool with an id (the crafted release has
	// its response schema): a refine's product_id, say.
	const turn, buys = "fuzz/s1/get_products/t000", fzProducts
	unknown := func(code string) evidence.Call {
		return f.err(turn+"/unknown", "get_products", `{"code":"`+code+`","message":"No such media buy."}`, evidence.PurposeFuzzUnknownID)
	}
	return []judgeCase{
		{name: "an unknown id where the known one is accepted gets a standard not-found code", calls: []evidence.Call{
			f.ok(turn, "get_products", buys, fzP), unknown("MEDIA_BUY_NOT_FOUND")}, opts: crafted, want: Pass},
		{name: "or REFERENCE_NOT_FOUND", calls: []evidence.Call{f.ok(turn, "get_products", buys, fzP), unknown("REFERENCE_NOT_FOUND")}, opts: crafted, want: Pass},
		{name: "a filter may answer an unknown id with an empty success", calls: []evidence.Call{
			f.ok(turn, "get_products", buys, fzP), f.ok(turn+"/unknown", "get_products", buys, evidence.PurposeFuzzUnknownID)}, opts: crafted, want: Pass},
		{name: "RATE_LIMITED says nothing about the id", calls: []evidence.Call{f.ok(turn, "get_products", buys, fzP),
			f.err(turn+"/unknown", "get_products", `{"code":"RATE_LIMITED","message":"slow down","recovery":"transient","retry_after":1}`, evidence.PurposeFuzzUnknownID),
			f.err(turn+"/unknown/retry/1", "get_products", `{"code":"MEDIA_BUY_NOT_FOUND","message":"No such media buy."}`, evidence.PurposeFuzzUnknownID)},
			opts: crafted, want: Pass},
		{name: "another error where the known id is accepted", calls: []evidence.Call{f.ok(turn, "get_products", buys, fzP), unknown("INVALID_REQUEST")},
			opts: crafted, want: Fail, msg: `rejected with "INVALID_REQUEST" where ` + f.id(turn)},
		{name: "a minted not-found code on any turn", calls: []evidence.Call{f.err(turn, "get_products", `{"code":"X_ACME_BUY_NOT_FOUND","message":"m"}`, fzP)},
			opts: crafted, want: Fail, msg: `"X_ACME_BUY_NOT_FOUND", a not-found code the release does not define`},
		{name: "the known id was not accepted: nothing to compare", calls: []evidence.Call{f.err(turn, "get_products", fzInvalid, fzP), unknown("INVALID_REQUEST")},
			opts: crafted, want: Skip, msg: "no fuzz request referenced an existing id"},
		{name: "no schemas", calls: []evidence.Call{unknown("INVALID_REQUEST")}, want: Skip, msg: "no schemas"},
	}
}

func fuzzCases04(f fuzzFace, crafted Options) []judgeCase {
	rpc := func(code string) evidence.Call {
		c := mcpRPCError(fzTurn, "get_products", `{"code":`+code+`,"message":"Internal error"}`, fzP)
		if f.on == catalogue.A2A {
			c.ProbeID, c.Transport = f.id(fzTurn), evidence.A2A
		}
		return c
	}
	return []judgeCase{
		{name: "every turn answered, accepted or rejected", calls: []evidence.Call{f.ok(fzTurn, "get_products", fzProducts, fzP),
			f.err("fuzz/s1/get_products/t001", "get_products", fzInvalid, fzP)}, opts: crafted, want: Pass},
		{name: "another rule's failure is still an answer", calls: []evidence.Call{f.ok(fzTurn, "get_products", fzOpen, fzP)}, opts: crafted, want: Pass},
		{name: "HTTP 500 with no JSON-RPC response", calls: []evidence.Call{f.bare(fzTurn, 500, fzP)}, opts: crafted, want: Fail, msg: "HTTP 500 Internal Server Error with no JSON-RPC response"},
		{name: "a reply that is no JSON-RPC response", calls: []evidence.Call{f.bare(fzTurn, 200, fzP)}, opts: crafted, want: Fail, msg: "HTTP 200 OK with no JSON-RPC response"},
		{name: "JSON-RPC -32603 without an AdCP error", calls: []evidence.Call{rpc("-32603")}, opts: crafted, want: Fail, msg: "JSON-RPC error -32603"},
		{name: "a timeout the same request meets again", calls: []evidence.Call{f.timeout(fzTurn, fzP), f.timeout(fzTurn+"/shrink/000", evidence.PurposeFuzzShrink)},
			opts: crafted, want: Fail, msg: "no reply within the call timeout"},
		{name: "one timeout, answered when sent again: no verdict", calls: []evidence.Call{f.timeout(fzTurn, fzP),
			f.err(fzTurn+"/shrink/000", "get_products", fzInvalid, evidence.PurposeFuzzShrink)}, opts: crafted, want: HarnessError, msg: "timed out once"},
		{name: "a gateway's 503 never reached the application", calls: []evidence.Call{f.bare(fzTurn, 503, fzP)}, opts: crafted, want: HarnessError, msg: "gateway"},
		{name: "no turn", calls: []evidence.Call{f.ok("read/get_products/valid", "get_products", fzProducts, evidence.PurposeValid)}, opts: crafted, want: Skip, msg: "no fuzz turn was answered"},
	}
}

func fuzzCases05(f fuzzFace) []judgeCase {
	const key = "fuzz/s1/get_media_buys/tenant2"
	pair := func(a, b string, ha, hb []string) []evidence.Call {
		other := withHeaders(f.err(key+"/other", "get_media_buys", a, evidence.PurposeFuzzTenant2), ha...)
		unknown := withHeaders(f.err(key+"/unknown", "get_media_buys", b, evidence.PurposeFuzzTenant2), hb...)
		return []evidence.Call{withArgs(other, `{"media_buy_ids":["mb_0001"]}`), withArgs(unknown, `{"media_buy_ids":["mb_5556"]}`)}
	}
	nf := func(id string) string {
		return `{"code":"MEDIA_BUY_NOT_FOUND","message":"No such media buy.","field":"media_buy_ids","details":{"unresolved":["` + id + `"]}}`
	}
	echo := func(id string) string {
		return `{"code":"MEDIA_BUY_NOT_FOUND","message":"No media buy \"` + id + `\".","field":"media_buy_ids"}`
	}
	return []judgeCase{
		{name: "the same response, the ids supplied enumerated in details", calls: pair(nf("mb_0001"), nf("mb_5556"), []string{"Date", "Mon"}, []string{"Date", "Tue"}), want: Pass},
		{name: "the id supplied echoed in the message", calls: pair(echo("mb_0001"), echo("mb_5556"), nil, nil),
			want: Fail, msg: `error.message differs: "No media buy \"mb_0001\"." for the other tenant's id, "No media buy \"mb_5556\"." for an unknown one`},
		{name: "the other tenant's id told apart", calls: pair(`{"code":"PERMISSION_DENIED","message":"That media buy belongs to another account."}`, nf("mb_5556"), nil, nil),
			want: Fail, msg: `error.code differs: "PERMISSION_DENIED" for the other tenant's id, "MEDIA_BUY_NOT_FOUND" for an unknown one`},
		{name: "a header that differs by existence", calls: pair(nf("mb_0001"), nf("mb_5556"), []string{"ETag", `"a"`}, []string{"ETag", `"b"`}),
			want: Fail, msg: "header etag differs"},
		{name: "no second tenant", calls: []evidence.Call{f.err("fuzz/s1/get_media_buys/t000", "get_media_buys", nf("x"), fzP)}, want: Skip, msg: "no cross-tenant probe was made"},
	}
}

func TestFUZZJudgeTables(t *testing.T) {
	crafted := Options{Schemas: craftedSchemas(t)}
	for _, on := range []catalogue.Transport{catalogue.MCP, catalogue.A2A} {
		f := fuzzFace{on}
		t.Run(string(on), func(t *testing.T) {
			t.Run("FUZZ-01", func(t *testing.T) { runJudgeTable(t, "FUZZ-01", on, fuzzCases01(f, crafted)) })
			t.Run("FUZZ-02", func(t *testing.T) { runJudgeTable(t, "FUZZ-02", on, fuzzCases02(f, crafted)) })
			t.Run("FUZZ-03", func(t *testing.T) { runJudgeTable(t, "FUZZ-03", on, fuzzCases03(f, crafted)) })
			t.Run("FUZZ-04", func(t *testing.T) { runJudgeTable(t, "FUZZ-04", on, fuzzCases04(f, crafted)) })
			t.Run("FUZZ-05", func(t *testing.T) { runJudgeTable(t, "FUZZ-05", on, fuzzCases05(f)) })
		})
	}
}

func TestReplaceIDReplacesTheIDStandingAlone(t *testing.T) {
	for _, tc := range []struct{ in, id, want string }{
		{`No media buy "mb_0001".`, "mb_0001", `No media buy "<id>".`},
		{`{"domain_breakdown":{"media-buy":0}}`, "uy", `{"domain_breakdown":{"media-buy":0}}`},
		{`uy uy-2 xuy`, "uy", `<id> <id>-2 xuy`},
		{`same`, "", `same`},
	} {
		if got := replaceID(tc.in, tc.id); got != tc.want {
			t.Errorf("replaceID(%q, %q) = %q, want %q", tc.in, tc.id, got, tc.want)
		}
	}
}
