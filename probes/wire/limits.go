package wire

import (
	"fmt"
	"slices"
	"time"
)

// Default limits. A zero field in Limits means "use the default".
const (
	// DefaultMaxBodyBytes bounds one response body (after decompression) and
	// the stored copy of one request body.
	DefaultMaxBodyBytes int64 = 8 << 20
	// DefaultMaxEventBytes bounds one SSE event, framing and comments included.
	DefaultMaxEventBytes = 1 << 20
	// DefaultMaxEvidenceBytes bounds the part of a body cut at a limit that
	// the exchange keeps: a cut body cannot be read as a reply, so keeping
	// all of it (up to MaxBodyBytes) would only cost memory and report size.
	DefaultMaxEvidenceBytes int64 = 64 << 10
	// DefaultMaxExchanges bounds the exchanges kept by one Capture.
	DefaultMaxExchanges = 1000
	// DefaultMaxRecorded bounds the exchanges kept by one Recorder.
	DefaultMaxRecorded = 20000
	// DefaultDrainBytes bounds how much of a non-SSE body abandoned by its
	// consumer is still read on Close so the capture is complete.
	DefaultDrainBytes int64 = 1 << 20
	// DefaultDrainTimeout bounds the time spent draining an abandoned body.
	DefaultDrainTimeout = 2 * time.Second
	// DefaultMaxRedirects bounds redirects followed by Transport.CheckRedirect.
	DefaultMaxRedirects = 5
	// DefaultResponseWait is how long Capture.Response waits for an in-flight
	// exchange when its ctx has no deadline.
	DefaultResponseWait = 5 * time.Second
	// MinSecretLen is the shortest configured secret matched inside bodies and
	// header values; shorter ones would shred unrelated evidence.
	MinSecretLen = 6
)

// Limits bounds what a Transport reads and keeps. Zero fields take the defaults.
type Limits struct {
	MaxBodyBytes  int64         // response body bytes read (and request body bytes stored)
	MaxEventBytes int           // bytes of one SSE event
	MaxExchanges  int           // exchanges kept per Capture
	DrainBytes    int64         // bytes drained from an abandoned non-SSE body
	DrainTimeout  time.Duration // time spent draining an abandoned body
	MaxRedirects  int           // redirects allowed by CheckRedirect
	// MaxEvidenceBytes bounds the bytes kept of a response body cut at a
	// limit (Exchange.Truncated); a body read whole is kept whole.
	MaxEvidenceBytes int64
	// Budget, shared by every transport of a run, bounds what the run keeps
	// in all; nil is unbounded.
	Budget *Budget
	// Secrets, shared by every transport of a run, are the run's credential
	// values: each transport redacts them besides its own (a transport that
	// sends none still records a seller echoing them).
	Secrets []string
	// LiveSecrets, shared by every transport of a run, are the credential
	// values it learns while it goes (the access tokens an OAuth client
	// obtains, each refresh's too): each transport redacts them from the
	// moment they are learnt.
	LiveSecrets *SecretSet
}

// Redactor returns the redactor of a run's evidence: secrets, the limits'
// Secrets and every LiveSecrets value, with extraKey extending
// SensitiveKey.
func (l Limits) Redactor(extraKey func(string) bool, secrets ...string) *Redactor {
	return NewLiveRedactor(append(slices.Clip(secrets), l.Secrets...), l.LiveSecrets, extraKey)
}

func (l Limits) withDefaults() Limits {
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxEventBytes <= 0 {
		l.MaxEventBytes = DefaultMaxEventBytes
	}
	if l.MaxExchanges <= 0 {
		l.MaxExchanges = DefaultMaxExchanges
	}
	if l.DrainBytes <= 0 {
		l.DrainBytes = DefaultDrainBytes
	}
	if l.DrainTimeout <= 0 {
		l.DrainTimeout = DefaultDrainTimeout
	}
	if l.MaxRedirects <= 0 {
		l.MaxRedirects = DefaultMaxRedirects
	}
	if l.MaxEvidenceBytes <= 0 {
		l.MaxEvidenceBytes = DefaultMaxEvidenceBytes
	}
	return l
}

// LimitError is returned to the reader of a body that exceeded a limit. The
// bytes up to the limit were delivered and recorded; the exchange is flagged
// Truncated.
type LimitError struct {
	What  string // "response body", "compressed response body" or "sse event"
	Limit int64  // the limit in bytes
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("wire: %s exceeds the limit of %d bytes", e.What, e.Limit)
}

// MaxJSONDepth is the deepest nesting of a seller's JSON that a report
// (results.json, evidence.json, junit.xml, report.html, the step summary)
// writes as JSON; a deeper value is kept as escaped text with a note. Real
// AdCP replies nest a dozen levels; a hostile one nested thousands deep
// would otherwise cost its depth squared in indentation, and readers with
// a recursion limit (Python's json stops near 1 000) could not load it.
const MaxJSONDepth = 64
