package live

import (
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
)

// receiver is the run's webhook receiver as the storyboard engine sees it:
// a storyboard key is answered 2xx at once (no forced first 503: that is
// the HOOK probes' default) unless its step asks for a retry_trigger, and
// every delivery is verified under the RFC 9421 webhook profile with the
// seller's keys the HOOK probes fetched (plan.SellerKeysFrom), its nonces
// in the receiver's run-wide replay store.
type receiver struct {
	rec    *webhook.Receiver
	keys   func() ([]webhook.JWK, string)
	redact *wire.Redactor
	t      evidence.Transport
	add    func(evidence.Call) evidence.Call

	mu         sync.Mutex
	registered map[string]bool
}

// newReceiver returns the receiver, redacting with the store's redaction.
// The probes fetch the keys during discovery (plan.Config.Discovered), so
// storyboards running beside the rest of the probes find them.
func newReceiver(rec *webhook.Receiver, store *evidence.Store, t evidence.Transport, add func(evidence.Call) evidence.Call) *receiver {
	return &receiver{rec: rec, t: t, add: add, redact: store.Redactor(), registered: map[string]bool{},
		keys: sync.OnceValues(func() ([]webhook.JWK, string) { return plan.SellerKeysFrom(store, t) })}
}

func (h *receiver) Base() string { return h.rec.Base() }

// URL registers key the first time: answered 200, verified with the
// seller's keys.
func (h *receiver) URL(key string) string {
	h.mu.Lock()
	first := !h.registered[key]
	h.registered[key] = true
	h.mu.Unlock()
	if first {
		keys, why := h.keys()
		h.rec.Fail(key, 0, 0)
		h.rec.Expect(key, webhook.Expectation{Keys: keys, KeysError: why})
	}
	return h.rec.URL(key)
}

func (h *receiver) Fail(key string, n, status int) { h.rec.Fail(key, n, status) }

// Deliveries are key's deliveries, their bodies redacted like a reply's
// (credential-named keys, the run's secrets) and their headers like a
// response's, before any step reads them.
func (h *receiver) Deliveries(key string) []storyboard.Delivery {
	got := h.rec.Deliveries(key)
	out := make([]storyboard.Delivery, 0, len(got))
	for _, d := range got {
		body := []byte(d.Body)
		if len(body) > 0 {
			body, _ = h.redact.Body(body, d.Truncated)
		}
		header, _ := h.redact.Header(d.Header)
		out = append(out, storyboard.Delivery{Key: key, Header: header, Body: body, Status: d.Status, At: d.At,
			Truncated: d.Truncated, Dropped: d.Dropped, Scheme: d.Scheme, SignatureError: d.SignatureError})
	}
	return out
}

func (h *receiver) Record(c evidence.Call) {
	c.Transport = h.t
	if h.add != nil {
		h.add(c)
	}
}
