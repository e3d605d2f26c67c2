package suites

import (
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func hookChecks() []Check {
	return []Check{
		// Rule: HOOK-01 · Spec: mcp-guide.mdx (Webhook Trigger Rules); core/mcp-webhook-payload.json;
		// webhooks.mdx (Payload anatomy, Operation IDs) · Since: 0.1.0 · Description: a webhook
		// body MUST be the full envelope — idempotency_key (of the schema's pattern),
		// operation_id echoed verbatim, task_id (the first response's, when it gave one),
		// task_type, status (a task status), timestamp, and result for a completed or
		// failed task — sent as application/json. The probes register
		// push_notification_config pointing at the harness's receiver on get_products
		// asking for asynchronous curation and, with --allow-mutations, on
		// create_media_buy (the operation sellers most often complete asynchronously);
		// whatever a probe asked, a first response of submitted or working (mcp-guide.mdx's
		// trigger) makes its deliveries judged here. The envelope checks are
		// webhook.CheckEnvelope, held to webhook-receiver-envelope.json; the body's own
		// keys are read case-sensitively.
		// Policy: no webhook within --webhook-wait is a skip, not a failure: a
		// submitted media buy may wait a day for approval (mcp-guide.mdx, Webhooks for
		// Long-Lived Operations), and the rule is about the body of a webhook sent.
		{ID: "HOOK-01", Transport: catalogue.MCP, Text: "posts the full webhook envelope for asynchronous work", Judge: judgeHOOK01},
		// Rule: HOOK-02 · Spec: security.mdx (Webhook callbacks, Legacy HMAC-SHA256
		// fallback); webhooks.mdx (Signature verification) · Since: 0.1.0 ·
		// Description: every webhook MUST be signed: with legacy HMAC-SHA256
		// (X-ADCP-Signature, X-ADCP-Timestamp within 300 s) when the registration
		// carried authentication credentials, else under the RFC 9421 webhook profile
		// with a key of the seller's JWKS — never both ways. The receiver verifies each
		// delivery as it arrives (webhook.VerifyHMAC, webhook.VerifyRFC9421, held to
		// webhook-hmac-sha256.json and compliance/webhook-signing). Judged on the
		// deliveries of every registration HOOK-01 judges. A delivery the receiver recorded no
		// verdict for is a harness error: a pass would claim a check nobody made.
		{ID: "HOOK-02", Transport: catalogue.MCP, Text: "signs webhooks with the scheme the registration asked for", Judge: judgeHOOK02},
		// Rule: HOOK-03 · Spec: webhooks.mdx (Dedup by idempotency_key); security.mdx
		// §4.65 · Since: 0.1.0 · Description: a retry of one delivery MUST reuse its
		// idempotency_key with a JCS-equivalent body. The receiver answers each
		// operation's first delivery 503; the next delivery of the same event (same
		// status and task) must carry the same key and payload. No retry within the wait
		// is a skip, not a pass; so is a first delivery without an idempotency_key string
		// (HOOK-01's: there is no key to reuse), and a retry whose key is no string fails.
		{ID: "HOOK-03", Transport: catalogue.MCP, Text: "retries a delivery with the same idempotency_key", Judge: judgeHOOK03},
		// Rule: HOOK-04 · Spec: mcp-guide.mdx (Webhook Trigger Rules) · Since: 0.1.0 ·
		// Description: no webhook MUST be sent for a call whose first response was already
		// terminal (completed, failed, rejected, canceled; an error is failed). Judged on
		// every registration answered terminal after which the harness waited
		// (--webhook-wait): a get_products call and, with --allow-mutations, a
		// create_media_buy answered at once; any delivery fails. A registration answered
		// submitted or working is HOOK-01's.
		{ID: "HOOK-04", Transport: catalogue.MCP, Text: "sends no webhook after a terminal first response", Judge: judgeHOOK04},
	}
}

var terminalStatuses = map[string]bool{"completed": true, "failed": true, "rejected": true, "canceled": true}

// dueStatuses are the first statuses after which webhooks are due (seed
// 001, Webhook Trigger Rules: "initial response is working or submitted").
var dueStatuses = map[string]bool{"submitted": true, "working": true}

// registration is one webhook probe: the call that registered
// push_notification_config, its first status (read from the reply), the
// receiver's deliveries for it and the harness's notes.
type registration struct {
	call, deliveries evidence.Call
	first            string
	note             plan.WebhookDeliveries
}

// name is the registration's tool, for messages.
func (r registration) name() string {
	if r.call.Tool != "" {
		return r.call.Tool
	}
	return "the call"
}

// firstOf is the status a registering call's first response reports:
// failed for an error result (isError, a JSON-RPC error, an A2A failed or
// rejected task), else the AdCP body's status ("" for none), else failed
// for a reply carrying only an adcp_error. A success result that also
// carries an adcp_error is ERR-05's defect; its body's status decides here,
// so one defect does not fail two rules.
func firstOf(c evidence.Call) string {
	r := parseReply(c)
	switch {
	case r.isError || r.rpcErr != nil:
		return "failed"
	case r.data != nil:
		if st, ok := str(r.data, "status"); ok {
			return st
		}
	}
	if len(r.candidates()) > 0 {
		return "failed"
	}
	return ""
}

// registrations returns the store's webhook probes with their deliveries,
// accounting harness errors on t; skips are the reasons of those not run
// or without deliveries.
func registrations(s *evidence.Store, t *tally) (out []registration, skips []string) {
	prefix := probe(s, "hook/")
	calls := s.Calls(evidence.OfKind(evidence.KindToolCall), func(c evidence.Call) bool {
		return strings.HasPrefix(c.ProbeID, prefix) && (c.Has(evidence.PurposeHookAsync) || c.Has(evidence.PurposeHookSync))
	})
	for _, c := range calls {
		switch {
		case c.NotRun != "":
			skips = append(skips, c.ProbeID+" not run: "+wire.Sanitize(c.NotRun, 200))
			continue
		case !t.account(c):
			continue
		}
		d, ok := s.Call(c.ProbeID + "/deliveries")
		switch {
		case !ok || d.NotRun != "":
			skips = append(skips, c.ProbeID+": the receiver's deliveries were not recorded")
			continue
		case !t.account(d):
			continue
		}
		var n plan.WebhookDeliveries
		_ = json.Unmarshal(d.Body, &n)
		out = append(out, registration{call: c, deliveries: d, first: firstOf(c), note: n})
	}
	return out, skips
}

// skipText joins the reasons nothing was judged.
func skipText(none string, skips []string) string {
	return strings.Join(append([]string{none}, skips...), "; ")
}

// statusText quotes a first status for a message.
func statusText(st string) string {
	if st == "" {
		return "with no AdCP status"
	}
	return quote(st)
}

// asyncHooks returns the registrations whose first response makes
// webhooks due, and why nothing is judged when none does.
func asyncHooks(s *evidence.Store, t *tally) ([]registration, string) {
	regs, skips := registrations(s, t)
	var out []registration
	var answered []string
	for _, r := range regs {
		if dueStatuses[r.first] {
			out = append(out, r)
			continue
		}
		answered = append(answered, r.name()+" ("+strings.TrimPrefix(r.call.ProbeID, probe(s, ""))+") was answered "+statusText(r.first)+" at once")
	}
	if len(regs) == 0 && len(skips) == 0 {
		return nil, "no call registered a webhook (get_products is not listed)"
	}
	none := "no call with push_notification_config was answered submitted or working, the first responses after which mcp-guide.mdx owes webhooks"
	if len(answered) > 0 {
		none += ": " + strings.Join(answered, ", ")
	}
	return out, skipText(none, skips)
}

func waitText(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

// noDelivery is the skip reason of a due registration nothing arrived for.
func noDelivery(r registration) string {
	return fmt.Sprintf("no webhook arrived within %s of %s's %s first response (operation %s); the work may finish later: raise --webhook-wait",
		waitText(r.note.WaitMS), r.name(), quote(r.first), quote(r.note.OperationID))
}

// bodyObject parses a delivery body strictly (exact-case keys).
func bodyObject(b []byte) *rawjson.Object {
	o, err := rawjson.ParseObject(b)
	if err != nil {
		return nil
	}
	return o
}

func judgeHOOK01(s *evidence.Store, _ Options) Verdict {
	t := newTally("HOOK-01")
	hooks, none := asyncHooks(s, t)
	var silent []string
	for _, h := range hooks {
		if len(h.deliveries.Exchanges) == 0 {
			silent = append(silent, noDelivery(h))
			continue
		}
		taskID := ""
		if h.call.Message != nil {
			if r := parseReply(h.call); r.data != nil {
				taskID, _ = str(r.data, "task_id")
			}
		}
		var fs []finding
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
			b := bodyObject(x.RequestBody)
			if op, ok := str(b, "operation_id"); !ok || op != h.note.OperationID {
				got := "none"
				if ok {
					got = quote(op)
				}
				fs = append(fs, finding{"/operation_id", at + " " + webhook.EnvOperationIDNotEchoed + ": operation_id " + got + " does not echo the registered " + quote(h.note.OperationID)})
			}
			if id, _ := str(b, "task_id"); taskID != "" && id != taskID {
				fs = append(fs, finding{"/task_id", at + " task_id " + quote(id) + ", the first response's " + quote(taskID)})
			}
		}
		t.judged(h.deliveries, fs)
	}
	if len(silent) > 0 {
		none = strings.Join(silent, "; ")
	}
	return t.verdict(none)
}

func judgeHOOK02(s *evidence.Store, _ Options) Verdict {
	t := newTally("HOOK-02")
	hooks, none := asyncHooks(s, t)
	for _, h := range hooks {
		if len(h.deliveries.Exchanges) == 0 {
			none = "no webhook arrived to verify: " + noDelivery(h)
			continue
		}
		if n, v := len(h.deliveries.Exchanges), len(h.note.Deliveries); v < n {
			// A delivery without the receiver's verdict was never verified:
			// a pass would claim a signature nobody checked.
			c := h.deliveries
			c.HarnessError = fmt.Sprintf("the receiver recorded %d deliveries but a signature verdict for %d", n, v)
			t.errored = append(t.errored, c)
			continue
		}
		var fs []finding
		for i, d := range h.note.Deliveries {
			if d.SignatureError != "" {
				fs = append(fs, finding{"", fmt.Sprintf("delivery %d (%s): %s", i+1, h.note.Scheme, wire.Sanitize(d.SignatureError, 300))})
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
			none = "no webhook arrived: " + noDelivery(h)
			continue
		}
		if xs[0].Status != 503 {
			none = "the receiver did not answer the first delivery 503"
			continue
		}
		first := event(xs[0].RequestBody)
		if !first.keyed {
			// No key to reuse: HOOK-01's defect, and nothing to compare.
			none = "the delivery answered 503 carries no idempotency_key string (HOOK-01), so its retry's key cannot be compared"
			continue
		}
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
		case !r.keyed || r.key != first.key:
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
	// keyed is set when the body's idempotency_key is a string (each
	// occurrence of a repeated key the same one).
	keyed bool
}

// event reads the identity of a delivery (exact-case keys) and its
// canonical form (the decoded JSON re-encoded: key order and spacing do not
// count).
func event(body []byte) hookEvent {
	b := bodyObject(body)
	key, keyed := "", false
	for i, v := range values(b, "idempotency_key") {
		k, ok := rawjson.StringValue(v)
		keyed = ok && (i == 0 || (keyed && k == key))
		key = k
	}
	status, _ := str(b, "status")
	taskID, _ := str(b, "task_id")
	var v any
	_ = json.Unmarshal(body, &v)
	c, _ := json.Marshal(v)
	return hookEvent{key: key, status: status, taskID: taskID, canonical: string(c), keyed: keyed}
}

func judgeHOOK04(s *evidence.Store, _ Options) Verdict {
	t := newTally("HOOK-04")
	regs, skips := registrations(s, t)
	var answered []string
	for _, r := range regs {
		if !terminalStatuses[r.first] {
			answered = append(answered, r.name()+" ("+strings.TrimPrefix(r.call.ProbeID, probe(s, ""))+") was answered "+statusText(r.first))
			continue
		}
		if r.note.WaitMS <= 0 {
			answered = append(answered, r.name()+" ("+strings.TrimPrefix(r.call.ProbeID, probe(s, ""))+") was answered "+statusText(r.first)+", and the harness did not wait")
			continue
		}
		if n := len(r.deliveries.Exchanges); n > 0 {
			t.judged(r.deliveries, []finding{{"", fmt.Sprintf("%d webhook(s) posted after %s's first response was terminal (%s)", n, r.name(), r.first)}})
		} else {
			t.judged(r.deliveries, nil)
		}
	}
	none := "no call registered a webhook (get_products is not listed)"
	if len(answered) > 0 {
		none = "no call with push_notification_config was answered with a terminal status: " + strings.Join(answered, ", ")
	}
	return t.verdict(skipText(none, skips))
}
