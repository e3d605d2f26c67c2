package wire

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultResponseHeaderTimeout bounds the wait for response headers in the
// default base transport.
const DefaultResponseHeaderTimeout = 2 * time.Minute

var defaultBase = sync.OnceValue(func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// No transparent decompression: a gzip body is decoded by the tee,
	// through the body limit, and recorded as compressed.
	t.DisableCompression = true
	t.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	t.IdleConnTimeout = IdleConnTimeout
	t.MaxResponseHeaderBytes = MaxResponseHeaderBytes
	return t
})

// IdleConnTimeout closes the harness's idle connections before a server
// would: Node.js closes a keep-alive connection after 5 s idle, and a POST
// sent on a connection the server is closing at that moment fails with a
// reset that Go does not retry (a POST is not idempotent). Closing first
// avoids the race, so a seller's keep-alive habit never becomes a harness
// error.
const IdleConnTimeout = 4 * time.Second

// Transport is an http.RoundTripper that records every exchange (to the
// Capture in the request's context and to Recorder), adds configured headers,
// and bounds every response body. The consumer receives the real bytes; only
// the stored copy is redacted. Fields must not change after first use.
//
// Transport sends no Accept-Encoding of its own. A response with
// Content-Encoding gzip is decoded for the consumer through the same body
// limit (Exchange.ContentEncoding says so; ResponseHeaders keep the header as
// received); other codings are passed through undecoded.
type Transport struct {
	// Base performs the requests: a probes/fetch.Guard's transport, which
	// checks every address it connects to. nil means a shared clone of
	// http.DefaultTransport with compression disabled, for this package's
	// own tests: no harness code leaves it nil (a test of the project
	// holds every wire.Transport literal to naming its Base).
	Base http.RoundTripper
	// Recorder, when set, keeps every exchange of the run, also those made
	// without a Capture.
	Recorder *Recorder
	// BearerToken, when set, is sent as "Authorization: Bearer <token>" and
	// treated as a secret.
	BearerToken string
	// Token, when set, is where the bearer token comes from at run time
	// (an OAuth client: probes/auth). While BearerToken is a token Token
	// issued, each request carries Token's current token instead (renewed
	// before it expires), and a request the seller answers with HTTP 401
	// is sent once more with a renewed token: only that repeat is recorded
	// (Exchange.TokenRefreshed), and when it is refused again the 401
	// stands. Any other BearerToken (none, the auth probes' random one) is
	// sent as it is.
	Token TokenSource
	// Header holds headers added to every request that does not already
	// carry them (so a probe can send its own Authorization).
	Header http.Header
	// Secrets are extra values redacted wherever they appear.
	Secrets []string
	// SensitiveKey, when set, extends SensitiveKey for JSON keys, query
	// parameters and header names.
	SensitiveKey func(name string) bool
	// Limits bounds reads and storage.
	Limits Limits
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	once sync.Once
	red  *Redactor
	lim  Limits
}

// TokenSource gives a Transport its bearer token when the credential is
// obtained at run time (Transport.Token). Implementations are safe for
// concurrent use: many probes share one token.
type TokenSource interface {
	// Token returns the token to send now, obtaining one when it has none
	// or the one it has is about to expire.
	Token(ctx context.Context) (string, error)
	// Refresh returns the token to repeat a request the seller refused
	// with HTTP 401 after it was sent with stale: one obtained after stale
	// (a new one is obtained when there is none yet).
	Refresh(ctx context.Context, stale string) (string, error)
	// Issued reports whether tok is a token the source gave out.
	Issued(tok string) bool
	// Secrets holds every token the source gave out and the credentials
	// it authenticates with, for redaction.
	Secrets() *SecretSet
}

func (t *Transport) init() {
	t.once.Do(func() {
		lim := t.Limits
		if lim.LiveSecrets == nil && t.Token != nil {
			lim.LiveSecrets = t.Token.Secrets()
		}
		t.red = lim.Redactor(t.SensitiveKey, append(Secrets(t.BearerToken, t.Header), t.Secrets...)...)
		t.lim = t.Limits.withDefaults()
	})
}

// sourced reports whether the bearer token comes from t.Token.
func (t *Transport) sourced() bool {
	return t.Token != nil && t.BearerToken != "" && t.Token.Issued(t.BearerToken)
}

func (t *Transport) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return defaultBase()
}

// RedirectError is returned by CheckRedirect when it refuses a redirect.
type RedirectError struct {
	From, To string // redacted URLs
	Reason   string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("wire: redirect from %s to %s refused: %s", e.From, e.To, e.Reason)
}

// CheckRedirect is an http.Client CheckRedirect function: it allows at most
// Limits.MaxRedirects redirects and refuses any redirect to another origin
// (scheme, host and port) when the chain carries credentials: t's bearer
// token or credential headers, or a credential header on the first request.
// The 3xx exchange itself is recorded.
func (t *Transport) CheckRedirect(req *http.Request, via []*http.Request) error {
	t.init()
	if len(via) == 0 {
		return nil
	}
	first := via[0]
	from, to := t.red.URL(via[len(via)-1].URL), t.red.URL(req.URL)
	if len(via) > t.lim.MaxRedirects {
		return &RedirectError{From: from, To: to, Reason: fmt.Sprintf("more than %d redirects", t.lim.MaxRedirects)}
	}
	if origin(first.URL) != origin(req.URL) && (t.hasCredentials() || carriesCredentials(first.Header)) {
		return &RedirectError{From: from, To: to, Reason: "cross-origin redirect of a request carrying credentials"}
	}
	return nil
}

func (t *Transport) hasCredentials() bool {
	if t.BearerToken != "" {
		return true
	}
	return carriesCredentials(t.Header)
}

func carriesCredentials(h http.Header) bool {
	for name := range h {
		if SensitiveHeader(name) {
			return true
		}
	}
	return false
}

// Origin is u's origin, "scheme://host:port" in lower case with the
// scheme's default port made explicit ("" for nil).
func Origin(u *url.URL) string { return origin(u) }

func origin(u *url.URL) string {
	if u == nil {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + host + ":" + port
}

// firstOf walks a redirect chain back to the request the client started with.
func firstOf(req *http.Request) *http.Request {
	for i := 0; i < 64 && req.Response != nil && req.Response.Request != nil; i++ {
		req = req.Response.Request
	}
	return req
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.init()
	ctx := req.Context()
	// Credentials never follow a redirect to another origin.
	credentials := origin(firstOf(req).URL) == origin(req.URL)
	bearer, sourced := t.BearerToken, "" // sourced: the token from t.Token the request carries
	var tokenErr error
	if credentials && bearer != "" && req.Header.Get("Authorization") == "" && t.Header.Get("Authorization") == "" && t.sourced() {
		// Before the clock starts: obtaining a token is no part of the
		// seller's latency.
		bearer, tokenErr = t.Token.Token(ctx)
		if tokenErr == nil && bearer == "" {
			tokenErr = errors.New("wire: the token source gave an empty token")
		}
		sourced = bearer
	}
	start := t.now()
	out := req.Clone(ctx)
	if credentials {
		for name, vals := range t.Header {
			if len(out.Header.Values(name)) == 0 {
				out.Header[http.CanonicalHeaderKey(name)] = append([]string(nil), vals...)
			}
		}
		if bearer != "" && tokenErr == nil && out.Header.Get("Authorization") == "" {
			out.Header.Set("Authorization", "Bearer "+bearer)
		}
	}

	rec := newRecord(t.red, t.now, start, t.lim.Budget)
	rec.keepCut = t.lim.MaxEvidenceBytes
	reqBody, size, truncated, err := t.teeRequest(out, req.Body)
	rec.ex.Method = req.Method
	rec.ex.URL = t.red.URL(req.URL)
	rec.ex.RequestHeaders, _ = t.red.Header(out.Header)
	if len(reqBody) > 0 {
		rec.ex.RequestBody, _ = t.red.Body(reqBody, truncated)
		// Charged to the run's evidence budget like a reply: a storyboard
		// may echo megabytes of a seller's reply back in its requests. One
		// the budget cannot take is kept all the same (its reply is matched
		// by its JSON-RPC id), and leaves the budget spent.
		if !t.lim.Budget.take(len(rec.ex.RequestBody)) {
			t.lim.Budget.refuse()
		}
	}
	rec.ex.RequestBodySize = size
	rec.ex.RequestTruncated = truncated
	if c := captureFrom(ctx); c != nil {
		rec.ex.ProbeID = c.ProbeID
		c.add(rec, t.lim.MaxExchanges)
	}
	if t.Recorder != nil {
		t.Recorder.add(rec)
	}
	if err == nil && tokenErr != nil {
		// No token, no request: the call is the harness's failure.
		if out.Body != nil {
			out.Body.Close()
		}
		err = tokenErr
	}
	if err != nil {
		rec.finish(err, false, false, 0)
		return nil, err
	}

	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { rec.setFirstByte(t.now()) }}
	out = out.WithContext(httptrace.WithClientTrace(ctx, trace))
	resp, err := t.base().RoundTrip(out)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && sourced != "" {
		if again := t.renewed(out, sourced); again != nil {
			// The token expired (or was revoked) under the request: the
			// refusal is no answer to the call, the repeat is.
			resp.Body.Close()
			rec.setTokenRefreshed()
			resp, err = t.base().RoundTrip(again)
		}
	}
	if err != nil {
		rec.finish(err, false, false, 0)
		return nil, err
	}
	resp.Request = req
	sse := isSSE(resp.Header.Get("Content-Type"))
	encoding := ""
	if resp.Uncompressed {
		encoding = "gzip"
	} else if ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); ce == "gzip" || ce == "x-gzip" {
		encoding = ce
	}
	rec.setResponse(resp, sse, encoding) // headers as received, before any change for the consumer
	body := &teeBody{rc: resp.Body, rec: rec, lim: t.lim}
	if resp.Body == nil {
		body.rc = http.NoBody
	}
	body.counted = &countReader{r: body.rc, limit: wireLimit(t.lim.MaxBodyBytes)}
	body.src = body.counted
	if encoding != "" && !resp.Uncompressed {
		body.src = &lazyGzip{src: body.counted}
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
	}
	if sse {
		body.sse = newSSEDecoder(t.lim.MaxEventBytes, func(ev Event) error {
			rec.addEvent(ev)
			return nil
		})
	}
	resp.Body = body
	return resp, nil
}

func wireLimit(n int64) int64 { return n + n/64 + 4096 }

// renewed returns out to send again with a token t.Token obtained after
// stale, or nil when there is none (the source cannot renew it, or gives
// stale back) or out's body cannot be sent twice (one beyond MaxBodyBytes).
func (t *Transport) renewed(out *http.Request, stale string) *http.Request {
	if out.Body != nil && out.Body != http.NoBody && out.GetBody == nil {
		return nil
	}
	fresh, err := t.Token.Refresh(out.Context(), stale)
	if err != nil || fresh == "" || fresh == stale {
		return nil
	}
	again := out.Clone(out.Context())
	if out.GetBody != nil {
		body, err := out.GetBody()
		if err != nil {
			return nil
		}
		again.Body = body
	}
	again.Header.Set("Authorization", "Bearer "+fresh)
	return again
}

// teeRequest stores up to MaxBodyBytes of the request body and gives out a
// body that sends all of it.
func (t *Transport) teeRequest(out *http.Request, body io.ReadCloser) (stored []byte, size int64, truncated bool, err error) {
	if body == nil || body == http.NoBody {
		return nil, 0, false, nil
	}
	buf, err := io.ReadAll(io.LimitReader(body, t.lim.MaxBodyBytes+1))
	if err != nil {
		body.Close()
		return buf, int64(len(buf)), false, err
	}
	if int64(len(buf)) <= t.lim.MaxBodyBytes {
		body.Close()
		out.Body = io.NopCloser(bytes.NewReader(buf))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
		return buf, int64(len(buf)), false, nil
	}
	out.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(buf), body), body}
	out.GetBody = nil
	return buf[:t.lim.MaxBodyBytes], out.ContentLength, true, nil
}

func isSSE(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}

// countReader counts network bytes and bounds them (a gzip stream of empty
// members would otherwise never reach the decoded-body limit).
type countReader struct {
	r     io.Reader
	n     int64
	limit int64
}

func (c *countReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, &LimitError{What: "compressed response body", Limit: c.limit}
	}
	if rem := c.limit - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type lazyGzip struct {
	src io.Reader
	zr  *gzip.Reader
}

func (g *lazyGzip) Read(p []byte) (int, error) {
	if g.zr == nil {
		zr, err := gzip.NewReader(g.src)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("wire: gzip: %w", err)
		}
		g.zr = zr
	}
	return g.zr.Read(p)
}

// errAbandoned is recorded when the consumer closed a body before its end.
var errAbandoned = errors.New("wire: body closed by the client before its end")

// teeBody records the body as the consumer reads it.
type teeBody struct {
	rc      io.ReadCloser
	counted *countReader
	src     io.Reader
	rec     *record
	lim     Limits
	sse     *sseDecoder

	mu   sync.Mutex // serializes reads (consumer and drain)
	n    int64
	err  error // sticky terminal error
	done bool

	closeOnce sync.Once
}

func (b *teeBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.read(p)
}

func (b *teeBody) read(p []byte) (int, error) {
	if b.done {
		if b.err != nil {
			return 0, b.err
		}
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if rem := b.lim.MaxBodyBytes - b.n + 1; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := b.src.Read(p)
	if n > 0 {
		over := false
		if b.n+int64(n) > b.lim.MaxBodyBytes {
			n = int(b.lim.MaxBodyBytes - b.n)
			over = true
		}
		b.n += int64(n)
		b.rec.addBody(p[:n], b.counted.n, b.lim.MaxBodyBytes)
		if b.sse != nil {
			if serr := b.sse.feed(p[:n]); serr != nil {
				return n, b.end(serr, false, true)
			}
		}
		if over {
			return n, b.end(&LimitError{What: "response body", Limit: b.lim.MaxBodyBytes}, false, true)
		}
	}
	switch {
	case err == io.EOF:
		if b.sse != nil {
			if serr := b.sse.finish(); serr != nil {
				return n, b.end(serr, false, true)
			}
		}
		b.end(nil, true, false)
		return n, io.EOF
	case err != nil:
		var le *LimitError
		return n, b.end(err, false, errors.As(err, &le))
	}
	return n, nil
}

// end records the body's end; a non-nil err becomes sticky.
func (b *teeBody) end(err error, complete, truncated bool) error {
	b.done = true
	b.err = err
	b.rec.finish(err, complete, truncated, b.counted.n)
	if truncated {
		// Stop the network read now: nothing more will be consumed.
		b.rc.Close()
	}
	return err
}

// Close closes the body. A non-SSE body the consumer abandoned is first
// drained (at most DrainBytes, DrainTimeout) in the background so the
// capture is complete; an SSE stream is closed at once.
func (b *teeBody) Close() error {
	b.closeOnce.Do(func() {
		if b.sse != nil {
			go func() {
				b.mu.Lock()
				defer b.mu.Unlock()
				if !b.done {
					b.end(errAbandoned, false, false)
				}
			}()
			b.rc.Close()
			return
		}
		if b.mu.TryLock() {
			done := b.done
			b.mu.Unlock()
			if done { // the common case: read to the end
				b.rc.Close()
				return
			}
		}
		go b.drain()
	})
	return nil
}

func (b *teeBody) drain() {
	timer := time.AfterFunc(b.lim.DrainTimeout, func() { b.rc.Close() })
	defer timer.Stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.rc.Close()
	var buf []byte
	if !b.done {
		buf = make([]byte, 32<<10)
	}
	var drained int64
	for !b.done {
		if drained >= b.lim.DrainBytes {
			b.end(errAbandoned, false, false)
			return
		}
		n, err := b.read(buf[:min(int64(len(buf)), b.lim.DrainBytes-drained)])
		drained += int64(n)
		if err != nil && !b.done {
			b.end(err, false, false)
		}
	}
}

type captureKey struct{}

func captureFrom(ctx context.Context) *Capture {
	c, _ := ctx.Value(captureKey{}).(*Capture)
	return c
}
