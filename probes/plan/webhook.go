package plan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// DefaultWebhookWait is how long the harness waits for webhooks a seller
// should, or should not, send.
const DefaultWebhookWait = time.Second

// NoReceiver is why the webhook probes did not run.
const NoReceiver = "no webhook receiver the seller can reach: give --webhook-url (the public address of --webhook-listen)"

func init() {
	registerMCP(func(ctx context.Context, env Env) {
		syncWebhook(ctx, env, "mcp/", func(id string, args map[string]any) evidence.Call {
			return env.Shared.CallTool(ctx, id, "get_products", args, evidence.PurposeHookSync)
		})
	})
	registerA2A(func(ctx context.Context, env Env) {
		syncWebhook(ctx, env, "a2a/", func(id string, args map[string]any) evidence.Call {
			return env.A2A.Send(ctx, id, "get_products", args, evidence.PurposeHookSync)
		})
	})
}

// syncWebhook makes a read call that registers a webhook (HOOK-04): a
// synchronous answer must not be followed by a webhook. It records the
// call and, as a webhook evidence call, whatever the receiver got for its
// operation within the wait.
func syncWebhook(ctx context.Context, env Env, prefix string, call func(id string, args map[string]any) evidence.Call) {
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
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	args := env.Config.Inputs.base("get_products")
	merge(args, argsOf("get_products"))
	args["push_notification_config"] = map[string]any{"url": env.Config.Webhook.URL(op), "operation_id": op,
		"authentication": map[string]any{"schemes": []any{"HMAC-SHA256"}, "credentials": hex.EncodeToString(secret)}}
	c := call(id, args)
	c.Arguments, _ = redactedArgs(args)
	c.Credential = "configured"
	env.Add(c)

	wait := env.Config.WebhookWait
	if wait <= 0 {
		wait = DefaultWebhookWait
	}
	got := env.Config.Webhook.Wait(ctx, op, 1, wait)
	w := evidence.Call{ProbeID: id + "/deliveries", Transport: t, Kind: evidence.KindWebhook, Tool: "get_products",
		Purposes: []evidence.Purpose{evidence.PurposeHookSync}, URL: env.Config.Webhook.URL(op), Started: time.Now()}
	for _, d := range got {
		w.Exchanges = append(w.Exchanges, wire.Exchange{Method: "POST", URL: w.URL, RequestHeaders: d.Header,
			RequestBody: wire.Bytes(wire.RedactJSON(d.Body)), Status: d.Status, Started: d.At, Finished: true, Complete: true})
	}
	w.Body, _ = json.Marshal(map[string]int{"deliveries": len(got)})
	env.Add(w)
}
