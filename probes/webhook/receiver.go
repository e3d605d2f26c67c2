package webhook

import (
	"context"
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

// Delivery is one webhook a seller posted.
type Delivery struct {
	Operation string      `json:"operation"`
	Header    http.Header `json:"header"`
	Body      wire.Bytes  `json:"body"`
	// Status is what the receiver answered.
	Status int       `json:"status"`
	At     time.Time `json:"at"`
}

// Receiver is the HTTP server the harness starts to receive webhooks at
// /hooks/<operation>. It answers the first delivery of each operation 503,
// to see whether the seller's retry reuses its idempotency key, and 200
// after.
type Receiver struct {
	srv    *http.Server
	public string
	mu     sync.Mutex
	got    []Delivery
	count  map[string]int
	notify chan struct{}
}

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
	r := &Receiver{public: strings.TrimRight(public, "/"), count: map[string]int{}, notify: make(chan struct{}, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hooks/{op}", r.receive)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// URL is where a seller posts the webhooks of operation op.
func (r *Receiver) URL(op string) string { return r.public + "/hooks/" + op }

func (r *Receiver) receive(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, MaxDeliveryBytes))
	op := req.PathValue("op")
	r.mu.Lock()
	r.count[op]++
	status := http.StatusOK
	if r.count[op] == 1 {
		status = http.StatusServiceUnavailable
	}
	if len(r.got) < maxDeliveries {
		r.got = append(r.got, Delivery{Operation: op, Header: wire.RedactHeader(req.Header.Clone()), Body: body, Status: status, At: time.Now()})
	}
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
	w.WriteHeader(status)
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
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		if got := r.Deliveries(op); len(got) >= n {
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
