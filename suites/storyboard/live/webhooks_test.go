package live

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// hookSeller is a tiny seller: create_media_buy answers submitted and, in
// the background, posts the completion webhook to the registered URL over
// HTTP, signed under the RFC 9421 webhook profile, retrying on each
// refusal with the same idempotency_key (and, when reuseNonce, the same
// signature bytes).
type hookSeller struct {
	key        ed25519.PrivateKey
	reuseNonce bool
	wg         sync.WaitGroup
}

func (s *hookSeller) Call(_ context.Context, req storyboard.Request) *spec.Observation {
	pnc, _ := req.Args["push_notification_config"].(map[string]any)
	url, _ := pnc["url"].(string)
	op, _ := pnc["operation_id"].(string)
	s.wg.Go(func() {
		body, _ := json.Marshal(map[string]any{"idempotency_key": "whk_live_0123456789abcdef", "operation_id": op, "task_id": "task_1",
			"task_type": "create_media_buy", "status": "completed", "timestamp": time.Now().UTC().Format(time.RFC3339),
			"result": map[string]any{"media_buy_id": "mb_1"}})
		var h http.Header
		for range 5 {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if h == nil || !s.reuseNonce {
				s.sign(req, body)
				h = req.Header.Clone()
			} else {
				req.Header = h.Clone()
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return &spec.Observation{Transport: "mcp", Task: req.Task, Request: req.Args, HTTPStatus: 200,
		Payload: map[string]any{"status": "submitted", "task_id": "task_1"}}
}

func (s *hookSeller) Get(context.Context, string, string) *spec.Observation {
	return &spec.Observation{Failure: "not served"}
}

func (s *hookSeller) sign(req *http.Request, body []byte) {
	digest := sha256.Sum256(body)
	req.Header.Set("Content-Digest", "sha-256=:"+base64.RawURLEncoding.EncodeToString(digest[:])+":")
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	created := time.Now().Unix()
	params := fmt.Sprintf(`("@method" "@target-uri" "@authority" "content-type" "content-digest");created=%d;expires=%d;nonce="%s";keyid="k1";alg="ed25519";tag="%s"`,
		created, created+300, base64.RawURLEncoding.EncodeToString(nonce), webhook.WebhookTag)
	u := req.URL
	target := u.Scheme + "://" + u.Host + u.EscapedPath()
	base := fmt.Sprintf("\"@method\": %s\n\"@target-uri\": %s\n\"@authority\": %s\n\"content-type\": %s\n\"content-digest\": %s\n\"@signature-params\": %s",
		req.Method, target, u.Host, req.Header.Get("Content-Type"), req.Header.Get("Content-Digest"), params)
	req.Header.Set("Signature-Input", "sig1="+params)
	req.Header.Set("Signature", "sig1=:"+base64.RawURLEncoding.EncodeToString(ed25519.Sign(s.key, []byte(base)))+":")
}

const liveHookSB = `
id: live_hooks
version: "1.0.0"
title: t
category: t
narrative: t
requires: [webhook_receiver]
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
            operation_id: "op_live"
      - id: expect
        title: expect
        task: expect_webhook
        triggered_by: trigger
        filter: {body: {operation_id: op_live}}
        timeout_seconds: 5
        validations:
          - check: field_value
            path: result.media_buy_id
            value: mb_1
            description: the buy
      - id: retry
        title: retry
        task: expect_webhook_retry_keys_stable
        triggered_by: trigger
        filter: {body: {operation_id: op_live}}
        retry_trigger: {count: 2, http_status: 503}
        timeout_seconds: 5
      - id: signed
        title: signed
        task: expect_webhook_signature_valid
        triggered_by: trigger
        filter: {body: {operation_id: op_live}}
        timeout_seconds: 5
`

// The engine runs the webhook steps through the real receiver: the URL it
// mints reaches it over HTTP, the retry plan refuses the first two
// deliveries, signatures verify with the keys the HOOK probes fetched
// (the store's mcp/hook/jwks), and each step's deliveries are recorded. A
// sender reusing its signature (its nonce) on a retry fails
// signature_replayed.
func TestWebhookStepsThroughTheReceiver(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	jwks, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{"kid": "k1", "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA",
		"use": "sig", "key_ops": []string{"verify"}, "adcp_use": "request-signing", "x": base64.RawURLEncoding.EncodeToString(pub)}}})
	for _, reuse := range []bool{false, true} {
		rec, err := webhook.Listen("127.0.0.1:0", "")
		if err != nil {
			t.Fatal(err)
		}
		store := evidence.NewStore(evidence.Target{})
		store.Add(evidence.Call{ProbeID: "mcp/hook/jwks", Transport: evidence.MCP, Kind: evidence.KindHTTPGet, HTTPStatus: 200, Body: jwks, URL: "http://seller.test/.well-known/jwks.json"})
		sb, _, err := spec.Parse("protocols/media-buy/live.yaml", []byte(liveHookSB))
		if err != nil {
			t.Fatal(err)
		}
		sb.Kind, sb.Path = spec.Protocols, "protocols/media-buy/live.yaml"
		env := &storyboard.Env{Tools: []string{"create_media_buy"}, AllowMutations: true, Mutating: storyboard.Mutating,
			Capabilities: map[string]any{"supported_protocols": []any{"media_buy"}},
			Webhooks:     newReceiver(rec, store, evidence.MCP, store.Add)}
		s := &hookSeller{key: priv, reuseNonce: reuse}
		res := storyboard.Run(context.Background(), sb, env, s)
		s.wg.Wait()
		_ = rec.Close()
		var got []string
		for _, st := range res.Steps {
			out := st.StepID + "="
			switch {
			case st.Skip != nil:
				out += "skip:" + st.Skip.Reason + ":" + st.Skip.Detail
			case st.Error != "":
				out += "error:" + st.Error
			case st.Passed:
				out += "pass"
			default:
				out += "fail"
				for _, v := range st.Validations {
					if !v.Passed {
						out += fmt.Sprintf(":%s:%v", v.Check, v.Expected)
					}
				}
			}
			got = append(got, out)
		}
		want := "trigger=pass expect=pass retry=pass signed=pass"
		if reuse {
			want = "trigger=pass expect=pass retry=fail:webhook_signature:signature_replayed signed=pass"
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("reuse nonce %v:\ngot  %s\nwant %s", reuse, g, want)
		}
		calls := store.Calls(evidence.OfKind(evidence.KindWebhook))
		if len(calls) != 3 {
			t.Fatalf("recorded %d webhook calls, want 3", len(calls))
		}
		for _, c := range calls {
			ds, note := storyboard.DeliveriesOf(c)
			if strings.HasSuffix(c.ProbeID, "/expect") {
				// expect_webhook ends its wait at the first match.
				if len(ds) == 0 || ds[0].Status != 503 {
					t.Errorf("%s recorded %+v", c.ProbeID, note)
				}
				continue
			}
			if len(ds) != 3 || ds[0].Status != 503 || ds[1].Status != 503 || ds[2].Status != 200 || len(note.Keys) != 1 {
				t.Errorf("%s recorded %d deliveries %+v", c.ProbeID, len(ds), note)
			}
		}
	}
}
