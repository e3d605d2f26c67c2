package suites

import (
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func init() { registerChecks("HOOK", hookChecks) }

func hookChecks() []Check {
	return []Check{
		// Rule: HOOK-01 · Spec: seeds 001; core/mcp-webhook-payload.json; webhooks.mdx
		// (Payload anatomy, Operation IDs) · Since: 0.1.0 · Description: a webhook body
		// MUST be the full envelope — idempotency_key (of the schema's pattern),
		// operation_id echoed verbatim, task_id, task_type, status (a task status),
		// timestamp, and result for a completed or failed task — sent as
		// application/json. The probes ask get_products for asynchronous curation with
		// push_notification_config pointing at the harness's receiver; when the first
		// answer is non-terminal, a seller that sends nothing within the wait fails.
		// The envelope checks are webhook.CheckEnvelope, held to
		// webhook-receiver-envelope.json.
		{ID: "HOOK-01", Transport: catalogue.MCP, Text: "posts the full webhook envelope for asynchronous work", Judge: judgeHOOK01},
		// Rule: HOOK-02 · Spec: security.mdx (Webhook callbacks, Legacy HMAC-SHA256
		// fallback); webhooks.mdx (Signature verification) · Since: 0.1.0 ·
		// Description: every webhook MUST be signed: with legacy HMAC-SHA256
		// (X-ADCP-Signature, X-ADCP-Timestamp within 300 s) when the registration
		// carried authentication credentials, else under the RFC 9421 webhook profile
		// with a key of the seller's JWKS — never both ways. The receiver verifies each
		// delivery as it arrives (webhook.VerifyHMAC, webhook.VerifyRFC9421, held to
		// webhook-hmac-sha256.json and compliance/webhook-signing).
		{ID: "HOOK-02", Transport: catalogue.MCP, Text: "signs webhooks with the scheme the registration asked for", Judge: judgeHOOK02},
		// Rule: HOOK-03 · Spec: webhooks.mdx (Dedup by idempotency_key); security.mdx
		// §4.65 · Since: 0.1.0 · Description: a retry of one delivery MUST reuse its
		// idempotency_key with a JCS-equivalent body. The receiver answers each
		// operation's first delivery 503; the next delivery of the same event (same
		// status and task) must carry the same key and payload. No retry within the wait
		// is a skip, not a pass.
		{ID: "HOOK-03", Transport: catalogue.MCP, Text: "retries a delivery with the same idempotency_key", Judge: judgeHOOK03},
		// Rule: HOOK-04 · Spec: seeds 001 (Webhook Trigger Rules) · Since: 0.1.0 ·
		// Description: no webhook MUST be sent for a call whose first response was already
		// terminal. The probe registers a webhook on a read call pointing at the harness's
		// own receiver and waits a bounded time; a terminal answer followed by a delivery
		// fails. An interim (submitted, working) answer is not judged here.
		{ID: "HOOK-04", Transport: catalogue.MCP, Text: "sends no webhook after a terminal first response", Judge: judgeHOOK04},
	}
}

var terminalStatuses = map[string]bool{"completed": true, "failed": true, "rejected": true, "canceled": true}

// asyncHook is one asynchronous webhook probe: the registering call, the
// receiver's deliveries and its notes.
type asyncHook struct {
	call, deliveries evidence.Call
	note             plan.WebhookDeliveries
}

// asyncHooks returns the webhook probes whose first response was
// non-terminal, accounting the others on t; none says why there are none.
func asyncHooks(s *evidence.Store, t *tally) (out []asyncHook, none string) {
	none = "get_products is not listed"
	for _, scheme := range []string{webhook.SchemeHMAC, webhook.SchemeRFC9421} {
		id := probe(s, "hook/async/"+scheme)
		call, found := s.Call(id)
		if !found || !t.account(call) {
			continue
		}
		d, ok := s.Call(id + "/deliveries")
		if !ok || !t.account(d) {
			none = "the receiver's deliveries were not recorded"
			continue
		}
		var n plan.WebhookDeliveries
		_ = json.Unmarshal(d.Body, &n)
		if !terminalStatuses[n.FirstStatus] && n.FirstStatus != "" {
			out = append(out, asyncHook{call, d, n})
			continue
		}
		status := n.FirstStatus
		if status == "" {
			status = "with no AdCP status"
		} else {
			status = quote(status)
		}
		none = "get_products (with a brief asking for asynchronous curation) was answered " + status +
			" at once: no webhook is due; the HOOK rules need a first response of submitted or working"
	}
	return out, none
}

func waitText(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

func judgeHOOK01(s *evidence.Store, _ Options) Verdict {
	t := newTally("HOOK-01")
	hooks, none := asyncHooks(s, t)
	for _, h := range hooks {
		var fs []finding
		if len(h.deliveries.Exchanges) == 0 {
			fs = append(fs, finding{"", fmt.Sprintf("no webhook within %s of a %s first response (operation %s)",
				waitText(h.note.WaitMS), quote(h.note.FirstStatus), quote(h.note.OperationID))})
		}
		for i, x := range h.deliveries.Exchanges {
			at := "delivery " + strconv.Itoa(i+1) + ":"
			if x.RequestTruncated {
				fs = append(fs, finding{"", at + " body over 1 MiB"})
				continue
			}
			if mt, _, err := mime.ParseMediaType(x.RequestHeaders.Get("Content-Type")); err != nil || mt != "application/json" {
				fs = append(fs, finding{"", at + " Content-Type " + quote(x.RequestHeaders.Get("Content-Type")) + ", not application/json"})
			}
			if err := webhook.CheckEnvelope(x.RequestBody); err != nil {
				fs = append(fs, finding{"", at + " " + err.Error()})
				continue
			}
			if err := webhook.CheckOperationID(x.RequestBody, h.note.OperationID); err != nil {
				fs = append(fs, finding{"/operation_id", at + " " + err.Error()})
			}
			var b struct {
				TaskID string `json:"task_id"`
			}
			if _ = extract.Decode(x.RequestBody, &b); h.note.TaskID != "" && b.TaskID != h.note.TaskID {
				fs = append(fs, finding{"/task_id", at + " task_id " + quote(b.TaskID) + ", the first response's " + quote(h.note.TaskID)})
			}
		}
		t.judged(h.deliveries, fs)
	}
	return t.verdict(none)
}

func judgeHOOK02(s *evidence.Store, _ Options) Verdict {
	t := newTally("HOOK-02")
	hooks, none := asyncHooks(s, t)
	for _, h := range hooks {
		if len(h.deliveries.Exchanges) == 0 {
			none = "no webhook arrived to verify (HOOK-01 judges its absence)"
			continue
		}
		var fs []finding
		for i, d := range h.note.Deliveries {
			if d.SignatureError != "" {
				fs = append(fs, finding{"", fmt.Sprintf("delivery %d (%s): %s", i+1, h.note.Scheme, d.SignatureError)})
			}
		}
		t.judged(h.deliveries, fs)
	}
	return t.verdict(none)
}

func judgeHOOK03(s *evidence.Store, _ Options) Verdict {
	t := newTally("HOOK-03")
	hooks, none := asyncHooks(s, t)
	for _, h := range hooks {
		xs := h.deliveries.Exchanges
		if len(xs) == 0 {
			none = "no webhook arrived (HOOK-01 judges its absence)"
			continue
		}
		if xs[0].Status != 503 {
			none = "the receiver did not answer the first delivery 503"
			continue
		}
		first := event(xs[0].RequestBody)
		retry := -1
		for i := 1; i < len(xs); i++ {
			if e := event(xs[i].RequestBody); e.status == first.status && e.taskID == first.taskID {
				retry = i
				break
			}
		}
		if retry < 0 {
			none = fmt.Sprintf("the first delivery was answered 503 and no retry of it came within %s (raise --webhook-wait)", waitText(h.note.WaitMS))
			continue
		}
		var fs []finding
		r := event(xs[retry].RequestBody)
		switch {
		case r.key != first.key:
			fs = append(fs, finding{"/idempotency_key", fmt.Sprintf("the retry (delivery %d) carries idempotency_key %s, the delivery answered 503 carried %s",
				retry+1, quote(r.key), quote(first.key))})
		case r.canonical != first.canonical:
			fs = append(fs, finding{"", fmt.Sprintf("the retry (delivery %d) reuses idempotency_key %s with a changed payload", retry+1, quote(r.key))})
		}
		t.judged(h.deliveries, fs)
	}
	return t.verdict(none)
}

type hookEvent struct {
	key, status, taskID, canonical string
}

// event reads the identity of a delivery and its canonical form (the
// decoded JSON re-encoded: key order and spacing do not count).
func event(body []byte) hookEvent {
	var b struct {
		Key    string `json:"idempotency_key"`
		Status string `json:"status"`
		TaskID string `json:"task_id"`
	}
	_ = extract.Decode(body, &b)
	var v any
	_ = json.Unmarshal(body, &v)
	c, _ := json.Marshal(v)
	return hookEvent{b.Key, b.Status, b.TaskID, string(c)}
}

func judgeHOOK04(s *evidence.Store, _ Options) Verdict {
	t := newTally("HOOK-04")
	call, found := s.Call(probe(s, "hook/sync"))
	if !found {
		return t.verdict("get_products is not listed")
	}
	if !t.account(call) {
		return t.verdict("")
	}
	r := parseReply(call)
	status := ""
	switch {
	case r.errorSignal():
		status = "failed"
	case r.data != nil:
		status, _ = str(r.data, "status")
	}
	if !terminalStatuses[status] {
		return t.verdict("the call registering the webhook was answered " + quote(status) + ", not a terminal status")
	}
	deliveries, ok := s.Call(probe(s, "hook/sync/deliveries"))
	if !ok || !t.account(deliveries) {
		return t.verdict("the receiver's deliveries were not recorded")
	}
	if n := len(deliveries.Exchanges); n > 0 {
		t.judged(deliveries, []finding{{"", strconv.Itoa(n) + " webhook(s) posted for a call whose first response was terminal (" + status + ")"}})
	} else {
		t.judged(deliveries, nil)
	}
	return t.verdict("")
}
