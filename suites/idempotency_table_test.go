package suites

import (
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func TestIDEM01Table(t *testing.T) {
	for _, on := range cvBoth {
		idem := cvData(on) + "/adcp/idempotency"
		caps := func(i string) evidence.Call {
			return capsCall(on, `{"adcp":{"major_versions":[3],"idempotency":`+i+`},"supported_protocols":["media_buy"]}`)
		}
		// protocol/get-adcp-capabilities-response.json: idempotency is
		// IdempotencySupported (replay_ttl_seconds 3600..604800) or
		// IdempotencyUnsupported.
		cvTable(t, "IDEM-01", on, []judgeCase{
			{name: "supported, a day", calls: []evidence.Call{caps(`{"supported":true,"replay_ttl_seconds":86400}`)}, want: Pass},
			{name: "supported, the bounds", calls: []evidence.Call{caps(`{"supported":true,"replay_ttl_seconds":3600}`)}, want: Pass},
			{name: "supported, the upper bound", calls: []evidence.Call{caps(`{"supported":true,"replay_ttl_seconds":604800}`)}, want: Pass},
			{name: "unsupported", calls: []evidence.Call{caps(`{"supported":false}`)}, want: Pass},
			{name: "ttl under the minimum", calls: []evidence.Call{caps(`{"supported":true,"replay_ttl_seconds":60}`)}, want: Fail, ptr: idem + "/replay_ttl_seconds"},
			{name: "ttl over the maximum", calls: []evidence.Call{caps(`{"supported":true,"replay_ttl_seconds":604801}`)}, want: Fail, ptr: idem + "/replay_ttl_seconds"},
			{name: "ttl fractional", calls: []evidence.Call{caps(`{"supported":true,"replay_ttl_seconds":3600.5}`)}, want: Fail, ptr: idem + "/replay_ttl_seconds"},
			{name: "ttl a string", calls: []evidence.Call{caps(`{"supported":true,"replay_ttl_seconds":"86400"}`)}, want: Fail, ptr: idem + "/replay_ttl_seconds"},
			{name: "ttl absent", calls: []evidence.Call{caps(`{"supported":true}`)}, want: Fail, ptr: idem + "/replay_ttl_seconds"},
			{name: "supported a string", calls: []evidence.Call{caps(`{"supported":"yes","replay_ttl_seconds":86400}`)}, want: Fail, ptr: idem + "/supported"},
			{name: "idempotency absent", calls: []evidence.Call{capsCall(on, `{"adcp":{"major_versions":[3]},"supported_protocols":["media_buy"]}`)}, want: Fail, ptr: idem},
			// IDEM-01: no adcp object at all fails too.
			{name: "no adcp object", calls: []evidence.Call{capsCall(on, `{"supported_protocols":["media_buy"]}`)}, want: Fail, ptr: cvData(on) + "/adcp"},
			{name: "capabilities answered with an error", calls: []evidence.Call{cvErr(on, capabilitiesProbe, "get_adcp_capabilities",
				`{"adcp_error":{"code":"SERVICE_UNAVAILABLE","message":"down"}}`)}, want: Skip, msg: "CAP-01"},
			{name: "not called", want: Skip, msg: "not called"},
			{name: "harness failed", calls: []evidence.Call{harnessFailed(cvID(on, capabilitiesProbe), evidence.Transport(on), evidence.KindToolCall, "EOF")},
				want: HarnessError, msg: "EOF"},
		})
	}
}

// idemCallOn records the idempotency probe step ("missing_key", "first",
// "replay", "conflict") answered with body, an error when it carries
// adcp_error.
func idemCallOn(on catalogue.Transport, step, body string, isError bool) evidence.Call {
	ps := map[string]evidence.Purpose{"missing_key": evidence.PurposeIdemMissingKey, "first": evidence.PurposeIdemFirst,
		"replay": evidence.PurposeIdemReplay, "conflict": evidence.PurposeIdemConflict}[step]
	if isError {
		return cvErr(on, "idem/"+step, "create_media_buy", body, ps)
	}
	return cvOK(on, "idem/"+step, "create_media_buy", body, ps)
}

func idemNotRun(on catalogue.Transport, step string, p evidence.Purpose) evidence.Call {
	return notRun(cvID(on, "idem/"+step), evidence.Transport(on), evidence.KindToolCall, plan.NotAllowed, p)
}

func TestIDEM02Table(t *testing.T) {
	for _, on := range cvBoth {
		e := cvData(on) + "/adcp_error"
		first := idemCallOn(on, "first", `{"status":"completed","media_buy_id":"mb_1"}`, false)
		firstRefused := idemCallOn(on, "first", `{"adcp_error":{"code":"INVALID_REQUEST","message":"packages is required","field":"packages"}}`, true)
		missing := func(body string, isErr bool) evidence.Call { return idemCallOn(on, "missing_key", body, isErr) }
		// protocol/calling-an-agent.mdx: "Missing the key → adcp_error.code:
		// 'VALIDATION_ERROR' with /idempotency_key in issues"; §4.50 names
		// INVALID_REQUEST.
		cvTable(t, "IDEM-02", on, []judgeCase{
			{name: "INVALID_REQUEST naming the key", calls: []evidence.Call{missing(`{"adcp_error":{"code":"INVALID_REQUEST","message":"idempotency_key is required","field":"idempotency_key"}}`, true), first},
				want: Pass},
			{name: "VALIDATION_ERROR with issues", calls: []evidence.Call{missing(`{"adcp_error":{"code":"VALIDATION_ERROR","message":"Invalid request","issues":[{"pointer":"/idempotency_key","message":"required"}]}}`, true), first},
				want: Pass},
			{name: "refusal not naming the key, keyed create served", calls: []evidence.Call{missing(`{"adcp_error":{"code":"INVALID_REQUEST","message":"Invalid request"}}`, true), first},
				want: Pass},
			{name: "served without a key", calls: []evidence.Call{missing(`{"status":"completed","media_buy_id":"mb_9"}`, false), first}, want: Fail, ptr: "/result"},
			{name: "another code", calls: []evidence.Call{missing(`{"adcp_error":{"code":"CONFLICT","message":"no"}}`, true), first}, want: Fail, ptr: e + "/code"},
			{name: "JSON-RPC error", calls: []evidence.Call{cvPurposes(cvRPCErr(on, "idem/missing_key", "create_media_buy", `{"code":-32602,"message":"idempotency_key required"}`),
				evidence.PurposeIdemMissingKey), first}, want: Fail, ptr: "/error"},
			{name: "refusal of the other arguments", calls: []evidence.Call{missing(`{"adcp_error":{"code":"INVALID_REQUEST","message":"packages is required","field":"packages"}}`, true), firstRefused},
				want: Skip, msg: "--inputs"},
			{name: "mutations not allowed", calls: []evidence.Call{idemNotRun(on, "missing_key", evidence.PurposeIdemMissingKey)}, want: Skip, msg: "--allow-mutations"},
			{name: "create_media_buy not listed", want: Skip, msg: "not listed"},
			{name: "harness failed", calls: []evidence.Call{harnessFailed(cvID(on, "idem/missing_key"), evidence.Transport(on), evidence.KindToolCall, "EOF", evidence.PurposeIdemMissingKey)},
				want: HarnessError, msg: "EOF"},
		})
	}
}

func TestIDEM03Table(t *testing.T) {
	for _, on := range cvBoth {
		d := cvData(on)
		first := idemCallOn(on, "first", `{"status":"completed","media_buy_id":"mb_1"}`, false)
		replay := func(body string) evidence.Call { return idemCallOn(on, "replay", body, false) }
		cases := []judgeCase{
			// building/by-layer/L1/security.mdx (Idempotency): the replay returns
			// the cached response with replayed: true.
			{name: "replayed, same buy", calls: []evidence.Call{first, replay(`{"status":"completed","media_buy_id":"mb_1","replayed":true}`)}, want: Pass},
			{name: "first flagged replayed false", calls: []evidence.Call{idemCallOn(on, "first", `{"status":"completed","media_buy_id":"mb_1","replayed":false}`, false),
				replay(`{"status":"completed","media_buy_id":"mb_1","replayed":true}`)}, want: Pass},
			// protocol/calling-an-agent.mdx: "For async flows, the replayed
			// response carries the same task_id".
			{name: "async replay, same task", calls: []evidence.Call{idemCallOn(on, "first", `{"status":"submitted","task_id":"task_1"}`, false),
				replay(`{"status":"submitted","task_id":"task_1","replayed":true}`)}, want: Pass},
			{name: "async replay, a new task", calls: []evidence.Call{idemCallOn(on, "first", `{"status":"submitted","task_id":"task_1"}`, false),
				replay(`{"status":"submitted","task_id":"task_2","replayed":true}`)}, want: Fail, ptr: d + "/task_id", msg: "re-executed"},
			{name: "a new buy", calls: []evidence.Call{first, replay(`{"status":"completed","media_buy_id":"mb_2","replayed":true}`)}, want: Fail, ptr: d + "/media_buy_id"},
			{name: "buy id dropped on the replay", calls: []evidence.Call{first, replay(`{"status":"completed","replayed":true}`)}, want: Fail, ptr: d + "/media_buy_id"},
			{name: "no id on either side", calls: []evidence.Call{idemCallOn(on, "first", `{"status":"completed"}`, false),
				replay(`{"status":"completed","replayed":true}`)}, want: Fail, ptr: d + "/media_buy_id", msg: "absent from both"},
			{name: "replayed absent", calls: []evidence.Call{first, replay(`{"status":"completed","media_buy_id":"mb_1"}`)}, want: Fail, ptr: d + "/replayed"},
			{name: "replayed a string", calls: []evidence.Call{first, replay(`{"status":"completed","media_buy_id":"mb_1","replayed":"true"}`)}, want: Fail, ptr: d + "/replayed"},
			{name: "first flagged replayed", calls: []evidence.Call{idemCallOn(on, "first", `{"status":"completed","media_buy_id":"mb_1","replayed":true}`, false),
				replay(`{"status":"completed","media_buy_id":"mb_1","replayed":true}`)}, want: Fail, ptr: d + "/replayed"},
			{name: "replay refused", calls: []evidence.Call{first, idemCallOn(on, "replay", `{"adcp_error":{"code":"IDEMPOTENCY_CONFLICT","message":"no"}}`, true)},
				want: Fail, ptr: d + "/adcp_error/code"},
			{name: "replay in flight", calls: []evidence.Call{first, idemCallOn(on, "replay", `{"adcp_error":{"code":"IDEMPOTENCY_IN_FLIGHT","message":"wait","retry_after":2}}`, true)},
				want: Skip, msg: "IDEMPOTENCY_IN_FLIGHT"},
			{name: "first refused", calls: []evidence.Call{idemCallOn(on, "first", `{"adcp_error":{"code":"INVALID_REQUEST","message":"packages is required"}}`, true)},
				want: Skip, msg: "--inputs"},
			{name: "replay not made", calls: []evidence.Call{first}, want: Skip, msg: "replay was not made"},
			{name: "mutations not allowed", calls: []evidence.Call{idemNotRun(on, "first", evidence.PurposeIdemFirst), idemNotRun(on, "replay", evidence.PurposeIdemReplay)},
				want: Skip, msg: "--allow-mutations"},
			{name: "harness failed", calls: []evidence.Call{first, harnessFailed(cvID(on, "idem/replay"), evidence.Transport(on), evidence.KindToolCall, "EOF", evidence.PurposeIdemReplay)},
				want: HarnessError, msg: "EOF"},
		}
		const buy = `{"status":"completed","media_buy_id":"mb_1"}`
		if on == catalogue.MCP {
			// security.mdx, seller rule 4: over MCP "servers MAY expose replayed
			// … via a response metadata field".
			meta := func(m string) evidence.Call {
				return cvPurposes(mcpResult("mcp/idem/replay", "create_media_buy",
					`{"content":[{"type":"text","text":`+quoteJSON(buy)+`}],"structuredContent":`+buy+`,"_meta":`+m+`}`), evidence.PurposeIdemReplay)
			}
			cases = append(cases,
				judgeCase{name: "replayed in _meta", calls: []evidence.Call{first, meta(`{"replayed":true}`)}, want: Pass},
				judgeCase{name: "replayed in namespaced _meta", calls: []evidence.Call{first, meta(`{"adcontextprotocol.org":{"replayed":true}}`)}, want: Pass},
				judgeCase{name: "replayed false in _meta", calls: []evidence.Call{first, meta(`{"replayed":false}`)}, want: Fail, ptr: d + "/replayed"},
			)
		} else {
			withMeta := `{"kind":"task","id":"t2","contextId":"c1","status":{"state":"completed"},"metadata":{"replayed":true},` +
				`"artifacts":[{"artifactId":"a1","parts":[{"kind":"data","data":` + buy + `}]}]}`
			submitted := func(id, data string) string {
				return `{"kind":"task","id":"` + id + `","contextId":"c1","status":{"state":"submitted","message":{"kind":"message","messageId":"m1","role":"agent",` +
					`"parts":[{"kind":"data","data":` + data + `}]}}}`
			}
			cases = append(cases,
				judgeCase{name: "replayed in task metadata", calls: []evidence.Call{first, a2aResult("a2a/idem/replay", "create_media_buy", withMeta, evidence.PurposeIdemReplay)},
					want: Pass},
				// The A2A task in flight is the AdCP task (A2A profile).
				judgeCase{name: "submitted replay, same A2A task", calls: []evidence.Call{
					a2aResult("a2a/idem/first", "create_media_buy", submitted("task_1", `{"status":"submitted"}`), evidence.PurposeIdemFirst),
					a2aResult("a2a/idem/replay", "create_media_buy", submitted("task_1", `{"status":"submitted","replayed":true}`), evidence.PurposeIdemReplay)},
					want: Pass},
				judgeCase{name: "submitted replay, a new A2A task", calls: []evidence.Call{
					a2aResult("a2a/idem/first", "create_media_buy", submitted("task_1", `{"status":"submitted"}`), evidence.PurposeIdemFirst),
					a2aResult("a2a/idem/replay", "create_media_buy", submitted("task_2", `{"status":"submitted","replayed":true}`), evidence.PurposeIdemReplay)},
					want: Fail, ptr: "/result/id"},
			)
		}
		cvTable(t, "IDEM-03", on, cases)
	}
}

func TestIDEM04Table(t *testing.T) {
	for _, on := range cvBoth {
		conflict := func(body string, isErr bool) evidence.Call { return idemCallOn(on, "conflict", body, isErr) }
		cvTable(t, "IDEM-04", on, []judgeCase{
			{name: "IDEMPOTENCY_CONFLICT", calls: []evidence.Call{conflict(`{"adcp_error":{"code":"IDEMPOTENCY_CONFLICT","message":"key reused","recovery":"correctable"}}`, true)}, want: Pass},
			{name: "CONFLICT", calls: []evidence.Call{conflict(`{"adcp_error":{"code":"CONFLICT","message":"key reused"}}`, true)}, want: Pass},
			{name: "served again", calls: []evidence.Call{conflict(`{"status":"completed","media_buy_id":"mb_2"}`, false)}, want: Fail, ptr: "/result"},
			{name: "the first replayed", calls: []evidence.Call{conflict(`{"status":"completed","media_buy_id":"mb_1","replayed":true}`, false)}, want: Fail, ptr: "/result"},
			{name: "another code", calls: []evidence.Call{conflict(`{"adcp_error":{"code":"INVALID_REQUEST","message":"no"}}`, true)},
				want: Fail, ptr: cvData(on) + "/adcp_error/code"},
			{name: "mutations not allowed", calls: []evidence.Call{idemNotRun(on, "conflict", evidence.PurposeIdemConflict)}, want: Skip, msg: "--allow-mutations"},
			{name: "create_media_buy not listed", want: Skip, msg: "not listed"},
			{name: "harness failed", calls: []evidence.Call{harnessFailed(cvID(on, "idem/conflict"), evidence.Transport(on), evidence.KindToolCall, "EOF", evidence.PurposeIdemConflict)},
				want: HarnessError, msg: "EOF"},
			// security.mdx, idempotency rules 3 and 8: only a successful first use binds the key.
			{name: "the first create refused: the key was never bound", calls: []evidence.Call{
				idemCallOn(on, "first", `{"adcp_error":{"code":"VALIDATION_ERROR","message":"brand is required"}}`, true),
				conflict(`{"adcp_error":{"code":"VALIDATION_ERROR","message":"brand is required"}}`, true)},
				want: Skip, msg: "never bound"},
			{name: "the first create succeeded, the conflict refused for another reason", calls: []evidence.Call{
				idemCallOn(on, "first", `{"status":"completed","media_buy_id":"mb_1"}`, false),
				conflict(`{"adcp_error":{"code":"VALIDATION_ERROR","message":"brand is required"}}`, true)},
				want: Fail, ptr: cvData(on) + "/adcp_error/code"},
		})
	}
}

func TestIDEM05Table(t *testing.T) {
	for _, on := range cvBoth {
		env := func(c evidence.Call) evidence.Call {
			return cvWith(cvPurposes(c, evidence.PurposeEnvelopeFields, evidence.PurposeContext), envelopeArgs)
		}
		const id = "get_products/envelope_fields"
		cvTable(t, "IDEM-05", on, []judgeCase{
			{name: "key accepted", calls: []evidence.Call{env(cvOK(on, id, "get_products", productsBody))}, want: Pass},
			// A result, not an error, is no rejection: its body is ENV-01's.
			{name: "an empty result is no rejection", calls: []evidence.Call{env(cvRPCResult(on, id, `{"content":[]}`))}, want: Pass},
			{name: "rejected naming the key", calls: []evidence.Call{env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"INVALID_REQUEST","message":"idempotency_key is only accepted on mutating tasks.","field":"idempotency_key"}}`))},
				want: Fail, ptr: cvData(on) + "/adcp_error"},
			{name: "JSON-RPC error naming the key", calls: []evidence.Call{env(cvRPCErr(on, id, "get_products", `{"code":-32602,"message":"unexpected idempotency_key"}`))},
				want: Fail, ptr: "/error"},
			{name: "rejected for another field", calls: []evidence.Call{env(cvErr(on, id, "get_products",
				`{"adcp_error":{"code":"INVALID_REQUEST","message":"Unknown field governance_context.","field":"governance_context"}}`))},
				want: Skip, msg: "no read call"},
			{name: "no envelope probe", want: Skip, msg: "no read call"},
			{name: "harness failed", calls: []evidence.Call{env(harnessFailed(cvID(on, id), evidence.Transport(on), evidence.KindToolCall, "EOF"))},
				want: HarnessError, msg: "EOF"},
		})
	}
}
