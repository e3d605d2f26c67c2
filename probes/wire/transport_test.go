package wire

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// client returns an http.Client over t that uses t.CheckRedirect, for the
// package's own tests: the harness's clients are probes/fetch.Client's,
// whose base transport is a fetch.Guard's and whose redirect policy is the
// call site's.
func (t *Transport) client() *http.Client {
	return &http.Client{Transport: t, CheckRedirect: t.CheckRedirect}
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestPlainJSONRPC(t *testing.T) {
	ctx := testCtx(t)
	const reply = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"z\":1,\"a\":null}}\n"
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req-1")
		io.WriteString(w, reply)
	})
	tr := &Transport{BearerToken: testToken, Header: http.Header{"X-Adcp-Client": {"conform"}}}
	cctx, capt := WithCapture(ctx, "rpc")
	got, _, err := post(cctx, t, tr.client(), srv.URL+"/a2a", `{"jsonrpc":"2.0","id":7,"method":"message/send","params":{}}`)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != reply {
		t.Fatalf("consumer read %q", got)
	}
	msg, x, err := capt.Response(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(msg) != reply {
		t.Errorf("message = %q, want the exact body %q", msg, reply)
	}
	result, rpcErr, id, err := SplitResponse(msg)
	if err != nil || string(result) != `{"z":1,"a":null}` || rpcErr != nil || string(id) != "7" {
		t.Errorf("SplitResponse = %s, %s, %s, %v", result, rpcErr, id, err)
	}
	if !x.Complete || !x.Finished || x.Truncated || x.Error != "" {
		t.Errorf("flags: %+v", x)
	}
	if x.RequestHeaders.Get("X-Adcp-Client") != "conform" || x.RequestHeaders.Get("Authorization") != Redacted {
		t.Errorf("request headers %v", x.RequestHeaders)
	}
	if x.ResponseBodySize != int64(len(reply)) || x.WireBytes != int64(len(reply)) {
		t.Errorf("sizes body %d wire %d", x.ResponseBodySize, x.WireBytes)
	}
	if x.DurationMS < x.HeadersMS || x.HeadersMS < 0 {
		t.Errorf("timings headers %.3f first byte %.3f end %.3f", x.HeadersMS, x.FirstByteMS, x.DurationMS)
	}
	line := x.String()
	if !strings.HasPrefix(line, fmt.Sprintf("POST %s/a2a -> 200, %d B, ", srv.URL, len(reply))) {
		t.Errorf("String() = %q", line)
	}
}

func TestSplitResponse(t *testing.T) {
	for _, tc := range []struct {
		in                 string
		result, rpcErr, id string // "<absent>" for nil
		wantErr            bool
	}{
		{in: `{"jsonrpc":"2.0","id":1,"result":{"a":1}}`, result: `{"a":1}`, rpcErr: "<absent>", id: "1"},
		{in: `{"jsonrpc":"2.0","id":"x","result":null}`, result: "null", rpcErr: "<absent>", id: `"x"`},
		{in: `{"jsonrpc":"2.0","error":{"code":-32029,"message":"m","data":[1]},"id":null}`, result: "<absent>", rpcErr: `{"code":-32029,"message":"m","data":[1]}`, id: "null"},
		{in: `{"jsonrpc":"2.0"}`, result: "<absent>", rpcErr: "<absent>", id: "<absent>"},
		{in: ` { "result" : [ 1, 2 ] } `, result: "[ 1, 2 ]", rpcErr: "<absent>", id: "<absent>"},
		{in: `{"Result":1}`, result: "<absent>", rpcErr: "<absent>", id: "<absent>"},
		{in: `{"result":1,"result":2}`, result: "2", rpcErr: "<absent>", id: "<absent>"}, // the last counts, as JSON.parse reads it
		{in: `[{"result":1}]`, wantErr: true},
		{in: `{"result":1}x`, wantErr: true},
		{in: `{"result":`, wantErr: true},
		{in: ``, wantErr: true},
	} {
		result, rpcErr, id, err := SplitResponse([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		show := func(b json.RawMessage) string {
			if b == nil {
				return "<absent>"
			}
			return string(b)
		}
		if show(result) != tc.result || show(rpcErr) != tc.rpcErr || show(id) != tc.id {
			t.Errorf("%q: got result %s error %s id %s", tc.in, show(result), show(rpcErr), show(id))
		}
	}
}

// generator writes chunk forever (or up to total bytes) without allocating.
func generator(chunk []byte, total int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var sent int64
		for total <= 0 || sent < total {
			n, err := w.Write(chunk)
			sent += int64(n)
			if err != nil || r.Context().Err() != nil {
				return
			}
		}
	}
}

func TestBodyOverLimitIsCutAndBounded(t *testing.T) {
	ctx := testCtx(t)
	const limit = 1 << 20
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		generator(chunk, 300<<20)(w, r) // a 300 MB body
	})
	tr := &Transport{Limits: Limits{MaxBodyBytes: limit}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cctx, capt := WithCapture(ctx, "big")
	got, _, err := post(cctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != limit || le.What != "response body" {
		t.Fatalf("read error = %v, want *LimitError at %d", err, limit)
	}
	if len(got) != limit {
		t.Errorf("consumer got %d bytes, want exactly the limit %d", len(got), limit)
	}
	x := onlyExchange(ctx, t, capt)
	runtime.ReadMemStats(&after)
	// The consumer read the limit; the exchange keeps the cut body's head.
	if !x.Truncated || x.Complete || int64(len(x.ResponseBody)) != DefaultMaxEvidenceBytes || x.ResponseBodySize != limit {
		t.Errorf("flags truncated %v complete %v stored %d size %d", x.Truncated, x.Complete, len(x.ResponseBody), x.ResponseBodySize)
	}
	if !strings.Contains(x.Error, "exceeds the limit") {
		t.Errorf("Error = %q", x.Error)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 40<<20 {
		t.Errorf("allocated %d MiB for a 1 MiB limit: the body was not cut", alloc>>20)
	}
}

func TestSSEEventOverLimit(t *testing.T) {
	ctx := testCtx(t)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: ")
		generator([]byte("aaaaaaaaaaaaaaaa"), 0)(w, r) // an endless data line
	})
	tr := &Transport{Limits: Limits{MaxEventBytes: 64 << 10}}
	cctx, capt := WithCapture(ctx, "sse-big")
	_, _, err := post(cctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
	var le *LimitError
	if !errors.As(err, &le) || le.What != "sse event" || le.Limit != 64<<10 {
		t.Fatalf("read error = %v, want an sse event *LimitError", err)
	}
	x := onlyExchange(ctx, t, capt)
	if !x.SSE || !x.Truncated || len(x.Events) != 1 || !x.Events[0].Dispatch {
		t.Errorf("sse %v truncated %v events %d", x.SSE, x.Truncated, len(x.Events))
	}
	if x.ResponseBodySize > 128<<10 {
		t.Errorf("read %d bytes past a 64 KiB event limit", x.ResponseBodySize)
	}
}

func TestSSEResponseAfterNotificationAndRequest(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		t.Run(fmt.Sprintf("%q", eol), func(t *testing.T) {
			ctx := testCtx(t)
			stream := strings.Join([]string{
				": keep-alive", "id: p0", "data:", "", // priming event, empty data
				"event: message", `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`, "",
				"event: message", `data: {"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}`, "",
				"event: message", "id: e3", `data:{"jsonrpc":"2.0","id":1,`, `data: "result":{"ok":true}}`, "", "",
			}, eol)
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
				for _, part := range []string{stream[:7], stream[7:50], stream[50:]} { // odd chunking
					io.WriteString(w, part)
					w.(http.Flusher).Flush()
				}
			})
			tr := &Transport{}
			cctx, capt := WithCapture(ctx, "sse")
			got, _, err := post(cctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
			if err != nil || string(got) != stream {
				t.Fatalf("consumer read %q, %v", got, err)
			}
			msg, x, err := capt.Response(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := "{\"jsonrpc\":\"2.0\",\"id\":1,\n\"result\":{\"ok\":true}}"; string(msg) != want {
				t.Errorf("message = %q, want %q", msg, want)
			}
			if len(x.Events) != 4 || x.Events[3].ID != "e3" || string(x.Events[3].Raw) != strings.Join([]string{"event: message", "id: e3", `data:{"jsonrpc":"2.0","id":1,`, `data: "result":{"ok":true}}`, "", ""}, eol) {
				t.Errorf("events = %+v", x.Events)
			}
			if string(x.ResponseBody) != stream {
				t.Errorf("body = %q", x.ResponseBody)
			}
		})
	}
}

// gzipOf returns members gzip members of 8 MiB of zeros each (a multistream
// body, decoded as one by compress/gzip).
func gzipOf(members int) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(make([]byte, 8<<20))
	zw.Close()
	return bytes.Repeat(b.Bytes(), members)
}

func TestGzipBomb(t *testing.T) {
	ctx := testCtx(t)
	bomb := gzipOf(32) // 256 MiB of zeros, about 256 KiB on the wire
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	})
	const limit = 1 << 20
	tr := &Transport{Limits: Limits{MaxBodyBytes: limit}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cctx, capt := WithCapture(ctx, "bomb")
	got, resp, err := post(cctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
	var le *LimitError
	if !errors.As(err, &le) || len(got) != limit {
		t.Fatalf("read %d bytes, err %v; want the limit and a *LimitError", len(got), err)
	}
	if resp.Header.Get("Content-Encoding") != "" || !resp.Uncompressed {
		t.Errorf("consumer sees Content-Encoding %q, Uncompressed %v", resp.Header.Get("Content-Encoding"), resp.Uncompressed)
	}
	x := onlyExchange(ctx, t, capt)
	runtime.ReadMemStats(&after)
	if x.ContentEncoding != "gzip" || x.ResponseHeaders.Get("Content-Encoding") != "gzip" || !x.Truncated {
		t.Errorf("encoding %q header %q truncated %v", x.ContentEncoding, x.ResponseHeaders.Get("Content-Encoding"), x.Truncated)
	}
	if x.WireBytes <= 0 || x.WireBytes >= int64(len(bomb)) {
		t.Errorf("wire bytes %d of %d: the bomb should be cut early", x.WireBytes, len(bomb))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 40<<20 {
		t.Errorf("allocated %d MiB decoding a bomb under a 1 MiB limit", alloc>>20)
	}
}

func TestGzipBodyDecodedAndRecorded(t *testing.T) {
	ctx := testCtx(t)
	const reply = `{"jsonrpc":"2.0","id":1,"result":{}}`
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	io.WriteString(zw, reply)
	zw.Close()
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(z.Bytes())
	})
	cctx, capt := WithCapture(ctx, "gz")
	got, _, err := post(cctx, t, (&Transport{}).client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
	if err != nil || string(got) != reply {
		t.Fatalf("consumer read %q, %v", got, err)
	}
	x := onlyExchange(ctx, t, capt)
	if string(x.ResponseBody) != reply || x.ContentEncoding != "gzip" || x.WireBytes != int64(z.Len()) || !x.Complete {
		t.Errorf("stored %q encoding %q wire %d complete %v", x.ResponseBody, x.ContentEncoding, x.WireBytes, x.Complete)
	}
}

func TestSecretEchoed(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		echoed     bool
	}{
		{"plain", `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"invalid credential Bearer ` + testToken + `"}}`, true},
		{"escaped", `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"bad \u0074ok-3f9a1c2b7e-canary"}}`, true},
		{"in a sensitive key", `{"jsonrpc":"2.0","id":1,"result":{"token":"` + testToken + `"}}`, true},
		{"text", "401: " + testToken, true},
		{"clean", `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"invalid credential"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, tc.body)
			})
			cctx, capt := WithCapture(ctx, "echo")
			got, _, err := post(cctx, t, (&Transport{BearerToken: testToken}).client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
			if err != nil || string(got) != tc.body {
				t.Fatalf("the consumer must get the real bytes: %q, %v", got, err)
			}
			x := onlyExchange(ctx, t, capt)
			if x.SecretEchoed != tc.echoed {
				t.Errorf("SecretEchoed = %v, want %v", x.SecretEchoed, tc.echoed)
			}
			if bytes.Contains(x.ResponseBody, []byte(testToken)) || bytes.Contains(x.ResponseBody, []byte("3f9a1c2b7e-canary")) {
				t.Errorf("stored body keeps the token: %q", x.ResponseBody)
			}
			if json.Valid([]byte(tc.body)) && !json.Valid(x.ResponseBody) {
				t.Errorf("redaction broke the JSON: %q", x.ResponseBody)
			}
		})
	}
}

func TestSecretInSSEEventAndHeaders(t *testing.T) {
	ctx := testCtx(t)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Debug", "auth="+testToken)
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"echo\":\""+testToken+"\"}}\n\n")
	})
	cctx, capt := WithCapture(ctx, "sse-echo")
	if _, _, err := post(cctx, t, (&Transport{BearerToken: testToken}).client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`); err != nil {
		t.Fatal(err)
	}
	msg, x, err := capt.Response(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := json.Marshal(x)
	if !x.SecretEchoed || bytes.Contains(all, []byte(testToken)) {
		t.Errorf("echoed %v, stored exchange %s", x.SecretEchoed, all)
	}
	if string(msg) != `{"jsonrpc":"2.0","id":1,"result":{"echo":"[redacted]"}}` {
		t.Errorf("message = %s", msg)
	}
}

func TestTruncatedBodyLosesSecretPrefix(t *testing.T) {
	ctx := testCtx(t)
	body := strings.Repeat("y", 100) + testToken
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
	tr := &Transport{BearerToken: testToken, Limits: Limits{MaxBodyBytes: 110}}
	cctx, capt := WithCapture(ctx, "cut")
	post(cctx, t, tr.client(), srv.URL, "{}")
	x := onlyExchange(ctx, t, capt)
	if want := strings.Repeat("y", 100) + Redacted; string(x.ResponseBody) != want {
		t.Errorf("stored %q, want %q", x.ResponseBody, want)
	}
}

func TestRedirects(t *testing.T) {
	ctx := testCtx(t)
	var otherHits, otherAuth atomic.Int32
	other := serve(t, func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		if r.Header.Get("Authorization") != "" {
			otherAuth.Add(1)
		}
		io.WriteString(w, `{}`)
	})
	var sameAuth atomic.Value
	var self *httptest.Server
	self = serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cross":
			http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
		case "/same":
			http.Redirect(w, r, "/final", http.StatusTemporaryRedirect)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/final":
			sameAuth.Store(r.Header.Get("Authorization"))
			io.WriteString(w, `{}`)
		}
	})
	tr := &Transport{BearerToken: testToken}

	cctx, capt := WithCapture(ctx, "cross")
	_, _, err := post(cctx, t, tr.client(), self.URL+"/cross", "{}")
	var re *RedirectError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "cross-origin") {
		t.Fatalf("cross-origin redirect: err = %v, want *RedirectError", err)
	}
	if otherHits.Load() != 0 {
		t.Error("the other origin was contacted")
	}
	if err := capt.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if xs := capt.Exchanges(); len(xs) != 1 || xs[0].Status != http.StatusTemporaryRedirect {
		t.Errorf("the 3xx exchange should be recorded: %v", xs)
	}

	// Even a client without CheckRedirect never carries the token across origins.
	bare := &http.Client{Transport: tr}
	if _, _, err := post(ctx, t, bare, self.URL+"/cross", "{}"); err != nil {
		t.Fatal(err)
	}
	if otherHits.Load() != 1 || otherAuth.Load() != 0 {
		t.Errorf("other origin hits %d with Authorization %d", otherHits.Load(), otherAuth.Load())
	}

	// Same origin: followed, with credentials.
	if _, _, err := post(ctx, t, tr.client(), self.URL+"/same", "{}"); err != nil {
		t.Fatal(err)
	}
	if sameAuth.Load() != "Bearer "+testToken {
		t.Errorf("same-origin redirect Authorization = %v", sameAuth.Load())
	}

	// Loops are capped.
	_, _, err = post(ctx, t, tr.client(), self.URL+"/loop", "{}")
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "more than 5 redirects") {
		t.Errorf("loop: err = %v", err)
	}
}

func TestAbandonedBodyIsDrained(t *testing.T) {
	ctx := testCtx(t)
	const reply = `{"jsonrpc":"2.0","id":1,"result":{"late":true}}`
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, reply)
	})
	cctx, capt := WithCapture(ctx, "abandon")
	req, _ := http.NewRequestWithContext(cctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"m"}`))
	resp, err := (&Transport{}).client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // never read, as the SDK does on a wrong Content-Type
	msg, x, err := capt.Response(ctx)
	if err != nil || string(msg) != reply || !x.Complete {
		t.Errorf("message %q complete %v err %v", msg, x.Complete, err)
	}
}

func TestAbandonedSlowBodyIsBounded(t *testing.T) {
	ctx := testCtx(t)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"partial":`)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // stalls
	})
	tr := &Transport{Limits: Limits{DrainTimeout: 100 * time.Millisecond}}
	cctx, capt := WithCapture(ctx, "stall")
	req, _ := http.NewRequestWithContext(cctx, http.MethodGet, srv.URL, nil)
	resp, err := tr.client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp.Body.Close()
	if time.Since(start) > 50*time.Millisecond {
		t.Error("Close blocked on the drain")
	}
	x := onlyExchange(ctx, t, capt)
	if x.Complete || string(x.ResponseBody) != `{"partial":` || x.Error == "" {
		t.Errorf("complete %v body %q error %q", x.Complete, x.ResponseBody, x.Error)
	}
}

func TestTransportErrorRecorded(t *testing.T) {
	ctx := testCtx(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rec := &Recorder{}
	tr := &Transport{Recorder: rec}
	if _, _, err := post(ctx, t, tr.client(), url, "{}"); err == nil {
		t.Fatal("no error from a closed server")
	}
	xs := rec.Exchanges()
	if len(xs) != 1 || xs[0].Status != 0 || xs[0].Error == "" || !xs[0].Finished {
		t.Fatalf("recorded %+v", xs)
	}
	if !strings.Contains(xs[0].String(), "-> no response") {
		t.Errorf("String() = %q", xs[0].String())
	}
}

func TestLimitsOnExchangesAndResponseForUnknownID(t *testing.T) {
	ctx := testCtx(t)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{}}`) // wrong id
	})
	rec := &Recorder{Max: 2}
	tr := &Transport{Recorder: rec, Limits: Limits{MaxExchanges: 1}}
	cctx, capt := WithCapture(ctx, "many")
	for i := 0; i < 3; i++ {
		post(cctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
	}
	if len(capt.Exchanges()) != 1 || capt.Dropped() != 2 || len(rec.Exchanges()) != 2 || rec.Dropped() != 1 {
		t.Errorf("capture %d/%d dropped, recorder %d/%d dropped", len(capt.Exchanges()), capt.Dropped(), len(rec.Exchanges()), rec.Dropped())
	}
	_, x, err := capt.Response(ctx)
	if !errors.Is(err, ErrNoResponse) || x.Status != 200 {
		t.Errorf("wrong-id response: err %v, carrier %v", err, x)
	}
}

func TestExchangeJSONRoundTripAndString(t *testing.T) {
	x := Exchange{
		Seq: 3, Method: "POST", URL: "http://h/\x1b[31mred\u202e", Status: 200,
		RequestBody: Bytes(`{"a":1}`), ResponseBody: Bytes{0xff, 0x00, 'a'},
		Events:     []Event{{Data: "d", Raw: Bytes("data: d\n\n"), Dispatch: true, Complete: true}},
		DurationMS: 1.5, ResponseBodySize: 3,
	}
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"response_body":{"base64":"/wBh"}`)) || !bytes.Contains(b, []byte(`"request_body":"{\"a\":1}"`)) {
		t.Errorf("JSON = %s", b)
	}
	var back Exchange
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.ResponseBody, x.ResponseBody) || !bytes.Equal(back.RequestBody, x.RequestBody) || string(back.Events[0].Raw) != "data: d\n\n" {
		t.Errorf("round trip lost bytes: %+v", back)
	}
	if got, want := x.String(), "POST http://h/?[31mred? -> 200, 3 B, 1.5 ms"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestProbeHeadersWin(t *testing.T) {
	ctx := testCtx(t)
	var seen atomic.Value
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { seen.Store(r.Header.Get("Authorization")) })
	tr := &Transport{BearerToken: testToken, Secrets: []string{"bogus-probe-token"}}
	cctx, capt := WithCapture(ctx, "bogus-auth")
	req, _ := http.NewRequestWithContext(cctx, http.MethodGet, srv.URL+"/?access_token=bogus-probe-token", nil)
	req.Header.Set("Authorization", "Bearer bogus-probe-token")
	resp, err := tr.client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen.Load() != "Bearer bogus-probe-token" {
		t.Errorf("server saw %v: a probe's own Authorization must be kept", seen.Load())
	}
	x := onlyExchange(ctx, t, capt)
	if strings.Contains(x.URL, "bogus-probe-token") || x.RequestHeaders.Get("Authorization") != Redacted {
		t.Errorf("stored URL %q, Authorization %q", x.URL, x.RequestHeaders.Get("Authorization"))
	}
}

func TestMaxEvidenceBytesBoundsTheKeptHeadOfACutBodyOnly(t *testing.T) {
	ctx := testCtx(t)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/small" {
			_, _ = w.Write(bytes.Repeat([]byte("s"), 3000))
			return
		}
		_, _ = w.Write(bytes.Repeat([]byte("x"), 10000))
	})
	tr := &Transport{Limits: Limits{MaxBodyBytes: 5000, MaxEvidenceBytes: 1000}}
	cctx, capt := WithCapture(ctx, "cut")
	_, _, _ = post(cctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
	if x := onlyExchange(ctx, t, capt); !x.Truncated || len(x.ResponseBody) != 1000 || x.ResponseBodySize != 5000 {
		t.Errorf("cut body: truncated %v, kept %d, read %d; want true, 1000, 5000", x.Truncated, len(x.ResponseBody), x.ResponseBodySize)
	}
	cctx, capt = WithCapture(ctx, "whole")
	_, _, _ = post(cctx, t, tr.client(), srv.URL+"/small", `{"jsonrpc":"2.0","id":1,"method":"m"}`)
	if x := onlyExchange(ctx, t, capt); x.Truncated || len(x.ResponseBody) != 3000 {
		t.Errorf("whole body: truncated %v, kept %d; want false, 3000", x.Truncated, len(x.ResponseBody))
	}
}

// A seller may echo the token anywhere: in an SSE event's id and event
// fields, in a response header's name. None of it is stored, and a long id
// repeated on every later event is bounded.
func TestSecretInSSEIDEventAndHeaderName(t *testing.T) {
	ctx := testCtx(t)
	longID := strings.Repeat("i", 10_000)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Leak-"+testToken, "v")
		io.WriteString(w, "id: "+testToken+"\nevent: "+testToken+"\ndata: {}\n\n")
		io.WriteString(w, "id: "+longID+"\ndata: {}\n\n")
		for range 3 {
			io.WriteString(w, "data: {}\n\n")
		}
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	})
	cctx, capt := WithCapture(ctx, "sse-fields")
	if _, _, err := post(cctx, t, (&Transport{BearerToken: testToken}).client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`); err != nil {
		t.Fatal(err)
	}
	_, x, err := capt.Response(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := json.Marshal(x)
	if bytes.Contains(all, []byte(testToken)) || bytes.Contains(bytes.ToLower(all), bytes.ToLower([]byte(testToken))) {
		i := bytes.Index(bytes.ToLower(all), bytes.ToLower([]byte(testToken)))
		t.Errorf("the stored exchange holds the token: …%s…", all[max(0, i-80):min(len(all), i+80)])
	}
	if !x.SecretEchoed {
		t.Error("the echo was not flagged")
	}
	for i, ev := range x.Events {
		if len(ev.ID) > MaxEventFieldBytes+32 || len(ev.Type) > MaxEventFieldBytes+32 {
			t.Errorf("event %d keeps an id of %d bytes and a type of %d", i, len(ev.ID), len(ev.Type))
		}
	}
}

// Once the run's evidence budget is spent, an exchange keeps the size and
// SHA-256 of its body and the count of its events, not the bytes: a seller
// answering every call with a body just under the limits cannot make the
// run hold gigabytes.
func TestTheRunsBudgetBoundsWhatIsKept(t *testing.T) {
	ctx := testCtx(t)
	big := `{"jsonrpc":"2.0","id":1,"result":{"pad":"` + strings.Repeat("x", 4000) + `"}}`
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			for range 50 {
				io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
			}
			io.WriteString(w, "data: "+big+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, big)
	})
	tr := &Transport{Limits: Limits{Budget: NewBudget(6000)}}
	first, cap1 := WithCapture(ctx, "first")
	if _, _, err := post(first, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`); err != nil {
		t.Fatal(err)
	}
	if msg, x, err := cap1.Response(ctx); err != nil || x.Dropped != nil || len(msg) == 0 {
		t.Fatalf("the first reply, within the budget: msg %d bytes, dropped %+v, err %v", len(msg), x.Dropped, err)
	}
	for _, path := range []string{"/", "/sse"} {
		cctx, capt := WithCapture(ctx, "over"+path)
		if _, _, err := post(cctx, t, tr.client(), srv.URL+path, `{"jsonrpc":"2.0","id":1,"method":"m"}`); err != nil {
			t.Fatal(err)
		}
		_ = capt.Wait(ctx)
		xs := capt.Exchanges()
		if len(xs) != 1 || xs[0].Dropped == nil {
			t.Fatalf("%s: exchanges %d, dropped %+v; want the body or events dropped", path, len(xs), xs[0].Dropped)
		}
		d := xs[0].Dropped
		if path == "/" && (d.BodyBytes != len(big) || len(d.BodySHA256) != 64 || len(xs[0].ResponseBody) != 0) {
			t.Errorf("body: dropped %+v, kept %d bytes", d, len(xs[0].ResponseBody))
		}
		if path == "/sse" && d.Events == 0 {
			t.Errorf("events: dropped %+v", d)
		}
	}
	if !tr.Limits.Budget.Spent() {
		t.Error("the budget does not say it was spent")
	}
}

// A transport that sends no credential of its own (a no-credential probe, a
// fetch on another origin) still redacts the run's secrets (Limits.Secrets),
// which a seller echoes from what it learnt earlier, in any letter case, in
// the body, the SSE id and event fields, and header names and values.
func TestRunSecretsRedactedByATransportSendingNone(t *testing.T) {
	ctx := testCtx(t)
	up := strings.ToUpper(testToken)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Echo-"+testToken, "1")
		w.Header().Set("X-Token-"+up, "1") // a credential-like name keeps its own secrets out too
		w.Header().Set("X-Debug", "auth="+up)
		io.WriteString(w, "id: "+up+"\nevent: "+testToken+"\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"echo\":\""+up+"\"}}\n\n")
	})
	cctx, capt := WithCapture(ctx, "anon-echo")
	tr := &Transport{Limits: Limits{Secrets: []string{testToken}}}
	if _, _, err := post(cctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`); err != nil {
		t.Fatal(err)
	}
	_, x, err := capt.Response(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := json.Marshal(x)
	if !x.SecretEchoed || bytes.Contains(bytes.ToLower(all), []byte(strings.ToLower(testToken))) {
		t.Errorf("echoed %v, stored exchange %s", x.SecretEchoed, all)
	}
}

// A long id followed by many tiny events: the id is stored once (on the
// block that set it, cut at MaxEventFieldBytes), and each event costs the
// budget EventOverhead besides its bytes, so tiny events cannot hold
// fifteen times the budget in memory.
func TestTinyEventsWithALongIDAreBounded(t *testing.T) {
	ctx := testCtx(t)
	const tiny = 2000
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: "+strings.Repeat("I", 60<<10)+"\ndata: {}\n\n"+strings.Repeat("data:\n\n", tiny))
	})
	budget := NewBudget(100 << 10)
	tr := &Transport{Limits: Limits{Budget: budget}}
	cctx, capt := WithCapture(ctx, "tiny")
	if _, _, err := post(cctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`); err != nil {
		t.Fatal(err)
	}
	_ = capt.Wait(ctx)
	x := capt.Exchanges()[0]
	withID := 0
	for _, ev := range x.Events {
		if ev.ID != "" {
			withID++
			if len(ev.ID) > MaxEventFieldBytes+32 {
				t.Errorf("stored id is %d bytes", len(ev.ID))
			}
		}
	}
	if withID != 1 {
		t.Errorf("%d stored events carry the id, want the one that set it", withID)
	}
	if x.Dropped == nil || x.Dropped.Events == 0 || len(x.Events) > (100<<10)/EventOverhead {
		t.Errorf("kept %d of %d events, dropped %+v: the budget charges no overhead per event", len(x.Events), tiny+1, x.Dropped)
	}
}

// Request bodies are charged to the run's evidence budget (issue 21): a
// request of megabytes (a storyboard echoing a seller's reply back) spends
// it, so the reply after it keeps its size and SHA-256 only; the request
// itself is kept (the harness matches replies by its id).
func TestRequestBodiesAreChargedToTheBudget(t *testing.T) {
	ctx := testCtx(t)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	tr := &Transport{Limits: Limits{Budget: NewBudget(6000)}}
	big := `{"jsonrpc":"2.0","id":1,"method":"m","params":{"pad":"` + strings.Repeat("x", 8000) + `"}}`
	cctx, capt := WithCapture(ctx, "big-request")
	if _, _, err := post(cctx, t, tr.client(), srv.URL, big); err != nil {
		t.Fatal(err)
	}
	_ = capt.Wait(ctx)
	xs := capt.Exchanges()
	if len(xs) != 1 || len(xs[0].RequestBody) != len(big) || xs[0].Dropped == nil || xs[0].Dropped.BodySHA256 == "" {
		t.Fatalf("exchanges %d; want the request kept whole and the reply after it dropped: %+v", len(xs), xs)
	}
	if !tr.Limits.Budget.Spent() {
		t.Error("an 8 KB request did not spend a 6 000-byte budget")
	}
}
