package check

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// val decodes one validation as the loader does (so Has sees its keys).
func val(t *testing.T, src string) spec.Validation {
	t.Helper()
	var v spec.Validation
	if err := yaml.Unmarshal([]byte(src), &v); err != nil {
		t.Fatalf("validation YAML: %v", err)
	}
	return v
}

// js decodes a JSON literal into the data model.
func js(t *testing.T, src string) any {
	t.Helper()
	v, err := spec.DecodeJSON([]byte(src))
	if err != nil {
		t.Fatalf("JSON %q: %v", src, err)
	}
	return v
}

func obsOf(t *testing.T, payload string) *spec.Observation {
	t.Helper()
	o := &spec.Observation{Transport: "mcp", Task: "get_products"}
	if payload != "" {
		o.Payload = js(t, payload)
	}
	return o
}

// outcome is what a case expects: "pass", "fail" or "na".
type crossCase struct {
	name    string
	v       string // validation YAML
	facts   func(t *testing.T) Facts
	want    string
	message string // substring of Message (fail) or Note (na), optional
	observe string // substring of an observation, optional
}

func runCross(t *testing.T, cases []crossCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := val(t, c.v)
			f := c.facts(t)
			fn, ok := checks[v.Check]
			if !ok {
				t.Fatalf("check %q is not registered", v.Check)
			}
			r := fn(v, f)
			if r.Check != v.Check || r.Description != v.Description {
				t.Errorf("result names check %q / %q, want %q / %q", r.Check, r.Description, v.Check, v.Description)
			}
			got := "fail"
			switch {
			case r.NotApplicable && r.Passed:
				got = "na"
			case r.NotApplicable:
				t.Fatalf("not_applicable result that did not pass: %+v", r)
			case r.Passed:
				got = "pass"
			}
			if got != c.want {
				t.Fatalf("outcome %s, want %s: %+v", got, c.want, r)
			}
			if got == "na" && r.Note == "" {
				t.Errorf("a not_applicable result without a note: %+v", r)
			}
			if got == "fail" && r.Message == "" {
				t.Errorf("a failure without a message: %+v", r)
			}
			text := r.Message + r.Note
			if c.message != "" && !strings.Contains(text, c.message) {
				t.Errorf("message/note %q does not contain %q", text, c.message)
			}
			if c.observe != "" && !strings.Contains(strings.Join(r.Observations, "\n"), c.observe) {
				t.Errorf("observations %q do not contain %q", r.Observations, c.observe)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("result does not marshal: %v", err)
			}
		})
	}
}

func TestCheckAnyOf(t *testing.T) {
	const v = `{check: any_of, allowed_values: ["auth_mechanism_verified"], description: d}`
	contrib := func(m map[string]string) func(*testing.T) Facts {
		return func(*testing.T) Facts { return Facts{Contributions: m} }
	}
	runCross(t, []crossCase{
		{"a peer branch contributed the flag", v, contrib(map[string]string{"auth_mechanism_verified": "api_key.probe"}), "pass", "", "api_key.probe"},
		{"one of several allowed flags contributed", `{check: any_of, allowed_values: [a, b], description: d}`, contrib(map[string]string{"b": "p.s"}), "pass", "", ""},
		{"no branch contributed", v, contrib(nil), "fail", `"auth_mechanism_verified"`, ""},
		{"another flag contributed", v, contrib(map[string]string{"other": "p.s"}), "fail", "no branch contributed", ""},
		{"on an ordinary step the run's contributions decide", v, func(t *testing.T) Facts {
			return Facts{Obs: obsOf(t, `{}`), Contributions: map[string]string{"auth_mechanism_verified": "x.y"}}
		}, "pass", "", ""},
		{"no allowed_values is an authoring error", `{check: any_of, description: d}`, contrib(nil), "na", "authoring", ""},
		{"a non-string flag is an authoring error", `{check: any_of, allowed_values: [1], description: d}`, contrib(nil), "na", "authoring", ""},
	})
}

func TestCheckFieldLessThan(t *testing.T) {
	withCtx := func(payload string, ctx map[string]any) func(*testing.T) Facts {
		return func(t *testing.T) Facts { return Facts{Obs: obsOf(t, payload), Context: ctx} }
	}
	const byCtx = `{check: field_less_than, path: "rights.length", context_key: baseline_rights_count, description: d}`
	const byValue = `{check: field_less_than, path: "delivery.spend", value: 10000, description: d}`
	runCross(t, []crossCase{
		{"filtered length below the baseline", byCtx, withCtx(`{"rights":[1,2]}`, map[string]any{"baseline_rights_count": 3.0}), "pass", "", ""},
		{"equal to the baseline is not less", byCtx, withCtx(`{"rights":[1,2,3]}`, map[string]any{"baseline_rights_count": 3.0}), "fail", "not less than 3", ""},
		{"literal threshold met", byValue, withCtx(`{"delivery":{"spend":9999.5}}`, nil), "pass", "", ""},
		{"literal threshold exceeded", byValue, withCtx(`{"delivery":{"spend":10000}}`, nil), "fail", "not less than", ""},
		{"absent field fails", byValue, withCtx(`{"delivery":{}}`, nil), "fail", "missing", ""},
		{"string field is a type error", byValue, withCtx(`{"delivery":{"spend":"12"}}`, nil), "fail", "type error", ""},
		{"captured comparand not a number is a type error", byCtx, withCtx(`{"rights":[]}`, map[string]any{"baseline_rights_count": "3"}), "fail", "type error", ""},
		{"context key absent passes with an observation", byCtx, withCtx(`{"rights":[]}`, nil), "pass", "", "context_key_absent"},
		{"literal value not a number is an authoring error", `{check: field_less_than, path: a, value: x, description: d}`, withCtx(`{"a":1}`, nil), "na", "authoring", ""},
		{"no comparand is an authoring error", `{check: field_less_than, path: a, description: d}`, withCtx(`{"a":1}`, nil), "na", "authoring", ""},
		{"no observation", byValue, func(*testing.T) Facts { return Facts{} }, "na", "sent nothing", ""},
		{"harness failure proves nothing", byValue, func(*testing.T) Facts { return Facts{Obs: &spec.Observation{Failure: "connection refused"}} }, "na", "connection refused", ""},
	})
}

func TestCheckFieldEqualsContext(t *testing.T) {
	withCtx := func(payload string, ctx map[string]any) func(*testing.T) Facts {
		return func(t *testing.T) Facts { return Facts{Obs: obsOf(t, payload), Context: ctx} }
	}
	const roundTrip = `{check: field_equals_context, path: "media_buys[0].media_buy_id", context_key: created_media_buy_id, description: d}`
	const whole = `{check: field_equals_context, path: "", context_key: original_create_response, description: d}`
	runCross(t, []crossCase{
		{"read echoes the created id", roundTrip, withCtx(`{"media_buys":[{"media_buy_id":"mb-1"}]}`, map[string]any{"created_media_buy_id": "mb-1"}), "pass", "", ""},
		{"read returns another id", roundTrip, withCtx(`{"media_buys":[{"media_buy_id":"mb-2"}]}`, map[string]any{"created_media_buy_id": "mb-1"}), "fail", `"mb-2"`, ""},
		{"read misses the id", roundTrip, withCtx(`{"media_buys":[]}`, map[string]any{"created_media_buy_id": "mb-1"}), "fail", "missing", ""},
		{"whole replayed body deep-equals, numbers by value", whole, withCtx(`{"a":1,"b":[true,null]}`, map[string]any{"original_create_response": map[string]any{"a": 1, "b": []any{true, nil}}}), "pass", "", ""},
		{"whole replayed body differs", whole, withCtx(`{"a":2}`, map[string]any{"original_create_response": map[string]any{"a": 1}}), "fail", "", ""},
		{"context key absent passes with an observation", roundTrip, withCtx(`{}`, nil), "pass", "", "context_key_absent"},
		{"no context_key is an authoring error", `{check: field_equals_context, path: a, description: d}`, withCtx(`{}`, nil), "na", "authoring", ""},
		{"a wildcard path is an authoring error", `{check: field_equals_context, path: "a[*]", context_key: k, description: d}`, withCtx(`{"a":[1]}`, map[string]any{"k": 1.0}), "na", "wildcard", ""},
	})
}

func TestCheckFieldInContextArray(t *testing.T) {
	withCtx := func(payload string, ctx map[string]any) func(*testing.T) Facts {
		return func(t *testing.T) Facts { return Facts{Obs: obsOf(t, payload), Context: ctx} }
	}
	const v = `{check: field_in_context_array, path: "accounts[0].billing", context_key: supported_billing, description: d}`
	billing := map[string]any{"supported_billing": []any{"operator", "agent"}}
	runCross(t, []crossCase{
		{"applied billing is advertised", v, withCtx(`{"accounts":[{"billing":"agent"}]}`, billing), "pass", "", ""},
		{"applied billing is not advertised", v, withCtx(`{"accounts":[{"billing":"advertiser"}]}`, billing), "fail", "not a member", ""},
		{"applied billing missing", v, withCtx(`{"accounts":[{}]}`, billing), "fail", "missing", ""},
		{"captured value is not an array", v, withCtx(`{"accounts":[{"billing":"agent"}]}`, map[string]any{"supported_billing": "agent"}), "fail", "not an array", ""},
		{"context key absent", v, withCtx(`{}`, nil), "pass", "", "context_key_absent"},
	})
}

func TestCheckAllFieldsInContextArray(t *testing.T) {
	withCtx := func(payload string, ctx map[string]any) func(*testing.T) Facts {
		return func(t *testing.T) Facts { return Facts{Obs: obsOf(t, payload), Context: ctx} }
	}
	const v = `{check: all_fields_in_context_array, path: "products[*].channels[*]", context_key: portfolio_channels, description: d}`
	scope := map[string]any{"portfolio_channels": []any{"display", "olv"}}
	runCross(t, []crossCase{
		{"every channel is in scope", v, withCtx(`{"products":[{"channels":["display"]},{"channels":["olv","display"]}]}`, scope), "pass", "", ""},
		{"one channel is outside the scope", v, withCtx(`{"products":[{"channels":["display"]},{"channels":["ctv"]}]}`, scope), "fail", "/products/1/channels/0", ""},
		{"no values pass vacuously", v, withCtx(`{"products":[]}`, scope), "pass", "", "vacuously"},
		{"captured value is not an array", v, withCtx(`{"products":[]}`, map[string]any{"portfolio_channels": map[string]any{}}), "fail", "not an array", ""},
		{"context key absent", v, withCtx(`{}`, nil), "pass", "", "context_key_absent"},
	})
}

func TestCheckRefsResolve(t *testing.T) {
	// Shapes from compliance/3.1.19 domains/media-buy/index.yaml and
	// scenarios/canonical_formats.yaml.
	const legacy = `{check: refs_resolve, description: d,
	  source: {from: context, path: "products[*].format_ids[*]"},
	  target: {from: current_step, path: "formats[*].format_id"},
	  match_keys: [agent_url, id], scope: {key: agent_url, equals: $agent_url}, on_out_of_scope: warn}`
	const sameStep = `{check: refs_resolve, description: d,
	  source: {from: current_step, path: "products[0].format_options[*].v1_format_ref[*]"},
	  target: {from: current_step, path: "products[0].format_ids[*]"},
	  match_keys: [agent_url, id], on_out_of_scope: fail}`
	formats := `{"formats":[{"format_id":{"agent_url":"https://seller.example/mcp","id":"banner"}},{"format_id":{"agent_url":"https://seller.example/mcp","id":"video"}}]}`
	ctxProducts := func(refs ...string) map[string]any {
		var ids []any
		for _, r := range refs {
			ids = append(ids, js(t, r))
		}
		return map[string]any{"products": []any{map[string]any{"format_ids": ids}}}
	}
	facts := func(payload string, ctx map[string]any) func(*testing.T) Facts {
		return func(t *testing.T) Facts {
			return Facts{Obs: obsOf(t, payload), Context: ctx, AgentURL: "https://Seller.example/mcp/"}
		}
	}
	runCross(t, []crossCase{
		{"every in-scope ref resolves (url case and trailing slash normalised)", legacy,
			facts(formats, ctxProducts(`{"agent_url":"https://seller.example/MCP/","id":"banner"}`)), "pass", "", ""},
		{"a broken ref is named once however often it recurs", legacy,
			facts(formats, ctxProducts(`{"agent_url":"https://seller.example/mcp","id":"gone"}`, `{"agent_url":"https://seller.example/mcp","id":"gone"}`)), "fail", `"id":"gone"`, ""},
		{"a ref missing a match key never matches", legacy,
			facts(`{"formats":[{"format_id":{"agent_url":"https://seller.example/mcp"}}]}`, ctxProducts(`{"agent_url":"https://seller.example/mcp"}`)), "fail", "do not resolve", ""},
		{"an out-of-scope ref warns", legacy,
			facts(formats, ctxProducts(`{"agent_url":"https://creative.other.example","id":"x"}`)), "pass", "", "out of scope"},
		{"an out-of-scope ref fails under on_out_of_scope fail", strings.Replace(legacy, "on_out_of_scope: warn", "on_out_of_scope: fail", 1),
			facts(formats, ctxProducts(`{"agent_url":"https://creative.other.example","id":"x"}`)), "fail", "creative.other.example", ""},
		{"an out-of-scope ref is silent under ignore", strings.Replace(legacy, "on_out_of_scope: warn", "on_out_of_scope: ignore", 1),
			facts(formats, ctxProducts(`{"agent_url":"https://creative.other.example","id":"x"}`)), "pass", "", ""},
		{"v1_format_ref resolves on the same product", sameStep,
			facts(`{"products":[{"format_ids":[{"agent_url":"https://c.example/","id":"a"}],"format_options":[{"v1_format_ref":[{"agent_url":"https://c.example/","id":"a"}]}]}]}`, nil), "pass", "", ""},
		{"v1_format_ref diverges from format_ids", sameStep,
			facts(`{"products":[{"format_ids":[{"agent_url":"https://c.example/","id":"a"}],"format_options":[{"v1_format_ref":[{"agent_url":"https://c.example/","id":"b"}]}]}]}`, nil), "fail", "", ""},
		{"no source refs passes with an observation", sameStep, facts(`{"products":[{}]}`, nil), "pass", "", "resolved no refs"},
		{"captured key absent", legacy, facts(formats, nil), "na", "context_key_absent", ""},
		{"an error reply has no refs", legacy, func(t *testing.T) Facts {
			f := facts(`{"errors":[{"code":"INTERNAL_ERROR"}]}`, ctxProducts(`{"agent_url":"https://seller.example/mcp","id":"banner"}`))(t)
			f.Obs.IsError, f.Obs.ErrorCode, f.Obs.Error = true, "INTERNAL_ERROR", map[string]any{"code": "INTERNAL_ERROR"}
			return f
		}, "na", "INTERNAL_ERROR", ""},
		{"no match_keys is an authoring error", `{check: refs_resolve, description: d, source: {from: current_step, path: a}, target: {from: current_step, path: b}}`, facts(`{}`, nil), "na", "match_keys", ""},
		{"unknown from is an authoring error", `{check: refs_resolve, description: d, source: {from: elsewhere, path: a}, target: {from: current_step, path: b}, match_keys: [id]}`, facts(`{}`, nil), "na", "unknown from", ""},
		{"$agent_url without an agent URL", legacy, func(t *testing.T) Facts { return Facts{Obs: obsOf(t, formats)} }, "na", "agent URL", ""},
	})
}

func a2aObs(t *testing.T, result string) *spec.Observation {
	t.Helper()
	return &spec.Observation{Transport: "a2a", Task: "create_media_buy", A2AResult: json.RawMessage(result)}
}

func TestCheckA2ASubmittedArtifact(t *testing.T) {
	const v = `{check: a2a_submitted_artifact, description: d}`
	task := func(state, parts string) string {
		return `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"` + state + `"},"artifacts":[{"parts":` + parts + `}]}`
	}
	on := func(result string) func(*testing.T) Facts {
		return func(t *testing.T) Facts { return Facts{Obs: a2aObs(t, result)} }
	}
	runCross(t, []crossCase{
		{"A2A 0.3 completed task with a submitted DataPart", v, on(task("completed", `[{"kind":"text","text":"queued"},{"kind":"data","data":{"status":"submitted","task_id":"x"}}]`)), "pass", "", ""},
		{"A2A 1.0 enum state and a kind-less data part", v, on(`{"task":` + task("TASK_STATE_COMPLETED", `[{"data":{"status":"submitted"}}]`) + `}`), "pass", "", ""},
		{"the last object DataPart decides", v, on(task("completed", `[{"kind":"data","data":{"status":"submitted"}},{"kind":"data","data":{"status":"completed"}}]`)), "fail", "not \"submitted\"", ""},
		{"null and non-object data parts are skipped", v, on(task("completed", `[{"kind":"data","data":{"status":"submitted"}},{"kind":"data","data":null},{"kind":"data","data":[1]}]`)), "pass", "", ""},
		{"state submitted is not the completed envelope", v, on(task("submitted", `[{"kind":"data","data":{"status":"submitted"}}]`)), "fail", "completed Task", ""},
		{"empty task id", v, on(`{"kind":"task","id":"","contextId":"c","status":{"state":"completed"}}`), "fail", "Task.id", ""},
		{"no DataPart", v, on(task("completed", `[{"kind":"text","text":"x"}]`)), "fail", "no object-typed DataPart", ""},
		{"a Message is no Task", v, on(`{"kind":"message","messageId":"m","parts":[]}`), "fail", "Message", ""},
		{"no JSON-RPC result", v, func(*testing.T) Facts { return Facts{Obs: &spec.Observation{Transport: "a2a"}} }, "fail", "no JSON-RPC result", ""},
		{"not JSON", v, on(`{`), "fail", "not JSON", ""},
		{"over MCP", v, func(t *testing.T) Facts { return Facts{Obs: obsOf(t, `{}`)} }, "na", "A2A", ""},
	})
}

func TestCheckA2AContextContinuity(t *testing.T) {
	const v = `{check: a2a_context_continuity, description: d}`
	on := func(result, sent string) func(*testing.T) Facts {
		return func(t *testing.T) Facts { return Facts{Obs: a2aObs(t, result), A2AContextSent: sent} }
	}
	runCross(t, []crossCase{
		{"the Task echoes the forwarded contextId", v, on(`{"kind":"task","id":"t","contextId":"ctx-1","status":{"state":"completed"}}`, "ctx-1"), "pass", "", ""},
		{"the seller stamps its own contextId", v, on(`{"kind":"task","id":"t","contextId":"ctx-2","status":{"state":"completed"}}`, "ctx-1"), "fail", "does not match", ""},
		{"the Task drops the contextId", v, on(`{"kind":"task","id":"t","status":{"state":"completed"}}`, "ctx-1"), "fail", "absent or empty", ""},
		{"a Message without a contextId", v, on(`{"kind":"message","messageId":"m"}`, "ctx-1"), "na", "optional on a Message", ""},
		{"a Message with the wrong contextId", v, on(`{"kind":"message","messageId":"m","contextId":"x"}`, "ctx-1"), "fail", "does not match", ""},
		{"first A2A step: nothing sent", v, on(`{"kind":"task","id":"t","contextId":"c"}`, ""), "na", "no_prior_a2a_context_id", ""},
		{"JSON-RPC error reply", v, on(``, "ctx-1"), "na", "a2a_jsonrpc_error_envelope", ""},
		{"a result that is not an object", v, on(`"str"`, "ctx-1"), "fail", "not an object", ""},
		{"over MCP", v, func(t *testing.T) Facts { return Facts{Obs: obsOf(t, `{}`), A2AContextSent: "c"} }, "na", "A2A", ""},
	})
}

func parallelStep() *spec.Step {
	return &spec.Step{RequiresContract: "parallel_dispatch_runner", ParallelDispatch: &spec.ParallelDispatch{Count: 2, SameIdempotencyKey: true}}
}

func TestCheckCrossResponse(t *testing.T) {
	// Shapes from compliance/*/universal/idempotency.yaml create_media_buy_concurrent.
	const equal = `{check: cross_response_field_equal, path: media_buy_id, description: d}`
	const distinct = `{check: cross_response_count_distinct, path: media_buy_id, allowed_values: [1], description: d}`
	set := func(step *spec.Step, payloads ...string) func(*testing.T) Facts {
		return func(t *testing.T) Facts {
			var ds []*spec.Observation
			for _, p := range payloads {
				var o *spec.Observation
				if p == "in-flight" {
					o = &spec.Observation{ErrorCode: "IDEMPOTENCY_IN_FLIGHT"}
				} else {
					o = obsOf(t, p)
				}
				ds = append(ds, o)
			}
			return Facts{Obs: ds[0], Dispatches: ds, Step: step}
		}
	}
	runCross(t, []crossCase{
		{"equal: both converge", equal, set(parallelStep(), `{"media_buy_id":"mb-1"}`, `{"media_buy_id":"mb-1","replayed":true}`), "pass", "", ""},
		{"equal: two resources", equal, set(parallelStep(), `{"media_buy_id":"mb-1"}`, `{"media_buy_id":"mb-2"}`), "fail", "dispatch 1", ""},
		{"equal: one response lacks the id", equal, set(parallelStep(), `{"media_buy_id":"mb-1"}`, `{"errors":[{"code":"CONFLICT"}]}`), "fail", "carries no media_buy_id", ""},
		{"equal: nulls are not compared", equal, set(parallelStep(), `{"media_buy_id":"mb-1"}`, `{"media_buy_id":null}`), "pass", "", ""},
		{"equal: unresolved IDEMPOTENCY_IN_FLIGHT", equal, set(parallelStep(), `{"media_buy_id":"mb-1"}`, "in-flight"), "na", "step_timeout", ""},
		{"equal: outside the parallel_dispatch contract", equal, set(&spec.Step{}, `{"media_buy_id":"a"}`, `{"media_buy_id":"b"}`), "na", "requires_contract", ""},
		{"equal: single dispatch step", equal, func(t *testing.T) Facts { return Facts{Obs: obsOf(t, `{}`)} }, "na", "multi-dispatch", ""},
		{"distinct: one resource", distinct, set(parallelStep(), `{"media_buy_id":"mb-1"}`, `{"media_buy_id":"mb-1"}`), "pass", "", ""},
		{"distinct: two resources", distinct, set(parallelStep(), `{"media_buy_id":"mb-1"}`, `{"media_buy_id":"mb-2"}`), "fail", "2 distinct", ""},
		{"distinct: none carried it", distinct, set(parallelStep(), `{}`, `{}`), "fail", "0 distinct", ""},
		{"distinct: bad allowed_values", `{check: cross_response_count_distinct, path: x, allowed_values: [one], description: d}`, set(parallelStep(), `{}`, `{}`), "na", "authoring", ""},
		{"distinct: engine without step info gates on dispatches", distinct, set(nil, `{"media_buy_id":"a"}`, `{"media_buy_id":"a"}`), "pass", "", ""},
	})
}

func TestCheckReplayNotCachedRateLimit(t *testing.T) {
	const v = `{check: replay_not_cached_rate_limit, description: d}`
	step := &spec.Step{RequiresContract: "rate_limit_trip_runner", RateLimitTrip: &spec.RateLimitTrip{TripTargetTask: "create_media_buy", MaxAttempts: 200, ReplayMaxWaitSeconds: 30}}
	ok := func() *spec.Observation { return &spec.Observation{Payload: map[string]any{"media_buy_id": "mb"}} }
	limited := func(retry any) *spec.Observation {
		e := map[string]any{"code": "RATE_LIMITED"}
		if retry != nil {
			e["retry_after"] = retry
		}
		return &spec.Observation{ErrorCode: "RATE_LIMITED", Error: e, IsError: true}
	}
	other := &spec.Observation{ErrorCode: "PRODUCT_NOT_FOUND", Error: map[string]any{"code": "PRODUCT_NOT_FOUND"}}
	set := func(st *spec.Step, ds ...*spec.Observation) func(*testing.T) Facts {
		return func(*testing.T) Facts { return Facts{Dispatches: ds, Step: st} }
	}
	runCross(t, []crossCase{
		{"the replay succeeds", v, set(step, ok(), ok(), limited(2.0), ok()), "pass", "", "a success"},
		{"the replay fails on state", v, set(step, ok(), limited(1.0), other), "pass", "", "PRODUCT_NOT_FOUND"},
		{"the cached RATE_LIMITED is replayed", v, set(step, ok(), limited(1.0), limited(1.0)), "fail", "rate_limit_response_cached_as_replay", ""},
		{"RATE_LIMITED without retry_after", v, set(step, limited(nil), ok()), "fail", "missing_retry_after", ""},
		{"retry_after zero", v, set(step, limited(0.0), ok()), "fail", "missing_retry_after", ""},
		{"retry_after beyond the wait budget", v, set(step, limited(120.0)), "fail", "replay_wait_exceeded", ""},
		{"the limiter never tripped", v, set(step, ok(), ok(), ok()), "na", "rate_limit_not_triggered", ""},
		{"tripped but no replay observed", v, set(step, limited(1.0)), "na", "no replay", ""},
		{"the replay proves nothing", v, set(step, limited(1.0), &spec.Observation{Failure: "timeout"}), "na", "timeout", ""},
		{"outside the rate_limit_trip contract", v, set(parallelStep(), limited(1.0), limited(1.0)), "na", "requires_contract", ""},
	})
}

// upstreamReply builds a query_upstream_traffic success reply.
func upstreamReply(t *testing.T, calls string) *spec.Observation {
	t.Helper()
	return &spec.Observation{Transport: "mcp", Task: "comply_test_controller",
		Payload: js(t, `{"success":true,"since_timestamp":"2026-05-02T14:30:00Z","total_count":1,"recorded_calls":`+calls+`}`)}
}

func TestCheckUpstreamTraffic(t *testing.T) {
	start := time.Date(2026, 5, 2, 14, 30, 0, 0, time.UTC)
	// The raw example of comply-test-controller-response.json, trimmed.
	raw := `{"method":"POST","endpoint":"POST https://business-api.example/v1.3/dmp/custom_audience/upload/","url":"https://business-api.example/v1.3/dmp/custom_audience/upload/",
	  "content_type":"application/json","purpose":"platform_primary","attestation_mode":"raw","payload_length":387,"timestamp":"2026-05-02T14:30:01.245Z",
	  "payload":{"advertiser_id":"1234567890","users":[{"external_id":"acme-user-0001","hashed_email":"a001"},{"external_id":"acme-user-0002"}]}}`
	request := map[string]any{"audiences": []any{map[string]any{"add": []any{
		map[string]any{"hashed_email": "a001", "external_id": "acme-user-0001"},
	}}}}
	facts := func(calls string) func(*testing.T) Facts {
		return func(t *testing.T) Facts {
			o := obsOf(t, `{}`)
			o.Task, o.Request, o.Call = "sync_audiences", request, evidence.Call{ProbeID: "storyboard/a/p/sync", Started: start}
			return Facts{Obs: o, Upstream: upstreamReply(t, calls)}
		}
	}
	const example = `{check: upstream_traffic, description: d, endpoint_pattern: "POST *", min_count: 1,
	  payload_must_contain: [{path: "users[*].hashed_email", match: present}],
	  identifier_paths: ["audiences[*].add[*].hashed_email", "audiences[*].add[*].external_id"]}`
	digest := func(proofs string) string {
		return `{"method":"POST","endpoint":"POST https://api.example.eu/v1/audience/members","url":"https://api.example.eu/v1/audience/members","content_type":"application/json",
		  "attestation_mode":"digest","payload_digest_sha256":"3f786850e387550fdab836ed7e6dc881de23001b1f8e64ab38b1e30a2ad7c92e","payload_length":412,
		  "identifier_match_proofs":` + proofs + `,"timestamp":"2026-05-02T14:30:01Z"}`
	}
	sha := func(s string) string { return hexSHA(s) }
	runCross(t, []crossCase{
		{"the spec's example passes", example, facts(`[` + raw + `]`), "pass", "", ""},
		{"no calls at all is the façade signal", example, facts(`[]`), "fail", "0 recorded upstream call(s)", ""},
		{"the pattern matches no call", `{check: upstream_traffic, description: d, endpoint_pattern: "PUT */audience/*"}`, facts(`[` + raw + `]`), "fail", "at least 1", ""},
		{"glob crosses slashes", `{check: upstream_traffic, description: d, endpoint_pattern: "POST */custom_audience/upload/"}`, facts(`[` + raw + `]`), "pass", "", ""},
		{"a payload path is missing", `{check: upstream_traffic, description: d, payload_must_contain: [{path: "users[*].hashed_phone", match: present}]}`, facts(`[` + raw + `]`), "fail", "1 payload assertion", ""},
		{"equals", `{check: upstream_traffic, description: d, payload_must_contain: [{path: advertiser_id, match: equals, value: "1234567890"}]}`, facts(`[` + raw + `]`), "pass", "", ""},
		{"equals mismatch", `{check: upstream_traffic, description: d, payload_must_contain: [{path: advertiser_id, match: equals, value: "999"}]}`, facts(`[` + raw + `]`), "fail", "", ""},
		{"contains_any", `{check: upstream_traffic, description: d, payload_must_contain: [{path: "users[*].external_id", match: contains_any, allowed_values: [nope, acme-user-0002]}]}`, facts(`[` + raw + `]`), "pass", "", ""},
		{"an identifier the adapter did not forward", example, func(t *testing.T) Facts {
			f := facts(`[` + raw + `]`)(t)
			f.Obs.Request = map[string]any{"audiences": []any{map[string]any{"add": []any{map[string]any{"hashed_email": "zzz-not-sent"}}}}}
			return f
		}, "fail", "1 supplied identifier", ""},
		{"non-JSON payload: path assertions not applicable, identifiers by substring", example,
			facts(`[{"method":"POST","endpoint":"POST https://x.example/up","url":"https://x.example/up","content_type":"application/x-www-form-urlencoded","attestation_mode":"raw","payload_length":9,"timestamp":"2026-05-02T14:30:01Z","payload":"e=a001&id=acme-user-0001"}]`),
			"pass", "", "not applicable"},
		{"application/json-seq is not JSON-shaped", `{check: upstream_traffic, description: d, payload_must_contain: [{path: a, match: present}]}`,
			facts(`[{"method":"POST","endpoint":"POST https://x.example/","url":"https://x.example/","content_type":"application/json-seq","attestation_mode":"raw","payload_length":7,"timestamp":"2026-05-02T14:30:01Z","payload":"{\"a\":1}"}]`),
			"pass", "", "not applicable"},
		{"+json suffix is JSON-shaped", `{check: upstream_traffic, description: d, payload_must_contain: [{path: a, match: present}]}`,
			facts(`[{"method":"POST","endpoint":"POST https://x.example/","url":"https://x.example/","content_type":"application/vnd.api+json; charset=utf-8","attestation_mode":"raw","payload_length":7,"timestamp":"2026-05-02T14:30:01Z","payload":"{\"b\":1}"}]`),
			"fail", "", ""},
		{"digest proofs verify identifiers", `{check: upstream_traffic, description: d, identifier_paths: ["audiences[*].add[*].hashed_email"]}`,
			facts(`[` + digest(`[{"identifier_value_sha256":"`+sha("a001")+`","found":true}]`) + `]`), "pass", "", ""},
		{"a digest proof says not found", `{check: upstream_traffic, description: d, identifier_paths: ["audiences[*].add[*].hashed_email"]}`,
			facts(`[` + digest(`[{"identifier_value_sha256":"`+sha("a001")+`","found":false}]`) + `]`), "fail", "", ""},
		{"raw required but digest returned", `{check: upstream_traffic, description: d, attestation_mode_required: raw}`,
			facts(`[` + digest(`[]`) + `]`), "na", "digest mode", ""},
		{"purpose filter excludes unclassified calls", `{check: upstream_traffic, description: d, purpose_filter: [measurement]}`,
			facts(`[` + raw + `]`), "fail", "", ""},
		{"unclassified calls count as other", `{check: upstream_traffic, description: d, purpose_filter: [other]}`,
			facts(`[` + digest(`[]`) + `]`), "pass", "", ""},
		{"calls before the step are not this step's", `{check: upstream_traffic, description: d}`,
			facts(`[{"method":"POST","endpoint":"POST https://x.example/","url":"https://x.example/","content_type":"text/plain","attestation_mode":"raw","payload_length":1,"timestamp":"2026-05-02T14:29:00Z","payload":"x"}]`),
			"fail", "", "timestamped before"},
		{"min_count 0: no matching call passes", `{check: upstream_traffic, description: d, endpoint_pattern: "POST */governance/auto-provision", min_count: 0}`, facts(`[` + raw + `]`), "pass", "", ""},
		{"min_count 0: a matching call fails", `{check: upstream_traffic, description: d, endpoint_pattern: "POST *", min_count: 0}`, facts(`[` + raw + `]`), "fail", "none may", ""},
		{"since an earlier step widens the window", `{check: upstream_traffic, description: d, since: create}`, func(t *testing.T) Facts {
			f := facts(`[{"method":"POST","endpoint":"POST https://x.example/","url":"https://x.example/","content_type":"text/plain","attestation_mode":"raw","payload_length":1,"timestamp":"2026-05-02T14:29:00Z","payload":"x"}]`)(t)
			f.Prior = []*spec.Observation{{Call: evidence.Call{ProbeID: "storyboard/a/p/create", Started: start.Add(-2 * time.Minute)}}}
			return f
		}, "pass", "", ""},
		{"since names a step not observed", `{check: upstream_traffic, description: d, since: nowhere}`, facts(`[` + raw + `]`), "na", "nowhere", ""},
		{"entries that are not objects are not calls", `{check: upstream_traffic, description: d}`, facts(`[1, "x", null]`), "fail", "0 recorded upstream call(s)", "not objects"},
		{"no controller", example, func(t *testing.T) Facts { return Facts{Obs: obsOf(t, `{}`)} }, "na", "needs the test controller, --sandbox", ""},
		{"JCS non-finite number", example, func(t *testing.T) Facts {
			return Facts{Obs: obsOf(t, `{}`), Upstream: &spec.Observation{Payload: js(t, `{"success":false,"error":"JCS_NON_FINITE_NUMBER"}`)}}
		}, "na", "JCS", ""},
		{"controller error", example, func(t *testing.T) Facts {
			return Facts{Obs: obsOf(t, `{}`), Upstream: &spec.Observation{Payload: js(t, `{"success":false,"error":"UNKNOWN_SCENARIO"}`)}}
		}, "na", "UNKNOWN_SCENARIO", ""},
		{"recorded_calls not an array", example, func(t *testing.T) Facts {
			return Facts{Obs: obsOf(t, `{}`), Upstream: &spec.Observation{Payload: js(t, `{"success":true,"recorded_calls":{}}`)}}
		}, "na", "recorded_calls", ""},
		{"unknown match mode is an authoring error", `{check: upstream_traffic, description: d, payload_must_contain: [{path: a, match: regex}]}`, facts(`[]`), "na", "authoring", ""},
	})
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"POST *", "POST https://a.example/x", true},
		{"POST *", "GET https://a.example/x", false},
		{"POST */audience/upload", "POST https://a.example/v1/audience/upload", true},
		{"POST */audience/upload", "POST https://a.example/v1/audience/upload/extra", false},
		{"GET *.well-known/brand.json", "GET https://brand.example/.well-known/brand.json", true},
		{"a?c", "abc", true},
		{"", "", true},
		{"*", "", true},
		{strings.Repeat("*a", 200), strings.Repeat("a", 5000) + "b", false},
	} {
		if got := glob(c.p, c.s); got != c.want {
			t.Errorf("glob(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}

func TestCheckCanonicalFormatSatisfaction(t *testing.T) {
	// The fixed 300x250 product of compliance/3.2.0-beta.5
	// protocols/media-buy/scenarios/canonical_formats.yaml.
	product := `{"products":[{"product_id":"canonical_formats_mrec_display",
	  "format_ids":[{"agent_url":"https://creative.adcontextprotocol.org/","id":"display_300x250_image"}],
	  "format_options":[{"format_option_id":"canonical_formats_image_mrec","format_kind":"image",
	    "v1_format_ref":[{"agent_url":"https://creative.adcontextprotocol.org/","id":"display_300x250_image"}],
	    "params":{"width":300,"height":250}}]}]}`
	facts := func(pkg string, code string) func(*testing.T) Facts {
		return func(t *testing.T) Facts {
			o := obsOf(t, `{"media_buy_id":"mb"}`)
			o.Task = "create_media_buy"
			o.Request = js(t, `{"packages":[`+pkg+`]}`).(map[string]any)
			if code != "" {
				o.Payload, o.IsError, o.ErrorCode, o.Error = nil, true, code, map[string]any{"code": code}
			}
			prior := obsOf(t, product)
			return Facts{Obs: o, Prior: []*spec.Observation{obsOf(t, `{"products":[]}`), prior}}
		}
	}
	const accept = `{check: canonical_format_satisfaction, value: true, description: d}`
	const reject = `{check: canonical_format_satisfaction, value: false, description: d}`
	base := `"product_id":"canonical_formats_mrec_display","budget":1000,"pricing_option_id":"canonical_formats_mrec_cpm"`
	ref := `"format_option_refs":[{"scope":"product","format_option_id":"canonical_formats_image_mrec"}]`
	direct := `"format_kind":"image","params":{"width":300,"height":250}`
	legacy := `"format_ids":[{"agent_url":"https://creative.adcontextprotocol.org/","id":"display_300x250_image"}]`
	runCross(t, []crossCase{
		{"product-local option ref accepted", accept, facts(`{`+base+`,`+ref+`}`, ""), "pass", "", ""},
		{"direct selector accepted", accept, facts(`{`+base+`,`+direct+`}`, ""), "pass", "", ""},
		{"legacy selector accepted", accept, facts(`{`+base+`,`+legacy+`}`, ""), "pass", "", ""},
		{"equivalent dual emission accepted", accept, facts(`{`+base+`,`+ref+`,`+legacy+`}`, ""), "pass", "", ""},
		{"a satisfying selector rejected", accept, facts(`{`+base+`,`+direct+`}`, "UNSUPPORTED_FEATURE"), "fail", "satisfies the product", ""},
		{"a satisfying selector rejected for another cause", accept, facts(`{`+base+`,`+direct+`}`, "BUDGET_TOO_LOW"), "na", "not attributable", ""},
		{"bare image selector rejected as unsupported", reject, facts(`{`+base+`,"format_kind":"image"}`, "UNSUPPORTED_FEATURE"), "pass", "", ""},
		{"bare image selector accepted", reject, facts(`{`+base+`,"format_kind":"image"}`, ""), "fail", "does not satisfy", ""},
		{"conflicting canonical routes rejected", reject, facts(`{`+base+`,`+ref+`,"format_kind":"image","params":{"width":728,"height":90}}`, "CONFLICTING_SELECTORS"), "pass", "", ""},
		{"conflicting canonical routes accepted", reject, facts(`{`+base+`,`+ref+`,"format_kind":"image","params":{"width":728,"height":90}}`, ""), "fail", "", ""},
		{"a rejection not attributable to formats", reject, facts(`{`+base+`,"format_kind":"image"}`, "AUTH_REQUIRED"), "fail", "not attributable", ""},
		{"unprojectable legacy id accepted: undecidable here", reject, facts(`{`+base+`,`+ref+`,"format_ids":[{"agent_url":"https://creative.adcontextprotocol.org/","id":"unmapped_legacy_selector_6648"}]}`, ""), "na", "registry", ""},
		{"unresolved option ref accepted", reject, facts(`{`+base+`,"format_option_refs":[{"scope":"product","format_option_id":"nope"}]}`, ""), "fail", "does not resolve", ""},
		{"publisher-scope ref: undecidable", accept, facts(`{`+base+`,"format_option_refs":[{"scope":"publisher","publisher_domain":"p.example","format_option_id":"x"}]}`, "UNSUPPORTED_FEATURE"), "na", "publisher", ""},
		{"no prior get_products holds the product", accept, facts(`{"product_id":"other",`+ref+`}`, ""), "fail", "setup error", ""},
		{"not a create_media_buy step", accept, func(t *testing.T) Facts { return Facts{Obs: obsOf(t, `{}`)} }, "na", "create_media_buy", ""},
		{"value not boolean", `{check: canonical_format_satisfaction, value: "yes", description: d}`, facts(`{`+base+`}`, ""), "na", "authoring", ""},
	})
}

func TestCheckOAuthMetadataGraph(t *testing.T) {
	const v = `{check: oauth_metadata_graph, description: d}`
	prm := func(status int, body string) func(*testing.T) Facts {
		return func(t *testing.T) Facts {
			o := &spec.Observation{Transport: "http", Task: "protected_resource_metadata", HTTPStatus: status}
			o.Header = map[string][]string{"Content-Type": {"application/json"}}
			if body != "" {
				o.Payload = js(t, body)
			}
			return Facts{Obs: o, AgentURL: "https://agent.example.com/mcp"}
		}
	}
	many := `[` + strings.TrimSuffix(strings.Repeat(`"https://as.example",`, 17), ",") + `]`
	runCross(t, []crossCase{
		{"a consistent document leaves the graph ungraded here", v, prm(200, `{"resource":"https://AGENT.example.com:443/mcp","authorization_servers":["https://identity.example.net"]}`), "na", "needs fetches", ""},
		{"not 200", v, prm(404, ``), "fail", "oauth_protected_resource_metadata_unavailable", ""},
		{"not an object", v, prm(200, `[]`), "fail", "oauth_protected_resource_metadata_invalid", ""},
		{"resource not https", v, prm(200, `{"resource":"http://agent.example.com/mcp","authorization_servers":["https://a.example"]}`), "fail", "oauth_protected_resource_metadata_invalid", ""},
		{"resource path differs (trailing slash significant)", v, prm(200, `{"resource":"https://agent.example.com/mcp/","authorization_servers":["https://a.example"]}`), "fail", "oauth_resource_mismatch", ""},
		{"no authorization servers", v, prm(200, `{"resource":"https://agent.example.com/mcp","authorization_servers":[]}`), "fail", "oauth_authorization_servers_empty", ""},
		{"an issuer with a query", v, prm(200, `{"resource":"https://agent.example.com/mcp","authorization_servers":["https://a.example?x=1"]}`), "fail", "oauth_authorization_server_url_invalid", ""},
		{"too many authorization servers", v, prm(200, `{"resource":"https://agent.example.com/mcp","authorization_servers":`+many+`}`), "fail", "oauth_graph_limit_exceeded", ""},
		{"another task", v, func(t *testing.T) Facts { return Facts{Obs: obsOf(t, `{}`)} }, "na", "protected_resource_metadata", ""},
		{"a complete graph passes", v, graph(nil), "pass", "", ""},
		{"an unreachable token endpoint fails with its code", v, graph(map[string]*spec.Response{"https://id.example.net/token": {Status: 503}}), "fail", "oauth_endpoint_unreachable", ""},
		{"an issuer that is not exactly the one named", v, graph(map[string]*spec.Response{"https://id.example.net/.well-known/oauth-authorization-server": {Status: 200, ContentType: "application/json",
			Body: []byte(`{"issuer":"https://id.example.net/","token_endpoint":"https://id.example.net/token","grant_types_supported":["client_credentials"]}`)}}), "fail", "oauth_issuer_mismatch", ""},
		{"a graph the engine did not finish fetching", v, graph(map[string]*spec.Response{"https://id.example.net/token": nil}), "na", "did not fetch", ""},
	})
}

// graph is a protected_resource_metadata step whose engine walked a
// token-only graph (vector 003's shape), with overrides (nil deletes).
func graph(over map[string]*spec.Response) func(*testing.T) Facts {
	return func(t *testing.T) Facts {
		g := map[string]*spec.Response{
			"https://agent.example.com/.well-known/oauth-protected-resource/mcp": {Status: 200, ContentType: "application/json",
				Body: []byte(`{"resource":"https://agent.example.com/mcp","authorization_servers":["https://id.example.net"]}`)},
			"https://id.example.net/.well-known/oauth-authorization-server": {Status: 200, ContentType: "application/json",
				Body: []byte(`{"issuer":"https://id.example.net","token_endpoint":"https://id.example.net/token","grant_types_supported":["client_credentials"]}`)},
			"https://id.example.net/token": {Status: 400, ContentType: "application/json"},
		}
		for k, r := range over {
			if r == nil {
				delete(g, k)
				continue
			}
			g[k] = r
		}
		o := &spec.Observation{Transport: "http", Task: "protected_resource_metadata", HTTPStatus: 200}
		return Facts{Obs: o, AgentURL: "https://agent.example.com/mcp", OAuthGraph: &oauth.Graph{Responses: g}}
	}
}

// TestCrossChecksCoverTheContractKinds: every cross-step, cross-response
// and special kind the releases' runner-output-contract.yaml lists is
// graded here, and grading each shipped validation of them with whatever
// facts never panics.
func TestCrossChecksSurviveTheShippedValidations(t *testing.T) {
	for _, rel := range []string{"3.1.19", "3.2.0-beta.5"} {
		t.Run(rel, func(t *testing.T) {
			dir := specDir(t, rel)
			r, err := spec.Load(dir)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			n := 0
			for _, sb := range r.Storyboards {
				for _, ph := range sb.Phases {
					for _, st := range ph.Steps {
						for _, v := range st.Validations {
							fn, ok := crossChecks[v.Check]
							if !ok {
								continue
							}
							n++
							step := st
							for _, f := range []Facts{{}, {Obs: &spec.Observation{}}, {Obs: &spec.Observation{Payload: "x"}, Dispatches: []*spec.Observation{nil, {}}, Step: &step, Context: map[string]any{"k": nil}}} {
								res := fn(v, f)
								if res.Check != v.Check {
									t.Errorf("%s %s: result check %q", sb.Path, st.ID, res.Check)
								}
							}
							// The spec's own validations are well authored:
							// none may be set aside as an authoring error.
							o := &spec.Observation{Task: st.Task, Payload: map[string]any{}, Request: map[string]any{}}
							res := fn(v, Facts{Obs: o, Dispatches: []*spec.Observation{o, o}, Step: &step, Context: map[string]any{}, AgentURL: "https://a.example/mcp"})
							if strings.Contains(res.Note, "authoring") {
								t.Errorf("%s step %s: the shipped %s validation is graded an authoring error: %s", sb.Path, st.ID, v.Check, res.Note)
							}
						}
					}
				}
			}
			if n == 0 {
				t.Fatalf("no cross validations found in %s", rel)
			}
		})
	}
}

func hexSHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// specDir is the compliance release folder of the shared spec, or skips.
func specDir(t *testing.T, rel string) string {
	t.Helper()
	return shared.File(t, filepath.Join("spec/compliance", rel))
}

func TestRefsResolveCollapsesDuplicatesAndBoundsTheReport(t *testing.T) {
	v := val(t, `{check: refs_resolve, description: d,
	  source: {from: current_step, path: "products[*].format_ids[*]"},
	  target: {from: current_step, path: "formats[*].format_id"}, match_keys: [agent_url, id]}`)
	var products []any
	for i := range 3000 {
		products = append(products, map[string]any{"format_ids": []any{
			map[string]any{"agent_url": "https://a.example", "id": "gone"},
			map[string]any{"agent_url": "https://a.example", "id": "x" + strconv.Itoa(i%500)},
			map[string]any{"agent_url": "https://a.example", "id": "x" + strconv.Itoa(i%500)},
			map[string]any{"agent_url": "https://a.example", "id": "x" + strconv.Itoa(i%500)},
		}})
	}
	r := checkRefsResolve(v, Facts{Obs: &spec.Observation{Payload: map[string]any{"products": products}}})
	if r.Passed {
		t.Fatalf("broken refs passed: %+v", r.Note)
	}
	actual := r.Actual.(map[string]any)
	missing := actual["missing"].([]any)
	if len(missing) > maxListed {
		t.Errorf("%d missing refs listed, want at most %d", len(missing), maxListed)
	}
	// 12,000 refs fan out; the cap keeps MaxFanOut of them: "gone" plus
	// the 500 distinct x-ids, each named once.
	if n := actual["missing_count"].(float64); n != 501 {
		t.Errorf("missing_count %v, want 501 (duplicates collapsed)", n)
	}
	if !spec.Equal(missing[0], map[string]any{"agent_url": "https://a.example", "id": "gone"}) {
		t.Errorf("first missing %v, want the gone ref", missing[0])
	}
}

// TestCrossChecksOnHostileInput: no kind panics or grows its report on
// replies of the wrong shape, deep nesting or huge arrays.
func TestCrossChecksOnHostileInput(t *testing.T) {
	deep := any("leaf")
	for range 5000 {
		deep = []any{map[string]any{"a": deep}}
	}
	huge := make([]any, spec.MaxFanOut+10)
	for i := range huge {
		huge[i] = map[string]any{"id": strconv.Itoa(i), "channels": []any{"c" + strconv.Itoa(i)}, "media_buy_id": strconv.Itoa(i)}
	}
	payloads := []any{nil, "str", 3.5, true, []any{nil}, map[string]any{"products": huge, "formats": huge, "recorded_calls": huge}, deep,
		map[string]any{"products": "x", "accounts": []any{"y"}, "media_buys": map[string]any{}}}
	raws := []string{"", "null", "[]", `"x"`, `{"task":null}`, `{"kind":"task","artifacts":"x","status":7}`, `{"kind":"task","artifacts":[{"parts":[null,1,{"kind":"data"}]}]}`}
	step := &spec.Step{RequiresContract: "parallel_dispatch_runner", ParallelDispatch: &spec.ParallelDispatch{}, RateLimitTrip: &spec.RateLimitTrip{}}
	vals := []string{
		`{check: any_of, allowed_values: [a], description: d}`,
		`{check: refs_resolve, description: d, source: {from: current_step, path: "products[*]"}, target: {from: context, path: "formats[*]"}, match_keys: [id], scope: {key: url, equals: $agent_url}}`,
		`{check: a2a_submitted_artifact, description: d}`,
		`{check: a2a_context_continuity, description: d}`,
		`{check: field_less_than, path: "products.length", value: 1, description: d}`,
		`{check: field_equals_context, path: "", context_key: k, description: d}`,
		`{check: field_in_context_array, path: "accounts[0]", context_key: k, description: d}`,
		`{check: all_fields_in_context_array, path: "products[*].channels[*]", context_key: k, description: d}`,
		`{check: upstream_traffic, description: d, payload_must_contain: [{path: "a[*].b", match: present}], identifier_paths: ["products[*].id"]}`,
		`{check: canonical_format_satisfaction, value: true, description: d}`,
		`{check: cross_response_field_equal, path: media_buy_id, description: d}`,
		`{check: cross_response_count_distinct, path: media_buy_id, allowed_values: [1], description: d}`,
		`{check: replay_not_cached_rate_limit, description: d}`,
		`{check: oauth_metadata_graph, description: d}`,
	}
	for _, src := range vals {
		v := val(t, src)
		for _, p := range payloads {
			for _, raw := range raws {
				if raw != "" && !strings.HasPrefix(v.Check, "a2a_") {
					continue
				}
				o := &spec.Observation{Transport: "a2a", Task: "create_media_buy", Payload: p, A2AResult: json.RawMessage(raw), Error: map[string]any{"retry_after": p}, ErrorCode: "RATE_LIMITED"}
				if m, ok := p.(map[string]any); ok {
					o.Request = m
				}
				f := Facts{Obs: o, Dispatches: []*spec.Observation{o, o, nil}, Prior: []*spec.Observation{nil, o}, Step: step,
					Context: map[string]any{"k": huge, "formats": p}, Upstream: &spec.Observation{Payload: map[string]any{"success": true, "recorded_calls": huge}},
					A2AContextSent: "c", AgentURL: "https://a.example", Contributions: map[string]string{"b": "x"}}
				r := checks[v.Check](v, f)
				b, err := json.Marshal(r)
				if err != nil {
					t.Fatalf("%s: result does not marshal: %v", v.Check, err)
				}
				if len(b) > 64<<10 {
					t.Errorf("%s: result is %d bytes; reports must stay bounded", v.Check, len(b))
				}
			}
		}
	}
}

// FuzzCrossChecks grades every cross kind against an arbitrary JSON reply
// (as the step's payload, the A2A result, each dispatch, the prior
// get_products and the controller reply): nothing panics, a
// not_applicable result passes with a note, a failure has a message.
func FuzzCrossChecks(f *testing.F) {
	f.Add([]byte(`{"products":[{"product_id":"p","format_options":[{"format_option_id":"o","format_kind":"image","params":{"width":1,"height":2}}]}]}`))
	f.Add([]byte(`{"success":true,"recorded_calls":[{"endpoint":"POST https://x/","content_type":"application/json","attestation_mode":"raw","payload":{"a":1},"timestamp":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"},"artifacts":[{"parts":[{"kind":"data","data":{"status":"submitted"}}]}]}`))
	f.Add([]byte(`{"resource":"https://a.example/mcp","authorization_servers":["https://a.example"]}`))
	f.Add([]byte(`[[[[[]]]]]`))
	vals := []spec.Validation{}
	for _, src := range []string{
		`{check: any_of, allowed_values: [a]}`,
		`{check: refs_resolve, source: {from: current_step, path: "products[*].format_ids[*]"}, target: {from: context, path: "k[*]"}, match_keys: [agent_url, id], scope: {key: agent_url, equals: $agent_url}}`,
		`{check: a2a_submitted_artifact}`,
		`{check: a2a_context_continuity}`,
		`{check: field_less_than, path: "a.length", context_key: k}`,
		`{check: field_equals_context, path: "", context_key: k}`,
		`{check: field_in_context_array, path: "a", context_key: k}`,
		`{check: all_fields_in_context_array, path: "products[*].channels[*]", context_key: k}`,
		`{check: upstream_traffic, endpoint_pattern: "POST *", payload_must_contain: [{path: "a", match: present}], identifier_paths: ["products[*].product_id"]}`,
		`{check: canonical_format_satisfaction, value: false}`,
		`{check: cross_response_field_equal, path: a}`,
		`{check: cross_response_count_distinct, path: a, allowed_values: [1]}`,
		`{check: replay_not_cached_rate_limit}`,
		`{check: oauth_metadata_graph}`,
	} {
		var v spec.Validation
		if err := yaml.Unmarshal([]byte(src), &v); err != nil {
			f.Fatal(err)
		}
		vals = append(vals, v)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := spec.DecodeJSON(data)
		if err != nil {
			return
		}
		m, _ := doc.(map[string]any)
		o := &spec.Observation{Transport: "a2a", Task: "create_media_buy", Payload: doc, A2AResult: data, Request: m, Error: m, ErrorCode: "RATE_LIMITED", HTTPStatus: 200}
		prior := &spec.Observation{Task: "get_products", Payload: doc}
		facts := Facts{Obs: o, Dispatches: []*spec.Observation{o, o}, Prior: []*spec.Observation{prior}, Upstream: &spec.Observation{Payload: doc},
			Context: map[string]any{"k": doc}, AgentURL: "https://a.example/mcp", A2AContextSent: "c"}
		graphFacts := facts
		graphFacts.Obs = &spec.Observation{Task: "protected_resource_metadata", HTTPStatus: 200, Payload: doc}
		graphFacts.OAuthGraph = &oauth.Graph{Responses: map[string]*spec.Response{
			"https://a.example/.well-known/oauth-protected-resource/mcp": {Status: 200, ContentType: "application/json", Body: data},
			"https://a.example/.well-known/oauth-authorization-server":   {Status: 200, ContentType: "application/json", Body: data},
		}}
		for _, u := range oauth.Fetches("https://a.example/mcp", *graphFacts.OAuthGraph) {
			graphFacts.OAuthGraph.Responses[u] = &spec.Response{Status: 302, Location: string(data)}
		}
		if r := checkOAuthMetadataGraph(vals[len(vals)-1], graphFacts); !r.Passed && r.Message == "" {
			t.Fatalf("oauth graph failure without a message: %+v", r)
		}
		for _, v := range vals {
			r := checks[v.Check](v, facts)
			if r.NotApplicable && (!r.Passed || r.Note == "") {
				t.Fatalf("%s: not_applicable without pass and note: %+v", v.Check, r)
			}
			if !r.Passed && r.Message == "" {
				t.Fatalf("%s: failure without a message: %+v", v.Check, r)
			}
		}
	})
}

// TestDeepNestingStaysLinear: comparing an agent's deeply nested reply
// with a captured copy must not be quadratic in the depth.
func TestDeepNestingStaysLinear(t *testing.T) {
	raw := []byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))
	doc, err := spec.DecodeJSON(raw)
	if err != nil {
		t.Skipf("the decoder refuses this depth: %v", err)
	}
	v := val(t, `{check: field_equals_context, path: "", context_key: k, description: d}`)
	start := time.Now()
	r := checkFieldEqualsContext(v, Facts{Obs: &spec.Observation{Payload: doc}, Context: map[string]any{"k": doc}})
	if !r.Passed {
		t.Fatalf("equal documents differ: %+v", r.Message)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("comparing a 20,000-deep reply took %v", d)
	}
}

// TestCrossKindsAreContractKinds: every kind registered here is spelled as
// the 3.2.0-beta.5 runner-output-contract.yaml lists it.
func TestCrossKindsAreContractKinds(t *testing.T) {
	r, err := spec.Load(specDir(t, "3.2.0-beta.5"))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	listed := map[string]bool{}
	for _, k := range r.CheckKinds {
		listed[k] = true
	}
	for k := range crossChecks {
		if !listed[k] {
			t.Errorf("cross kind %q is not in the release's authored or cross-response check kinds", k)
		}
	}
}

// TestCrossResultShapes: failures carry expected/actual in the shapes
// runner-output-contract.yaml validation_result names.
func TestCrossResultShapes(t *testing.T) {
	keys := func(v any) []string {
		m, _ := v.(map[string]any)
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	start := time.Date(2026, 5, 2, 14, 30, 0, 0, time.UTC)
	up := checkUpstreamTraffic(val(t, `{check: upstream_traffic, description: d, endpoint_pattern: "POST *", min_count: 2, payload_must_contain: [{path: a, match: equals, value: 1}]}`),
		Facts{Obs: &spec.Observation{Call: evidence.Call{Started: start}}, Upstream: upstreamReply(t, `[]`)})
	distinct := checkCrossResponseCountDistinct(val(t, `{check: cross_response_count_distinct, path: id, allowed_values: [1], description: d}`),
		Facts{Dispatches: []*spec.Observation{{Payload: map[string]any{"id": "a"}}, {Payload: map[string]any{"id": "b"}}}})
	equal := checkCrossResponseFieldEqual(val(t, `{check: cross_response_field_equal, path: id, description: d}`),
		Facts{Dispatches: []*spec.Observation{{Payload: map[string]any{"id": "a"}}, {Payload: map[string]any{"id": "b"}}}})
	lt := checkFieldLessThan(val(t, `{check: field_less_than, path: n, context_key: base, description: d}`),
		Facts{Obs: &spec.Observation{Payload: map[string]any{"n": 5.0}}, Context: map[string]any{"base": 3.0}})
	for _, c := range []struct {
		name             string
		r                spec.Result
		expected, actual any
	}{
		{"upstream_traffic", up, []string{"endpoint_pattern", "min_count", "payload_must_contain"}, []string{"matched_count", "missing_identifier_values", "missing_payload_paths", "total_calls"}},
		{"cross_response_count_distinct", distinct, []string{"allowed_values", "path"}, []string{"observed_cardinality", "observed_values"}},
		{"cross_response_field_equal", equal, []string{"path"}, []string{"observed_values"}},
	} {
		if c.r.Passed {
			t.Fatalf("%s passed: %+v", c.name, c.r)
		}
		if got := keys(c.r.Expected); !slices.Equal(got, c.expected.([]string)) {
			t.Errorf("%s expected keys %v, want %v", c.name, got, c.expected)
		}
		if got := keys(c.r.Actual); !slices.Equal(got, c.actual.([]string)) {
			t.Errorf("%s actual keys %v, want %v", c.name, got, c.actual)
		}
	}
	// The resolved runtime comparand, not the context_key, is expected.
	if lt.Passed || lt.Expected != 3.0 || lt.Actual != 5.0 || lt.JSONPointer == nil || *lt.JSONPointer != "/n" {
		t.Errorf("field_less_than result %+v, want expected 3, actual 5 at /n", lt)
	}
}

// TestCanonicalFormatsStoryboard grades the create_media_buy steps of the
// 3.2.0-beta.5 canonical_formats storyboard with their own sample
// requests against the storyboard's seeded product: a seller that behaves
// as each step expects passes; one that flips the outcome never passes
// (it fails, or the case is undecidable here and not applicable).
func TestCanonicalFormatsStoryboard(t *testing.T) {
	for _, rel := range []string{"3.1.19", "3.2.0-beta.5"} {
		r, err := spec.Load(specDir(t, rel))
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		n := 0
		for _, sb := range r.Storyboards {
			if strings.HasSuffix(sb.Path, "/canonical_formats.yaml") {
				n++
				t.Run(rel+"/"+sb.Path, func(t *testing.T) { canonicalStoryboard(t, sb) })
			}
		}
		if n == 0 {
			t.Errorf("%s has no canonical_formats.yaml", rel)
		}
	}
}

func canonicalStoryboard(t *testing.T, sb *spec.Storyboard) {
	fixtures := spec.Normalize(sb.Fixtures).(map[string]any)
	products, _ := fixtures["products"].([]any)
	prior := &spec.Observation{Task: "get_products", Payload: map[string]any{"products": products}}
	graded := 0
	for _, ph := range sb.Phases {
		for _, st := range ph.Steps {
			for _, v := range st.Validations {
				if v.Check != "canonical_format_satisfaction" {
					continue
				}
				graded++
				req := spec.Normalize(st.SampleRequest).(map[string]any)
				accepted := &spec.Observation{Task: "create_media_buy", Request: req, Payload: map[string]any{"media_buy_id": "mb"}}
				code := "UNSUPPORTED_FEATURE"
				for _, w := range st.Validations {
					if w.Check == "error_code" {
						if len(w.AllowedValues) > 0 {
							code, _ = w.AllowedValues[0].(string)
						} else if s, ok := w.Value.(string); ok {
							code = s
						}
					}
				}
				rejected := &spec.Observation{Task: "create_media_buy", Request: req, IsError: true, ErrorCode: code, Error: map[string]any{"code": code}}
				asExpected, flipped := accepted, rejected
				if v.Value == false {
					asExpected, flipped = rejected, accepted
				}
				good := checkCanonicalFormatSatisfaction(v, Facts{Obs: asExpected, Prior: []*spec.Observation{prior}})
				if !good.Passed || good.NotApplicable {
					t.Errorf("%s: a seller behaving as expected is not passed: %+v", st.ID, good)
				}
				bad := checkCanonicalFormatSatisfaction(v, Facts{Obs: flipped, Prior: []*spec.Observation{prior}})
				if bad.Passed && !bad.NotApplicable {
					t.Errorf("%s: a seller doing the opposite passes: %+v", st.ID, bad)
				}
				t.Logf("%s (value %v): flipped outcome → passed=%v na=%v %s%s", st.ID, v.Value, bad.Passed, bad.NotApplicable, bad.Message, bad.Note)
			}
		}
	}
	if graded == 0 {
		t.Fatal("no canonical_format_satisfaction validation found")
	}
}

// TestIdempotencyStoryboardCrossResponse grades the idempotency
// storyboard's own multi-dispatch steps (their requires_contract and
// parameter blocks as loaded) in both releases.
func TestIdempotencyStoryboardCrossResponse(t *testing.T) {
	for _, rel := range []string{"3.1.19", "3.2.0-beta.5"} {
		r, err := spec.Load(specDir(t, rel))
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		seen := map[string]bool{}
		for _, sb := range r.Storyboards {
			if sb.Path != "universal/idempotency.yaml" {
				continue
			}
			for _, ph := range sb.Phases {
				for i := range ph.Steps {
					st := &ph.Steps[i]
					for _, v := range st.Validations {
						fn, ok := crossChecks[v.Check]
						if !ok || (!strings.HasPrefix(v.Check, "cross_response") && v.Check != "replay_not_cached_rate_limit") {
							continue
						}
						seen[v.Check] = true
						var good, bad []*spec.Observation
						if v.Check == "replay_not_cached_rate_limit" {
							limited := &spec.Observation{ErrorCode: "RATE_LIMITED", IsError: true, Error: map[string]any{"code": "RATE_LIMITED", "retry_after": 1.0}}
							good = []*spec.Observation{{Payload: map[string]any{}}, limited, {Payload: map[string]any{"media_buy_id": "mb"}}}
							bad = []*spec.Observation{limited, limited}
						} else {
							good = []*spec.Observation{{Payload: map[string]any{"media_buy_id": "mb-1"}}, {Payload: map[string]any{"media_buy_id": "mb-1", "replayed": true}}}
							bad = []*spec.Observation{{Payload: map[string]any{"media_buy_id": "mb-1"}}, {Payload: map[string]any{"media_buy_id": "mb-2"}}}
						}
						if res := fn(v, Facts{Dispatches: good, Step: st}); !res.Passed || res.NotApplicable {
							t.Errorf("%s %s %s: conformant set not passed: %+v", rel, st.ID, v.Check, res)
						}
						if res := fn(v, Facts{Dispatches: bad, Step: st}); res.Passed {
							t.Errorf("%s %s %s: violating set passed: %+v", rel, st.ID, v.Check, res)
						}
					}
				}
			}
		}
		for _, k := range []string{"cross_response_field_equal", "cross_response_count_distinct", "replay_not_cached_rate_limit"} {
			if !seen[k] {
				t.Errorf("%s: idempotency.yaml has no %s validation", rel, k)
			}
		}
	}
}
