package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// Recorder keeps every exchange of a run, in request order. The zero value is
// ready to use.
type Recorder struct {
	// Max bounds the exchanges kept; 0 means DefaultMaxRecorded. Later
	// exchanges are counted in Dropped.
	Max int

	mu      sync.Mutex
	recs    []*record
	dropped int
}

func (r *Recorder) add(rec *record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	max := r.Max
	if max <= 0 {
		max = DefaultMaxRecorded
	}
	if len(r.recs) >= max {
		r.dropped++
		return
	}
	r.recs = append(r.recs, rec)
}

// Exchanges returns snapshots of the kept exchanges.
func (r *Recorder) Exchanges() []Exchange {
	r.mu.Lock()
	recs := append([]*record(nil), r.recs...)
	r.mu.Unlock()
	return snapshots(recs)
}

// Dropped returns how many exchanges were not kept because of Max.
func (r *Recorder) Dropped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

func snapshots(recs []*record) []Exchange {
	out := make([]Exchange, len(recs))
	for i, rec := range recs {
		out[i] = rec.snapshot()
	}
	return out
}

// Capture collects the exchanges made with one probe's context.
type Capture struct {
	ProbeID string

	mu      sync.Mutex
	recs    []*record
	dropped int
	changed chan struct{} // closed and replaced on every change
}

// WithCapture returns a context whose HTTP exchanges through a Transport are
// attached to the returned Capture. The go-sdk MCP client passes the caller's
// ctx to its POST requests, so a CallTool made with ctx is captured.
func WithCapture(ctx context.Context, probeID string) (context.Context, *Capture) {
	c := &Capture{ProbeID: probeID, changed: make(chan struct{})}
	return context.WithValue(ctx, captureKey{}, c), c
}

// CaptureFrom returns the Capture attached to ctx, or nil.
func CaptureFrom(ctx context.Context) *Capture { return captureFrom(ctx) }

func (c *Capture) add(rec *record, max int) {
	c.mu.Lock()
	if len(c.recs) >= max {
		c.dropped++
		c.mu.Unlock()
		return
	}
	c.recs = append(c.recs, rec)
	c.mu.Unlock()
	rec.watch(c.signal)
	c.signal()
}

func (c *Capture) signal() {
	c.mu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// Exchanges returns snapshots of the capture's exchanges, in request order.
func (c *Capture) Exchanges() []Exchange {
	c.mu.Lock()
	recs := append([]*record(nil), c.recs...)
	c.mu.Unlock()
	return snapshots(recs)
}

// Dropped returns how many exchanges were not kept (Limits.MaxExchanges).
func (c *Capture) Dropped() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// Wait blocks until every exchange of the capture has finished recording or
// ctx is done.
func (c *Capture) Wait(ctx context.Context) error {
	for {
		c.mu.Lock()
		ch := c.changed
		recs := append([]*record(nil), c.recs...)
		c.mu.Unlock()
		pending := false
		for _, r := range recs {
			if !r.isFinished() {
				pending = true
			}
		}
		if !pending {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ErrNoResponse is returned when a capture holds no response for the request.
var ErrNoResponse = errors.New("wire: no JSON-RPC response for the request in the capture")

// Response returns the exact (redacted) bytes of the JSON-RPC response to the
// capture's last JSON-RPC request that has an id, with the exchange that
// carried it. See ResponseFor.
func (c *Capture) Response(ctx context.Context) ([]byte, Exchange, error) {
	c.mu.Lock()
	recs := append([]*record(nil), c.recs...)
	c.mu.Unlock()
	var id json.RawMessage
	for _, r := range recs {
		r.mu.Lock()
		rid, ok := requestID(r.ex.RequestBody)
		r.mu.Unlock()
		if ok {
			id = rid
		}
	}
	if id == nil {
		return nil, Exchange{}, fmt.Errorf("wire: capture %q holds no JSON-RPC request with an id", c.ProbeID)
	}
	return c.ResponseFor(ctx, id)
}

// ResponseFor returns the exact (redacted) bytes of the JSON-RPC response
// whose id equals id: a JSON body (or batch element), or the data of an SSE
// event, skipping notifications and server-to-client requests. While an
// exchange of the capture is still being read it waits for it, until ctx is
// done or, when ctx has no deadline, DefaultResponseWait. When nothing
// matches, err wraps ErrNoResponse and Exchange is the last exchange that
// carried the request (if any), so its raw body can still be judged.
func (c *Capture) ResponseFor(ctx context.Context, id json.RawMessage) ([]byte, Exchange, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultResponseWait)
		defer cancel()
	}
	scanned := map[*record]int{} // events already looked at, per exchange
	for {
		c.mu.Lock()
		ch := c.changed
		recs := append([]*record(nil), c.recs...)
		c.mu.Unlock()
		var carrier *record
		pending := false
		for _, r := range recs {
			from := scanned[r]
			msg, found, finished, carries := r.find(id, &from)
			scanned[r] = from
			if found {
				return msg, r.snapshot(), nil
			}
			if carries {
				carrier = r
			}
			if !finished {
				pending = true
			}
		}
		if !pending || ctx.Err() != nil {
			var x Exchange
			if carrier != nil {
				x = carrier.snapshot()
			}
			err := fmt.Errorf("%w (id %s)", ErrNoResponse, Sanitize(string(id), 64))
			if pending {
				err = fmt.Errorf("%w: %w", err, ctx.Err())
			}
			return nil, x, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
}

// find looks for the response with id in the exchange: in SSE events from
// index *from on (updated), or in the body once finished. carries reports
// that the exchange's request has that id.
func (r *record) find(id json.RawMessage, from *int) (msg []byte, found, finished, carries bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rid, ok := requestID(r.ex.RequestBody); ok && sameID(rid, id) {
		carries = true
	}
	for ; *from < len(r.ex.Events); *from++ {
		ev := r.ex.Events[*from]
		if ev.Dispatch && isResponseTo([]byte(ev.Data), id) {
			return []byte(ev.Data), true, r.finished, carries
		}
	}
	if r.finished && !r.ex.SSE && len(r.ex.Events) == 0 {
		if m, ok := findInBody(r.ex.ResponseBody, id); ok {
			return m, true, true, carries
		}
	}
	return nil, false, r.finished, carries
}

// findInBody looks for the response with id in a JSON body or batch.
func findInBody(body []byte, id json.RawMessage) ([]byte, bool) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var found []byte
		rawjson.EachElement(trimmed, func(_ int, m []byte) bool {
			if isResponseTo(m, id) {
				found = m
				return false
			}
			return true
		})
		return found, found != nil
	}
	if isResponseTo(body, id) {
		return body, true
	}
	return nil, false
}

// isResponseTo reports whether msg is a JSON-RPC object without "method"
// whose "id" equals id.
func isResponseTo(msg []byte, id json.RawMessage) bool {
	var got []byte
	isReq := false
	if eachMember(msg, func(key string, val []byte) {
		switch key {
		case "method":
			isReq = true
		case "id":
			got = val // the last one, as a decode would keep
		}
	}) != nil || isReq {
		return false
	}
	return got != nil && sameID(got, id)
}

// requestID returns the id of a JSON-RPC request body (not a notification).
func requestID(body []byte) (json.RawMessage, bool) {
	var id []byte
	hasMethod := false
	if eachMember(body, func(key string, val []byte) {
		switch key {
		case "method":
			hasMethod = true
		case "id":
			id = val
		}
	}) != nil {
		return nil, false
	}
	if id == nil || !hasMethod || string(id) == "null" {
		return nil, false
	}
	return id, true
}

// sameID compares JSON-RPC ids: strings by value, numbers numerically; a
// string never equals a number.
func sameID(a, b json.RawMessage) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if a[0] == '"' || b[0] == '"' {
		var sa, sb string
		return a[0] == '"' && b[0] == '"' && json.Unmarshal(a, &sa) == nil && json.Unmarshal(b, &sb) == nil && sa == sb
	}
	if len(a) > 64 || len(b) > 64 || bytes.ContainsAny(a, "eE/") || bytes.ContainsAny(b, "eE/") {
		return bytes.Equal(a, b) // no exponent arithmetic on seller input
	}
	ra, oka := new(big.Rat).SetString(string(a))
	rb, okb := new(big.Rat).SetString(string(b))
	if oka && okb {
		return ra.Cmp(rb) == 0
	}
	return bytes.Equal(a, b)
}

// SplitResponse returns the raw "result", "error" and "id" members of a
// JSON-RPC response message. A nil value means the member is ABSENT; a
// present null is json.RawMessage("null"). A repeated member's last value
// counts, as a client's JSON.parse reads it. err is set when msg is not a
// single JSON object. Any depth of nesting is read.
func SplitResponse(msg []byte) (result, rpcError, id json.RawMessage, err error) {
	if !rawjson.Valid(msg) {
		_, err := rawjson.ParseObject(msg) // for its message
		return nil, nil, nil, fmt.Errorf("wire: response: %w", err)
	}
	if eachMember(msg, func(key string, val []byte) {
		switch key {
		case "result":
			result = val
		case "error":
			rpcError = val
		case "id":
			id = val
		}
	}) != nil {
		return nil, nil, nil, errors.New("wire: response is not a JSON object")
	}
	return result, rpcError, id, nil
}

// RequestID returns the id of the JSON-RPC request in a request body; ok
// is false for a notification, a batch or anything else.
func RequestID(body []byte) (id json.RawMessage, ok bool) { return requestID(body) }

// ResponseIn returns the JSON-RPC response to the request with id that a
// JSON body (a single message or a batch) holds, as the capture matches
// it: an object without "method" whose "id" equals id.
func ResponseIn(body []byte, id json.RawMessage) ([]byte, bool) { return findInBody(body, id) }
