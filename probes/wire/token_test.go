package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeSource is a TokenSource whose tokens are "fake-token-N"; Refresh
// issues the next one unless stale is already old.
type fakeSource struct {
	mu        sync.Mutex
	n         int
	err       error // returned by Token and Refresh when set
	stuck     bool  // Refresh gives the current token back
	refreshes atomic.Int32
	set       SecretSet
}

func (f *fakeSource) current() string { return fmt.Sprintf("fake-token-%d", f.n) }

func (f *fakeSource) Token(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return "", f.err
	}
	f.set.Add(f.current())
	return f.current(), nil
}

func (f *fakeSource) Refresh(_ context.Context, stale string) (string, error) {
	f.refreshes.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return "", f.err
	}
	if stale == f.current() && !f.stuck {
		f.n++
	}
	f.set.Add(f.current())
	return f.current(), nil
}

func (f *fakeSource) Issued(tok string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i <= f.n; i++ {
		if tok == fmt.Sprintf("fake-token-%d", i) {
			return true
		}
	}
	return false
}

func (f *fakeSource) Secrets() *SecretSet { return &f.set }

// accepting serves 401 to any token but want(), and 200 echoing the
// request body otherwise; it counts the requests and their tokens.
type accepting struct {
	want  func() string
	mu    sync.Mutex
	seen  []string
	echo  bool // the 200 also echoes the token
	calls atomic.Int32
}

func (a *accepting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	got := r.Header.Get("Authorization")
	a.mu.Lock()
	a.seen = append(a.seen, got)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if got != "Bearer "+a.want() {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32028,"message":"expired"}}`)
		return
	}
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &req)
	echo := ""
	if a.echo {
		echo = got
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"body_len":%d,"echo":%q}}`, req.ID, len(body), echo)
}

func (a *accepting) tokens() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// A request carries the source's current token, not the BearerToken it
// was configured with; a 401 is answered by one repeat with a renewed
// token, and only the repeat is recorded (flagged TokenRefreshed), so the
// call's JSON-RPC response is the seller's answer to a valid credential.
func TestASourcedTokenIsRenewedOnceOnA401(t *testing.T) {
	ctx := testCtx(t)
	src := &fakeSource{}
	seller := &accepting{}
	seller.want = func() string { return "fake-token-1" } // the seller revoked token 0
	srv := serve(t, seller.ServeHTTP)
	tr := &Transport{BearerToken: "fake-token-0", Token: src}
	cctx, capt := WithCapture(ctx, "renew")
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`
	got, resp, err := post(cctx, t, tr.client(), srv.URL, body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %v, err %v: %s", resp, err, got)
	}
	if !bytes.Contains(got, []byte(fmt.Sprintf(`"body_len":%d`, len(body)))) {
		t.Errorf("the repeat did not carry the whole body: %s", got)
	}
	if toks := seller.tokens(); len(toks) != 2 || toks[0] != "Bearer fake-token-0" || toks[1] != "Bearer fake-token-1" {
		t.Errorf("the seller saw %q, want token 0 then token 1", toks)
	}
	x := onlyExchange(ctx, t, capt)
	if x.Status != http.StatusOK || !x.TokenRefreshed {
		t.Errorf("recorded status %d, TokenRefreshed %v; want the repeat's 200, flagged", x.Status, x.TokenRefreshed)
	}
	if v := x.RequestHeaders.Get("Authorization"); v != Redacted {
		t.Errorf("recorded Authorization %q", v)
	}
	if msg, _, err := capt.Response(ctx); err != nil || !bytes.Contains(msg, []byte(`"result"`)) {
		t.Errorf("the call's response is %s (%v), want the repeat's result", msg, err)
	}
}

// The repeat is made once: a seller refusing the renewed token too has its
// 401 stand. A source giving the refused token back, or none, makes no
// repeat at all.
func TestA401StandsAfterOneRenewal(t *testing.T) {
	for _, tc := range []struct {
		name        string
		src         *fakeSource
		wantCalls   int32
		wantRefresh int32
	}{
		{"refused again", &fakeSource{}, 2, 1},
		{"same token back", &fakeSource{stuck: true}, 1, 1},
		{"renewal fails", &fakeSource{}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			seller := &accepting{want: func() string { return "never" }}
			srv := serve(t, seller.ServeHTTP)
			tr := &Transport{BearerToken: "fake-token-0", Token: tc.src}
			if tc.name == "renewal fails" {
				tr.Token = &failingRefresh{tc.src}
			}
			cctx, capt := WithCapture(ctx, "stand")
			_, resp, err := post(cctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
			if err != nil || resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("resp %v, err %v; want the 401", resp, err)
			}
			if n := seller.calls.Load(); n != tc.wantCalls {
				t.Errorf("the seller got %d requests, want %d", n, tc.wantCalls)
			}
			if n := tc.src.refreshes.Load(); n != tc.wantRefresh {
				t.Errorf("%d refreshes, want %d", n, tc.wantRefresh)
			}
			if x := onlyExchange(ctx, t, capt); x.Status != http.StatusUnauthorized || x.TokenRefreshed != (tc.wantCalls == 2) {
				t.Errorf("recorded %d, TokenRefreshed %v", x.Status, x.TokenRefreshed)
			}
		})
	}
}

// failingRefresh is a source whose renewals fail.
type failingRefresh struct{ *fakeSource }

func (f *failingRefresh) Refresh(ctx context.Context, stale string) (string, error) {
	f.refreshes.Add(1)
	return "", errors.New("token endpoint down")
}

// Any other BearerToken is sent as it is: none (the no-credential probes),
// or a random one (the invalid-credential probe), whose 401 is the
// seller's answer and is never repeated.
func TestOnlyASourcedTokenIsReplaced(t *testing.T) {
	for _, tc := range []struct {
		bearer, want string
	}{
		{"", ""},
		{"adcp-conform-invalid-0123456789", "Bearer adcp-conform-invalid-0123456789"},
	} {
		ctx := testCtx(t)
		src := &fakeSource{}
		seller := &accepting{want: func() string { return "fake-token-0" }}
		srv := serve(t, seller.ServeHTTP)
		tr := &Transport{BearerToken: tc.bearer, Token: src}
		_, resp, err := post(ctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%q: resp %v, err %v", tc.bearer, resp, err)
		}
		if toks := seller.tokens(); len(toks) != 1 || toks[0] != tc.want || src.refreshes.Load() != 0 {
			t.Errorf("%q: the seller saw %q after %d refreshes", tc.bearer, toks, src.refreshes.Load())
		}
	}
}

// Without a token no request goes out: the call is a transport error, the
// source's, recorded on the exchange.
func TestNoTokenNoRequest(t *testing.T) {
	ctx := testCtx(t)
	seller := &accepting{want: func() string { return "fake-token-0" }}
	srv := serve(t, seller.ServeHTTP)
	tr := &Transport{BearerToken: "fake-token-0", Token: &fakeSource{err: errors.New("the token endpoint refused the client: invalid_client")}}
	cctx, capt := WithCapture(ctx, "no-token")
	_, _, err := post(cctx, t, tr.client(), srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
	if err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("err %v, want the source's", err)
	}
	if n := seller.calls.Load(); n != 0 {
		t.Errorf("the seller got %d requests", n)
	}
	if x := onlyExchange(ctx, t, capt); !strings.Contains(x.Error, "invalid_client") || x.Status != 0 {
		t.Errorf("recorded %d %q", x.Status, x.Error)
	}
}

// A token obtained after the transport was made (a renewal mid-run) is
// redacted wherever the seller echoes it, and the run's LiveSecrets are
// followed by a transport that sends no token at all.
func TestARenewedTokenIsRedacted(t *testing.T) {
	ctx := testCtx(t)
	src := &fakeSource{}
	seller := &accepting{echo: true}
	seller.want = func() string { src.mu.Lock(); defer src.mu.Unlock(); return src.current() }
	srv := serve(t, seller.ServeHTTP)
	tr := &Transport{BearerToken: "fake-token-0", Token: src}
	hc := tr.client()
	for i := range 3 {
		if i > 0 {
			src.mu.Lock()
			src.n++ // renewed before expiry: the seller takes the new one only
			src.mu.Unlock()
		}
		cctx, capt := WithCapture(ctx, "echo")
		got, _, err := post(cctx, t, hc, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`)
		want := fmt.Sprintf("fake-token-%d", i)
		if err != nil || !bytes.Contains(got, []byte(want)) {
			t.Fatalf("the consumer reads the real echo: %s %v", got, err)
		}
		x := onlyExchange(ctx, t, capt)
		all, _ := json.Marshal(x)
		if bytes.Contains(all, []byte(want)) || !x.SecretEchoed {
			t.Errorf("token %d: echoed %v, stored %s", i, x.SecretEchoed, all)
		}
	}
	// Another transport of the run (no credential of its own) follows the
	// run's live secrets.
	anon := &Transport{Limits: Limits{LiveSecrets: &src.set}}
	echo := serve(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"seen":"fake-token-1 fake-token-2"}}`)
	})
	cctx, capt := WithCapture(ctx, "anon")
	if _, _, err := post(cctx, t, anon.client(), echo.URL, `{"jsonrpc":"2.0","id":1,"method":"m"}`); err != nil {
		t.Fatal(err)
	}
	if x := onlyExchange(ctx, t, capt); bytes.Contains(x.ResponseBody, []byte("fake-token")) {
		t.Errorf("stored %s", x.ResponseBody)
	}
}

// A secret learnt while a body is still being read is redacted from it
// when it finishes: the record is redacted when stored, not when the
// request went out.
func TestASecretLearntMidBodyIsRedacted(t *testing.T) {
	ctx := testCtx(t)
	var live SecretSet
	release := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"a":"`)
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, `learnt-later-token-42"}}`)
	})
	tr := &Transport{Limits: Limits{LiveSecrets: &live}}
	cctx, capt := WithCapture(ctx, "mid")
	req, _ := http.NewRequestWithContext(cctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"m"}`))
	resp, err := tr.client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	live.Add("learnt-later-token-42")
	close(release)
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if x := onlyExchange(ctx, t, capt); bytes.Contains(x.ResponseBody, []byte("learnt-later")) || !x.SecretEchoed {
		t.Errorf("echoed %v, stored %s", x.SecretEchoed, x.ResponseBody)
	}
}

// Many probes share one source and one redactor while secrets are learnt
// (run with -race).
func TestLiveRedactionIsSafeForConcurrentUse(t *testing.T) {
	var live SecretSet
	red := NewLiveRedactor([]string{"fixed-secret-0"}, &live, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				tok := fmt.Sprintf("token-%d-%d", i, j)
				live.Add(tok)
				out, n := red.Body([]byte(`{"x":"`+tok+` fixed-secret-0"}`), false)
				if n != 2 || bytes.Contains(out, []byte(tok)) {
					t.Errorf("%s: %d hits, %s", tok, n, out)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := len(live.List()); n != 8*50 {
		t.Errorf("the set holds %d secrets, want %d", n, 8*50)
	}
}

// The set ignores what cannot be redacted safely and what it holds
// already; a nil set holds nothing.
func TestSecretSet(t *testing.T) {
	var s SecretSet
	s.Add("short", "long-enough", "long-enough", "")
	if got := s.List(); len(got) != 1 || got[0] != "long-enough" {
		t.Errorf("List = %q", got)
	}
	var none *SecretSet
	if none.List() != nil {
		t.Error("a nil set lists secrets")
	}
	if got := NewLiveRedactor(nil, none, nil).String("long-enough"); got != "long-enough" {
		t.Errorf("a nil set redacts: %q", got)
	}
}
