package webhook

import (
	"errors"
	"strings"
	"testing"
)

// AgentJWKSURI picks the agent's entry (a trailing slash aside), else with
// anyAgent the first naming a jwks_uri, resolved against brand.json's URL.
func TestAgentJWKSURI(t *testing.T) {
	const brand = "https://op.test/.well-known/brand.json"
	agents, err := ParseBrandAgents([]byte(`{"agents":[{"url":"https://x.test/a","jwks_uri":"https://x.test/j"},{"url":"https://seller.test/mcp/"},{"url":"https://seller.test/mcp/","jwks_uri":"keys.json"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		agent    string
		anyAgent bool
		uri      string
		own      bool
		err      string
	}{
		{agent: "https://seller.test/mcp", uri: "https://op.test/.well-known/keys.json", own: true},
		{agent: "https://other.test/mcp", anyAgent: true, uri: "https://x.test/j"},
		{agent: "https://other.test/mcp", err: ErrNoJWKSURI.Error()},
	} {
		uri, own, err := AgentJWKSURI(agents, brand, tc.agent, tc.anyAgent)
		if uri != tc.uri || own != tc.own || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("%s anyAgent=%v: %q %v %v", tc.agent, tc.anyAgent, uri, own, err)
		}
	}
	if _, _, err := AgentJWKSURI([]BrandAgent{{URL: "u", JWKSURI: "ftp://h/\x1b"}}, brand, "u", false); err == nil || errors.Is(err, ErrNoJWKSURI) || strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("a non-http jwks_uri: %v", err)
	}
	for _, bad := range []string{"", "[]", "<html>", `{"agents":"x"}`, `{"agents":[1]}`} {
		if _, err := ParseBrandAgents([]byte(bad)); err == nil {
			t.Errorf("ParseBrandAgents(%q) accepted", bad)
		}
	}
	if a, err := ParseBrandAgents([]byte(`{"name":"n"}`)); err != nil || len(a) != 0 {
		t.Errorf("no agents: %v %v", a, err)
	}
}
