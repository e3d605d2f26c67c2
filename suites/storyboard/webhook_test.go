package storyboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// fakeHooks is a receiver in memory: the "seller" posts with post, which
// answers as the receiver would (the key's failure plan, else 200).
type fakeHooks struct {
	mu    sync.Mutex
	ds    map[string][]Delivery
	fails map[string][2]int
	urls  map[string]int
	store *evidence.Store
}

func newFakeHooks() *fakeHooks {
	return &fakeHooks{ds: map[string][]Delivery{}, fails: map[string][2]int{}, urls: map[string]int{}, store: evidence.NewStore(evidence.Target{})}
}

func (h *fakeHooks) Base() string { return "http://hooks.test" }
func (h *fakeHooks) URL(key string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.urls[key]++
	return "http://hooks.test/hooks/" + key
}
func (h *fakeHooks) Fail(key string, n, status int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fails[key] = [2]int{n, status}
}
func (h *fakeHooks) Deliveries(key string) []Delivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Delivery(nil), h.ds[key]...)
}
func (h *fakeHooks) Record(c evidence.Call) { h.store.Add(c) }

// post delivers one webhook to key and returns the receiver's answer.
func (h *fakeHooks) post(key string, body any, sigErr string) int {
	b, _ := json.Marshal(body)
	h.mu.Lock()
	defer h.mu.Unlock()
	status := 200
	if f, ok := h.fails[key]; ok && len(h.ds[key]) < f[0] {
		status = f[1]
	}
	d := Delivery{Key: key, Header: http.Header{"Content-Type": {"application/json"}}, Body: b, Status: status, At: time.Now(),
		Scheme: webhook.SchemeRFC9421, SignatureError: sigErr}
	h.ds[key] = append(h.ds[key], d)
	return status
}

// keyOf is the receiver key of a request's push_notification_config.url.
func keyOf(req Request) string {
	u := stringAt(req.Args, "push_notification_config.url")
	_, key, _ := strings.Cut(u, "/hooks/")
	return key
}

// event is a conformant webhook payload of operation op.
func event(op, key, status string) map[string]any {
	m := map[string]any{"operation_id": op, "task_id": "task_1", "task_type": "create_media_buy", "status": status,
		"timestamp": "2026-01-01T00:00:00Z", "result": map[string]any{"media_buy_id": "mb_1"}}
	if key != "" {
		m["idempotency_key"] = key
	}
	return m
}

const goodKey = "whk_0123456789abcdef"

// hookSB is a trigger registering {{runner.webhook_url:trigger}} and a
// webhook step (its YAML in step, indented under the steps list).
func hookSB(step string) string {
	return `
id: hooks
version: "1.0.0"
title: t
category: t
narrative: t
phases:
  - id: p
    title: p
    steps:
      - id: trigger
        title: trigger
        task: create_media_buy
        sample_request:
          push_notification_config:
            url: "{{runner.webhook_url:trigger}}"
            operation_id: "op1"
` + step
}

// seller answers create_media_buy with first and, as the seller, posts
// what send returns for the registered key (each delivery after the
// receiver's answer to the one before, as a retrying sender does).
func seller(h *fakeHooks, first map[string]any, send func(post func(body any, sigErr string) int)) *fake {
	return &fake{answers: map[string]func(Request) *spec.Observation{
		"create_media_buy": func(req Request) *spec.Observation {
			key := keyOf(req)
			if send != nil {
				go send(func(body any, sigErr string) int { return h.post(key, body, sigErr) })
			}
			return ok(first)(req)
		},
	}}
}

var submitted = map[string]any{"status": "submitted", "task_id": "task_1"}

// stepResult runs a storyboard with the fake receiver and returns the
// webhook step's result (the last step).
func stepResult(t *testing.T, h *fakeHooks, sb string, d Dispatcher) (StoryboardResult, StepResult) {
	t.Helper()
	e := env("create_media_buy")
	e.Webhooks = h
	res := Run(context.Background(), parse(t, sb), e, d)
	if len(res.Steps) == 0 {
		t.Fatalf("no steps ran: %+v", res.Skip)
	}
	return res, res.Steps[len(res.Steps)-1]
}

// failedChecks lists a step's failed validations as "check:code".
func failedChecks(s StepResult) string {
	var out []string
	for _, v := range s.Validations {
		if !v.Passed {
			out = append(out, fmt.Sprintf("%s:%v", v.Check, v.Expected))
		}
	}
	return strings.Join(out, " ")
}

func TestWebhookSteps(t *testing.T) {
	expect := `      - id: expect
        title: expect
        task: expect_webhook
        triggered_by: trigger
        filter:
          body:
            operation_id: "op1"
        timeout_seconds: 1
`
	once := func(bodies ...any) func(func(any, string) int) {
		return func(post func(any, string) int) {
			for _, b := range bodies {
				post(b, "")
			}
		}
	}
	cases := []struct {
		name  string
		step  string
		first map[string]any
		send  func(post func(body any, sigErr string) int)
		// want is "pass", "fail <check:code …>", "skip:<reason>" or "error".
		want string
	}{
		{name: "conformant delivery", step: expect + `        validations:
          - check: field_value
            path: result.media_buy_id
            value: mb_1
            description: the webhook carries the buy
`, send: once(event("op1", goodKey, "completed")), want: "pass"},
		{name: "the step's own validations read the delivery", step: expect + `        validations:
          - check: field_value
            path: status
            value: failed
            description: status
`, send: once(event("op1", goodKey, "completed")), want: "fail field_value:failed"},
		{name: "missing idempotency_key", step: expect, send: once(event("op1", "", "completed")), want: "fail idempotency_key:missing_idempotency_key"},
		{name: "malformed idempotency_key", step: expect, send: once(event("op1", "short key!", "completed")), want: "fail idempotency_key:invalid_idempotency_key_format"},
		{name: "expect_idempotency_key false", step: expect + "        expect_idempotency_key: false\n", send: once(event("op1", "", "completed")), want: "pass"},
		{name: "filter mismatch", step: expect, send: once(event("op_other", goodKey, "completed")), want: "fail webhook_received:no_webhook_received"},
		{name: "nested filter paths", step: strings.Replace(expect, `operation_id: "op1"`, `operation_id: "op1"
            result.media_buy_id: "mb_1"`, 1), send: once(event("op1", goodKey, "completed")), want: "pass"},
		{name: "timeout", step: expect, want: "fail webhook_received:no_webhook_received"},
		{name: "terminal trigger owes no webhook", step: expect, first: map[string]any{"status": "completed", "media_buy_id": "mb_1"}, want: "pass"},
		{name: "one logical event", step: expect + "        expect_max_deliveries_per_logical_event: 1\n",
			send: once(event("op1", goodKey, "completed"), event("op1", goodKey, "completed")), want: "pass"},
		{name: "duplicate logical events", step: expect + "        expect_max_deliveries_per_logical_event: 1\n",
			send: once(event("op1", goodKey, "completed"), event("op1", goodKey+"_2", "completed")), want: "fail max_deliveries_per_logical_event:duplicate_webhook_on_replay"},
		{name: "schema without schemas", step: expect + "        webhook_payload_schema_ref: core/mcp-webhook-payload.json\n",
			send: once(event("op1", goodKey, "completed")), want: "pass"},
		{name: "no webhook expected, none came", step: strings.Replace(expect, "expect_webhook", "expect_no_webhook", 1), want: "pass"},
		{name: "no webhook expected, one came", step: strings.Replace(expect, "expect_webhook", "expect_no_webhook", 1),
			send: once(event("op1", goodKey, "completed")), want: "fail expect_no_webhook:unexpected_webhook"},
	}
	retry := `      - id: retry
        title: retry
        task: expect_webhook_retry_keys_stable
        triggered_by: trigger
        filter:
          body:
            operation_id: "op1"
        retry_trigger:
          count: 2
          http_status: 503
        timeout_seconds: 2
`
	// retrying resends until the receiver accepts, with key(i) on try i.
	retrying := func(key func(int) string, sig func(int) string, tries int) func(func(any, string) int) {
		return func(post func(any, string) int) {
			for i := range tries {
				if post(event("op1", key(i), "completed"), sig(i)) == 200 {
					return
				}
			}
		}
	}
	same := func(int) string { return goodKey }
	valid := func(int) string { return "" }
	cases = append(cases, []struct {
		name  string
		step  string
		first map[string]any
		send  func(post func(body any, sigErr string) int)
		want  string
	}{
		{name: "retries keep the key", step: retry, send: retrying(same, valid, 5), want: "pass"},
		{name: "a retry rotates the key", step: retry, send: retrying(func(i int) string { return fmt.Sprintf("%s_%d", goodKey, i) }, valid, 5),
			want: "fail idempotency_key_stable:idempotency_key_rotated"},
		{name: "a retry changes the key's shape", step: retry, send: retrying(func(i int) string { return []string{goodKey, "bad key"}[min(i, 1)] }, valid, 5),
			want: "fail idempotency_key_stable:idempotency_key_format_changed"},
		{name: "no retry", step: retry, send: retrying(same, valid, 1), want: "fail retry_deliveries:insufficient_retries"},
		{name: "a retry replays the nonce", step: retry, send: retrying(same, func(i int) string {
			if i > 0 {
				return webhook.CodeReplayed + ": nonce seen before"
			}
			return ""
		}, 5), want: "fail webhook_signature:signature_replayed"},
		{name: "signature verifies", step: strings.Replace(expect, "expect_webhook", "expect_webhook_signature_valid", 1) + "        require_tag: adcp/webhook-signing/v1\n",
			send: once(event("op1", goodKey, "completed")), want: "pass"},
		{name: "signature invalid", step: strings.Replace(expect, "expect_webhook", "expect_webhook_signature_valid", 1),
			send: func(post func(any, string) int) {
				post(event("op1", goodKey, "completed"), webhook.CodeDigestMismatch+": digest differs")
			},
			want: "fail webhook_signature:signature_digest_mismatch"},
		{name: "no keys to verify with", step: strings.Replace(expect, "expect_webhook", "expect_webhook_signature_valid", 1),
			send: func(post func(any, string) int) {
				post(event("op1", goodKey, "completed"), webhook.CodeKeysUnavailable+": no signing keys")
			}, want: "pass"},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newFakeHooks()
			first := c.first
			if first == nil {
				first = submitted
			}
			_, s := stepResult(t, h, hookSB(c.step), seller(h, first, c.send))
			got := "pass"
			switch {
			case s.Skip != nil:
				got = "skip:" + s.Skip.Reason
			case s.Error != "":
				got = "error"
			case !s.Passed:
				got = "fail " + failedChecks(s)
			}
			if got != c.want {
				t.Errorf("got %s, want %s\n%+v", got, c.want, s)
			}
			// Every webhook step records what it read under its probe ID.
			if len(h.store.Calls(evidence.OfKind(evidence.KindWebhook))) != 1 {
				t.Errorf("recorded %d webhook calls, want 1", len(h.store.Calls(evidence.OfKind(evidence.KindWebhook))))
			}
		})
	}
}

// The receiver key is unique per storyboard run and step, URL-safe, never
// the operation_id; a retry step's plan is registered before the trigger
// sends.
func TestWebhookKeysAndPlans(t *testing.T) {
	h := newFakeHooks()
	sb := hookSB(`      - id: retry
        title: retry
        task: expect_webhook_retry_keys_stable
        triggered_by: trigger
        filter: {body: {operation_id: op1}}
        retry_trigger: {count: 4, http_status: 429}
        timeout_seconds: 1
`)
	var plan [2]int
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"create_media_buy": func(req Request) *spec.Observation {
			h.mu.Lock()
			plan = h.fails[keyOf(req)]
			h.mu.Unlock()
			return ok(submitted)(req)
		},
	}}
	stepResult(t, h, sb, f)
	if plan != [2]int{4, 429} {
		t.Errorf("the trigger sent before the retry plan was registered: plan %v", plan)
	}
	stepResult(t, h, sb, f)
	if len(h.urls) != 2 {
		t.Fatalf("two runs minted %d keys, want 2: %v", len(h.urls), h.urls)
	}
	for k := range h.urls {
		if !strings.HasPrefix(k, "sb-hooks-trigger-") || strings.ContainsAny(k, "/?#% ") || k == "op1" {
			t.Errorf("key %q", k)
		}
	}
	if k := hookKey("a/b c", "x.y", "s"); k != "sb-a-b-c-x-y-s" {
		t.Errorf("hookKey = %q", k)
	}
	if k := hookKey(strings.Repeat("é", 100), strings.Repeat("x", 100), "s"); len(k) != len("sb---s")+120 {
		t.Errorf("hookKey is not bounded: %d bytes", len(k))
	}
}

// Without a receiver the webhook storyboards and steps are skipped with the
// reasons they always had; with one, requires: [webhook_receiver] is met.
func TestWebhookGates(t *testing.T) {
	src := hookSB(`      - id: expect
        title: expect
        task: expect_webhook
        triggered_by: trigger
        filter: {body: {operation_id: op1}}
        timeout_seconds: 1
`)
	e := env("create_media_buy")
	if s := Gate(parse(t, src), e); s == nil || s.Reason != spec.RequirementUnmet || !strings.Contains(s.Detail, "{{runner.webhook_url}}") {
		t.Errorf("no receiver: %+v", s)
	}
	req := parse(t, strings.Replace(src, "narrative: t\n", "narrative: t\nrequires: [webhook_receiver]\n", 1))
	if s := Gate(req, e); s == nil || !strings.Contains(s.Detail, "webhook_receiver: webhook storyboards are not run by adcp-conform yet") {
		t.Errorf("requires without a receiver: %+v", s)
	}
	e.Webhooks = newFakeHooks()
	if s := Gate(req, e); s != nil {
		t.Errorf("with a receiver: %+v", s)
	}
	// A storyboard grading a buyer's receiver is not a seller's, receiver
	// or not (webhook-receiver-envelope.yaml).
	buyer := parse(t, strings.Replace(src, "narrative: t\n", "narrative: t\nagent: {interaction_model: webhook_receiver}\n", 1))
	if s := Gate(buyer, e); s == nil || s.Reason != spec.NotApplicable || !strings.Contains(s.Detail, "buyer's webhook receiver") {
		t.Errorf("a buyer-receiver storyboard: %+v", s)
	}
	// A webhook step in a storyboard with no webhook token, no receiver.
	plain := parse(t, strings.Replace(src, `"{{runner.webhook_url:trigger}}"`, "https://example.test/hook", 1))
	res := Run(context.Background(), plain, env("create_media_buy"), seller(nil, submitted, nil))
	if s := res.Steps[1]; s.Skip == nil || s.Skip.Reason != spec.RequirementUnmet || !strings.Contains(s.Skip.Detail, "webhook_receiver") {
		t.Errorf("webhook step without a receiver: %+v", s)
	}
	// With a receiver the signing-keys precheck runs (jwks_test.go): the
	// fake seller serves no brand.json.
	jw := parse(t, strings.Replace(src, "task: expect_webhook\n", "task: fetch_brand_jwks\n", 1))
	e2 := env("create_media_buy")
	e2.Webhooks = newFakeHooks()
	res = Run(context.Background(), jw, e2, seller(nil, submitted, nil))
	if s := res.Steps[1]; s.Skip != nil || !strings.HasPrefix(stepOutcome(s), "failed brand_json_unreachable:") {
		t.Errorf("fetch_brand_jwks: %+v", s)
	}
	// A failed trigger skips its webhook step rather than failing it twice.
	e3 := env("create_media_buy")
	e3.Webhooks = newFakeHooks()
	res = Run(context.Background(), parse(t, src), e3, &fake{answers: map[string]func(Request) *spec.Observation{"create_media_buy": func(Request) *spec.Observation {
		return &spec.Observation{Failure: "connection refused"}
	}}})
	if s := res.Steps[1]; s.Skip == nil || s.Skip.Reason != spec.PrerequisiteFailed {
		t.Errorf("after a failed trigger: %+v", s)
	}
}

// replaying answers the storyboard's calls like the fake seller did and
// gives the webhook steps their recorded deliveries (Replay).
type replaying struct {
	Replay
	f *fake
}

func (r replaying) Call(ctx context.Context, req Request) *spec.Observation {
	return r.f.Call(ctx, req)
}

// A recorded run re-judges to the same verdict: the webhook steps read the
// deliveries recorded under their probe IDs (through evidence JSON), not
// the receiver.
func TestWebhookStepsReplay(t *testing.T) {
	src := hookSB(`      - id: expect
        title: expect
        task: expect_webhook
        triggered_by: trigger
        filter: {body: {operation_id: op1}}
        timeout_seconds: 1
      - id: retry
        title: retry
        task: expect_webhook_retry_keys_stable
        triggered_by: trigger
        filter: {body: {operation_id: op1}}
        retry_trigger: {count: 1}
        timeout_seconds: 1
`)
	for _, key := range []func(int) string{
		func(int) string { return goodKey },
		func(i int) string { return fmt.Sprintf("%s_%d", goodKey, i) },
	} {
		h := newFakeHooks()
		f := seller(h, submitted, func(post func(any, string) int) {
			for i := range 3 {
				if post(event("op1", key(i), "completed"), "") == 200 {
					return
				}
			}
		})
		live, _ := stepResult(t, h, src, f)
		h.store.Add(ReceiverCall(h.Base(), evidence.MCP))
		// Through the evidence file's JSON.
		store := evidence.NewStore(evidence.Target{})
		for _, c := range h.store.Calls() {
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			var back evidence.Call
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			store.Add(back)
		}
		e := env("create_media_buy")
		e.Webhooks = ReplayWebhooks(store)
		if e.Webhooks == nil {
			t.Fatal("the recorded run's receiver is not found")
		}
		start := time.Now()
		again := Run(context.Background(), parse(t, src), e, replaying{Replay{Store: store}, seller(nil, submitted, nil)})
		if time.Since(start) > 500*time.Millisecond {
			t.Errorf("the replay waited %s", time.Since(start))
		}
		if a, b := outcomes(live), outcomes(again); a != b {
			t.Errorf("live %s, replay %s", a, b)
		}
		for i := range live.Steps {
			if a, b := failedChecks(live.Steps[i]), failedChecks(again.Steps[i]); a != b || len(live.Steps[i].Validations) != len(again.Steps[i].Validations) {
				t.Errorf("step %s: live %q, replay %q", live.Steps[i].StepID, a, b)
			}
		}
		// Without the recorded receiver the storyboard is gated as a run
		// without one was.
		if ReplayWebhooks(evidence.NewStore(evidence.Target{})) != nil {
			t.Error("an empty store has a receiver")
		}
	}
}

// A webhook step judges any bytes without panicking.
func TestWebhookJudgeAnyBytes(t *testing.T) {
	st := &spec.Step{Filter: map[string]any{"body": map[string]any{"a.0.b": 1}}, ExpectMaxDeliveriesPerLog: new(int)}
	for _, body := range []string{"", "null", "[]", "{", `{"a":[{"b":1}],"idempotency_key":7}`, `{"idempotency_key":null,"a":{"0":{"b":1}}}`, "\xff"} {
		ds := []Delivery{{Body: []byte(body), Status: 200}, {Dropped: true}, {Truncated: true, Body: []byte(body)}}
		for _, task := range webhookTasks {
			judgeWebhook(st, task, ds, WebhookNote{Owed: true}, nil, evidence.Call{})
		}
		c := deliveriesCall("p", map[string]string{}, WebhookNote{}, ds)
		c.Body = []byte(body)
		DeliveriesOf(c)
	}
}

// webhook_payload_schema_ref validates the delivered payload with the
// run's schemas: a conformant webhook passes, one without task_type is a
// schema_violation.
func TestWebhookPayloadSchema(t *testing.T) {
	set, err := schemas.Load(shared.File(t, filepath.Join("spec", "schemas", "3.1.19")))
	if err != nil {
		t.Fatal(err)
	}
	st := &spec.Step{Filter: map[string]any{"body": map[string]any{"operation_id": "op1"}}, WebhookPayloadSchemaRef: "core/mcp-webhook-payload.json"}
	judge := func(body map[string]any) spec.Result {
		b, _ := json.Marshal(body)
		_, rs, _ := judgeWebhook(st, taskExpectWebhook, []Delivery{{Body: b, Status: 200}}, WebhookNote{Owed: true}, set, evidence.Call{})
		for _, r := range rs {
			if r.Check == "webhook_payload_schema" {
				return r
			}
		}
		t.Fatalf("no schema result in %+v", rs)
		return spec.Result{}
	}
	if r := judge(event("op1", goodKey, "completed")); !r.Passed || r.NotApplicable {
		t.Errorf("conformant payload: %+v", r)
	}
	bad := event("op1", goodKey, "completed")
	delete(bad, "task_type")
	if r := judge(bad); r.Passed || !strings.HasPrefix(r.Message, "schema_violation:") {
		t.Errorf("payload without task_type: %+v", r)
	}
}

// A trigger that registered no receiver (a status change forced after an
// account-level subscriber was registered, creative_lifecycle_webhooks)
// is matched on every receiver the storyboard registered, counting the
// deliveries from the trigger's start; the filter's top-level keys are
// payload fields there; requires_contract webhook_receiver_runner is met.
func TestWebhookStepsOfATriggerWithoutItsOwnReceiver(t *testing.T) {
	src := `
id: lifecycle
version: "1.0.0"
title: t
category: t
narrative: t
phases:
  - id: p
    title: p
    steps:
      - id: subscribe
        title: subscribe
        task: sync_accounts
        sample_request:
          accounts: [{notification_configs: [{url: "{{runner.webhook_url:lifecycle_events}}"}]}]
      - id: suspend
        title: suspend
        task: update_media_buy
        sample_request: {to: suspended}
` + lifecycleExpect("suspend", "suspended") + `      - id: approve
        title: approve
        task: update_media_buy
        sample_request: {to: approved}
` + lifecycleExpect("approve", "approved")
	h := newFakeHooks()
	var key string
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"sync_accounts": func(req Request) *spec.Observation {
			u := stringAt(req.Args, "accounts[0].notification_configs[0].url")
			_, key, _ = strings.Cut(u, "/hooks/")
			return ok(map[string]any{"accounts": []any{}})(req)
		},
		"update_media_buy": func(req Request) *spec.Observation {
			to := req.Args["to"]
			h.post(key, map[string]any{"notification_type": "creative.status_changed", "creative_id": "c1", "idempotency_key": goodKey + fmt.Sprint(to),
				"transition": map[string]any{"to": to}}, "")
			return ok(map[string]any{"media_buy_id": "mb_1"})(req)
		},
	}}
	e := env("sync_accounts", "update_media_buy")
	e.Webhooks = h
	res := Run(context.Background(), parse(t, src), e, f)
	if got, want := outcomes(res), "p.subscribe=pass p.suspend=pass p.expect_suspend=pass p.approve=pass p.expect_approve=pass => passed"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
		for _, s := range res.Steps {
			t.Log(s.StepID, failedChecks(s), s.Skip)
		}
	}
}

func lifecycleExpect(trigger, to string) string {
	return `      - id: expect_` + trigger + `
        title: expect
        task: expect_webhook
        triggered_by: ` + trigger + `
        requires_contract: webhook_receiver_runner
        filter:
          notification_type: creative.status_changed
          creative_id: c1
        timeout_seconds: 1
        validations:
          - check: field_value
            path: transition.to
            value: ` + to + `
            description: the transition
`
}

// stringAt is the string at a path of a request ("" when none).
func stringAt(doc any, path string) string {
	v, _, _ := spec.Lookup(doc, path)
	s, _ := v.(string)
	return s
}
