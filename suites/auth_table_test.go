package suites

import (
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func TestAUTH01Table(t *testing.T) {
	noCred := tableTarget
	noCred.Credential = false
	for _, on := range cvBoth {
		const id = "auth/no_credential"
		unauth := func(c evidence.Call) evidence.Call {
			c = cvPurposes(c, evidence.PurposeAuthNone)
			c.Credential = "none"
			return c
		}
		// §4.72; transport-errors.mdx: 401 with WWW-Authenticate (RFC 9728 / RFC 6750),
		// 403, or JSON-RPC -32028 before dispatch.
		cvTable(t, "AUTH-01", on, []judgeCase{
			{name: "401 with a challenge", calls: []evidence.Call{unauth(cvHTTP(on, id, "get_products", 401, "",
				"WWW-Authenticate", `Bearer resource_metadata="https://seller.example.com/.well-known/oauth-protected-resource"`))}, want: Pass},
			{name: "403", calls: []evidence.Call{unauth(cvHTTP(on, id, "get_products", 403, `{"error":"forbidden"}`))}, want: Pass},
			{name: "JSON-RPC -32028", calls: []evidence.Call{unauth(cvRPCErr(on, id, "get_products", `{"code":-32028,"message":"Authentication required"}`))}, want: Pass},
			{name: "401 without a challenge", calls: []evidence.Call{unauth(cvHTTP(on, id, "get_products", 401, "unauthorized"))}, want: Fail, msg: "WWW-Authenticate"},
			{name: "served without credentials", calls: []evidence.Call{unauth(cvOK(on, id, "get_products", productsBody))}, want: Fail, ptr: "/result"},
			{name: "AdCP error over HTTP 200", calls: []evidence.Call{unauth(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"AUTH_REQUIRED","message":"Sign in."}}`))}, want: Fail, msg: "HTTP 200"},
			{name: "another JSON-RPC error", calls: []evidence.Call{unauth(cvRPCErr(on, id, "get_products", `{"code":-32603,"message":"Internal error"}`))},
				want: Fail, msg: "HTTP 200"},
			{name: "no credential configured", calls: []evidence.Call{unauth(cvOK(on, id, "get_products", productsBody))}, target: &noCred,
				want: Skip, msg: "no credential"},
			{name: "probe not run", want: Skip, msg: "not run"},
			{name: "harness failed", calls: []evidence.Call{harnessFailed(cvID(on, id), evidence.Transport(on), evidence.KindToolCall, "EOF", evidence.PurposeAuthNone)},
				want: HarnessError, msg: "EOF"},
		})
	}
}

func TestAUTH02Table(t *testing.T) {
	noCred := tableTarget
	noCred.Credential = false
	for _, on := range cvBoth {
		const id = "auth/no_credential/capabilities"
		unauth := func(c evidence.Call) evidence.Call {
			c = cvPurposes(c, evidence.PurposeAuthCapabilities)
			c.Credential = "none"
			return c
		}
		// §4.72: discovery answers without credentials.
		cvTable(t, "AUTH-02", on, []judgeCase{
			{name: "answered", calls: []evidence.Call{unauth(cvOK(on, id, "get_adcp_capabilities", capsBody))}, want: Pass},
			// A result, not an error, is an answer: its body is CAP-01's.
			{name: "an empty result is no refusal", calls: []evidence.Call{unauth(cvRPCResult(on, id, `{"content":[]}`))}, want: Pass},
			{name: "refused with 401", calls: []evidence.Call{unauth(cvHTTP(on, id, "get_adcp_capabilities", 401, "", "WWW-Authenticate", "Bearer"))},
				want: Fail, msg: "HTTP 401"},
			{name: "answered with an error", calls: []evidence.Call{unauth(cvErr(on, id, "get_adcp_capabilities",
				`{"adcp_error":{"code":"AUTH_REQUIRED","message":"Sign in."}}`))}, want: Fail, msg: "answers an error"},
			{name: "JSON-RPC -32028", calls: []evidence.Call{unauth(cvRPCErr(on, id, "get_adcp_capabilities", `{"code":-32028,"message":"Authentication required"}`))},
				want: Fail, msg: "answers an error"},
			// Without a credential every call of the run is unauthenticated: the
			// capabilities probe itself is the evidence.
			{name: "no credential, capabilities probe answered", calls: []evidence.Call{capsCall(on, capsBody)}, target: &noCred, want: Pass},
			{name: "probe not run", want: Skip, msg: "not called without credentials"},
			{name: "harness failed", calls: []evidence.Call{harnessFailed(cvID(on, id), evidence.Transport(on), evidence.KindToolCall, "EOF", evidence.PurposeAuthCapabilities)},
				want: HarnessError, msg: "EOF"},
		})
	}
}

func TestAUTH03Table(t *testing.T) {
	noCred := tableTarget
	noCred.Credential = false
	for _, on := range cvBoth {
		const id = "auth/random_credential"
		random := func(c evidence.Call) evidence.Call {
			c = cvPurposes(c, evidence.PurposeAuthRandom)
			c.Credential = "random"
			return c
		}
		// §4.72–4.73: an invalid token is refused (RFC 6750 §3.1:
		// invalid_token, 401; 400 and 403 for the other error codes).
		cvTable(t, "AUTH-03", on, []judgeCase{
			{name: "401", calls: []evidence.Call{random(cvHTTP(on, id, "get_products", 401, "", "WWW-Authenticate", `Bearer error="invalid_token"`))}, want: Pass},
			{name: "400", calls: []evidence.Call{random(cvHTTP(on, id, "get_products", 400, ""))}, want: Pass},
			{name: "403", calls: []evidence.Call{random(cvHTTP(on, id, "get_products", 403, ""))}, want: Pass},
			{name: "served", calls: []evidence.Call{random(cvOK(on, id, "get_products", productsBody))}, want: Fail, ptr: "/result"},
			{name: "500", calls: []evidence.Call{random(cvHTTP(on, id, "get_products", 500, "boom"))}, want: Fail, msg: "HTTP 500"},
			{name: "AdCP error over HTTP 200", calls: []evidence.Call{random(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"AUTH_REQUIRED","message":"Bad token."}}`))}, want: Fail, msg: "HTTP 200"},
			{name: "no credential configured", target: &noCred, want: Skip, msg: "no credential"},
			{name: "probe not run", want: Skip, msg: "not run"},
			{name: "harness failed", calls: []evidence.Call{harnessFailed(cvID(on, id), evidence.Transport(on), evidence.KindToolCall, "EOF", evidence.PurposeAuthRandom)},
				want: HarnessError, msg: "EOF"},
		})
	}
}

// TestAUTHInitializeRefusal: over MCP a seller may refuse the unauthenticated
// session at initialize; the probe records that refusal for AUTH-01 and
// AUTH-02 both.
func TestAUTHInitializeRefusal(t *testing.T) {
	init := cvHTTP(catalogue.MCP, "auth/no_credential", "", 401, "", "WWW-Authenticate", `Bearer realm="seller"`)
	init.Kind, init.Method, init.Credential = evidence.KindInitialize, "initialize", "none"
	init.Purposes = []evidence.Purpose{evidence.PurposeAuthNone, evidence.PurposeAuthCapabilities}
	runJudgeTable(t, "AUTH-01", catalogue.MCP, []judgeCase{{name: "refused at initialize", calls: []evidence.Call{init}, want: Pass}})
	runJudgeTable(t, "AUTH-02", catalogue.MCP, []judgeCase{{name: "refused at initialize", calls: []evidence.Call{init}, want: Fail, msg: "initialize without credentials is refused with HTTP 401"}})
}
