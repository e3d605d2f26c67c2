package wire

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

var seq atomic.Int64

// record is one exchange being captured. Request fields and events are
// redacted when stored; the raw response body is kept only while the body is
// being read and redacted on every snapshot and when it finishes.
type record struct {
	red    *Redactor
	now    func() time.Time
	budget *Budget

	mu       sync.Mutex
	ex       Exchange
	start    time.Time
	raw      []byte // unredacted body so far, nil once finished
	keepCut  int64  // bytes kept of a body cut at a limit; 0: all
	finished bool
	done     chan struct{}
	watchers []func()
}

func newRecord(red *Redactor, now func() time.Time, start time.Time, budget *Budget) *record {
	return &record{
		red:    red,
		now:    now,
		budget: budget,
		start:  start,
		done:   make(chan struct{}),
		ex:     Exchange{Seq: seq.Add(1), Started: start, RequestBodySize: -1},
	}
}

func (r *record) watch(f func()) {
	r.mu.Lock()
	r.watchers = append(r.watchers, f)
	r.mu.Unlock()
}

func (r *record) notify() {
	r.mu.Lock()
	ws := append([]func(){}, r.watchers...)
	r.mu.Unlock()
	for _, f := range ws {
		f()
	}
}

func (r *record) setTokenRefreshed() {
	r.mu.Lock()
	r.ex.TokenRefreshed = true
	r.mu.Unlock()
}

func (r *record) setFirstByte(t time.Time) {
	r.mu.Lock()
	if r.ex.FirstByteMS == 0 {
		r.ex.FirstByteMS = ms(t.Sub(r.start))
	}
	r.mu.Unlock()
}

func (r *record) setResponse(resp *http.Response, sse bool, encoding string) {
	h, hits := r.red.Header(resp.Header)
	h, size := BoundHeaders(h)
	dropped := !r.budget.take(size)
	if dropped {
		// Only the headers the report shows, and HSTS (TLS-02), stay.
		kept := ReportResponseHeaders(h)
		if v := h.Values("Strict-Transport-Security"); len(v) > 0 {
			kept["Strict-Transport-Security"] = v[:1]
		}
		h = kept
		r.budget.refuse()
	}
	r.mu.Lock()
	if dropped {
		r.dropped().Headers = true
	}
	r.ex.Status = resp.StatusCode
	r.ex.Proto = resp.Proto
	r.ex.ResponseHeaders = h
	r.ex.SSE = sse
	r.ex.ContentEncoding = encoding
	if resp.TLS != nil {
		r.ex.TLSVersion = tls.VersionName(resp.TLS.Version)
		r.ex.TLSCipher = tls.CipherSuiteName(resp.TLS.CipherSuite)
	}
	r.ex.HeadersMS = ms(r.now().Sub(r.start))
	if r.ex.FirstByteMS == 0 {
		r.ex.FirstByteMS = r.ex.HeadersMS
	}
	if hits > 0 {
		r.ex.SecretEchoed = true
	}
	r.mu.Unlock()
	r.notify()
}

// addBody appends p to the body read so far; limit is the most the body
// may hold (Limits.MaxBodyBytes).
func (r *record) addBody(p []byte, wire, limit int64) {
	r.mu.Lock()
	if !r.finished {
		if need := len(r.raw) + len(p); need > cap(r.raw) {
			// Doubled, never past the limit: append grows a large slice
			// by a quarter at a time, which copied an 8 MiB body five
			// times over (40 MB allocated a reply), not twice.
			grown := make([]byte, len(r.raw), max(need, min(2*cap(r.raw), int(limit))))
			copy(grown, r.raw)
			r.raw = grown
		}
		r.raw = append(r.raw, p...)
		r.ex.ResponseBodySize += int64(len(p))
		r.ex.WireBytes = wire
	}
	r.mu.Unlock()
}

func (r *record) addEvent(ev Event) {
	ev.Raw, _ = r.red.Body(ev.Raw, false)
	data, hits := r.red.Body([]byte(ev.Data), false)
	ev.Data = string(data)
	// The id and event fields are the seller's too: redacted like the data,
	// and bounded. The id is kept on the block that set it only: a stream's
	// last id is inherited by every later block, and a long id times many
	// tiny events must not amplify (in stored bytes, or in the work of
	// redacting it again for each event).
	var n int
	if !ev.HasID {
		ev.ID = ""
	}
	ev.ID, n = r.eventField(ev.ID)
	hits += n
	ev.Type, n = r.eventField(ev.Type)
	hits += n
	size := len(ev.Raw) + len(ev.Data) + len(ev.ID) + len(ev.Type)
	keep := r.budget.take(size + EventOverhead)
	if !keep {
		r.budget.refuse()
	}
	r.mu.Lock()
	if !r.finished && !keep {
		d := r.dropped()
		d.Events++
		d.EventBytes += size
	}
	if !r.finished && keep {
		r.ex.Events = append(r.ex.Events, ev)
		if hits > 0 {
			r.ex.SecretEchoed = true
		}
	}
	r.mu.Unlock()
	r.notify()
}

// finish stores the redacted body; later calls are ignored.
func (r *record) finish(err error, complete, truncated bool, wire int64) {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return
	}
	r.finished = true
	if truncated && r.keepCut > 0 && int64(len(r.raw)) > r.keepCut {
		r.raw = append([]byte(nil), r.raw[:r.keepCut]...) // a cut body is no reply: keep its head only
	}
	body, hits := r.red.Body(r.raw, truncated || !complete)
	if hits > 0 {
		r.ex.SecretEchoed = true
	}
	if len(body) > 0 {
		if r.budget.take(len(body)) {
			r.ex.ResponseBody = body
		} else {
			r.budget.refuse()
			sum := sha256.Sum256(body)
			d := r.dropped()
			d.BodyBytes, d.BodySHA256 = len(body), hex.EncodeToString(sum[:])
		}
	}
	r.raw = nil
	if wire > r.ex.WireBytes {
		r.ex.WireBytes = wire
	}
	r.ex.Finished = true
	r.ex.Complete = complete
	r.ex.Truncated = r.ex.Truncated || truncated
	if err != nil && r.ex.Error == "" {
		msg, _ := r.red.Text([]byte(err.Error()), false)
		r.ex.Error = string(msg)
	}
	r.ex.DurationMS = ms(r.now().Sub(r.start))
	close(r.done)
	r.mu.Unlock()
	r.notify()
}

// snapshot returns a copy; byte slices are shared and must be treated as
// read-only.
func (r *record) snapshot() Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.ex
	x.RequestHeaders = r.ex.RequestHeaders.Clone()
	x.ResponseHeaders = r.ex.ResponseHeaders.Clone()
	x.Events = append([]Event(nil), r.ex.Events...)
	if !r.finished {
		b, hits := r.red.Body(r.raw, true)
		if len(b) > 0 {
			x.ResponseBody = b
		}
		x.SecretEchoed = x.SecretEchoed || hits > 0
		x.DurationMS = ms(r.now().Sub(r.start))
	}
	return x
}

func (r *record) isFinished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// EventOverhead is what the budget charges for an event besides its bytes:
// about the memory of an Event and its fields in evidence.json. A
// seven-byte event ("data:\n\n") costs over a hundred bytes of either, so
// a stream of tiny events charged its bytes only would hold a budget's
// worth of wire bytes as fifteen times that in memory.
const EventOverhead = 128

// MaxEventFieldBytes bounds an SSE event's id and event type as recorded.
const MaxEventFieldBytes = 256

// eventField redacts an SSE id or event value and cuts it to
// MaxEventFieldBytes, saying how long it was.
func (r *record) eventField(s string) (string, int) {
	if s == "" {
		return s, 0
	}
	b, hits := r.red.Text([]byte(s), false)
	if len(b) > MaxEventFieldBytes {
		b = append(b[:MaxEventFieldBytes:MaxEventFieldBytes], fmt.Sprintf("…(%d bytes)", len(b))...)
	}
	return string(b), hits
}

// dropped returns the exchange's Dropped record, making it; r.mu is held.
func (r *record) dropped() *Dropped {
	if r.ex.Dropped == nil {
		r.ex.Dropped = &Dropped{}
	}
	return r.ex.Dropped
}
