package suites

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

const hookEnvelope = `{"idempotency_key":"whk_0123456789abcdef","operation_id":"op","task_id":"t1","task_type":"get_products","status":"completed","timestamp":"2026-01-01T00:00:00Z","result":{"products":[]}}`

// hookStore records an asynchronous HMAC webhook probe answered firstStatus
// and the deliveries (bodies, receiver statuses, signature errors).
func hookStore(firstStatus string, bodies []string, statuses []int, sigErrs []string) *evidence.Store {
	s := evidence.NewStore(evidence.Target{MCP: "https://seller.example.com/mcp"})
	c := idemReply("x", `{"status":"`+firstStatus+`","task_id":"t1"}`, false)
	c.ProbeID, c.Tool, c.Purposes = "mcp/hook/async/hmac-sha256", "get_products", []evidence.Purpose{evidence.PurposeHookAsync}
	s.Add(c)
	note := plan.WebhookDeliveries{OperationID: "op", Scheme: "hmac-sha256", FirstStatus: firstStatus, TaskID: "t1", WaitMS: 300}
	d := evidence.Call{ProbeID: "mcp/hook/async/hmac-sha256/deliveries", Transport: evidence.MCP, Kind: evidence.KindWebhook}
	for i, b := range bodies {
		d.Exchanges = append(d.Exchanges, wire.Exchange{Method: "POST", RequestHeaders: http.Header{"Content-Type": {"application/json"}},
			RequestBody: wire.Bytes(b), Status: statuses[i]})
		note.Deliveries = append(note.Deliveries, plan.DeliveryNote{Status: statuses[i], SignatureError: sigErrs[i]})
	}
	d.Body, _ = json.Marshal(note)
	s.Add(d)
	return s
}

func TestWebhookJudges(t *testing.T) {
	retry := strings.Replace(hookEnvelope, "0123456789abcdef", "fedcba9876543210", 1)
	for _, tc := range []struct {
		name     string
		store    *evidence.Store
		judge    func(*evidence.Store, Options) Verdict
		want     Outcome
		contains string
	}{
		{"nothing within the wait", hookStore("submitted", nil, nil, nil), judgeHOOK01, Skip, "no webhook arrived within 300ms"},
		{"full envelope", hookStore("submitted", []string{hookEnvelope, hookEnvelope}, []int{503, 200}, []string{"", ""}), judgeHOOK01, Pass, ""},
		{"bare result", hookStore("submitted", []string{`{"products":[]}`}, []int{503}, []string{""}), judgeHOOK01, Fail, "missing_envelope_fields"},
		{"operation_id not echoed", hookStore("submitted", []string{strings.Replace(hookEnvelope, `"op"`, `"op2"`, 1)}, []int{503}, []string{""}), judgeHOOK01, Fail, "operation_id_not_echoed"},
		{"terminal first answer", hookStore("completed", nil, nil, nil), judgeHOOK01, Skip, "answered \"completed\" at once"},
		{"signed", hookStore("submitted", []string{hookEnvelope}, []int{503}, []string{""}), judgeHOOK02, Pass, ""},
		{"unsigned", hookStore("submitted", []string{hookEnvelope}, []int{503}, []string{"webhook signature does not verify"}), judgeHOOK02, Fail, "does not verify"},
		{"same key", hookStore("submitted", []string{hookEnvelope, hookEnvelope}, []int{503, 200}, []string{"", ""}), judgeHOOK03, Pass, ""},
		{"fresh key", hookStore("submitted", []string{hookEnvelope, retry}, []int{503, 200}, []string{"", ""}), judgeHOOK03, Fail, "carries idempotency_key"},
		{"changed payload", hookStore("submitted", []string{hookEnvelope, strings.Replace(hookEnvelope, "2026", "2027", 1)}, []int{503, 200}, []string{"", ""}), judgeHOOK03, Fail, "changed payload"},
		{"no retry", hookStore("submitted", []string{hookEnvelope}, []int{503}, []string{""}), judgeHOOK03, Skip, "no retry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.judge(tc.store, Options{})
			if v.Outcome != tc.want || !strings.Contains(v.Message, tc.contains) {
				t.Errorf("%s %q, want %s containing %q", v.Outcome, v.Message, tc.want, tc.contains)
			}
		})
	}
}
