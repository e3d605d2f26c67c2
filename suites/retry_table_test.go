package suites

import (
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// eoRetry is a RATE_LIMITED error whose retry_after is the JSON text ra
// ("" leaves it out).
func eoRetry(ra string) string {
	if ra == "" {
		return `{"code":"RATE_LIMITED","message":"Request rate exceeded","recovery":"transient"}`
	}
	return `{"code":"RATE_LIMITED","message":"Request rate exceeded","retry_after":` + ra + `,"recovery":"transient"}`
}

func TestRETRY01Table(t *testing.T) {
	eoTables(t, "RETRY-01", func(tr catalogue.Transport) []judgeCase {
		p := eoErrPtr(tr) + "/retry_after"
		return append([]judgeCase{
			{name: "5 passes", calls: []evidence.Call{eoErr(tr, eoRetry("5"))}, want: Pass},
			{name: "the bounds 1 and 3600 pass", calls: []evidence.Call{eoErr(tr, eoRetry("1")), eoErr(tr, eoRetry("3600"))}, want: Pass},
			// RULES RETRY-01: "when present"; schema core/error.json does not require it.
			// An error without it shows nothing of the bound: no evidence, a skip.
			{name: "an absent retry_after skips", calls: []evidence.Call{eoErr(tr, eoRetry(""))}, want: Skip, msg: noRetryAfter},
			{name: "an absent retry_after beside a bounded one passes", calls: []evidence.Call{eoErr(tr, eoRetry("")), eoErr(tr, eoRetry("30"))}, want: Pass},
			// An error the judges cannot read as an object (a JSON string holding
			// the error) carries no readable retry_after: no evidence either.
			{name: "a retry_after inside an adcp_error string skips", calls: []evidence.Call{
				eoErr(tr, quoteJSON(eoRetry("7200"))), eoErr(tr, eoRetry(""))}, want: Skip, msg: noRetryAfter},
			// A fraction inside the bounds is RETRY-02's.
			{name: "2.5 passes", calls: []evidence.Call{eoErr(tr, eoRetry("2.5"))}, want: Pass},
			// vector mcp-extreme-retry-after: 86400 is a seller violation.
			{name: "86400 fails", calls: []evidence.Call{eoErr(tr, eoRetry("86400"))}, want: Fail, ptr: p, msg: "outside 1..3600"},
			{name: "0 fails", calls: []evidence.Call{eoErr(tr, eoRetry("0"))}, want: Fail, ptr: p},
			{name: "0.5 fails", calls: []evidence.Call{eoErr(tr, eoRetry("0.5"))}, want: Fail, ptr: p},
			{name: "3600.5 fails", calls: []evidence.Call{eoErr(tr, eoRetry("3600.5"))}, want: Fail, ptr: p},
			// transport-errors.mdx: non-finite values are treated as absent by clients; a seller sending one breaks the bound.
			{name: "an overflowing literal fails", calls: []evidence.Call{eoErr(tr, eoRetry("1e400"))}, want: Fail, ptr: p},
			{name: "a string fails", calls: []evidence.Call{eoErr(tr, eoRetry(`"5"`))}, want: Fail, ptr: p, msg: "not a number"},
			{name: "null fails", calls: []evidence.Call{eoErr(tr, eoRetry(`null`))}, want: Fail, ptr: p},
			{name: "a boolean fails", calls: []evidence.Call{eoErr(tr, eoRetry(`true`))}, want: Fail, ptr: p, msg: "a boolean"},
			{name: "an array fails", calls: []evidence.Call{eoErr(tr, eoRetry(`[5]`))}, want: Fail, ptr: p, msg: "an array"},
			{name: "an object fails", calls: []evidence.Call{eoErr(tr, eoRetry(`{"seconds":5}`))}, want: Fail, ptr: p, msg: "an object"},
			// RFC 8259 §4: a repeated key's value is the receiver's pick; each is judged.
			{name: "a repeated retry_after out of bounds first fails", calls: []evidence.Call{eoErr(tr, eoRetry(`7200,"retry_after":5`))}, want: Fail, ptr: p, msg: "7200"},
			{name: "a repeated retry_after out of bounds last fails", calls: []evidence.Call{eoErr(tr, eoRetry(`5,"retry_after":7200`))}, want: Fail, ptr: p, msg: "7200"},
			{name: "a repeated retry_after in bounds passes", calls: []evidence.Call{eoErr(tr, eoRetry(`5,"retry_after":10`))}, want: Pass},
			// RULES RETRY-01: JSON-RPC error.data.adcp_error included.
			{name: "a JSON-RPC error's retry_after is judged", calls: []evidence.Call{
				eoRPC(tr, `{"code":-32029,"message":"Rate limit exceeded","data":{"adcp_error":`+eoRetry("7200")+`}}`)},
				want: Fail, ptr: "/error/data/adcp_error/retry_after"},
			{name: "a retry_after read past the body fails", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), eoRetry("7200"))},
				want: Fail, ptr: eoHiddenPtr(tr) + "/retry_after"},
		}, eoCommon(tr, noRetryAfter)...)
	})
}

func TestRETRY02Table(t *testing.T) {
	const none = noRetryAfter
	eoTables(t, "RETRY-02", func(tr catalogue.Transport) []judgeCase {
		p := eoErrPtr(tr) + "/retry_after"
		return append([]judgeCase{
			{name: "5 passes", calls: []evidence.Call{eoErr(tr, eoRetry("5"))}, want: Pass},
			// Policy: a zero fraction is an integer, as in JSON Schema.
			{name: "5.0 passes", calls: []evidence.Call{eoErr(tr, eoRetry("5.0"))}, want: Pass},
			{name: "5e1 passes", calls: []evidence.Call{eoErr(tr, eoRetry("5e1"))}, want: Pass},
			// A JSON string is not an integer, whatever it spells.
			{name: "a string fails", calls: []evidence.Call{eoErr(tr, eoRetry(`"5"`))}, want: Fail, ptr: p, msg: "a string, not an integer"},
			{name: "a string spelling a fraction fails", calls: []evidence.Call{eoErr(tr, eoRetry(`"2.5"`))}, want: Fail, ptr: p},
			{name: "a boolean fails", calls: []evidence.Call{eoErr(tr, eoRetry(`true`))}, want: Fail, ptr: p},
			{name: "null fails", calls: []evidence.Call{eoErr(tr, eoRetry(`null`))}, want: Fail, ptr: p},
			{name: "an array fails", calls: []evidence.Call{eoErr(tr, eoRetry(`[5]`))}, want: Fail, ptr: p},
			{name: "an object fails", calls: []evidence.Call{eoErr(tr, eoRetry(`{}`))}, want: Fail, ptr: p},
			{name: "a repeated retry_after with a fraction fails", calls: []evidence.Call{eoErr(tr, eoRetry(`2.5,"retry_after":5`))}, want: Fail, ptr: p},
			// An overflowing literal reads as Infinity: no integer to judge (RETRY-01's).
			{name: "an overflowing literal alone skips", calls: []evidence.Call{eoErr(tr, eoRetry("1e400"))}, want: Skip, msg: none},
			{name: "2.5 fails", calls: []evidence.Call{eoErr(tr, eoRetry("2.5"))}, want: Fail, ptr: p, msg: "not a whole number"},
			{name: "a JSON-RPC error's fraction fails", calls: []evidence.Call{
				eoRPC(tr, `{"code":-32029,"message":"Rate limit exceeded","data":{"adcp_error":`+eoRetry("1.5")+`}}`)},
				want: Fail, ptr: "/error/data/adcp_error/retry_after"},
			{name: "a fraction read past the body fails", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), eoRetry("0.25"))},
				want: Fail, ptr: eoHiddenPtr(tr) + "/retry_after"},
			{name: "an error without retry_after skips", calls: []evidence.Call{eoErr(tr, eoRetry(""))}, want: Skip, msg: none},
		}, eoCommon(tr, none)...)
	})
}

func TestRETRY03Table(t *testing.T) {
	const (
		noBurst   = "the rate-limit burst is opt-in"
		noTrigger = "rate_limit_not_triggered"
	)
	eoTables(t, "RETRY-03", func(tr catalogue.Transport) []judgeCase {
		burst := func(n, adcpErr string) evidence.Call {
			return eoError(tr, eoProbe(tr, "rate_burst/"+n), adcpErr, "", evidence.PurposeRateBurst)
		}
		burstOK := eoSuccess(tr, eoProbe(tr, "rate_burst/1"), eoProducts, evidence.PurposeRateBurst)
		return []judgeCase{
			{name: "a RATE_LIMITED burst reply with retry_after passes", calls: []evidence.Call{burstOK, burst("31", eoRetry("5"))}, want: Pass},
			// transport-errors.mdx Transport-Level Errors: the infrastructure form, -32029.
			{name: "a JSON-RPC RATE_LIMITED with retry_after passes", calls: []evidence.Call{
				eoRPC(tr, `{"code":-32029,"message":"Rate limit exceeded","data":{"adcp_error":`+eoRetry("10")+`}}`)}, want: Pass},
			{name: "a RATE_LIMITED without retry_after fails", calls: []evidence.Call{burstOK, burst("31", eoRetry(""))},
				want: Fail, ptr: eoErrPtr(tr) + "/retry_after"},
			{name: "a RATE_LIMITED seen outside the burst is judged", calls: []evidence.Call{eoErr(tr, eoRetry(""))},
				want: Fail, ptr: eoErrPtr(tr) + "/retry_after"},
			{name: "a RATE_LIMITED read past the body is judged", calls: []evidence.Call{eoHidden(tr, eoProbe(tr, "get_products/valid"), eoRetry(""))},
				want: Fail, ptr: eoHiddenPtr(tr) + "/retry_after"},
			// Seed 002's extraction keeps retry_after only when it is != null.
			{name: "a RATE_LIMITED with a null retry_after fails", calls: []evidence.Call{burstOK, burst("31", eoRetry("null"))},
				want: Fail, ptr: eoErrPtr(tr) + "/retry_after", msg: "null"},
			{name: "other codes without retry_after are not judged", calls: []evidence.Call{eoErr(tr, eoVersion)}, want: Skip, msg: noBurst},
			{name: "no burst skips, saying it is opt-in", want: Skip, msg: noBurst},
			{name: "a burst that saw no RATE_LIMITED skips", calls: []evidence.Call{burstOK}, want: Skip, msg: noTrigger},
			{name: "a harness failure in the burst is an error", calls: []evidence.Call{
				burstOK, harnessFailed(eoProbe(tr, "rate_burst/2"), eoEvT(tr), evidence.KindToolCall, "connection reset", evidence.PurposeRateBurst)},
				want: HarnessError, msg: "connection reset"},
		}
	})
}
