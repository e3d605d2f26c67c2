package plan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// DefaultWebhookWait is how long the harness waits for webhooks a seller
// should, or should not, send.
const DefaultWebhookWait = time.Second

// NoReceiver is why the webhook probes did not run.
const NoReceiver = "no webhook receiver the seller can reach: give --webhook-url (the public address of --webhook-listen)"

// AsyncBrief is the brief of the webhook probes' get_products call: it asks
// for custom curation, work a seller may answer submitted or working and
// finish later, with webhooks.
const AsyncBrief = "Custom curation of premium video inventory for US sports fans; async review welcome, reply by webhook."

// WebhookDeliveries is the Body of a deliveries call (probe "<id>/deliveries"):
// what the harness registered and what its receiver saw.
type WebhookDeliveries struct {
	OperationID string `json:"operation_id"`
	// Scheme is the signing scheme registered (webhook.SchemeHMAC or
	// webhook.SchemeRFC9421).
	Scheme string `json:"scheme,omitempty"`
	// FirstStatus is the status of the registering call's first response
	// ("" when it had none); TaskID its task_id.
	FirstStatus string `json:"first_status,omitempty"`
	TaskID      string `json:"task_id,omitempty"`
	// WaitMS is how long the harness waited for deliveries (0: it did not,
	// the first response being terminal).
	WaitMS int64 `json:"wait_ms"`
	// Deliveries are the receiver's answers and verdicts, in the order of
	// the call's Exchanges.
	Deliveries []DeliveryNote `json:"deliveries"`
}

// DeliveryNote is what the receiver made of one delivery.
type DeliveryNote struct {
	Status         int    `json:"status"`
	Truncated      bool   `json:"truncated,omitempty"`
	SignatureError string `json:"signature_error,omitempty"`
}

// hookCall makes one webhook probe's call of tool.
type hookCall func(id, tool string, args map[string]any, p evidence.Purpose) evidence.Call

func init() {
	registerMCP(webhookProbes("mcp/", func(ctx context.Context, env Env) hookCall {
		return func(id, tool string, args map[string]any, p evidence.Purpose) evidence.Call {
			return env.Shared.CallTool(ctx, id, tool, args, p)
		}
	}))
	registerA2A(webhookProbes("a2a/", func(ctx context.Context, env Env) hookCall {
		return func(id, tool string, args map[string]any, p evidence.Purpose) evidence.Call {
			return env.A2A.Send(ctx, id, tool, args, p)
		}
	}))
}

// webhookProbes is one transport's webhook probe set, given how it calls a
// tool (the seller's keys were fetched at discovery, Env.keys); the
// registrations are made one after the other and their waits run side by
// side.
func webhookProbes(prefix string, face func(context.Context, Env) hookCall) ProbeSet {
	return func(ctx context.Context, env Env) {
		call := face(ctx, env)
		keys := env.keys
		var waits []func()
		syncWebhook(ctx, env, prefix, call, &waits)
		asyncWebhooks(ctx, env, prefix, keys, call, &waits)
		mediaBuyWebhooks(ctx, env, prefix, keys, call, &waits)
		for _, wait := range waits {
			wait()
		}
	}
}

func (env Env) webhookWait() time.Duration {
	if env.Config.WebhookWait > 0 {
		return env.Config.WebhookWait
	}
	return DefaultWebhookWait
}

// hookArgs are get_products arguments registering a webhook for operation
// op, with HMAC-SHA256 credentials when secret is not nil.
func hookArgs(env Env, op string, secret []byte, brief string) map[string]any {
	args := env.Config.Inputs.base("get_products")
	merge(args, argsOf("get_products"))
	if brief != "" {
		args["brief"] = brief
	}
	pnc := map[string]any{"url": env.Config.Webhook.URL(op), "operation_id": op}
	if secret != nil {
		pnc["authentication"] = map[string]any{"schemes": []any{"HMAC-SHA256"}, "credentials": string(secret)}
	}
	args["push_notification_config"] = pnc
	return args
}

// newSecret is a fresh HMAC secret: 64 hex digits (32 random bytes).
func newSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return []byte(hex.EncodeToString(b))
}

// syncWebhook makes a read call that registers a webhook (HOOK-04): a
// synchronous answer must not be followed by a webhook. It records the
// call and, as a webhook evidence call, whatever the receiver got for its
// operation within the wait.
func syncWebhook(ctx context.Context, env Env, prefix string, call hookCall, waits *[]func()) {
	if !contains(env.Listed, "get_products") {
		return
	}
	id := prefix + "hook/sync"
	t := evidence.Transport(prefix[:3])
	if env.Config.Webhook == nil {
		env.Add(evidence.Call{ProbeID: id, Transport: t, Kind: evidence.KindToolCall, Tool: "get_products",
			Purposes: []evidence.Purpose{evidence.PurposeHookSync}, NotRun: NoReceiver})
		return
	}
	op := "adcp-conform-" + env.Nonce + "-" + prefix[:3] + "-sync"
	secret := newSecret()
	env.Config.Webhook.Expect(op, webhook.Expectation{Secret: secret})
	registered(ctx, env, id, "get_products", op, webhook.SchemeHMAC, evidence.PurposeHookSync, hookArgs(env, op, secret, ""), call, waits)
}

// asyncWebhooks are the probes of HOOK-01..03: get_products with a brief
// asking for asynchronous curation, registering a webhook signed with the
// legacy HMAC-SHA256 scheme (hook/async/hmac) and one with no
// authentication, which the seller signs under the RFC 9421 webhook
// profile (hook/async/rfc9421, verified with the keys of the seller's
// brand.json / JWKS, fetched first as hook/brand_json and hook/jwks).
//
// get_products is read-only, so these run without --allow-mutations: the
// spec lets a seller answer it submitted or working (task-type get_products
// and the webhook-payload-extraction vector mcp-working). A seller that
// answers it at once with a terminal status owes no webhook, and HOOK-01..03
// are then skipped with that reason. When the first response is
// non-terminal the harness waits (at most --webhook-wait) until a delivery
// reporting a terminal status has been accepted.
func asyncWebhooks(ctx context.Context, env Env, prefix string, keys keysFunc, call hookCall, waits *[]func()) {
	if !contains(env.Listed, "get_products") {
		return
	}
	t := evidence.Transport(prefix[:3])
	for _, scheme := range []string{webhook.SchemeHMAC, webhook.SchemeRFC9421} {
		id := prefix + "hook/async/" + scheme
		if env.Config.Webhook == nil {
			env.Add(evidence.Call{ProbeID: id, Transport: t, Kind: evidence.KindToolCall, Tool: "get_products",
				Purposes: []evidence.Purpose{evidence.PurposeHookAsync}, NotRun: NoReceiver})
			continue
		}
		op := "adcp-conform-" + env.Nonce + "-" + prefix[:3] + "-async-" + scheme
		e := expectation(scheme, keys)
		env.Config.Webhook.Expect(op, e)
		registered(ctx, env, id, "get_products", op, scheme, evidence.PurposeHookAsync, hookArgs(env, op, e.Secret, AsyncBrief), call, waits)
	}
}

// keysFunc returns the seller's webhook-signing keys, or why there are
// none.
type keysFunc func() ([]webhook.JWK, string)

// sellerKeysOnce fetches the seller's keys (sellerKeys) once per
// transport, the fetches recorded once: during discovery when a webhook
// probe will need them (hookKeysNeeded), so that the storyboards, which
// start then, verify their webhooks with them too (SellerKeysFrom).
func sellerKeysOnce(ctx context.Context, env Env, prefix, agent string) keysFunc {
	keys := sync.OnceValues(func() ([]webhook.JWK, string) { return sellerKeys(ctx, env, prefix, agent) })
	if hookKeysNeeded(env) {
		keys()
	}
	return keys
}

// hookKeysNeeded says whether an RFC 9421 webhook probe will register,
// and so read the seller's keys: asyncWebhooks on get_products,
// mediaBuyWebhooks on create_media_buy when mutations are allowed.
func hookKeysNeeded(env Env) bool {
	return env.Config.Webhook != nil &&
		(contains(env.Listed, "get_products") || (contains(env.Listed, "create_media_buy") && env.Config.AllowMutations))
}

// expectation is what the receiver verifies a registration's deliveries
// with: a fresh HMAC secret, or the seller's keys for RFC 9421.
func expectation(scheme string, keys keysFunc) webhook.Expectation {
	var e webhook.Expectation
	if scheme == webhook.SchemeHMAC {
		e.Secret = newSecret()
	} else {
		e.Keys, e.KeysError = keys()
	}
	return e
}

// registered makes a call of tool that registers a webhook for op, and
// adds to waits the step that records what the receiver saw for it: when
// the first response is submitted or working (mcp-guide.mdx's trigger), until a
// delivery reporting a terminal status is accepted; otherwise for the whole
// wait, so a webhook that should not come is seen (HOOK-04) with its
// retries. Each wait ends --webhook-wait after its own call, so the
// registrations of a transport wait side by side. The note records the
// first status and how long the harness waited.
func registered(ctx context.Context, env Env, id, tool, op, scheme string, p evidence.Purpose, args map[string]any, call hookCall, waits *[]func()) {
	t := evidence.Transport(id[:3])
	c := call(id, tool, args, p)
	c.Arguments, _ = redactedArgs(args)
	c.Credential = "configured"
	env.Add(c)
	note := WebhookDeliveries{OperationID: op, Scheme: scheme}
	note.FirstStatus, note.TaskID = firstStatus(c)
	wait := env.webhookWait()
	deadline := time.Now().Add(wait)
	*waits = append(*waits, func() {
		done := func([]webhook.Delivery) bool { return false } // the whole wait
		if slices.Contains(asyncFirst, note.FirstStatus) {
			done = settled
		}
		note.WaitMS = wait.Milliseconds()
		got := env.Config.Webhook.WaitFor(ctx, op, done, max(time.Until(deadline), 0))
		d := deliveriesCall(env, id, t, op, p, note, got)
		d.Tool = tool
		env.Add(d)
	})
}

// asyncFirst are the first statuses that make a webhook due (mcp-guide.mdx,
// Webhook Trigger Rules: the initial response is working or submitted).
var asyncFirst = []string{"submitted", "working"}

// mediaBuyWebhooks are the mutating webhook probes: create_media_buy, the
// operation sellers most often complete asynchronously, on a sandbox
// account with a run-unique idempotency_key, registering a webhook —
//
//	<t>/hook/media_buy/async/hmac     po_number asking for asynchronous review, HMAC-SHA256
//	<t>/hook/media_buy/async/rfc9421  the same, no authentication (RFC 9421 signatures)
//	<t>/hook/media_buy/sync           a plain create, HMAC-SHA256
//
// Whatever each asks, the first response decides what is judged: submitted
// or working owes webhooks (HOOK-01..03), a terminal answer owes none
// (HOOK-04), and the harness waits accordingly. The "async" in the
// po_number is a hint a seller may ignore (the reference seller honours
// it, as it honours an async get_products brief). Without
// --allow-mutations or a receiver each is recorded as not run.
func mediaBuyWebhooks(ctx context.Context, env Env, prefix string, keys keysFunc, call hookCall, waits *[]func()) {
	if !contains(env.Listed, "create_media_buy") {
		return
	}
	t := evidence.Transport(prefix[:3])
	run := fmt.Sprintf("%s-%08x", env.Nonce, mrand.Uint32())
	probes := []struct {
		id, scheme, po string
		p              evidence.Purpose
	}{
		{"hook/media_buy/async/" + webhook.SchemeHMAC, webhook.SchemeHMAC, "async-review", evidence.PurposeHookAsync},
		{"hook/media_buy/async/" + webhook.SchemeRFC9421, webhook.SchemeRFC9421, "async-review", evidence.PurposeHookAsync},
		{"hook/media_buy/sync", webhook.SchemeHMAC, "sync", evidence.PurposeHookSync},
	}
	for _, pr := range probes {
		id := prefix + pr.id
		reason := ""
		switch {
		case !env.Config.AllowMutations:
			reason = NotAllowed
		case env.Config.Webhook == nil:
			reason = NoReceiver
		}
		if reason != "" {
			env.Add(evidence.Call{ProbeID: id, Transport: t, Kind: evidence.KindToolCall, Tool: "create_media_buy",
				Purposes: []evidence.Purpose{pr.p}, NotRun: reason})
			continue
		}
		slug := strings.ReplaceAll(pr.id, "/", "-")
		op := "adcp-conform-" + run + "-" + prefix[:3] + "-" + slug
		e := expectation(pr.scheme, keys)
		env.Config.Webhook.Expect(op, e)
		args := env.Config.Inputs.base("create_media_buy")
		merge(args, map[string]any{"account": map[string]any{"sandbox": true}, "po_number": "adcp-conform-" + run + "-" + pr.po,
			"idempotency_key": "adcp-conform-" + run + "-" + prefix[:3] + "-" + slug})
		pnc := map[string]any{"url": env.Config.Webhook.URL(op), "operation_id": op}
		if e.Secret != nil {
			pnc["authentication"] = map[string]any{"schemes": []any{"HMAC-SHA256"}, "credentials": string(e.Secret)}
		}
		args["push_notification_config"] = pnc
		registered(ctx, env, id, "create_media_buy", op, pr.scheme, pr.p, args, call, waits)
	}
}

// settled says whether a delivery reporting a terminal status was accepted.
func settled(got []webhook.Delivery) bool {
	for _, d := range got {
		var b struct {
			Status string `json:"status"`
		}
		if d.Status == 200 && rawjson.Decode(d.Body, &b) == nil && slices.Contains([]string{"completed", "failed", "canceled", "rejected"}, b.Status) {
			return true
		}
	}
	return false
}

// firstStatus reads status and task_id from a call's AdCP body.
func firstStatus(c evidence.Call) (status, taskID string) {
	if c.Message == nil {
		return "", ""
	}
	t := extract.TransportMCP
	if c.Transport == evidence.A2A {
		t = extract.TransportA2A
	}
	out, err := extract.FromJSONRPCResponse(t, c.Message)
	if err != nil {
		return "", ""
	}
	if out.Error != nil {
		return "failed", ""
	}
	o, err := rawjson.ParseObject(out.Data)
	if err != nil || o == nil {
		return "", ""
	}
	str := func(key string) string {
		v, ok := o.Get(key)
		var s string
		if !ok || json.Unmarshal(v, &s) != nil {
			return ""
		}
		return s
	}
	return str("status"), str("task_id")
}

// deliveriesCall records what the receiver got for op as a webhook call:
// one exchange per delivery (the seller's request as received, redacted,
// and the receiver's status), and the receiver's notes in Body.
func deliveriesCall(env Env, id string, t evidence.Transport, op string, p evidence.Purpose, note WebhookDeliveries, got []webhook.Delivery) evidence.Call {
	w := evidence.Call{ProbeID: id + "/deliveries", Transport: t, Kind: evidence.KindWebhook, Tool: "get_products",
		Purposes: []evidence.Purpose{p}, URL: env.Config.Webhook.URL(op), Started: time.Now()}
	note.Deliveries = []DeliveryNote{}
	for _, d := range got {
		w.Exchanges = append(w.Exchanges, wire.Exchange{Method: "POST", URL: w.URL, RequestHeaders: d.Header,
			RequestBody: wire.Bytes(redactDelivery(env, d.Body)), RequestBodySize: int64(max(len(d.Body), d.BodyBytes)), RequestTruncated: d.Truncated,
			Status: d.Status, Started: d.At, Finished: true, Complete: true})
		if d.Dropped {
			w.Exchanges[len(w.Exchanges)-1].Dropped = &wire.Dropped{BodyBytes: d.BodyBytes, BodySHA256: d.BodySHA256}
			w.HarnessError = fmt.Sprintf("the webhook receiver's total (%d bytes) was spent: a delivery keeps its size and SHA-256 only", webhook.MaxKeptBytes)
		}
		note.Deliveries = append(note.Deliveries, DeliveryNote{Status: d.Status, Truncated: d.Truncated, SignatureError: wire.Sanitize(d.SignatureError, 300)})
	}
	w.Body, _ = json.Marshal(note)
	return w
}

// sellerKeys fetches the seller's webhook-signing keys: the agents[] entry
// of its origin's /.well-known/brand.json whose url is the agent's names a
// jwks_uri; without one, the origin's /.well-known/jwks.json. Both fetches
// are recorded; the error says why there are no keys.
func sellerKeys(ctx context.Context, env Env, prefix, agent string) ([]webhook.JWK, string) {
	u, err := url.Parse(agent)
	if err != nil || u.Host == "" {
		return nil, "the agent URL has no origin"
	}
	origin := u.Scheme + "://" + u.Host
	jwksURI := origin + "/.well-known/jwks.json"
	record := func(c evidence.Call) evidence.Call {
		c.Transport = evidence.Transport(prefix[:3])
		env.Add(c)
		return c
	}
	// The fetches are judged against the agent's own origin: the user's
	// headers go there only, and a jwks_uri elsewhere must be https to a
	// public host (mcp.Get).
	cfg := env.Config.MCP
	cfg.Endpoint = agent
	bc := record(mcp.Get(ctx, cfg, prefix+"hook/brand_json", origin+"/.well-known/brand.json", evidence.PurposeHookKeys))
	if bc.HTTPStatus == 200 && bc.Body != nil {
		if agents, err := webhook.ParseBrandAgents(bc.Body); err == nil {
			if uri, _, err := webhook.AgentJWKSURI(agents, bc.URL, agent, false); err == nil {
				jwksURI = uri
			}
		}
	}
	jc := record(mcp.Get(ctx, cfg, prefix+"hook/jwks", jwksURI, evidence.PurposeHookKeys))
	return keysOf(jc, jwksURI)
}

// redactDelivery redacts a webhook body like a reply: credential-named keys
// and the run's own secrets, which a seller may echo in what it posts.
func redactDelivery(env Env, body []byte) []byte {
	out, _ := env.Config.Redactor().Body(body, false)
	return out
}
