package wire

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestRedactJSONKeepsShapeAndOrder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{
			`{"z":1,"auth":{"Token":"abc","nested":[{"api_key":"k","keep":"v","Client-Secret":{"x":[1,2]}}]},"a":"b"}`,
			`{"z":1,"auth":{"Token":"[redacted]","nested":[{"api_key":"[redacted]","keep":"v","Client-Secret":"[redacted]"}]},"a":"b"}`,
		},
		{
			"{\n  \"password\" : 123 ,\n  \"offering_token\": null,\n  \"cookie\":true\n}",
			"{\n  \"password\" : \"[redacted]\" ,\n  \"offering_token\": \"[redacted]\",\n  \"cookie\":\"[redacted]\"\n}",
		},
		{ // escaped key names still match; values that only look like keys do not
			`{"tok\u0065n":"x","note":"token","list":["password"]}`,
			`{"tok\u0065n":"[redacted]","note":"token","list":["password"]}`,
		},
		{ // not matched: the pattern is anchored
			`{"tokens":[1],"my_token_count":2,"bearer_format":"jwt"}`,
			`{"tokens":[1],"my_token_count":2,"bearer_format":"jwt"}`,
		},
		{`[{"secret":"s"},{"SET-COOKIE":"c"}]`, `[{"secret":"[redacted]"},{"SET-COOKIE":"[redacted]"}]`},
		{`{"access_token":"abc`, `{"access_token":"[redacted]"`}, // cut body
		{`{"credentials":{"a":[1,{"b":"}"}`, `{"credentials":"[redacted]"`},
		{`not json "token": "x"`, `not json "token": "x"`},
		{``, ``},
	} {
		got := string(RedactJSON([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("RedactJSON(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if json.Valid([]byte(tc.in)) && !json.Valid([]byte(got)) {
			t.Errorf("RedactJSON(%s) is not valid JSON: %s", tc.in, got)
		}
	}
}

func TestContractMinimumPattern(t *testing.T) {
	for _, k := range []string{"authorization", "credential", "credentials", "token", "apikey", "api_key", "api-key",
		"password", "secret", "client_secret", "client-secret", "refresh_token", "access-token", "bearer",
		"session_token", "offering-token", "cookie", "set_cookie", "Set-Cookie", "AUTHORIZATION"} {
		if !SensitiveKey(k) {
			t.Errorf("SensitiveKey(%q) = false: the contract's minimum is narrowed", k)
		}
	}
	for _, k := range []string{"tokens", "product_id", "authorization_url", "secretary", "brief"} {
		if SensitiveKey(k) {
			t.Errorf("SensitiveKey(%q) = true", k)
		}
	}
}

func TestRedactSecretsEverywhere(t *testing.T) {
	r := NewRedactor([]string{"s3cr3t/value+1", "short"}, nil)
	for _, tc := range []struct{ in, want string }{
		{`{"msg":"got s3cr3t/value+1 here"}`, `{"msg":"got [redacted] here"}`},
		{`{"msg":"got s3cr3t\/value+1"}`, `{"msg":"got [redacted]"}`},
		{`{"msg":"\u0073\u00333cr3t/value+1"}`, `{"msg":"\u0073\u00333cr3t/value+1"}`}, // decodes to s33cr3t…: no match
		{`{"m":"\u0073\u0033cr3t/value+1"}`, `{"m":"[redacted]"}`},
		{"<html>s3cr3t/value+1</html>", "<html>[redacted]</html>"},
		{"q=s3cr3t%2Fvalue%2B1", "q=[redacted]"},
		{`{"msg":"short is not matched"}`, `{"msg":"short is not matched"}`},
	} {
		got, hits := r.Body([]byte(tc.in), false)
		if string(got) != tc.want {
			t.Errorf("Body(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if (hits > 0) != (tc.want != tc.in) {
			t.Errorf("Body(%s): %d hits", tc.in, hits)
		}
	}
}

func TestHeaders(t *testing.T) {
	h := http.Header{
		"Authorization": {"Bearer x"}, "Proxy-Authorization": {"Basic y"}, "Cookie": {"a=b"},
		"Set-Cookie": {"c=d"}, "X-Api-Key": {"k"}, "X-Auth-Token": {"t"}, "X-Client-Secret": {"s"},
		"Www-Authenticate": {`Bearer realm="x"`}, "Mcp-Session-Id": {"sid"}, "Content-Type": {"application/json"},
		"X-Custom": {"v"}, "Retry-After": {"5"},
	}
	red := RedactHeader(h)
	for _, name := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X-Auth-Token", "X-Client-Secret"} {
		if red.Get(name) != Redacted {
			t.Errorf("%s = %q, want redacted", name, red.Get(name))
		}
	}
	for _, name := range []string{"Www-Authenticate", "Mcp-Session-Id", "Content-Type", "X-Custom"} {
		if red.Get(name) != h.Get(name) {
			t.Errorf("%s = %q, want kept", name, red.Get(name))
		}
	}
	if h.Get("Authorization") != "Bearer x" {
		t.Error("RedactHeader changed its input")
	}
	resp := ReportResponseHeaders(h)
	if len(resp) != 3 || resp.Get("Www-Authenticate") == "" || resp.Get("Retry-After") != "5" || resp.Get("Content-Type") == "" {
		t.Errorf("ReportResponseHeaders = %v", resp)
	}
	req := ReportRequestHeaders(h)
	if req.Get("Authorization") != Redacted || req.Get("X-Custom") != "" || req.Get("Mcp-Session-Id") != "" || req.Get("Content-Type") == "" {
		t.Errorf("ReportRequestHeaders = %v", req)
	}
}

func TestRedactURL(t *testing.T) {
	r := NewRedactor([]string{"pathsecret123"}, nil)
	u, _ := url.Parse("https://user:pw@h/x/pathsecret123?api_key=k&q=1")
	got := r.URL(u)
	if strings.Contains(got, "pw") || strings.Contains(got, "pathsecret123") || strings.Contains(got, "=k") || !strings.Contains(got, "q=1") {
		t.Errorf("URL = %s", got)
	}
}

func TestSecretsMatchedInAnyLetterCase(t *testing.T) {
	r := NewRedactor([]string{"Tok-3f9a1c2b7e"}, nil)
	for _, tc := range []struct{ in, want string }{
		{`{"m":"TOK-3F9A1C2B7E and tok-3f9a1c2b7e"}`, `{"m":"[redacted] and [redacted]"}`},
		{`{"m":"\u0054OK-3F9A1C2B7E"}`, `{"m":"[redacted]"}`},
		{"id: tOk-3F9a1C2b7E\n", "id: [redacted]\n"},
		{"tok-3f9a1c2b7", "tok-3f9a1c2b7"}, // a prefix, not cut (the body is whole)
	} {
		if got, _ := r.Body([]byte(tc.in), false); string(got) != tc.want {
			t.Errorf("Body(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	if got, _ := r.Text([]byte("…TOK-3F9A"), true); string(got) != "…"+Redacted {
		t.Errorf("a cut upper-cased prefix is kept: %s", got)
	}
	h, hits := r.Header(http.Header{"X-Token-Tok-3f9a1c2b7e": {"1"}, "X-Echo-Tok-3f9a1c2b7e": {"TOK-3F9A1C2B7E"}})
	if hits != 3 || len(h["X-Token-"+Redacted]) != 1 || h.Get("X-Echo-"+Redacted) != Redacted {
		t.Errorf("Header: %d hits, %v", hits, h)
	}
}

func TestIndexFold(t *testing.T) {
	for _, tc := range []struct {
		b, f string
		want int
	}{
		{"xxTOKen", "token", 2}, {"tokentoken", "TOKEN", 0}, {"tok", "token", -1}, {"ToKeToKeN", "token", 4},
		{"a-b", "-B", 1}, {"", "x", -1}, {"x", "", 0}, {"\xffToken", "token", 1}, {"tOkEn", "token", 0},
	} {
		if got := indexFold([]byte(tc.b), []byte(tc.f)); got != tc.want {
			t.Errorf("indexFold(%q, %q) = %d, want %d", tc.b, tc.f, got, tc.want)
		}
	}
}
