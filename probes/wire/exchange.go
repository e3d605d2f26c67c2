package wire

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bytes is raw captured bytes. In JSON it is a string when the bytes are
// valid UTF-8, else {"base64":"..."}; both forms read back.
type Bytes []byte

// MarshalJSON implements json.Marshaler.
func (b Bytes) MarshalJSON() ([]byte, error) {
	if utf8.Valid(b) {
		return json.Marshal(string(b))
	}
	return json.Marshal(struct {
		Base64 string `json:"base64"`
	}{base64.StdEncoding.EncodeToString(b)})
}

// UnmarshalJSON implements json.Unmarshaler.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*b = Bytes(s)
		return nil
	}
	var o struct {
		Base64 *string `json:"base64"`
	}
	if err := json.Unmarshal(data, &o); err != nil || o.Base64 == nil {
		return errors.New("wire: bytes must be a string or {\"base64\":...}")
	}
	raw, err := base64.StdEncoding.DecodeString(*o.Base64)
	if err != nil {
		return fmt.Errorf("wire: bytes: %w", err)
	}
	*b = raw
	return nil
}

// Exchange is a snapshot of one recorded HTTP exchange, already redacted and
// JSON-serializable for the evidence store and reports.
type Exchange struct {
	Seq     int64  `json:"seq"`                // process-wide order of the request
	ProbeID string `json:"probe_id,omitempty"` // from WithCapture; "" outside a capture
	Method  string `json:"method"`
	URL     string `json:"url"` // userinfo, sensitive query params and secrets redacted

	RequestHeaders   http.Header `json:"request_headers,omitempty"` // as sent, credentials redacted
	RequestBody      Bytes       `json:"request_body,omitempty"`    // redacted, at most MaxBodyBytes
	RequestBodySize  int64       `json:"request_body_size"`         // bytes sent (-1 unknown)
	RequestTruncated bool        `json:"request_truncated,omitempty"`

	Status           int         `json:"status,omitempty"` // 0 when no response
	Proto            string      `json:"proto,omitempty"`
	ResponseHeaders  http.Header `json:"response_headers,omitempty"` // as received, credentials redacted
	ContentEncoding  string      `json:"content_encoding,omitempty"` // coding decoded for the consumer ("gzip")
	ResponseBody     Bytes       `json:"response_body,omitempty"`    // redacted, decoded; at most MaxBodyBytes, MaxEvidenceBytes when Truncated
	ResponseBodySize int64       `json:"response_body_size"`         // decoded bytes read
	WireBytes        int64       `json:"wire_bytes"`                 // bytes read from the network
	SSE              bool        `json:"sse,omitempty"`              // Content-Type text/event-stream
	Events           []Event     `json:"events,omitempty"`           // parsed SSE blocks, redacted; an event's ID only where the block set it (HasID)

	Started     time.Time `json:"started"`
	HeadersMS   float64   `json:"headers_ms"`    // response headers returned, since Started
	FirstByteMS float64   `json:"first_byte_ms"` // first response byte, since Started
	DurationMS  float64   `json:"duration_ms"`   // body finished (EOF, error, limit or close)

	Finished     bool   `json:"finished"`                // no more bytes will be recorded
	Complete     bool   `json:"complete"`                // the body was read to EOF
	Truncated    bool   `json:"truncated,omitempty"`     // cut at a limit (see Error)
	Error        string `json:"error,omitempty"`         // transport or read error
	SecretEchoed bool   `json:"secret_echoed,omitempty"` // a configured secret was in the response
	// TokenRefreshed says the request was first sent with a run-time token
	// (Transport.Token) the seller refused with HTTP 401, then once more
	// with a renewed one: this exchange is the repeat.
	TokenRefreshed bool `json:"token_refreshed,omitempty"`

	// TLSVersion and TLSCipher are the negotiated TLS version ("TLS 1.3")
	// and cipher suite of an HTTPS exchange; "" over plain HTTP.
	TLSVersion string `json:"tls_version,omitempty"`
	TLSCipher  string `json:"tls_cipher,omitempty"`

	// RequestBodyElided, ResponseBodyElided and EventsElided count what an
	// excerpt (see Excerpt) left out: bytes of each body and whole events.
	// The recorded call in evidence.json keeps them.
	RequestBodyElided  int `json:"request_body_elided,omitempty"`
	ResponseBodyElided int `json:"response_body_elided,omitempty"`
	EventsElided       int `json:"events_elided,omitempty"`

	// Dropped says what the run's evidence budget (--max-total) did not
	// let this exchange keep; nil when it kept everything.
	Dropped *Dropped `json:"dropped,omitempty"`
}

// Dropped is what an exchange could not keep once the run's evidence budget
// was spent: the body's size and SHA-256 (of the redacted bytes), the
// events it left out, and whether headers were cut.
type Dropped struct {
	BodyBytes  int    `json:"body_bytes,omitempty"`
	BodySHA256 string `json:"body_sha256,omitempty"`
	Events     int    `json:"events,omitempty"`
	EventBytes int    `json:"event_bytes,omitempty"`
	Headers    bool   `json:"headers,omitempty"`
}

// Excerpt returns a copy of x whose bodies and event data keep at most n
// bytes each (cut at a UTF-8 boundary) and whose events keep at most the
// first maxEvents, counting what it left out. A report embeds excerpts, so
// one large reply cited by several rules costs n bytes a citation, not its
// size; the whole reply stays in evidence.json, once.
func (x Exchange) Excerpt(n, maxEvents int) Exchange {
	x.RequestBody, x.RequestBodyElided = headOf(x.RequestBody, n)
	x.ResponseBody, x.ResponseBodyElided = headOf(x.ResponseBody, n)
	if len(x.Events) > maxEvents {
		x.EventsElided = len(x.Events) - maxEvents
		x.Events = x.Events[:maxEvents]
	}
	cut := false
	for _, e := range x.Events {
		cut = cut || len(e.Data) > n
	}
	if cut {
		events := make([]Event, len(x.Events))
		for i, e := range x.Events {
			head, elided := headOf([]byte(e.Data), n)
			if elided > 0 {
				e.Data = string(head) + "…"
			}
			events[i] = e
		}
		x.Events = events
	}
	return x
}

// headOf returns the first n bytes of b, backed off to a UTF-8 boundary
// when b is valid UTF-8, and the number of bytes left out.
func headOf(b Bytes, n int) (Bytes, int) {
	if len(b) <= n {
		return b, 0
	}
	i := n
	if utf8.Valid(b) {
		for i > 0 && !utf8.RuneStart(b[i]) {
			i--
		}
	}
	return b[:i:i], len(b) - i
}

// MediaType returns the response's media type, lower case, without parameters.
func (x Exchange) MediaType() string {
	ct := x.ResponseHeaders.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// String returns one terminal-safe line: METHOD URL -> STATUS, bytes, ms.
func (x Exchange) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s -> ", Sanitize(x.Method, 16), Sanitize(x.URL, 160))
	if x.Status == 0 {
		b.WriteString("no response")
	} else {
		fmt.Fprintf(&b, "%d", x.Status)
	}
	fmt.Fprintf(&b, ", %d B", x.ResponseBodySize)
	if x.SSE {
		fmt.Fprintf(&b, ", %d events", len(x.Events))
	}
	fmt.Fprintf(&b, ", %.1f ms", x.DurationMS)
	if x.Truncated {
		b.WriteString(", truncated")
	}
	if x.Error != "" {
		fmt.Fprintf(&b, ", error: %s", Sanitize(x.Error, 120))
	}
	return b.String()
}

// Sanitize makes a seller-controlled string safe for a terminal: control and
// bidi-override characters and invalid UTF-8 become '?', and it is cut to max
// runes (0 means no cut) with "…".
func Sanitize(s string, max int) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if max > 0 && n == max {
			b.WriteString("…")
			break
		}
		n++
		switch {
		case r == utf8.RuneError && w == 1, unicode.IsControl(r), isBidi(r):
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isBidi(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}
