package wire

import (
	"net/http"
	"sync/atomic"
)

// DefaultMaxTotalBytes is the evidence a whole run keeps by default: well
// under what a 2-core CI runner can spare, and hundreds of times what a
// conformant seller's replies take.
const DefaultMaxTotalBytes int64 = 64 << 20

// MaxStoredHeaderBytes bounds the response headers one exchange keeps (names
// and values); a header value is cut at MaxStoredHeaderValue bytes. Go reads
// up to MaxResponseHeaderBytes of headers.
const (
	MaxStoredHeaderBytes   = 64 << 10
	MaxStoredHeaderValue   = 4 << 10
	MaxResponseHeaderBytes = 1 << 20
)

// Budget bounds the bytes a whole run keeps as evidence, across every
// exchange of every transport: bodies, SSE events, headers. Beyond it an
// exchange keeps the size and SHA-256 of what it dropped
// (Exchange.Dropped), so a seller answering each call with a body just
// under the limits cannot make the run hold gigabytes. A nil *Budget is
// unbounded. Safe for concurrent use.
type Budget struct {
	left atomic.Int64
}

// NewBudget returns a budget of n bytes.
func NewBudget(n int64) *Budget {
	b := &Budget{}
	b.left.Store(n)
	return b
}

// take charges n bytes; false (and nothing charged) when they do not fit.
func (b *Budget) take(n int) bool {
	if b == nil || n <= 0 {
		return true
	}
	for {
		left := b.left.Load()
		if int64(n) > left {
			return false
		}
		if b.left.CompareAndSwap(left, left-int64(n)) {
			return true
		}
	}
}

// Spent reports whether the budget has refused something.
func (b *Budget) Spent() bool { return b != nil && b.left.Load() < 0 }

// refuse marks the budget as having refused (Spent then reports it).
func (b *Budget) refuse() {
	if b != nil {
		b.left.Store(-1)
	}
}

// BoundHeaders cuts each value at MaxStoredHeaderValue and the whole at
// MaxStoredHeaderBytes, and says how many bytes it kept.
func BoundHeaders(h http.Header) (http.Header, int) {
	out := make(http.Header, len(h))
	n := 0
	for name, vals := range h {
		for _, v := range vals {
			if len(v) > MaxStoredHeaderValue {
				v = v[:MaxStoredHeaderValue] + "…"
			}
			if n+len(name)+len(v) > MaxStoredHeaderBytes {
				return out, n
			}
			n += len(name) + len(v)
			out[name] = append(out[name], v)
		}
	}
	return out, n
}
