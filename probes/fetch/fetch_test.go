package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

func TestRefusalIsTheURLPolicy(t *testing.T) {
	for _, tc := range []struct {
		url   string
		local bool
		want  string // substring of the refusal; "" when allowed
	}{
		{"https://as.example.net/.well-known/oauth-authorization-server", false, ""},
		{"https://as.example.net/token?x=1", false, ""},
		{"http://as.example.net/", false, "not https"},
		{"http://as.example.net/", true, ""},
		{"ftp://as.example.net/", true, "not https"},
		{"https://user:pw@as.example.net/", false, "credentials"},
		{"https://as.example.net/#frag", false, "fragment"},
		{"https://as.example.net/#", false, "fragment"},
		{"/relative", false, "not an absolute URL"},
		{"https://10.0.0.7/", false, "10.0.0.7 is not globally routable"},
		{"https://127.0.0.1:8443/", false, "127.0.0.1"},
		{"https://127.0.0.1:8443/", true, ""},
		{"https://0x7f.1/", false, "127.0.0.1"},
		{"https://2130706433/", false, "127.0.0.1"},
		{"https://0177.0.0.1/", false, "127.0.0.1"},
		{"https://[::ffff:127.0.0.1]/", false, "127.0.0.1"},
		{"https://[::1]/", false, "::1"},
		{"https://[fe80::1]/", true, "fe80::1"},
		{"https://[::1%25eth0]/", false, "::1%eth0 is not globally routable"}, // a zone hides an address from every prefix
		{"https://[2606:4700::1111%25eth0]/", false, "not globally routable"},
		{"https://169.254.169.254/latest/meta-data/", true, "169.254.169.254"}, // the cloud metadata service, even locally
		{"https://169.254.169.254/latest", false, "169.254.169.254"},
		{"https://100.64.1.1/", false, "100.64.1.1"},
		{"https://100.64.1.1/", true, "100.64.1.1"}, // carrier-grade NAT is not a local-development address
		{"https://198.18.0.5/", false, "198.18.0.5"},
		{"https://[2001:db8::1]/", false, "2001:db8::1"},
		{"https://0.0.0.0/", true, "0.0.0.0"},
		{"https://224.0.0.1/", true, "224.0.0.1"},
		{"https://8.8.8.8/", false, ""},
		{"https://[2606:4700::1111]/", false, ""},
	} {
		got := Policy{Local: tc.local}.Refusal(tc.url)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Refusal(%s, local %v) = %q, want %q", tc.url, tc.local, got, tc.want)
		}
	}
	strict := Policy{NoIPLiterals: true, DenyHosts: []string{"metadata.google.internal", "metadata"}}
	for url, want := range map[string]string{
		"https://8.8.8.8/p":                   "bare IP literal",
		"https://[2606:4700::1111]/p":         "bare IP literal",
		"https://METADATA.google.internal./x": "cloud metadata",
		"https://metadata/x":                  "cloud metadata",
		"https://preview.example.com/p":       "",
	} {
		if got := strict.Refusal(url); (got == "") != (want == "") || !strings.Contains(got, want) {
			t.Errorf("strict Refusal(%s) = %q, want %q", url, got, want)
		}
	}
	if got := (Policy{NoIPLiterals: true, Local: true}).Refusal("http://127.0.0.1:8080/p"); got != "" {
		t.Errorf("a local run refuses a loopback literal: %q", got)
	}
}

func TestIPLiteralCanonicalisesEveryForm(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1": "127.0.0.1", "0x7f000001": "127.0.0.1", "017700000001": "127.0.0.1", "127.1": "127.0.0.1",
		"10.0.258": "10.0.1.2", "[::ffff:10.0.0.1]": "10.0.0.1", "::1": "::1",
	} {
		got, ok := IPLiteral(in)
		if !ok || got != netip.MustParseAddr(want) {
			t.Errorf("IPLiteral(%q) = %v %v, want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"example.com", "1.2.3.4.5", "256.1.1.1", "0x100000000", "1..2", ""} {
		if got, ok := IPLiteral(in); ok {
			t.Errorf("IPLiteral(%q) = %v, want no address", in, got)
		}
	}
}

// A loopback server is refused by the production policy after
// resolution (the name is not an IP literal) and fetched by a local run.
func TestGetResolvesThenChecksEveryAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"issuer":"x"}`))
	}))
	defer srv.Close()
	port := srv.Listener.Addr().String()
	port = port[strings.LastIndexByte(port, ':'):]
	u := "http://localhost" + port + "/.well-known/oauth-authorization-server"

	c, r := Get(context.Background(), Policy{}, "p", u)
	if r.Blocked == "" || c.Blocked == "" || r.Status != 0 {
		t.Fatalf("production policy fetched %s: %+v", u, r)
	}
	c, r = Get(context.Background(), Policy{Local: true}, "p", u)
	if r.Blocked != "" || r.Status != 200 || string(r.Body) != `{"issuer":"x"}` || c.HTTPStatus != 200 || len(c.Exchanges) != 1 {
		t.Fatalf("local policy did not fetch %s: %+v %+v", u, r, c)
	}
	if c.Credential != "none" || c.HarnessError != "" {
		t.Fatalf("the call record: %+v", c)
	}
}

// The request carries no credential, cookie or compression, a redirect
// is returned rather than followed, a long body is cut and flagged, and
// query values never reach the evidence.
func TestGetIsStatelessAndBounded(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "https://elsewhere.example/next?code=s3cret", http.StatusFound)
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(strings.Repeat(" ", MaxBytes+10)))
		default:
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "x"})
			w.WriteHeader(204)
		}
	}))
	defer srv.Close()
	p := Policy{Local: true}
	get := func(path string) (Response, []string) {
		c, r := Get(context.Background(), p, "p", srv.URL+path)
		var urls []string
		urls = append(urls, c.URL)
		for _, x := range c.Exchanges {
			urls = append(urls, x.URL, x.ResponseHeaders.Get("Location"))
		}
		return r, urls
	}
	r, _ := get("/first")
	r, _ = get("/again?token=abc")
	if r.Status != 204 {
		t.Fatalf("status %d", r.Status)
	}
	mu.Lock()
	sent := seen
	mu.Unlock()
	for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
		if sent.Get(h) != "" {
			t.Errorf("the fetch sent %s", h)
		}
	}
	if sent.Get("Accept-Encoding") != "identity" {
		t.Errorf("Accept-Encoding %q, want identity", sent.Get("Accept-Encoding"))
	}
	r, urls := get("/redirect?state=s3cret")
	if r.Status != http.StatusFound || r.Location != "https://elsewhere.example/next?code=s3cret" {
		t.Fatalf("the redirect was not returned as it came: %+v", r)
	}
	for _, u := range urls {
		if strings.Contains(u, "s3cret") {
			t.Errorf("a query value reached the evidence: %s", u)
		}
	}
	r, _ = get("/big")
	if !r.TooLarge || len(r.Body) != MaxBytes {
		t.Fatalf("a body over %d bytes: too large %v, %d bytes kept", MaxBytes, r.TooLarge, len(r.Body))
	}
}

func TestRedactURLKeepsNamesNotValues(t *testing.T) {
	got := RedactURL("https://u:p@as.example/x?code=1&state=2&flag")
	if got != "https://REDACTED@as.example/x?code=REDACTED&state=REDACTED&flag=REDACTED" {
		t.Fatalf("RedactURL = %s", got)
	}
}
