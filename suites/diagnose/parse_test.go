package diagnose

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   []Challenge
	}{
		{"a bare scheme", []string{"Bearer"}, []Challenge{{Scheme: "Bearer"}}},
		{"RFC 6750 §3's example", []string{`Bearer realm="example", error="invalid_token", error_description="The access token expired"`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"realm": "example", "error": "invalid_token", "error_description": "The access token expired"}}}},
		{"RFC 9728 §5.1's resource_metadata", []string{`Bearer resource_metadata="https://resource.example.com/.well-known/oauth-protected-resource"`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"resource_metadata": "https://resource.example.com/.well-known/oauth-protected-resource"}}}},
		{"two challenges in one value", []string{`Basic realm="a", Bearer error=invalid_token, scope="x y"`},
			[]Challenge{{Scheme: "Basic", Params: map[string]string{"realm": "a"}}, {Scheme: "Bearer", Params: map[string]string{"error": "invalid_token", "scope": "x y"}}}},
		{"two values", []string{`Basic realm="a"`, `Bearer`}, []Challenge{{Scheme: "Basic", Params: map[string]string{"realm": "a"}}, {Scheme: "Bearer"}}},
		{"a token68", []string{"Negotiate YIIB=="}, []Challenge{{Scheme: "Negotiate", Params: map[string]string{"": "YIIB=="}}}},
		{"names without case, quoted-pairs, spaces around =", []string{`Bearer ERROR = "a\"b", Error="dup"`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"error": `a"b`}}}},
		{"an unclosed quote", []string{`Bearer error="invalid`}, []Challenge{{Scheme: "Bearer", Params: map[string]string{"error": "invalid"}}}},
		{"empty and junk", []string{"", ",,", "=x"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseChallenges(tc.values); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
	if got := Bearer(ParseChallenges([]string{`Basic realm="a", bearer error="x"`})); got == nil || got.Params["error"] != "x" {
		t.Errorf("Bearer found %#v, want the lower-case bearer challenge", got)
	}
	if got := ParseChallenges([]string{strings.Repeat("Basic, ", 100)}); len(got) != maxChallenges {
		t.Errorf("%d challenges read, want the bound %d", len(got), maxChallenges)
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Bearer realm="a", error="b"`, "Negotiate abc==", `a b="\`, "Basic, Bearer x=y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range ParseChallenges([]string{s}) {
			if c.Scheme == "" {
				t.Fatalf("an empty scheme from %q", s)
			}
		}
	})
}

func jwt(head, claims string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(head)) + "." + e([]byte(claims)) + ".c2ln"
}

func TestDecodeJWT(t *testing.T) {
	at := func(sec int64) *time.Time { x := time.Unix(sec, 0).UTC(); return &x }
	for _, tc := range []struct {
		name string
		tok  string
		want *Claims
		err  string
	}{
		{"RFC 9068 claims", jwt(`{"alg":"RS256","typ":"at+jwt","kid":"k1"}`, `{"iss":"https://as.example","aud":"https://s.example/mcp","exp":1772370000,"iat":1772366400,"scope":"a b"}`),
			&Claims{Alg: "RS256", Typ: "at+jwt", Kid: "k1", Iss: "https://as.example", HasIss: true, Aud: []string{"https://s.example/mcp"}, HasAud: true,
				Exp: at(1772370000), Iat: at(1772366400), Scopes: []string{"a", "b"}, HasScope: true}, ""},
		{"aud as a list, scp as a list, nbf", jwt(`{"alg":"ES256"}`, `{"aud":["x","y"],"scp":["r","w"],"nbf":5}`),
			&Claims{Alg: "ES256", Aud: []string{"x", "y"}, HasAud: true, Scopes: []string{"r", "w"}, HasScope: true, Nbf: at(5)}, ""},
		{"claims of the wrong type are absent", jwt(`{"alg":1}`, `{"iss":7,"aud":{},"exp":"soon","scope":["a"]}`), &Claims{}, ""},
		{"an opaque token", "rs-cc-0123456789abcdef", nil, "opaque (not a JWT)"},
		{"an encrypted token", "a.b.c.d.e", nil, "an encrypted JWT (JWE): its claims are for the seller only"},
		{"three parts, no header", "not.a.jwt", nil, "opaque (its first part is no JWT header)"},
		{"claims not an object", jwt(`{"alg":"none"}`, `[1]`), nil, "a JWT whose claims are not a JSON object"},
		{"too long", strings.Repeat("a", maxTokenLen+1), nil, "longer than 16 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeJWT(tc.tok)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tc.want)
			if string(g) != string(w) || got.HasAud != tc.want.HasAud || got.HasIss != tc.want.HasIss || got.HasScope != tc.want.HasScope {
				t.Errorf("got %s (aud %v iss %v scope %v), want %s", g, got.HasAud, got.HasIss, got.HasScope, w)
			}
		})
	}
}

func FuzzDecodeJWT(f *testing.F) {
	f.Add(jwt(`{"alg":"RS256"}`, `{"exp":1e300,"aud":["a"]}`))
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, s string) { _, _ = DecodeJWT(s) })
}
