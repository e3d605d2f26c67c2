package storyboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/check"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/expr"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Webhooks is the run's webhook receiver as the engine sees it
// (storyboard-schema.yaml "Webhook receiver", test-kits/
// webhook-receiver-runner.yaml). The engine mints one receiver key per
// storyboard run and {{runner.webhook_url:<step_id>}} step id; keys are
// URL-safe path segments, never a protocol operation_id.
type Webhooks interface {
	// Base is {{runner.webhook_base}}.
	Base() string
	// URL registers key and returns where a seller posts its webhooks:
	// every delivery is answered 2xx at once unless Fail says otherwise,
	// and verified (RFC 9421, the seller's keys) as it arrives.
	URL(key string) string
	// Fail makes the receiver answer the first n deliveries of key with
	// status (a retry_trigger); called before the seller can deliver.
	Fail(key string, n, status int)
	// Deliveries returns what key received so far, in arrival order,
	// redacted as the evidence keeps it.
	Deliveries(key string) []Delivery
	// Record keeps a webhook step's evidence call (KindWebhook) in the
	// run's evidence store.
	Record(c evidence.Call)
}

// Delivery is one webhook a seller posted to the run's receiver.
type Delivery struct {
	Key    string
	Header http.Header
	Body   []byte
	// Status is what the receiver answered.
	Status int
	At     time.Time
	// Truncated: the body was over the receiver's bound (answered 413);
	// Dropped: the receiver's total was spent, the body was not kept.
	Truncated, Dropped bool
	// Scheme and SignatureError are the receiver's verification of the
	// delivery as it arrived ("" scheme: not verified; "" error: verified).
	Scheme, SignatureError string
}

// The webhook-assertion tasks the engine runs.
const (
	taskExpectWebhook   = "expect_webhook"
	taskExpectNoWebhook = "expect_no_webhook"
	taskRetryKeysStable = "expect_webhook_retry_keys_stable"
	taskSignatureValid  = "expect_webhook_signature_valid"
)

// webhookTasks are the runner tasks that read the receiver.
var webhookTasks = []string{taskExpectWebhook, taskExpectNoWebhook, taskRetryKeysStable, taskSignatureValid}

// The bounds of a webhook step's wait.
const (
	webhookDefaultWait = 30 * time.Second
	retryDefaultWait   = 90 * time.Second
	webhookMaxWait     = 5 * time.Minute
	// notOwedWait is how long a step waits when the triggering step's
	// reply was terminal: no webhook is owed (a webhook for a first reply
	// already terminal is HOOK-04's violation, judged by that rule with
	// --webhook-wait); what has come by then is still graded, and nothing
	// grades the step not applicable. A settle of one poll, not a wait:
	// webhook_emission's five such steps were the sandbox run's critical
	// path (9 s at first, then 1.5 s at 300 ms each).
	notOwedWait = webhookPoll
	webhookPoll = 100 * time.Millisecond
)

// The retry_trigger bounds (webhook-receiver-runner.yaml
// retry_replay_contract).
var retryStatuses = []int{429, 500, 502, 503, 504}

const (
	retryMinCount = 1
	retryMaxCount = 10
)

// hookState is a storyboard run's receiver keys.
type hookState struct {
	suffix string
	// keys: the step id a {{runner.webhook_url:<id>}} names → its key.
	keys map[string]string
	// fail: the step id → the retry_trigger a later step asks for.
	fail map[string]spec.RetryTrigger
	// started: step id → when it started (wall clock), to scope the
	// deliveries a webhook step reads to those its trigger caused.
	started map[string]time.Time
	// last is the step that started last, prev the one before it.
	last, prev string
}

// initWebhooks wires the receiver into the substitution: each
// {{runner.webhook_url:X}} mints X's key once, with the failure plan a
// later retry step names X for registered before anything is sent.
func (r *runner) initWebhooks() {
	w := r.env.Webhooks
	if w == nil {
		return
	}
	h := &hookState{suffix: randomSuffix(), keys: map[string]string{}, fail: map[string]spec.RetryTrigger{}, started: map[string]time.Time{}}
	for _, ph := range r.sb.Phases {
		for _, st := range ph.Steps {
			if st.Task == taskRetryKeysStable && st.TriggeredBy != "" {
				h.fail[st.TriggeredBy] = retryTrigger(st.RetryTrigger)
			}
		}
	}
	r.hooks = h
	r.vars.WebhookBase = w.Base()
	r.vars.WebhookURL = func(id string) (string, bool) {
		if !expr.ValidStepID(id) {
			return "", false
		}
		key, ok := h.keys[id]
		if !ok {
			key = hookKey(r.sb.ID, id, h.suffix)
			h.keys[id] = key
			u := w.URL(key)
			if rt, planned := h.fail[id]; planned {
				w.Fail(key, rt.Count, rt.HTTPStatus)
			}
			return u, true
		}
		return w.URL(key), true
	}
}

// markStarted notes that a step starts now.
func (r *runner) markStarted(id string) {
	if r.hooks != nil {
		r.hooks.started[id] = time.Now()
		r.hooks.prev, r.hooks.last = r.hooks.last, id
	}
}

// retryTrigger is a step's retry_trigger within the contract's bounds.
func retryTrigger(rt *spec.RetryTrigger) spec.RetryTrigger {
	out := spec.RetryTrigger{Count: 3, HTTPStatus: http.StatusServiceUnavailable}
	if rt != nil {
		if rt.Count != 0 {
			out.Count = min(max(rt.Count, retryMinCount), retryMaxCount)
		}
		if slices.Contains(retryStatuses, rt.HTTPStatus) {
			out.HTTPStatus = rt.HTTPStatus
		}
	}
	return out
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// hookKey is a receiver key: "sb-<storyboard>-<step>-<run suffix>", made
// a URL path segment, unique per storyboard run and step. The "sb-"
// prefix and the suffix keep it distinct from any operation_id a
// storyboard registers.
func hookKey(storyboard, step, suffix string) string {
	clean := func(s string, n int) string {
		var b strings.Builder
		for _, c := range s {
			if b.Len() >= n {
				break
			}
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
				b.WriteRune(c)
			default:
				b.WriteByte('-')
			}
		}
		return b.String()
	}
	return "sb-" + clean(storyboard, 60) + "-" + clean(step, 60) + "-" + suffix
}

// webhookPlan is what a webhook step reads: the keys, and the moment from
// which deliveries count.
type webhookPlan struct {
	keys  []string
	since time.Time
	// owed is false when the triggering step registered the receiver in
	// push_notification_config and its reply was terminal: no webhook is
	// owed (the trigger steps' "expected": "an immediate terminal status
	// (no webhook needed)"); why says so.
	owed bool
	why  string
}

// webhookStep runs a webhook-assertion step: it reads the deliveries its
// trigger caused (waiting for them live, or the recorded ones on a
// replay), records them under the step's probe ID, and judges them. It
// returns the observation of the delivery the step's own validations
// grade (nil when none matched), the step's results, or a skip.
func (r *runner) webhookStep(ctx context.Context, st *spec.Step, task, probeID string) (*spec.Observation, []spec.Result, *spec.Skip) {
	if r.hooks == nil || r.env.Webhooks == nil {
		return nil, nil, &spec.Skip{Reason: spec.RequirementUnmet, Detail: unmetRunnerTask(task, "webhook_receiver", false)}
	}
	p, skip := r.webhookPlan(st)
	if skip != nil {
		return nil, nil, skip
	}
	var call evidence.Call
	if rp, ok := r.d.(webhookReplayer); ok {
		c, ok := rp.recordedWebhooks(probeID)
		if !ok {
			return &spec.Observation{Task: task, Transport: "http", Failure: "not recorded in the evidence"}, nil, nil
		}
		call = c
	} else {
		call = r.waitWebhooks(ctx, st, task, probeID, p)
		r.env.Webhooks.Record(call)
	}
	ds, note := DeliveriesOf(call)
	return judgeWebhook(st, task, ds, note, r.env.Schemas, call)
}

// webhookReplayer is a dispatcher over a recorded run (Replay): it gives
// back the deliveries a webhook step read.
type webhookReplayer interface {
	recordedWebhooks(probeID string) (evidence.Call, bool)
}

// webhookPlan resolves the keys a step reads: its trigger's own receiver,
// or (a trigger that registered none, such as a controller step forcing a
// status change delivered to an account-level subscriber URL) every
// receiver the storyboard registered, counting deliveries from the
// trigger's start; without triggered_by, from the previous step's.
func (r *runner) webhookPlan(st *spec.Step) (webhookPlan, *spec.Skip) {
	h := r.hooks
	var p webhookPlan
	p.owed = true
	trig := st.TriggeredBy
	if trig != "" {
		var tr *StepResult
		for k := range r.steps {
			if r.steps[k].StepID == trig {
				tr = &r.steps[k]
			}
		}
		name := "the triggering step " + spec.Clip(trig, 80)
		switch {
		case tr == nil && stepByID(r.sb, trig) == nil:
			return p, &spec.Skip{Reason: spec.RequirementUnmet, Detail: "triggered_by " + spec.Clip(trig, 80) + " names no step of the storyboard"}
		case tr == nil:
			return p, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: name + " did not run before this step"}
		case tr.Skip != nil:
			return p, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: name + " was skipped (" + tr.Skip.Reason + ")"}
		case tr.Error != "":
			return p, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: name + " proved nothing (" + spec.Clip(tr.Error, 200) + ")"}
		case !tr.Passed:
			return p, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: name + " did not pass"}
		}
	}
	if key, ok := h.keys[trig]; ok && trig != "" {
		p.keys = []string{key}
		p.owed, p.why = r.owed(trig, key)
		return p, nil
	}
	for _, k := range h.keys {
		p.keys = append(p.keys, k)
	}
	sort.Strings(p.keys)
	if len(p.keys) == 0 {
		return p, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: "no earlier step registered a {{runner.webhook_url}} receiver: no webhook can arrive"}
	}
	from := trig
	if from == "" {
		from = h.prev
	}
	p.since = h.started[from]
	return p, nil
}

// owed says whether the trigger owes a webhook at key: not when its
// request registered key in push_notification_config and its reply was
// terminal (no submitted or working task).
func (r *runner) owed(trig, key string) (bool, string) {
	for k := len(r.steps) - 1; k >= 0; k-- {
		res := r.steps[k]
		if res.StepID != trig {
			continue
		}
		pushURL, _, _ := spec.Lookup(res.Request, "push_notification_config.url")
		u, _ := pushURL.(string)
		if u == "" || !strings.Contains(u, key) || res.Obs == nil {
			return true, ""
		}
		reported, _, _ := spec.Lookup(res.Obs.Payload, "status")
		status, _ := reported.(string)
		if slices.Contains([]string{"submitted", "working", "input-required"}, status) {
			return true, ""
		}
		if status == "" {
			status = "none"
		}
		return false, fmt.Sprintf("the triggering step %s registered push_notification_config and its reply was terminal (status %s): no webhook is owed for an immediate terminal response", spec.Clip(trig, 80), spec.Clip(status, 40))
	}
	return true, ""
}

// waitWebhooks waits (bounded by timeout_seconds and ctx) until the
// step's deliveries settle it, and returns them as the step's evidence
// call.
func (r *runner) waitWebhooks(ctx context.Context, st *spec.Step, task, probeID string, p webhookPlan) evidence.Call {
	wait := webhookDefaultWait
	if task == taskRetryKeysStable {
		wait = retryDefaultWait
	}
	if st.TimeoutSeconds != nil && *st.TimeoutSeconds > 0 {
		wait = min(time.Duration(*st.TimeoutSeconds)*time.Second, webhookMaxWait)
	}
	if !p.owed {
		wait = min(wait, notOwedWait)
	}
	start := time.Now()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(webhookPoll)
	defer tick.Stop()
	read := func() []Delivery {
		var out []Delivery
		for _, k := range p.keys {
			for _, d := range r.env.Webhooks.Deliveries(k) {
				if d.At.Before(p.since) {
					continue
				}
				d.Key = k
				out = append(out, d)
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
		return out
	}
	var got []Delivery
	seen := -1
	for {
		// Judge what arrived only when something new did: the bodies are
		// decoded each time.
		if got = read(); len(got) != seen {
			seen = len(got)
			if settledFor(st, task, got) {
				break
			}
		}
		stop := false
		select {
		case <-ctx.Done():
			stop = true
		case <-deadline.C:
			stop = true
		case <-tick.C:
		}
		if stop {
			got = read()
			break
		}
	}
	note := WebhookNote{Task: task, Keys: p.keys, WaitMS: time.Since(start).Milliseconds(), Owed: p.owed, NotOwed: p.why}
	if !p.since.IsZero() {
		note.Since = p.since
	}
	urls := map[string]string{}
	for _, k := range p.keys {
		urls[k] = r.env.Webhooks.URL(k)
	}
	return deliveriesCall(probeID, urls, note, got)
}

// settledFor says whether what arrived already decides the step, so the
// wait can end early: a match for expect_webhook (unless it bounds the
// deliveries per event, which needs the whole window) and
// expect_webhook_signature_valid; an accepted match after the failures
// for the retry step; any match for expect_no_webhook.
func settledFor(st *spec.Step, task string, ds []Delivery) bool {
	m := matching(st, ds)
	switch task {
	case taskExpectWebhook:
		return len(m) > 0 && st.ExpectMaxDeliveriesPerLog == nil
	case taskSignatureValid, taskExpectNoWebhook:
		return len(m) > 0
	case taskRetryKeysStable:
		ev := sameEvent(m)
		return len(ev) >= minDeliveries(st) && ev[len(ev)-1].Status >= 200 && ev[len(ev)-1].Status < 300
	}
	return false
}

// WebhookNote is the Body of a webhook step's evidence call: what it read
// and how, and the receiver's verdict on each delivery, in the order of
// the call's Exchanges.
type WebhookNote struct {
	Task  string    `json:"task"`
	Keys  []string  `json:"keys"`
	Since time.Time `json:"since,omitzero"`
	// WaitMS is how long the step waited.
	WaitMS int64 `json:"wait_ms"`
	// Owed is false when no webhook was owed (NotOwed says why).
	Owed       bool              `json:"owed"`
	NotOwed    string            `json:"not_owed,omitempty"`
	Deliveries []WebhookDelivery `json:"deliveries"`
}

// WebhookDelivery is what the receiver made of one delivery.
type WebhookDelivery struct {
	Key            string `json:"key"`
	Status         int    `json:"status"`
	Truncated      bool   `json:"truncated,omitempty"`
	Dropped        bool   `json:"dropped,omitempty"`
	Scheme         string `json:"scheme,omitempty"`
	SignatureError string `json:"signature_error,omitempty"`
}

// deliveriesCall is a webhook step's evidence call, in the shape of the
// HOOK probes' deliveries calls: one exchange per delivery (the seller's
// request as received, redacted, and the receiver's status), the notes in
// Body.
func deliveriesCall(probeID string, urls map[string]string, note WebhookNote, ds []Delivery) evidence.Call {
	c := evidence.Call{ProbeID: probeID, Kind: evidence.KindWebhook, Tool: note.Task, Method: "POST", Started: time.Now()}
	if len(note.Keys) == 1 {
		c.URL = urls[note.Keys[0]]
	}
	note.Deliveries = []WebhookDelivery{}
	for _, d := range ds {
		x := wire.Exchange{Method: "POST", URL: urls[d.Key], RequestHeaders: d.Header, RequestBody: wire.Bytes(d.Body),
			RequestBodySize: int64(len(d.Body)), RequestTruncated: d.Truncated, Status: d.Status, Started: d.At, Finished: true, Complete: true}
		c.Exchanges = append(c.Exchanges, x)
		note.Deliveries = append(note.Deliveries, WebhookDelivery{Key: d.Key, Status: d.Status, Truncated: d.Truncated, Dropped: d.Dropped,
			Scheme: d.Scheme, SignatureError: wire.Sanitize(d.SignatureError, 300)})
	}
	c.Body, _ = json.Marshal(note)
	return c
}

// DeliveriesOf reads a webhook step's evidence call back: the deliveries
// and the note. Whatever the bytes, it never panics; an exchange without
// its note keeps what the exchange says.
func DeliveriesOf(c evidence.Call) ([]Delivery, WebhookNote) {
	var note WebhookNote
	_ = json.Unmarshal(c.Body, &note)
	var out []Delivery
	for i, x := range c.Exchanges {
		d := Delivery{Header: x.RequestHeaders, Body: []byte(x.RequestBody), Status: x.Status, At: x.Started, Truncated: x.RequestTruncated}
		if i < len(note.Deliveries) {
			n := note.Deliveries[i]
			d.Key, d.Dropped, d.Scheme, d.SignatureError = n.Key, n.Dropped, n.Scheme, n.SignatureError
			d.Truncated = d.Truncated || n.Truncated
		}
		out = append(out, d)
	}
	return out, note
}

// webhookFilter is a step's filter as body paths → values: filter.body,
// and the filter's other keys but operation_id (reserved for receiver
// routing) read as body fields too (creative_lifecycle_webhooks writes
// its payload fields at the filter's top level). Dotted numeric segments
// index arrays ("result.products.0.product_id").
func webhookFilter(st *spec.Step) map[string]any {
	out := map[string]any{}
	for k, v := range st.Filter {
		if k == "body" {
			if m, ok := spec.Normalize(v).(map[string]any); ok {
				for p, x := range m {
					out[bodyPath(p)] = x
				}
			}
			continue
		}
		if k != "operation_id" {
			out[bodyPath(k)] = spec.Normalize(v)
		}
	}
	return out
}

// bodyPath writes the numeric segments of a dotted path as indexes.
func bodyPath(p string) string {
	parts := strings.Split(p, ".")
	var b strings.Builder
	for i, s := range parts {
		if _, err := strconv.Atoi(s); err == nil && i > 0 {
			b.WriteString("[" + s + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// matching returns the deliveries whose JSON body matches the step's
// filter, in order.
func matching(st *spec.Step, ds []Delivery) []Delivery {
	f := webhookFilter(st)
	var out []Delivery
	for _, d := range ds {
		if ok, _ := matches(f, d); ok {
			out = append(out, d)
		}
	}
	return out
}

// matches reports whether a delivery's body matches the filter, and the
// first path that does not.
func matches(f map[string]any, d Delivery) (bool, string) {
	if d.Dropped || d.Truncated || len(d.Body) == 0 {
		return false, "(body not kept)"
	}
	body, err := spec.DecodeJSON(d.Body)
	if err != nil {
		return false, "(body is not JSON)"
	}
	if _, ok := body.(map[string]any); !ok {
		return false, "(body is not a JSON object)"
	}
	paths := make([]string, 0, len(f))
	for p := range f {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		v, _, ok := spec.Lookup(body, p)
		if !ok || !spec.Equal(v, f[p]) {
			return false, p
		}
	}
	return true, ""
}

// sameEvent is the first matching delivery's logical event: the matching
// deliveries with its task_id and status (the retries of one transition;
// a later transition to the same receiver is another event with its own
// key).
func sameEvent(m []Delivery) []Delivery {
	if len(m) == 0 {
		return nil
	}
	id := func(d Delivery) string {
		body, _ := spec.DecodeJSON(d.Body)
		t, _, _ := spec.Lookup(body, "task_id")
		s, _, _ := spec.Lookup(body, "status")
		n, _, _ := spec.Lookup(body, "notification_id")
		b, _ := json.Marshal([]any{t, s, n})
		return string(b)
	}
	first := id(m[0])
	var out []Delivery
	for _, d := range m {
		if id(d) == first {
			out = append(out, d)
		}
	}
	return out
}

func minDeliveries(st *spec.Step) int {
	if st.ExpectMinDeliveries != nil && *st.ExpectMinDeliveries > 0 {
		return *st.ExpectMinDeliveries
	}
	return retryTrigger(st.RetryTrigger).Count + 1
}

// idempotencyKey reads a delivery's idempotency_key: the raw JSON value
// bytes (for byte-identity), the string, and whether it is a string.
func idempotencyKey(d Delivery) (raw string, key string, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(d.Body, &m) != nil {
		return "", "", false
	}
	v, has := m["idempotency_key"]
	if !has {
		return "", "", false
	}
	if json.Unmarshal(v, &key) != nil {
		return string(v), "", false
	}
	return string(v), key, true
}

// deliveryObservation is a delivery as the checks see it: the JSON body
// as the payload.
func deliveryObservation(task string, d Delivery, call evidence.Call) *spec.Observation {
	o := &spec.Observation{Call: call, Transport: "http", Task: task, HTTPStatus: d.Status, Header: d.Header, ExtractionPath: "http_body"}
	if v, err := spec.DecodeJSON(d.Body); err == nil && v != nil {
		o.Payload, o.PayloadRaw = v, json.RawMessage(d.Body)
	}
	return o
}

// describe is a one-line account of what arrived, for a failure message.
func describe(st *spec.Step, ds []Delivery) string {
	if len(ds) == 0 {
		return "nothing arrived at the receiver"
	}
	f := webhookFilter(st)
	_, why := matches(f, ds[0])
	return fmt.Sprintf("%d deliveries arrived, none matching the filter (the first differs at %s)", len(ds), spec.Clip(why, 120))
}

// judgeWebhook grades a webhook step from the deliveries it read: a pure
// function of the recorded bytes and the step, so a replay grades the
// same.
func judgeWebhook(st *spec.Step, task string, ds []Delivery, note WebhookNote, set *schemas.Set, call evidence.Call) (*spec.Observation, []spec.Result, *spec.Skip) {
	m := matching(st, ds)
	window := "within the step's window"
	if note.WaitMS > 0 {
		window = fmt.Sprintf("within %s", (time.Duration(note.WaitMS) * time.Millisecond).Round(100*time.Millisecond))
	}
	fail := func(kind, code, desc, msg string) spec.Result {
		return spec.Result{Check: kind, Passed: false, Severity: "required", Description: desc, Expected: code, Message: code + ": " + msg}
	}
	pass := func(kind, desc string) spec.Result {
		return spec.Result{Check: kind, Passed: true, Severity: "required", Description: desc}
	}
	received := "a webhook matching the step's filter arrives at the triggered receiver"
	if task == taskExpectNoWebhook {
		if len(m) > 0 {
			return deliveryObservation(task, m[0], call), []spec.Result{fail(task, "unexpected_webhook", "no webhook matching the step's filter arrives",
				fmt.Sprintf("%d matching deliveries arrived %s", len(m), window))}, nil
		}
		return nil, []spec.Result{pass(task, "no webhook matching the step's filter arrives")}, nil
	}
	if len(m) == 0 {
		if !note.Owed {
			// Graded not_applicable rather than skipped: the trigger
			// passed and no state is missing, so later phases still run.
			na := spec.Result{}.NA("%s", note.NotOwed)
			na.Check, na.Description = "webhook_received", received
			return nil, []spec.Result{na}, nil
		}
		for _, d := range ds {
			if d.Dropped || d.Truncated {
				return &spec.Observation{Call: call, Task: task, Transport: "http",
					Failure: "a delivery at the receiver was not kept whole (over its size bounds), and none matched: the step proves nothing"}, nil, nil
			}
		}
		return nil, []spec.Result{fail("webhook_received", "no_webhook_received", received, describe(st, ds)+" "+window)}, nil
	}
	first := m[0]
	obs := deliveryObservation(task, first, call)
	out := []spec.Result{pass("webhook_received", received)}
	switch task {
	case taskExpectWebhook:
		if st.ExpectIdempotencyKey == nil || *st.ExpectIdempotencyKey {
			out = append(out, checkKey(first))
		}
		if ref := strings.TrimSpace(st.WebhookPayloadSchemaRef); ref != "" {
			out = append(out, payloadSchema(set, ref, first))
		}
		if st.ExpectMaxDeliveriesPerLog != nil {
			out = append(out, maxPerEvent(*st.ExpectMaxDeliveriesPerLog, m, window))
		}
	case taskRetryKeysStable:
		out = append(out, retryStable(st, sameEvent(m), window)...)
	case taskSignatureValid:
		out = append(out, signature(st, first))
	}
	return obs, out, nil
}

// checkKey grades expect_idempotency_key on a delivery.
func checkKey(d Delivery) spec.Result {
	desc := "the webhook carries an idempotency_key matching " + webhook.IdempotencyKeyPattern
	raw, key, ok := idempotencyKey(d)
	at := "/idempotency_key"
	r := spec.Result{Check: "idempotency_key", Severity: "required", Description: desc, JSONPointer: &at}
	switch {
	case raw == "":
		r.Expected, r.Message = "missing_idempotency_key", "missing_idempotency_key: the payload has no idempotency_key"
	case !ok || !webhook.ValidIdempotencyKey(key):
		r.Expected, r.Actual = "invalid_idempotency_key_format", spec.Clip(raw, 300)
		r.Message = "invalid_idempotency_key_format: idempotency_key " + spec.Clip(raw, 80) + " does not match " + webhook.IdempotencyKeyPattern
	default:
		r.Passed = true
	}
	return r
}

// payloadSchema validates a delivery against webhook_payload_schema_ref.
func payloadSchema(set *schemas.Set, ref string, d Delivery) spec.Result {
	desc := "the webhook payload validates against " + spec.Clip(ref, 200)
	if set == nil {
		r := spec.Result{}.NA("no schemas (--schemas): webhook_payload_schema_ref not validated")
		r.Check, r.Description = "webhook_payload_schema", desc
		return r
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(ref, "/schemas/"+set.Release()+"/"), "/")
	r := check.Schema(set, rel, d.Body, "")
	r.Check, r.Description, r.Severity = "webhook_payload_schema", desc, "required"
	if !r.Passed && !r.NotApplicable {
		r.Message = "schema_violation: " + r.Message
	}
	return r
}

// maxPerEvent grades expect_max_deliveries_per_logical_event: the
// distinct idempotency_keys among the matching deliveries (a delivery
// without one counts by its body's digest).
func maxPerEvent(n int, m []Delivery, window string) spec.Result {
	seen := map[string]bool{}
	var keys []string
	for _, d := range m {
		raw, _, _ := idempotencyKey(d)
		if raw == "" {
			sum := sha256.Sum256(d.Body)
			raw = "sha256:" + hex.EncodeToString(sum[:8])
		}
		if !seen[raw] {
			seen[raw] = true
			keys = append(keys, spec.Clip(raw, 80))
		}
	}
	desc := fmt.Sprintf("at most %d logical webhook event(s) (distinct idempotency_key) arrive %s", n, window)
	r := spec.Result{Check: "max_deliveries_per_logical_event", Severity: "required", Description: desc, Passed: len(keys) <= n}
	if !r.Passed {
		r.Expected, r.Actual = "duplicate_webhook_on_replay", keys
		r.Message = fmt.Sprintf("duplicate_webhook_on_replay: %d distinct logical events arrived (keys %s), at most %d allowed", len(keys), strings.Join(keys, ", "), n)
	}
	return r
}

// retryStable grades expect_webhook_retry_keys_stable over one logical
// event's deliveries.
func retryStable(st *spec.Step, ev []Delivery, window string) []spec.Result {
	want := minDeliveries(st)
	var out []spec.Result
	n := spec.Result{Check: "retry_deliveries", Severity: "required", Passed: len(ev) >= want,
		Description: fmt.Sprintf("at least %d deliveries of the event arrive %s (the receiver refuses the first %d)", want, window, retryTrigger(st.RetryTrigger).Count)}
	if !n.Passed {
		n.Expected, n.Actual = "insufficient_retries", len(ev)
		n.Message = fmt.Sprintf("insufficient_retries: %d deliveries of the event arrived, %d expected", len(ev), want)
	}
	out = append(out, n)
	k := spec.Result{Check: "idempotency_key_stable", Severity: "required", Passed: true,
		Description: "every delivery of the event carries the byte-identical idempotency_key"}
	var keys []string
	for _, d := range ev {
		raw, _, _ := idempotencyKey(d)
		keys = append(keys, spec.Clip(raw, 80))
	}
	for i, raw := range keys {
		if raw == "" {
			k.Passed, k.Expected, k.Actual = false, "missing_idempotency_key", keys
			k.Message = fmt.Sprintf("missing_idempotency_key: delivery %d of the event has no idempotency_key", i+1)
			break
		}
		if raw != keys[0] {
			k.Passed, k.Actual = false, keys
			_, a, okA := idempotencyKey(ev[0])
			_, b, okB := idempotencyKey(ev[i])
			code := "idempotency_key_rotated"
			if okA != okB || webhook.ValidIdempotencyKey(a) != webhook.ValidIdempotencyKey(b) {
				code = "idempotency_key_format_changed"
			}
			k.Expected = code
			k.Message = fmt.Sprintf("%s: delivery %d carries %s, delivery 1 carried %s", code, i+1, raw, keys[0])
			break
		}
	}
	out = append(out, k)
	if st.VerifySignatureEveryTime == nil || *st.VerifySignatureEveryTime {
		for i, d := range ev {
			s := signature(st, d)
			if !s.Passed || i == len(ev)-1 {
				s.Description = "every delivery of the event verifies under the RFC 9421 webhook profile, with fresh nonces"
				if !s.Passed {
					s.Message = fmt.Sprintf("delivery %d: %s", i+1, s.Message)
				}
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// signature grades the receiver's verification of a delivery.
func signature(st *spec.Step, d Delivery) spec.Result {
	desc := "the webhook's signature verifies under the RFC 9421 webhook profile"
	if st.RequireTag != "" {
		desc += " (tag " + spec.Clip(st.RequireTag, 80) + ")"
	}
	r := spec.Result{Check: "webhook_signature", Severity: "required", Description: desc}
	switch {
	case d.Scheme == "":
		r = spec.Result{}.NA("the receiver did not verify this delivery (no signing expectation was registered for its receiver)")
	case d.Scheme != webhook.SchemeRFC9421:
		r = spec.Result{}.NA("the delivery was registered for %s, not the RFC 9421 profile", d.Scheme)
	case strings.HasPrefix(d.SignatureError, webhook.CodeKeysUnavailable):
		r = spec.Result{}.NA("the seller's signing keys were not available to verify with: %s", spec.Clip(d.SignatureError, 300))
	case d.SignatureError != "":
		code, _, _ := strings.Cut(d.SignatureError, ":")
		r.Expected, r.Message = signatureMode(code), spec.Clip(d.SignatureError, 300)
	case st.RequireTag != "" && st.RequireTag != webhook.WebhookTag:
		r = spec.Result{}.NA("require_tag %s is not the tag the verifier checks (%s)", spec.Clip(st.RequireTag, 80), webhook.WebhookTag)
	default:
		r.Passed = true
	}
	r.Check, r.Description, r.Severity = "webhook_signature", desc, "required"
	return r
}

// signatureMode maps a verifier code to the step's error mode
// (webhook_signature_replayed → signature_replayed).
func signatureMode(code string) string {
	code = strings.TrimSpace(code)
	if s, ok := strings.CutPrefix(code, "webhook_"); ok {
		return s
	}
	return "signature_invalid"
}

// stepByID finds a step of the storyboard by id.
func stepByID(sb *spec.Storyboard, id string) *spec.Step {
	for i := range sb.Phases {
		for j := range sb.Phases[i].Steps {
			if sb.Phases[i].Steps[j].ID == id {
				return &sb.Phases[i].Steps[j]
			}
		}
	}
	return nil
}

// webhookContract is the test-kit contract the run's receiver satisfies.
const webhookContract = "webhook_receiver_runner"

// unmetRunnerTask says why a runner task does not run.
func unmetRunnerTask(task, need string, receiver bool) string {
	if need == "webhook_receiver" && receiver {
		switch task {
		case "replay_webhook_vector":
			return fmt.Sprintf("%s: the runner task %s posts the spec's webhook-envelope test vectors to a buyer's receiver; adcp-conform grades sellers and is given none", need, task)
		}
	}
	return fmt.Sprintf("%s: the runner task %s needs %s, which adcp-conform does not provide yet", need, task, need)
}
