package suites

import (
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// A call the seller refused before its application (evidence.Call.Unreached)
// is no evidence for the rules that needed the application's answer: they
// report a harness error naming the refusal and what to do, never a pass or a
// failure. The rules about refusals still read it.
func TestACallThatNeverReachedTheApplicationProvesNothing(t *testing.T) {
	const authErr = `{"code":-32028,"message":"Authentication required","data":{"adcp_error":{"code":"AUTH_REQUIRED","message":"Authentication required","recovery":"correctable"}}}`
	refused := func(id string, status int, ps ...evidence.Purpose) evidence.Call {
		c := mcpRPCError(id, "get_products", authErr, ps...)
		c.HTTPStatus = status
		return c
	}
	noCredential := evidence.Target{MCP: "https://seller.example.com/mcp"}
	runJudgeTable(t, "CTX-01", catalogue.MCP, []judgeCase{
		{name: "every context probe refused with 401, no credential given", target: &noCredential,
			calls: []evidence.Call{refused("mcp/get_products/context", 401, evidence.PurposeContext)},
			want:  HarnessError, msg: "HTTP 401 Unauthorized (authentication); the seller wants a credential: give it with --bearer-env"},
		{name: "the run's credential refused with 403",
			calls: []evidence.Call{refused("mcp/get_products/context", 403, evidence.PurposeContext)},
			want:  HarnessError, msg: "the seller refused the run's credential"},
		{name: "a gateway's 503 on the only context probe",
			calls: []evidence.Call{func() evidence.Call {
				c := mcpBody("mcp/get_products/context", "get_products", `{"status":"completed","products":[]}`, false, evidence.PurposeContext)
				c.HTTPStatus = 503
				return c
			}()},
			want: HarnessError, msg: "HTTP 503 Service Unavailable (gateway)"},
	})
	runJudgeTable(t, "ERR-06", catalogue.MCP, []judgeCase{
		{name: "a refusal with the reserved code is still judged by ERR-06", target: &noCredential,
			calls: []evidence.Call{refused("mcp/get_products/context", 401, evidence.PurposeContext)},
			want:  Pass},
		{name: "a refusal with another code is still judged by ERR-06", target: &noCredential,
			calls: []evidence.Call{func() evidence.Call {
				c := mcpRPCError("mcp/get_products/context", "get_products", `{"code":-32001,"message":"no","data":{"adcp_error":{"code":"AUTH_REQUIRED","message":"no"}}}`, evidence.PurposeContext)
				c.HTTPStatus = 401
				return c
			}()},
			want: Fail, ptr: "/error/code"},
	})
}
