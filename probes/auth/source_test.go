package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
)

const testSecret = "client-secret-9c1f4e7a"

// endpoint is a token endpoint whose reply a test chooses; it counts the
// requests and keeps the last one's form and Authorization.
type endpoint struct {
	calls atomic.Int32
	reply func(n int32) (status int, contentType, body string)

	mu   sync.Mutex
	form url.Values
	auth string
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := e.calls.Add(1)
	_ = r.ParseForm()
	e.mu.Lock()
	e.form, e.auth = r.PostForm, r.Header.Get("Authorization")
	e.mu.Unlock()
	status, ct, body := e.reply(n)
	if ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// tokens replies with a new token per request, "tok-N-0123456789",
// valid for expiresIn seconds ("" leaves expires_in out).
func tokens(expiresIn string) func(n int32) (int, string, string) {
	return func(n int32) (int, string, string) {
		exp := ""
		if expiresIn != "" {
			exp = `,"expires_in":` + expiresIn
		}
		return 200, "application/json", fmt.Sprintf(`{"access_token":"tok-%d-0123456789","token_type":"Bearer"%s}`, n, exp)
	}
}

func tok(n int) string { return fmt.Sprintf("tok-%d-0123456789", n) }

// clock is a fake clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// start serves e and returns a source for it on the fake clock c.
func start(t *testing.T, e *endpoint, c *clock, mod ...func(*Config)) *Source {
	t.Helper()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	cfg := Config{TokenURL: srv.URL + "/token", ClientID: "conform", ClientSecret: testSecret, Policy: fetch.Policy{Local: true}}
	if c != nil {
		cfg.Now = c.Now
	}
	for _, m := range mod {
		m(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// Every reply of a token endpoint: a valid token (in each spelling RFC
// 6749 allows) is taken; a reply missing a field, with a wrong type, a
// non-Bearer token, an unusable or short token, another media type, more
// than one JSON value or too many bytes is refused with the reason; an
// RFC 6749 §5.2 error is a refusal naming its code and description; a 5xx
// or a redirect says so. No error quotes the token or the secret.
func TestTokenResponses(t *testing.T) {
	const okTok = "eyJhbGciOi.Jfoo-bar_baz~x+y/z=="
	huge := `{"access_token":"` + strings.Repeat("a", MaxResponseBytes) + `","token_type":"Bearer"}`
	for _, tc := range []struct {
		name        string
		status      int
		ct, body    string
		wantErr     string // "" for a token
		wantRefused bool
	}{
		{"valid", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer","expires_in":3600}`, "", false},
		{"lower-case type, charset", 200, "application/json; charset=utf-8", `{"access_token":"` + okTok + `","token_type":"bearer","expires_in":60,"scope":"read"}`, "", false},
		{"no expires_in", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer"}`, "", false},
		{"refresh token too", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer","refresh_token":"refresh-0123456789"}`, "", false},
		{"no access_token", 200, "application/json", `{"token_type":"Bearer","expires_in":3600}`, "no access_token string", false},
		{"numeric access_token", 200, "application/json", `{"access_token":12345678,"token_type":"Bearer"}`, "no access_token string", false},
		{"empty access_token", 200, "application/json", `{"access_token":"","token_type":"Bearer"}`, "no access_token string", false},
		{"no token_type", 200, "application/json", `{"access_token":"` + okTok + `"}`, "no token_type string", false},
		{"mac token", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"mac"}`, `token_type is "mac"`, false},
		{"DPoP token", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"DPoP"}`, `token_type is "DPoP"`, false},
		{"expires_in as a string of digits (Azure AD v1)", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer","expires_in":"3600"}`, "", false},
		{"expires_in as a string of no number", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer","expires_in":"soon"}`, "expires_in", false},
		{"expires_in as a signed string", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer","expires_in":"-5"}`, "expires_in", false},
		{"expires_in zero", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer","expires_in":0}`, "expires_in 0 is not", false},
		{"expires_in negative", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer","expires_in":-5}`, "expires_in -5", false},
		{"expires_in fractional", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer","expires_in":1.5}`, "expires_in 1.5", false},
		{"expires_in centuries", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer","expires_in":99999999999}`, "expires_in", false},
		{"short token", 200, "application/json", `{"access_token":"abc","token_type":"Bearer"}`, "shorter than 6", false},
		{"token with a space", 200, "application/json", `{"access_token":"abc defghij","token_type":"Bearer"}`, "b64token", false},
		{"token with CRLF", 200, "application/json", `{"access_token":"abcdefgh\r\nX-Evil: 1","token_type":"Bearer"}`, "b64token", false},
		{"text/plain", 200, "text/plain", `{"access_token":"` + okTok + `","token_type":"Bearer"}`, "not application/json", false},
		{"array", 200, "application/json", `["x"]`, "not one JSON object", false},
		{"two objects", 200, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer"} {}`, "not one JSON object", false},
		{"null", 200, "application/json", `null`, "not one JSON object", false},
		{"huge body", 200, "application/json", huge, fmt.Sprintf("larger than %d bytes", MaxResponseBytes), false},
		{"5xx", 503, "text/html", "<html>down</html>", "answered HTTP 503: no token", false},
		{"5xx with an OAuth error", 500, "application/json", `{"error":"server_error"}`, "answered HTTP 500", false},
		{"201", 201, "application/json", `{"access_token":"` + okTok + `","token_type":"Bearer"}`, "answered HTTP 201", false},
		{"redirect", 302, "", "", "a redirect, which is not followed", false},
		{"invalid_client", 401, "application/json", `{"error":"invalid_client","error_description":"Client authentication failed."}`, "refused the client credentials grant: invalid_client (Client authentication failed.), HTTP 401", true},
		{"unauthorized_client", 400, "application/json", `{"error":"unauthorized_client"}`, ": unauthorized_client, HTTP 400", true},
		{"invalid_scope", 400, "application/json", `{"error":"invalid_scope","error_description":"scope adcp:write\u0007 unknown"}`, "invalid_scope (scope adcp:write? unknown)", true},
		{"invalid_grant", 400, "application/json", `{"error":"invalid_grant"}`, ": invalid_grant,", true},
		{"unsupported_grant_type", 400, "application/json", `{"error":"unsupported_grant_type"}`, ": unsupported_grant_type,", true},
		{"invalid_request", 400, "application/json", `{"error":"invalid_request"}`, ": invalid_request,", true},
		{"description echoing the secret", 401, "application/json", `{"error":"invalid_client","error_description":"secret ` + testSecret + ` is wrong"}`, "(secret [redacted] is wrong)", true},
		{"error code outside the charset", 400, "application/json", `{"error":"bad\"code"}`, "answered HTTP 400: no token and no RFC 6749 error", false},
		{"error not a string", 400, "application/json", `{"error":42}`, "answered HTTP 400", false},
		{"4xx html", 403, "text/html", "<h1>Forbidden</h1>", "answered HTTP 403", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &endpoint{reply: func(int32) (int, string, string) { return tc.status, tc.ct, tc.body }}
			s := start(t, e, nil)
			got, err := s.Token(ctx(t))
			if tc.wantErr == "" {
				if err != nil || got != okTok || !s.Issued(okTok) {
					t.Fatalf("Token = %q, %v; want %q", got, err, okTok)
				}
				return
			}
			var ae *Error
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.wantErr) || ae.Refused() != tc.wantRefused {
				t.Fatalf("Token = %q, %v; want an *Error with %q, refused %v", got, err, tc.wantErr, tc.wantRefused)
			}
			for _, secret := range []string{okTok, testSecret, strings.Repeat("a", 100), "abcdefgh"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error quotes a secret: %v", err)
				}
			}
		})
	}
}

// The request is RFC 6749 §4.4.2's: a form POST with grant_type
// client_credentials, the scope, each RFC 8707 resource and the audience;
// the client authenticates with HTTP Basic over its form-urlencoded id and
// secret (§2.3.1), or with body parameters when asked.
func TestTheTokenRequest(t *testing.T) {
	const id, secret = "my client:1", "s3cr+t/=x&y"
	for _, method := range []ClientAuth{"", ClientSecretBasic, ClientSecretPost} {
		e := &endpoint{reply: tokens("60")}
		s := start(t, e, nil, func(c *Config) {
			c.ClientID, c.ClientSecret, c.Method = id, secret, method
			c.Scope, c.Audience = "adcp:read adcp:write", "https://seller.example"
			c.Resource = []string{"https://seller.example/mcp", "https://seller.example/a2a"}
		})
		if _, err := s.Token(ctx(t)); err != nil {
			t.Fatal(err)
		}
		e.mu.Lock()
		form, authz := e.form, e.auth
		e.mu.Unlock()
		if form.Get("grant_type") != "client_credentials" || form.Get("scope") != "adcp:read adcp:write" ||
			form.Get("audience") != "https://seller.example" || strings.Join(form["resource"], " ") != "https://seller.example/mcp https://seller.example/a2a" {
			t.Errorf("%s: form %v", method, form)
		}
		if method == ClientSecretPost {
			if authz != "" || form.Get("client_id") != id || form.Get("client_secret") != secret {
				t.Errorf("%s: Authorization %q, form %v", method, authz, form)
			}
			continue
		}
		raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(authz, "Basic "))
		user, pass, _ := strings.Cut(string(raw), ":")
		u, _ := url.QueryUnescape(user)
		p, _ := url.QueryUnescape(pass)
		if u != id || p != secret || form.Has("client_secret") || form.Has("client_id") {
			t.Errorf("%q: Basic %q:%q (%s), form %v", method, u, p, raw, form)
		}
	}
}

// A slow endpoint costs Config.Timeout, never more: one that sends
// nothing, and one that sends headers then stalls its body.
func TestASlowEndpointTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release) // before the servers' cleanups wait for their handlers
	for _, tc := range []struct {
		name, want string
		h          http.HandlerFunc
	}{
		{"no headers", "gave no answer: no answer within 100ms", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}},
		{"stalled body", "answered HTTP 200: the reply did not end within 100ms", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"`)
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}},
	} {
		srv := httptest.NewServer(tc.h)
		t.Cleanup(srv.Close)
		s, err := New(Config{TokenURL: srv.URL, ClientID: "c", ClientSecret: testSecret, Policy: fetch.Policy{Local: true}, Timeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Token(ctx(t)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A token is renewed a quarter of its lifetime before it expires, at most
// MaxRenewMargin before; a token without expires_in is kept until a 401.
func TestATokenIsRenewedBeforeItExpires(t *testing.T) {
	for _, tc := range []struct {
		expiresIn    string
		keep, renew  time.Duration // still the first token at keep, the second at renew
		neverRenewed bool
	}{
		{expiresIn: "3600", keep: 3569 * time.Second, renew: 3571 * time.Second},
		{expiresIn: "100", keep: 74 * time.Second, renew: 76 * time.Second},
		{expiresIn: "2", keep: 1490 * time.Millisecond, renew: 1510 * time.Millisecond},
		{expiresIn: "", keep: 100 * 365 * 24 * time.Hour, neverRenewed: true},
	} {
		c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		e := &endpoint{reply: tokens(tc.expiresIn)}
		s := start(t, e, c)
		if got, err := s.Token(ctx(t)); err != nil || got != tok(1) {
			t.Fatalf("first Token = %q, %v", got, err)
		}
		c.advance(tc.keep)
		if got, _ := s.Token(ctx(t)); got != tok(1) || e.calls.Load() != 1 {
			t.Errorf("expires_in %q at %s: %q after %d requests, want the first token", tc.expiresIn, tc.keep, got, e.calls.Load())
		}
		if tc.neverRenewed {
			continue
		}
		c.advance(tc.renew - tc.keep)
		if got, _ := s.Token(ctx(t)); got != tok(2) || e.calls.Load() != 2 {
			t.Errorf("expires_in %q at %s: %q after %d requests, want the second token", tc.expiresIn, tc.renew, got, e.calls.Load())
		}
	}
}

// After a 401 the source renews the refused token once: a caller whose
// stale token was already replaced gets the newer one without a request.
func TestRefreshRenewsAStaleTokenOnce(t *testing.T) {
	e := &endpoint{reply: tokens("3600")}
	s := start(t, e, &clock{now: time.Unix(0, 0)})
	first, _ := s.Token(ctx(t))
	for i, tc := range []struct {
		stale, want string
		calls       int32
	}{
		{first, tok(2), 2},
		{first, tok(2), 2}, // another probe's 401 with the same old token
		{tok(2), tok(3), 3},
	} {
		if got, err := s.Refresh(ctx(t), tc.stale); err != nil || got != tc.want || e.calls.Load() != tc.calls {
			t.Errorf("%d: Refresh(%s) = %q, %v after %d requests; want %q after %d", i, tc.stale, got, err, e.calls.Load(), tc.want, tc.calls)
		}
	}
	for _, n := range []int{1, 2, 3} {
		if !s.Issued(tok(n)) {
			t.Errorf("%s not issued", tok(n))
		}
	}
	if s.Issued("adcp-conform-invalid-0123") || s.Issued("") {
		t.Error("a token the source never obtained is issued")
	}
}

// Many probes at once share one token and one request in flight: on the
// first token, and on a renewal after a 401 they all met (run with -race).
func TestConcurrentCallersShareOneRequest(t *testing.T) {
	gate := make(chan struct{})
	e := &endpoint{}
	inner := tokens("3600")
	e.reply = func(n int32) (int, string, string) {
		<-gate // every caller is waiting before the first reply comes
		return inner(n)
	}
	s := start(t, e, &clock{now: time.Unix(0, 0)})
	const callers = 64
	var wg sync.WaitGroup
	var waiting sync.WaitGroup
	waiting.Add(callers)
	got := make([]string, callers)
	for i := range callers {
		wg.Go(func() {
			waiting.Done()
			got[i], _ = s.Token(ctx(t))
		})
	}
	waiting.Wait()
	close(gate)
	wg.Wait()
	for i := range callers {
		if got[i] != tok(1) {
			t.Fatalf("caller %d got %q", i, got[i])
		}
	}
	for i := range callers {
		wg.Go(func() { got[i], _ = s.Refresh(ctx(t), tok(1)) })
	}
	wg.Wait()
	for i := range callers {
		if got[i] != tok(2) {
			t.Fatalf("caller %d renewed to %q", i, got[i])
		}
	}
	if n := e.calls.Load(); n != 2 {
		t.Errorf("%d token requests, want 2", n)
	}
}

// A refusal (RFC 6749 §5.2) is final: later calls get it without asking
// again. A 5xx is not: the next call asks again.
func TestARefusalIsFinalAnOutageIsNot(t *testing.T) {
	refused := &endpoint{reply: func(int32) (int, string, string) {
		return 401, "application/json", `{"error":"invalid_client"}`
	}}
	s := start(t, refused, nil)
	for range 3 {
		if _, err := s.Token(ctx(t)); err == nil || !strings.Contains(err.Error(), "invalid_client") {
			t.Fatalf("Token: %v", err)
		}
		if _, err := s.Refresh(ctx(t), "tok-stale-123"); err == nil {
			t.Fatal("Refresh after a refusal gives a token")
		}
	}
	if n := refused.calls.Load(); n != 1 {
		t.Errorf("%d requests after a refusal, want 1", n)
	}
	down := &endpoint{reply: func(n int32) (int, string, string) {
		if n == 1 {
			return 503, "", ""
		}
		return tokens("60")(n)
	}}
	s = start(t, down, nil)
	if _, err := s.Token(ctx(t)); err == nil {
		t.Fatal("a 503 gives a token")
	}
	if got, err := s.Token(ctx(t)); err != nil || got != tok(2) {
		t.Errorf("after the outage: %q, %v", got, err)
	}
}

// The client secret and every token the source obtains (a renewal's too)
// are in its secret set before anyone can send or see them.
func TestEveryTokenIsLearntAsASecret(t *testing.T) {
	e := &endpoint{reply: tokens("60")}
	c := &clock{now: time.Unix(0, 0)}
	s := start(t, e, c)
	for i := 1; i <= 3; i++ {
		got, err := s.Token(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if list := strings.Join(s.Secrets().List(), " "); !strings.Contains(list, got) || !strings.Contains(list, testSecret) {
			t.Errorf("token %d: the set holds %q", i, list)
		}
		c.advance(time.Minute)
	}
}

// The configuration the harness refuses before any request: a token URL
// that is not https (unless local), carries credentials or a fragment; no
// client id; a secret too short to be redacted; an unknown client
// authentication; a resource that is no absolute URI.
func TestNewRefuses(t *testing.T) {
	good := Config{TokenURL: "https://auth.example.com/token", ClientID: "c", ClientSecret: testSecret}
	if _, err := New(good); err != nil {
		t.Fatalf("a good configuration: %v", err)
	}
	for name, mod := range map[string]func(*Config){
		"http":         func(c *Config) { c.TokenURL = "http://auth.example.com/token" },
		"userinfo":     func(c *Config) { c.TokenURL = "https://u:p@auth.example.com/token" },
		"fragment":     func(c *Config) { c.TokenURL = "https://auth.example.com/token#x" },
		"relative":     func(c *Config) { c.TokenURL = "/token" },
		"private IP":   func(c *Config) { c.TokenURL = "https://10.0.0.1/token" },
		"no client id": func(c *Config) { c.ClientID = "" },
		"short secret": func(c *Config) { c.ClientSecret = "abc" },
		"method":       func(c *Config) { c.Method = "private_key_jwt" },
		"resource":     func(c *Config) { c.Resource = []string{"seller.example/mcp"} },
		"resource #":   func(c *Config) { c.Resource = []string{"https://seller.example/mcp#x"} },
	} {
		cfg := good
		mod(&cfg)
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), testSecret) {
			t.Errorf("%s: the error quotes the secret: %v", name, err)
		}
	}
	local := good
	local.TokenURL, local.Policy = "http://127.0.0.1:9/token", fetch.Policy{Local: true}
	if _, err := New(local); err != nil {
		t.Errorf("a loopback http endpoint with Policy.Local: %v", err)
	}
}
