package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// MaxDeliveryBytes bounds one webhook body the receiver keeps.
const MaxDeliveryBytes = 1 << 20

// maxDeliveries bounds what the receiver keeps in all: a seller cannot
// exhaust the harness by posting.
const maxDeliveries = 1000

// MaxKeptBytes bounds the delivery bodies and headers the receiver keeps in
// all; beyond it a delivery keeps its size and SHA-256 only (Dropped), so
// a thousand deliveries of a megabyte each cost kilobytes.
const MaxKeptBytes = 16 << 20

// maxHeaderBytes bounds the request headers the receiver reads (Go's
// server default is 1 MB).
const maxHeaderBytes = 64 << 10

// Delivery is one webhook a seller posted.
type Delivery struct {
	Operation string      `json:"operation"`
	Header    http.Header `json:"header"`
	Body      wire.Bytes  `json:"body"`
	// Truncated says the body was longer than MaxDeliveryBytes (and was
	// answered 413).
	Truncated bool `json:"truncated,omitempty"`
	// Dropped is set when the receiver's total (MaxKeptBytes) was spent:
	// Body is then nil and BodyBytes and BodySHA256 say what it was.
	Dropped    bool   `json:"dropped,omitempty"`
	BodyBytes  int    `json:"body_bytes,omitempty"`
	BodySHA256 string `json:"body_sha256,omitempty"`
	// Status is what the receiver answered.
	Status int       `json:"status"`
	At     time.Time `json:"at"`
	// Scheme is the signing scheme the operation's registration asked for
	// (SchemeHMAC or SchemeRFC9421; "" when the operation was not
	// registered with Expect).
	Scheme string `json:"scheme,omitempty"`
	// SignatureError is why the signature did not verify under Scheme, at
	// the moment it arrived; "" when it verified.
	SignatureError string `json:"signature_error,omitempty"`
}

// The signing schemes a registration asks for.
const (
	SchemeHMAC    = "hmac-sha256"
	SchemeRFC9421 = "rfc9421"
)

// Expectation is how the deliveries of one operation must be signed: with
// the legacy HMAC-SHA256 scheme under Secret when it is set, else under the
// RFC 9421 webhook profile with one of Keys (the seller's JWKS; KeysError
// says why there are none).
type Expectation struct {
	Secret    []byte
	Keys      []JWK
	KeysError string
}

// Receiver is the HTTP server the harness starts to receive webhooks at
// /hooks/<operation>. By default it answers the first delivery of each
// operation 503, to see whether the seller's retry reuses its idempotency
// key, and 200 after (413 for a body over MaxDeliveryBytes); an operation
// given a plan with Fail is answered by its plan instead. Each delivery of
// an operation registered with Expect is verified as it arrives.
type Receiver struct {
	srv    *http.Server
	public string
	mu     sync.Mutex
	got    []Delivery
	count  map[string]int
	kept   int // bytes of bodies and headers kept (MaxKeptBytes)
	expect map[string]Expectation
	nonces NonceCache
	notify chan struct{}
	// plans: operation → its failure plan (Fail); an operation without
	// one has its first delivery answered 503.
	plans map[string]failPlan
}

// failPlan answers the first n deliveries of an operation with status.
type failPlan struct{ n, status int }

// Listen starts a receiver on addr ("127.0.0.1:0" for any loopback port).
// public is the URL a seller reaches it at ("" means the listener's own,
// enough for a seller on this machine).
func Listen(addr, public string) (*Receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if public == "" {
		public = "http://" + ln.Addr().String()
	}
	r := &Receiver{public: strings.TrimRight(public, "/"), count: map[string]int{}, expect: map[string]Expectation{}, notify: make(chan struct{}, 1),
		plans: map[string]failPlan{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hooks/{op}", r.receive)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, MaxHeaderBytes: maxHeaderBytes}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// URL is where a seller posts the webhooks of operation op.
func (r *Receiver) URL(op string) string { return r.public + "/hooks/" + op }

// Base is the receiver's public base URL (URL(op) is Base()+"/hooks/"+op).
func (r *Receiver) Base() string { return r.public }

// Fail sets operation op's failure plan: its first n deliveries are
// answered status (a 5xx or 429, to make an at-least-once sender retry),
// the rest 200; n 0 answers every delivery 200 at once (no forced 503).
// Set it before the seller can deliver. A status outside 400–599 is 503.
func (r *Receiver) Fail(op string, n, status int) {
	if status < 400 || status > 599 {
		status = http.StatusServiceUnavailable
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plans[op] = failPlan{n: max(n, 0), status: status}
}

// Expect registers how operation op's deliveries must be signed; each is
// verified as it arrives (the timestamp and signature windows are judged
// against the moment of arrival).
func (r *Receiver) Expect(op string, e Expectation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expect[op] = e
}

func (r *Receiver) receive(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, MaxDeliveryBytes+1))
	truncated := len(body) > MaxDeliveryBytes
	if truncated {
		body = body[:MaxDeliveryBytes]
	}
	op := req.PathValue("op")
	now := time.Now()
	r.mu.Lock()
	e, expected := r.expect[op]
	r.mu.Unlock()
	d := Delivery{Operation: op, Body: body, Truncated: truncated, At: now}
	if expected && !truncated {
		target := r.URL(op)
		if req.URL.RawQuery != "" {
			target += "?" + req.URL.RawQuery
		}
		d.Scheme, d.SignatureError = r.verify(e, Request{Method: req.Method, URL: target, Header: req.Header, Body: body}, now)
	}
	d.Header, _ = wire.BoundHeaders(wire.RedactHeader(req.Header.Clone()))
	size := len(d.Body)
	for name, vals := range d.Header {
		for _, v := range vals {
			size += len(name) + len(v)
		}
	}
	r.mu.Lock()
	if r.kept+size > MaxKeptBytes {
		sum := sha256.Sum256(d.Body)
		d.Dropped, d.BodyBytes, d.BodySHA256, d.Body = true, len(d.Body), hex.EncodeToString(sum[:]), nil
		d.Header = http.Header{"Content-Type": d.Header.Values("Content-Type")}
	} else {
		r.kept += size
	}
	r.count[op]++
	status := http.StatusOK
	plan, planned := r.plans[op]
	switch {
	case truncated:
		status = http.StatusRequestEntityTooLarge
	case planned:
		if r.count[op] <= plan.n {
			status = plan.status
		}
	case r.count[op] == 1:
		status = http.StatusServiceUnavailable
	}
	d.Status = status
	if len(r.got) < maxDeliveries {
		r.got = append(r.got, d)
	}
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
	w.WriteHeader(status)
}

// verify checks one delivery under the registration's scheme and returns
// the scheme and the failure ("" when it verified). Signing both ways is a
// failure too: the registration is a switch.
func (r *Receiver) verify(e Expectation, req Request, now time.Time) (string, string) {
	if e.Secret != nil {
		if req.Header.Get("Signature-Input") != "" || req.Header.Get("Signature") != "" {
			return SchemeHMAC, "signed both ways: RFC 9421 headers on a delivery registered for HMAC-SHA256"
		}
		if req.Header.Get("X-ADCP-Signature") == "" {
			return SchemeHMAC, "no X-ADCP-Signature header, though the registration carried HMAC-SHA256 credentials"
		}
		if err := VerifyHMAC(e.Secret, req.Body, req.Header.Get("X-ADCP-Signature"), req.Header.Get("X-ADCP-Timestamp"), now); err != nil {
			return SchemeHMAC, err.Error()
		}
		return SchemeHMAC, ""
	}
	if req.Header.Get("X-ADCP-Signature") != "" {
		return SchemeRFC9421, "signed both ways: X-ADCP-Signature on a delivery registered without authentication (RFC 9421 profile)"
	}
	if len(e.Keys) == 0 {
		msg := CodeKeysUnavailable + ": no signing keys of the seller to verify with"
		if e.KeysError != "" {
			msg += " (" + e.KeysError + ")"
		}
		return SchemeRFC9421, msg
	}
	if err := VerifyRFC9421(req, VerifyOptions{Keys: e.Keys, Now: now, Nonces: &r.nonces}); err != nil {
		return SchemeRFC9421, err.Error()
	}
	return SchemeRFC9421, ""
}

// Deliveries returns what operation op received so far.
func (r *Receiver) Deliveries(op string) []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Delivery
	for _, d := range r.got {
		if d.Operation == op {
			out = append(out, d)
		}
	}
	return out
}

// Wait waits until operation op received n deliveries, or for d, or ctx,
// whichever comes first, and returns what it received.
func (r *Receiver) Wait(ctx context.Context, op string, n int, d time.Duration) []Delivery {
	return r.WaitFor(ctx, op, func(got []Delivery) bool { return len(got) >= n }, d)
}

// WaitFor waits until done holds for what operation op received, or for d,
// or ctx, whichever comes first, and returns what it received.
func (r *Receiver) WaitFor(ctx context.Context, op string, done func([]Delivery) bool, d time.Duration) []Delivery {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		if got := r.Deliveries(op); done(got) {
			return got
		}
		select {
		case <-ctx.Done():
			return r.Deliveries(op)
		case <-deadline.C:
			return r.Deliveries(op)
		case <-r.notify:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close stops the receiver.
func (r *Receiver) Close() error { return r.srv.Close() }
