package suites

import (
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// envelopeArgs are the arguments of an envelope-field probe pinned to 3.1.
const envelopeArgs = `{"buying_mode":"brief","brief":"video","context":{"n":1},"context_id":"c1","idempotency_key":"k-0123456789abcdef",` +
	`"push_notification_config":{"url":"https://buyer.invalid/hook","authentication":{"schemes":["Bearer"],"credentials":"x"}},` +
	`"governance_context":"g","adcp_version":"3.1","ext":{"x":true}}`

const productsBody = `{"products":[]}`

func TestTOL01Table(t *testing.T) {
	for _, on := range cvBoth {
		env := func(c evidence.Call) evidence.Call {
			return cvWith(cvPurposes(c, evidence.PurposeEnvelopeFields, evidence.PurposeContext), envelopeArgs)
		}
		const id = "get_products/envelope_fields"
		valid := cvOK(on, "get_products/valid", "get_products", productsBody, evidence.PurposeValid)
		validRefused := cvErr(on, "get_products/valid", "get_products", `{"adcp_error":{"code":"INVALID_REQUEST","message":"brand is required","field":"brand"}}`, evidence.PurposeValid)
		d := cvData(on)
		caps := func(versions string) evidence.Call {
			return capsCall(on, `{"adcp":{"major_versions":[3],"supported_versions":`+versions+`},"supported_protocols":["media_buy"]}`)
		}
		cases := []judgeCase{
			{name: "fields accepted", calls: []evidence.Call{valid, env(cvOK(on, id, "get_products", productsBody))}, want: Pass},
			// A result, not an error, is no rejection: its body is ENV-01's.
			{name: "an empty result is no rejection", calls: []evidence.Call{valid, env(cvRPCResult(on, id, `{"content":[]}`))}, want: Pass},
			{name: "rejection naming governance_context", calls: []evidence.Call{env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"INVALID_REQUEST","message":"Unknown field governance_context.","field":"governance_context"}}`))},
				want: Fail, ptr: d + "/adcp_error", msg: "governance_context"},
			{name: "unattributed rejection, valid call succeeds", calls: []evidence.Call{valid, env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"INVALID_REQUEST","message":"Bad request."}}`))}, want: Fail, ptr: d + "/adcp_error"},
			{name: "JSON-RPC error, valid call succeeds", calls: []evidence.Call{valid, env(cvRPCErr(on, id, "get_products",
				`{"code":-32602,"message":"Invalid params"}`))}, want: Fail, ptr: "/error"},
			{name: "HTTP 400 without JSON-RPC, valid call succeeds", calls: []evidence.Call{valid, env(cvHTTP(on, id, "get_products", 400, "bad request"))},
				want: Fail, ptr: "", msg: "HTTP 400"},
			{name: "not JSON, valid call succeeds", calls: []evidence.Call{valid, env(cvHTTP(on, id, "get_products", 200, "<html>oops</html>"))},
				want: Fail, msg: "not JSON-RPC"},
			// building/by-layer/L3/webhooks.mdx: sync-only operations "MAY reject
			// that field as a well-formed runtime error".
			{name: "well-formed refusal of push_notification_config", calls: []evidence.Call{valid, env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"INVALID_REQUEST","message":"get_products is synchronous; push_notification_config is not supported.","field":"push_notification_config","recovery":"correctable"}}`))},
				want: Pass},
			{name: "malformed refusal of push_notification_config", calls: []evidence.Call{valid, env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"INVALID_REQUEST","field":"push_notification_config"}}`))},
				want: Fail, ptr: d + "/adcp_error", msg: "push_notification_config"},
			// building/by-layer/L1/security.mdx (Webhook callbacks): a signing
			// seller rejects an unsigned authentication block.
			{name: "request_signature_required as an AdCP error", calls: []evidence.Call{valid, env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"request_signature_required","message":"Sign requests carrying push_notification_config.authentication."}}`))},
				want: Pass},
			{name: "request_signature_required on a 401", calls: []evidence.Call{valid, env(cvHTTP(on, id, "get_products", 401, "",
				"WWW-Authenticate", `Signature error="request_signature_required"`))}, want: Pass},
			{name: "401 without the signature challenge", calls: []evidence.Call{valid, env(cvHTTP(on, id, "get_products", 401, "",
				"WWW-Authenticate", `Bearer realm="x"`))}, want: Fail, msg: "HTTP 401"},
			{name: "VERSION_UNSUPPORTED for an advertised pin", calls: []evidence.Call{caps(`["3.0","3.1"]`), valid, env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"VERSION_UNSUPPORTED","message":"no","details":{"supported_versions":["3.0","3.1"]}}}`))},
				want: Fail, ptr: d + "/adcp_error"},
			{name: "VERSION_UNSUPPORTED for a pin not advertised", calls: []evidence.Call{caps(`["3.2"]`), valid, env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"VERSION_UNSUPPORTED","message":"no","details":{"supported_versions":["3.2"]}}}`))},
				want: Skip, msg: "does not advertise"},
			{name: "rejected as the valid call is", calls: []evidence.Call{validRefused, env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"INVALID_REQUEST","message":"brand is required","field":"brand"}}`))}, want: Skip, msg: "not the fields' doing"},
			{name: "rejected, valid call unanswered", calls: []evidence.Call{env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"INVALID_REQUEST","message":"brand is required"}}`))}, want: Skip, msg: "cannot be laid"},
			{name: "no envelope probe", calls: []evidence.Call{valid}, want: Skip, msg: "no call with the envelope fields"},
			{name: "harness failed", calls: []evidence.Call{valid, env(harnessFailed(cvID(on, id), evidence.Transport(on), evidence.KindToolCall, "EOF"))},
				want: HarnessError, msg: "EOF"},
		}
		if on == catalogue.MCP {
			cases = append(cases, judgeCase{name: "isError without an adcp_error", calls: []evidence.Call{valid,
				env(mcpResult("mcp/"+id, "get_products", `{"content":[{"type":"text","text":"Rejected."}],"isError":true}`))},
				want: Fail, ptr: "/result/isError"})
		} else {
			cases = append(cases, judgeCase{name: "task rejected without data", calls: []evidence.Call{valid,
				env(a2aResult("a2a/"+id, "get_products", `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"rejected"}}`))},
				want: Fail, ptr: "/result/status/state"})
		}
		cvTable(t, "TOL-01", on, cases)
	}
}

func TestTOL02Table(t *testing.T) {
	const all = `"idempotency_key":{},"context_id":{},"context":{},"push_notification_config":{},"governance_context":{},"adcp_version":{},"ext":{}`
	runJudgeTable(t, "TOL-02", catalogue.MCP, []judgeCase{
		{name: "open schema", calls: []evidence.Call{cvToolsList(`[{"name":"get_products","inputSchema":{"type":"object","properties":{"brief":{}}}}]`)}, want: Pass},
		{name: "closed schema declaring the fields", calls: []evidence.Call{cvToolsList(`[{"name":"get_products","inputSchema":{"type":"object","additionalProperties":false,"properties":{"brief":{},` + all + `}}}]`)},
			want: Pass},
		{name: "additionalProperties a schema", calls: []evidence.Call{cvToolsList(`[{"name":"get_products","inputSchema":{"type":"object","additionalProperties":{"type":"string"}}}]`)},
			want: Pass},
		{name: "closed schema without the fields", calls: []evidence.Call{cvToolsList(`[{"name":"list_creative_formats","inputSchema":{"type":"object"}},` +
			`{"name":"get_products","inputSchema":{"type":"object","additionalProperties":false,"properties":{"brief":{}}}}]`)},
			want: Fail, ptr: "/result/tools/1/inputSchema/properties"},
		{name: "closed schema without properties", calls: []evidence.Call{cvToolsList(`[{"name":"get_products","inputSchema":{"type":"object","additionalProperties":false}}]`)},
			want: Fail, ptr: "/result/tools/0/inputSchema/properties"},
		{name: "tools/list not fetched", want: Skip, msg: "not fetched"},
		{name: "tools/list harness failed", calls: []evidence.Call{harnessFailed("mcp/tools/list", evidence.MCP, evidence.KindToolsList, "EOF")},
			want: HarnessError, msg: "EOF"},
	})
}
