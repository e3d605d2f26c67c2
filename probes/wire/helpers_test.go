package wire

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

const testToken = "tok-3f9a1c2b7e-canary"

// served is one exchange as the test server wrote it.
type served struct {
	reqHeader http.Header
	reqBody   []byte
	respBody  []byte
}

// serverLog wraps a handler and keeps the exact bytes it wrote.
type serverLog struct {
	mu  sync.Mutex
	all []*served
}

type logWriter struct {
	http.ResponseWriter
	mu *sync.Mutex
	s  *served
}

func (w logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.s.respBody = append(w.s.respBody, p...)
	w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w logWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (l *serverLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		s := &served{reqHeader: r.Header.Clone(), reqBody: body}
		l.mu.Lock()
		l.all = append(l.all, s)
		l.mu.Unlock()
		h.ServeHTTP(logWriter{ResponseWriter: w, mu: &l.mu, s: s}, r)
	})
}

// find returns the served exchange whose request body contains sub.
func (l *serverLog) find(sub string) *served {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.all {
		if bytes.Contains(s.reqBody, []byte(sub)) {
			c := *s
			c.respBody = append([]byte(nil), s.respBody...)
			return &c
		}
	}
	return nil
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// post sends a JSON-RPC body with hc and returns what the consumer read.
func post(ctx context.Context, t *testing.T, hc *http.Client, url, body string) ([]byte, *http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	return got, resp, err
}

// onlyExchange waits for the capture and returns its single exchange.
func onlyExchange(ctx context.Context, t *testing.T, c *Capture) Exchange {
	t.Helper()
	if err := c.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	xs := c.Exchanges()
	if len(xs) != 1 {
		t.Fatalf("capture holds %d exchanges, want 1", len(xs))
	}
	return xs[0]
}
