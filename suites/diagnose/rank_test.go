package diagnose

import (
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/auth"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
)

// The ranking is a pure function of the facts: each hypothesis is proven
// here over crafted facts, where it holds, where an observation rules it
// out, and where there is no evidence either way.
func TestRankOverCraftedFacts(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	const ep = "https://s.example/mcp"
	challenge := func(params map[string]string) []Challenge { return []Challenge{{Scheme: "Bearer", Params: params}} }
	refusedCall := &callFact{label: "initialize", status: 401, refused: true, challenges: challenge(map[string]string{"error": "invalid_token"})}
	taken := &callFact{label: "tools/call get_media_buys", status: 200}
	noCred := &callFact{label: "initialize", status: 401, refused: true, challenges: challenge(map[string]string{"resource_metadata": "https://s.example/.well-known/oauth-protected-resource/mcp"})}
	good := func() *Claims {
		return &Claims{Iss: "https://as.example", HasIss: true, Aud: []string{ep}, HasAud: true, Exp: at(time.Hour), Iat: at(0),
			Scopes: []string{"adcp:write"}, HasScope: true}
	}
	base := func() facts {
		return facts{endpoint: ep, now: now, credential: credOAuth, tokenURL: "https://as.example/token", noCred: noCred, withCred: taken,
			claims: good(), prmStatus: 200, prm: map[string]any{"resource": ep}, servers: []string{"https://as.example"},
			as: map[string]map[string]any{"https://as.example": {"issuer": "https://as.example", "token_endpoint": "https://as.example/token"}}}
	}
	for _, tc := range []struct {
		name  string
		edit  func(f *facts)
		first string // "id verdict", "" for no cause
		ruled string // an ID that must be ruled out, or ""
	}{
		{"a sound walk", func(f *facts) {}, "", "token_audience"},
		{"the token request refused", func(f *facts) {
			f.tokenErr, f.claims, f.withCred = &auth.Error{URL: f.tokenURL, Status: 401, Code: "invalid_client"}, nil, nil
		}, "token_request_refused likely", ""},
		{"an expired token refused", func(f *facts) { f.claims.Exp, f.withCred = at(-time.Minute), refusedCall }, "token_expired likely", ""},
		{"an expired token taken", func(f *facts) { f.claims.Exp = at(-time.Minute) }, "token_expired likely", ""},
		{"a token from the future", func(f *facts) { f.claims.Nbf, f.withCred = at(10*time.Minute), refusedCall }, "token_not_yet_valid likely", "token_expired"},
		{"a small skew is no cause", func(f *facts) { f.claims.Iat = at(30 * time.Second) }, "", "token_not_yet_valid"},
		{"another audience, refused", func(f *facts) { f.claims.Aud, f.withCred = []string{"https://other.example"}, refusedCall }, "token_audience likely", ""},
		{"another audience, taken", func(f *facts) { f.claims.Aud = []string{"https://other.example"} }, "token_audience possible", ""},
		{"no audience, refused", func(f *facts) { f.claims.Aud, f.claims.HasAud, f.withCred = nil, false, refusedCall }, "token_audience likely", ""},
		{"the audience compared as a resource", func(f *facts) { f.claims.Aud = []string{"HTTPS://S.EXAMPLE:443/mcp"} }, "", "token_audience"},
		{"another issuer, refused", func(f *facts) { f.claims.Iss, f.withCred = "https://evil.example", refusedCall }, "token_issuer likely", ""},
		{"insufficient_scope", func(f *facts) {
			f.withCred = &callFact{label: "initialize", status: 403, refused: true, challenges: challenge(map[string]string{"error": "insufficient_scope", "scope": "adcp:admin"})}
		}, "token_scope likely", ""},
		{"a 403 without a challenge", func(f *facts) { f.withCred = &callFact{label: "x", status: 403, refused: true} }, "token_scope likely", ""},
		{"a 401 without a challenge", func(f *facts) { f.noCred = &callFact{label: "initialize", status: 401, refused: true} }, "no_challenge likely", ""},
		{"a Basic challenge from an OAuth seller", func(f *facts) {
			f.noCred = &callFact{label: "initialize", status: 401, refused: true, challenges: []Challenge{{Scheme: "Basic"}}}
		}, "challenge_not_bearer possible", "no_challenge"},
		{"an issuer mismatch", func(f *facts) {
			f.graph = []oauth.Failure{{Code: "oauth_issuer_mismatch", URL: "https://as.example/.well-known/oauth-authorization-server", Field: "issuer"}}
		}, "oauth_issuer_mismatch likely", ""},
		{"a refusal nothing explains", func(f *facts) { f.withCred = refusedCall }, "token_refused_unexplained likely", ""},
		{"an opaque token refused", func(f *facts) { f.claims, f.opaque, f.withCred = nil, "opaque (not a JWT)", refusedCall }, "token_refused_unexplained likely", ""},
		{"a token endpoint not advertised", func(f *facts) { f.tokenURL = "https://elsewhere.example/token" }, "token_endpoint_not_advertised possible", ""},
		{"an API-key seller publishes no metadata", func(f *facts) {
			f.credential, f.noCred, f.prmStatus, f.prm, f.servers, f.as, f.claims, f.tokenURL = credBearer, &callFact{label: "x", status: 401, refused: true, challenges: []Challenge{{Scheme: "ApiKey"}}}, 404, nil, nil, nil, nil, ""
			f.graph = []oauth.Failure{{Code: "oauth_protected_resource_metadata_unavailable", Status: 404}}
		}, "", ""},
		{"a challenge naming metadata that is not there", func(f *facts) {
			f.prmNamed, f.prmStatus, f.prm, f.servers = true, 404, nil, nil
			f.graph = []oauth.Failure{{Code: "oauth_protected_resource_metadata_unavailable", Status: 404}}
		}, "oauth_protected_resource_metadata_unavailable likely", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := base()
			tc.edit(&f)
			causes, ruled := rank(f)
			got := ""
			if len(causes) > 0 {
				got = causes[0].ID + " " + string(causes[0].Verdict)
			}
			if !strings.HasPrefix(got, tc.first) || (tc.first == "") != (got == "") {
				t.Errorf("first cause %q, want %q; all: %+v", got, tc.first, causes)
			}
			if tc.ruled != "" {
				found := false
				for _, h := range ruled {
					found = found || h.ID == tc.ruled
				}
				if !found {
					t.Errorf("%s is not ruled out: %+v", tc.ruled, ruled)
				}
			}
		})
	}
}
