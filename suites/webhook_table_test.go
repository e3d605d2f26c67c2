package suites

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The HOOK tables. Shapes: mcp-guide.mdx (Webhook Trigger Rules: webhooks follow
// a first response of working or submitted, never a terminal one; the
// create_media_buy push_notification_config example), vectors
// webhook-receiver-envelope.json (the full MCP webhook envelope:
// idempotency_key, operation_id, task_id, task_type, status, timestamp,
// result; a bare result is rejected as missing_envelope_fields) and
// core/mcp-webhook-payload.json.

// hookBody is a full webhook envelope (webhook-receiver-envelope.json's
// positive vector, for create_media_buy) for operation op, task task and
// status, with idempotency_key key.
func hookBody(op, task, status, key string) string {
	return `{"idempotency_key":"` + key + `","operation_id":"` + op + `","task_id":"` + task + `","task_type":"create_media_buy","status":"` + status +
		`","timestamp":"2026-05-26T09:00:44.582Z","message":"Media buy approved","result":{"media_buy_id":"mb_001","status":"active","packages":[]}}`
}

const (
	hookKey  = "whk_20260526_example_000031"
	hookKey2 = "whk_20260526_example_000099"
)

// delivery is one webhook the receiver got: its body, the receiver's
// answer, its Content-Type and the receiver's signature verdict.
type delivery struct {
	body, contentType, sigErr string
	status                    int
}

func dlv(body string, status int) delivery {
	return delivery{body: body, status: status, contentType: "application/json"}
}

// hookProbe records one webhook registration on transport tr: the call
// (probe id, tool, purpose) answered with the AdCP body first (an error
// result when isErr), and the receiver's deliveries for operation op,
// after waiting waitMS.
func hookProbe(tr evidence.Transport, id, tool string, p evidence.Purpose, first string, isErr bool, op, scheme string, waitMS int64, ds ...delivery) []evidence.Call {
	var c evidence.Call
	if tr == evidence.MCP {
		c = mcpBody(id, tool, first, isErr, p)
	} else {
		var st struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal([]byte(first), &st)
		switch {
		case isErr:
			c = a2aResult(id, tool, a2aTask("failed", first), p)
		case st.Status == "submitted" || st.Status == "working":
			// An interim task: the body is status.message's first DataPart (a2a-response-extraction.mdx).
			c = a2aResult(id, tool, `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"`+st.Status+
				`","message":{"kind":"message","messageId":"m1","role":"agent","parts":[{"kind":"data","data":`+first+`}]}}}`, p)
		default:
			c = a2aResult(id, tool, a2aTask("completed", first), p)
		}
	}
	note := plan.WebhookDeliveries{OperationID: op, Scheme: scheme, WaitMS: waitMS, Deliveries: []plan.DeliveryNote{}}
	d := evidence.Call{ProbeID: id + "/deliveries", Transport: tr, Kind: evidence.KindWebhook, Tool: tool, Purposes: []evidence.Purpose{p}}
	for _, x := range ds {
		h := http.Header{}
		if x.contentType != "" {
			h.Set("Content-Type", x.contentType)
		}
		d.Exchanges = append(d.Exchanges, wire.Exchange{Method: "POST", URL: "https://harness.example.net/hooks/" + op, RequestHeaders: h,
			RequestBody: wire.Bytes(x.body), Status: x.status})
		note.Deliveries = append(note.Deliveries, plan.DeliveryNote{Status: x.status, SignatureError: x.sigErr})
	}
	d.Body, _ = json.Marshal(note)
	return []evidence.Call{c, d}
}

// The first responses of the tables.
const (
	submittedBuy = `{"status":"submitted","task_id":"task_mb_1","message":"Media buy queued for review."}`
	workingBuy   = `{"status":"working","task_id":"task_mb_1"}`
	completedBuy = `{"status":"completed","media_buy_id":"mb_001","packages":[]}`
	inputBuy     = `{"status":"input-required","task_id":"task_mb_1","message":"Approve the IO."}`
	errorBuy     = `{"adcp_error":{"code":"INVALID_REQUEST","message":"m","recovery":"correctable"}}`
)

// hookCases builds the HOOK tables' probes on one transport.
type hookCases struct{ tr evidence.Transport }

func (h hookCases) id(rest string) string { return string(h.tr) + "/" + rest }

// buyAsync is the mutating create_media_buy registration (HMAC) answered
// first, with deliveries after a 300 ms wait.
func (h hookCases) buyAsync(first string, ds ...delivery) []evidence.Call {
	return hookProbe(h.tr, h.id("hook/media_buy/async/hmac-sha256"), "create_media_buy", evidence.PurposeHookAsync, first, false, "op-buy", webhook.SchemeHMAC, 300, ds...)
}

// productsAsync is the get_products registration (RFC 9421) answered
// first.
func (h hookCases) productsAsync(first string, ds ...delivery) []evidence.Call {
	return hookProbe(h.tr, h.id("hook/async/rfc9421"), "get_products", evidence.PurposeHookAsync, first, false, "op-gp", webhook.SchemeRFC9421, 300, ds...)
}

// buySync is the plain create_media_buy registration answered first (an
// error when isErr), with deliveries after a 300 ms wait.
func (h hookCases) buySync(first string, isErr bool, ds ...delivery) []evidence.Call {
	return hookProbe(h.tr, h.id("hook/media_buy/sync"), "create_media_buy", evidence.PurposeHookSync, first, isErr, "op-sync", webhook.SchemeHMAC, 300, ds...)
}

func (h hookCases) notAllowed(p evidence.Purpose, rest string) evidence.Call {
	return notRun(h.id(rest), h.tr, evidence.KindToolCall, plan.NotAllowed, p)
}

func (h hookCases) harness(p evidence.Purpose, rest string) evidence.Call {
	return harnessFailed(h.id(rest), h.tr, evidence.KindToolCall, "webhook receiver: listen tcp: address in use", p)
}

func join(parts ...[]evidence.Call) []evidence.Call {
	var out []evidence.Call
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func onTransports(t *testing.T, rule string, cases func(h hookCases) []judgeCase) {
	runJudgeTable(t, rule, catalogue.MCP, cases(hookCases{evidence.MCP}))
	runJudgeTable(t, rule, catalogue.A2A, cases(hookCases{evidence.A2A}))
}

func TestHOOK01Table(t *testing.T) {
	good := hookBody("op-buy", "task_mb_1", "completed", hookKey)
	onTransports(t, "HOOK-01", func(h hookCases) []judgeCase {
		return []judgeCase{
			{name: "the full envelope after a submitted media buy passes", calls: h.buyAsync(submittedBuy, dlv(good, 503), dlv(good, 200)), want: Pass},
			{name: "a working first response makes webhooks due too", calls: h.buyAsync(workingBuy, dlv(good, 200)), want: Pass},
			{name: "a working progress webhook without result passes (result is owed on completed and failed)",
				calls: h.buyAsync(submittedBuy, dlv(strings.Replace(strings.Replace(good, `"completed"`, `"working"`, 1), `,"result":{"media_buy_id":"mb_001","status":"active","packages":[]}`, "", 1), 200)), want: Pass},
			{name: "application/json with a charset passes", calls: h.buyAsync(submittedBuy, delivery{body: good, status: 200, contentType: "application/json; charset=utf-8"}), want: Pass},
			{name: "a first response without task_id does not constrain it", calls: h.buyAsync(`{"status":"submitted"}`, dlv(strings.Replace(good, "task_mb_1", "seller_task_7", 1), 200)), want: Pass},
			{name: "the bare result fails (missing_envelope_fields)", calls: h.buyAsync(submittedBuy, dlv(`{"media_buy_id":"mb_001","status":"active","packages":[]}`, 200)),
				want: Fail, msg: "missing_envelope_fields"},
			{name: "an envelope without operation_id and task_type fails", calls: h.buyAsync(submittedBuy,
				dlv(strings.Replace(strings.Replace(good, `"operation_id":"op-buy",`, "", 1), `"task_type":"create_media_buy",`, "", 1), 200)), want: Fail, msg: "missing_envelope_fields"},
			{name: "a key off the schema's pattern fails", calls: h.buyAsync(submittedBuy, dlv(hookBody("op-buy", "task_mb_1", "completed", "k1"), 200)), want: Fail, msg: "idempotency_key"},
			{name: "a completed webhook without result fails", calls: h.buyAsync(submittedBuy,
				dlv(strings.Replace(good, `,"result":{"media_buy_id":"mb_001","status":"active","packages":[]}`, "", 1), 200)), want: Fail, msg: "carries no result"},
			{name: "a status that is no task status fails", calls: h.buyAsync(submittedBuy, dlv(hookBody("op-buy", "task_mb_1", "done", hookKey), 200)), want: Fail, msg: "not a task status"},
			{name: "operation_id not echoed verbatim fails", calls: h.buyAsync(submittedBuy, dlv(hookBody("OP-BUY", "task_mb_1", "completed", hookKey), 200)),
				want: Fail, ptr: "/operation_id", msg: "operation_id_not_echoed"},
			{name: "another task's task_id fails", calls: h.buyAsync(submittedBuy, dlv(hookBody("op-buy", "task_mb_2", "completed", hookKey), 200)), want: Fail, ptr: "/task_id"},
			// core/mcp-webhook-payload.json types each envelope field string; null is none.
			{name: "a null task_id fails", calls: h.buyAsync(`{"status":"submitted"}`, dlv(strings.Replace(good, `"task_id":"task_mb_1"`, `"task_id":null`, 1), 200)),
				want: Fail, msg: "envelope_field_not_a_string"},
			{name: "a null timestamp fails", calls: h.buyAsync(submittedBuy, dlv(strings.Replace(good, `"timestamp":"2026-05-26T09:00:44.582Z"`, `"timestamp":null`, 1), 200)),
				want: Fail, msg: "envelope_field_not_a_string"},
			{name: "a Content-Type other than JSON fails", calls: h.buyAsync(submittedBuy, delivery{body: good, status: 200, contentType: "text/plain"}), want: Fail, msg: "not application/json"},
			{name: "a case-variant key does not stand in for task_id", calls: h.buyAsync(submittedBuy,
				dlv(strings.Replace(good, `"task_id":"task_mb_1"`, `"task_id":"task_mb_2","Task_Id":"task_mb_1"`, 1), 200)), want: Fail, ptr: "/task_id"},
			{name: "get_products work is judged alike", calls: h.productsAsync(`{"status":"submitted","task_id":"task_gp_1"}`,
				dlv(strings.Replace(strings.Replace(hookBody("op-gp", "task_gp_1", "completed", hookKey), "create_media_buy", "get_products", 1), `"op-gp"`, `"op-gp2"`, 1), 200)),
				want: Fail, ptr: "/operation_id"},
			{name: "the media buy probe catches what get_products does not show", calls: join(h.productsAsync(`{"status":"submitted","task_id":"task_gp_1"}`),
				h.buyAsync(submittedBuy, dlv(`{"media_buy_id":"mb_001"}`, 200))), want: Fail, msg: "missing_envelope_fields"},
			{name: "no webhook within the wait skips (the work may finish later)", calls: h.buyAsync(submittedBuy), want: Skip, msg: "raise --webhook-wait"},
			{name: "a terminal first response owes no webhook", calls: h.buyAsync(completedBuy), want: Skip, msg: `was answered "completed" at once`},
			{name: "an input-required first response owes no webhook (mcp-guide.mdx trigger rules)", calls: h.buyAsync(inputBuy, dlv(good, 200)), want: Skip, msg: `"input-required" at once`},
			{name: "mutations not allowed skips with the reason", calls: []evidence.Call{h.notAllowed(evidence.PurposeHookAsync, "hook/media_buy/async/hmac-sha256")},
				want: Skip, msg: "--allow-mutations"},
			{name: "no registration skips", want: Skip, msg: "no call registered a webhook"},
			{name: "a harness error is the harness's", calls: []evidence.Call{h.harness(evidence.PurposeHookAsync, "hook/media_buy/async/hmac-sha256")}, want: HarnessError, msg: "address in use"},
		}
	})
}

func TestHOOK02Table(t *testing.T) {
	good := hookBody("op-buy", "task_mb_1", "completed", hookKey)
	signed := func(sigErr string) delivery { d := dlv(good, 200); d.sigErr = sigErr; return d }
	onTransports(t, "HOOK-02", func(h hookCases) []judgeCase {
		return []judgeCase{
			{name: "verified deliveries pass", calls: h.buyAsync(submittedBuy, signed(""), signed("")), want: Pass},
			{name: "an RFC 9421 registration verified passes", calls: h.productsAsync(`{"status":"working"}`, signed("")), want: Pass},
			{name: "an unsigned delivery fails", calls: h.buyAsync(submittedBuy, signed("no X-ADCP-Signature header")), want: Fail, msg: "no X-ADCP-Signature"},
			{name: "a stale timestamp fails", calls: h.buyAsync(submittedBuy, signed(""), signed("X-ADCP-Timestamp is 900 s from now, beyond 300 s")), want: Fail, msg: "delivery 2"},
			{name: "a bad RFC 9421 signature fails", calls: h.productsAsync(`{"status":"submitted"}`, signed("webhook_signature_invalid: the signature does not verify")),
				want: Fail, msg: "rfc9421"},
			{name: "no webhook to verify skips", calls: h.buyAsync(submittedBuy), want: Skip, msg: "no webhook arrived to verify"},
			// No verdict is no evidence: never a pass.
			{name: "a delivery without the receiver's verdict is a harness error", calls: func() []evidence.Call {
				cs := h.buyAsync(submittedBuy, signed(""), signed(""))
				cs[1].Body = []byte(`{"operation_id":"op-buy","wait_ms":300,"deliveries":[{"status":200}]}`)
				return cs
			}(), want: HarnessError, msg: "a signature verdict for 1"},
			{name: "a terminal first response skips", calls: h.buyAsync(completedBuy), want: Skip, msg: "at once"},
			{name: "mutations not allowed skips", calls: []evidence.Call{h.notAllowed(evidence.PurposeHookAsync, "hook/media_buy/async/hmac-sha256")}, want: Skip, msg: "--allow-mutations"},
			{name: "a harness error is the harness's", calls: []evidence.Call{h.harness(evidence.PurposeHookAsync, "hook/async/hmac-sha256")}, want: HarnessError},
		}
	})
}

func TestHOOK03Table(t *testing.T) {
	good := hookBody("op-buy", "task_mb_1", "completed", hookKey)
	onTransports(t, "HOOK-03", func(h hookCases) []judgeCase {
		return []judgeCase{
			{name: "the retry reuses the key and body", calls: h.buyAsync(submittedBuy, dlv(good, 503), dlv(good, 200)), want: Pass},
			{name: "a retry with keys reordered and respaced is the same payload (JCS)", calls: h.buyAsync(submittedBuy, dlv(good, 503),
				dlv(`{ "result": {"packages":[],"status":"active","media_buy_id":"mb_001"}, "message":"Media buy approved","timestamp":"2026-05-26T09:00:44.582Z","status":"completed","task_type":"create_media_buy","task_id":"task_mb_1","operation_id":"op-buy","idempotency_key":"`+hookKey+`" }`, 200)),
				want: Pass},
			{name: "a working update between first delivery and retry is not the retry", calls: h.buyAsync(submittedBuy, dlv(good, 503),
				dlv(hookBody("op-buy", "task_mb_1", "working", hookKey2), 200), dlv(good, 200)), want: Pass},
			{name: "a fresh key on the retry fails", calls: h.buyAsync(submittedBuy, dlv(good, 503), dlv(hookBody("op-buy", "task_mb_1", "completed", hookKey2), 200)),
				want: Fail, ptr: "/idempotency_key"},
			{name: "the same key with a changed payload fails", calls: h.buyAsync(submittedBuy, dlv(good, 503), dlv(strings.Replace(good, "approved", "APPROVED", 1), 200)),
				want: Fail, msg: "changed payload"},
			{name: "a case-variant key is not the key", calls: h.buyAsync(submittedBuy, dlv(good, 503),
				dlv(strings.Replace(good, `"idempotency_key":"`+hookKey+`"`, `"idempotency_key":"`+hookKey2+`","Idempotency_Key":"`+hookKey+`"`, 1), 200)),
				want: Fail, ptr: "/idempotency_key"},
			{name: "no retry within the wait skips", calls: h.buyAsync(submittedBuy, dlv(good, 503)), want: Skip, msg: "no retry of it came"},
			{name: "no webhook skips", calls: h.buyAsync(submittedBuy), want: Skip, msg: "no webhook arrived"},
			{name: "a first delivery not answered 503 skips", calls: h.buyAsync(submittedBuy, dlv(good, 200)), want: Skip, msg: "did not answer the first delivery 503"},
			{name: "mutations not allowed skips", calls: []evidence.Call{h.notAllowed(evidence.PurposeHookAsync, "hook/media_buy/async/rfc9421")}, want: Skip, msg: "--allow-mutations"},
			{name: "a harness error is the harness's", calls: []evidence.Call{h.harness(evidence.PurposeHookAsync, "hook/media_buy/async/rfc9421")}, want: HarnessError},
		}
	})
}

func TestHOOK04Table(t *testing.T) {
	late := hookBody("op-sync", "task_x", "completed", hookKey)
	onTransports(t, "HOOK-04", func(h hookCases) []judgeCase {
		productsSync := func(first string, ds ...delivery) []evidence.Call {
			return hookProbe(h.tr, h.id("hook/sync"), "get_products", evidence.PurposeHookSync, first, false, "op-gps", webhook.SchemeHMAC, 300, ds...)
		}
		return []judgeCase{
			{name: "a media buy completed at once and no webhook passes", calls: h.buySync(completedBuy, false), want: Pass},
			{name: "a read call completed at once and no webhook passes", calls: productsSync(`{"status":"completed","products":[]}`), want: Pass},
			{name: "an error first response and no webhook passes", calls: h.buySync(errorBuy, true), want: Pass},
			{name: "a webhook after a media buy completed at once fails", calls: h.buySync(completedBuy, false, dlv(late, 200)), want: Fail, msg: "1 webhook(s) posted"},
			{name: "a webhook after a read call completed at once fails", calls: productsSync(`{"status":"completed","products":[]}`, dlv(late, 200)), want: Fail, msg: "get_products"},
			{name: "a webhook after an error fails", calls: h.buySync(errorBuy, true, dlv(late, 200)), want: Fail, msg: "(failed)"},
			{name: "a webhook after a rejected media buy fails", calls: h.buySync(`{"status":"rejected","message":"Policy"}`, false, dlv(late, 200)), want: Fail},
			{name: "the async probe answered at once is judged too", calls: h.buyAsync(completedBuy, dlv(late, 200)), want: Fail},
			{name: "a submitted first response is HOOK-01's", calls: h.buySync(submittedBuy, false, dlv(late, 200)), want: Skip, msg: `was answered "submitted"`},
			{name: "a submitted success also carrying adcp_error (ERR-05's defect) is not a terminal answer",
				calls: h.buySync(`{"status":"submitted","task_id":"task_mb_1","adcp_error":{"code":"X_NOTE","message":"note"}}`, false, dlv(late, 200)), want: Skip, msg: `was answered "submitted"`},
			{name: "a terminal answer the harness did not wait after is not judged",
				calls: hookProbe(h.tr, h.id("hook/media_buy/sync"), "create_media_buy", evidence.PurposeHookSync, completedBuy, false, "op-sync", webhook.SchemeHMAC, 0), want: Skip, msg: "did not wait"},
			{name: "a first response without status is not judged", calls: h.buySync(`{"media_buy_id":"mb_1"}`, false), want: Skip, msg: "with no AdCP status"},
			{name: "mutations not allowed skips with the reason", calls: []evidence.Call{h.notAllowed(evidence.PurposeHookSync, "hook/media_buy/sync")}, want: Skip, msg: "--allow-mutations"},
			{name: "no registration skips", want: Skip, msg: "no call registered a webhook"},
			{name: "a harness error is the harness's", calls: []evidence.Call{h.harness(evidence.PurposeHookSync, "hook/media_buy/sync")}, want: HarnessError},
		}
	})
}
