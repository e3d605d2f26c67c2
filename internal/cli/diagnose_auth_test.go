package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/oauthgate"
	"github.com/adcp-conform/adcp-conform/fixtures/seller"
)

const (
	diagClientID     = "conform-client"
	diagClientSecret = "s3cret-of-the-conform-client"
)

// TestDiagnoseExitCodes drives `adcp-conform diagnose` end to end: a sound
// reference seller behind OAuth exits 0; broken set-ups exit 1 with their
// cause first; a seller nobody listens for exits 3; the client secret is
// printed nowhere.
func TestDiagnoseExitCodes(t *testing.T) {
	ctx := context.Background()
	ref, stop, err := seller.StartAll(ctx, seller.Options{Release: seller.Release32, OAuth: &seller.OAuthMetadata{},
		ClientCredentials: &seller.ClientCredentials{ClientID: diagClientID, ClientSecret: diagClientSecret}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	start := func(d oauthgate.Defect) oauthgate.Endpoints {
		ep, stop, err := oauthgate.Start(ctx, oauthgate.Options{Defect: d, ClientID: diagClientID, ClientSecret: diagClientSecret, Next: seller.New(seller.Options{})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		return ep
	}
	env := map[string]string{"CLIENT_SECRET": diagClientSecret}
	oauth := func(mcpURL, tokenURL string) []string {
		return []string{"diagnose", "--json", "--allow-local-fetch", "--mcp", mcpURL, "--oauth-token-url", tokenURL,
			"--oauth-client-id", diagClientID, "--oauth-client-secret-env", "CLIENT_SECRET"}
	}
	aud, noChallenge := start(oauthgate.WrongAudience), start(oauthgate.NoChallenge)
	for _, tc := range []struct {
		name  string
		args  []string
		code  ExitCode
		first string
	}{
		{"the reference seller, sound", oauth(ref.MCP, ref.Token), ExitOK, ""},
		{"a token for another audience", oauth(aud.MCP, aud.Token), ExitNonConformant, "token_audience"},
		{"a 401 without a challenge", oauth(noChallenge.MCP, noChallenge.Token), ExitNonConformant, "no_challenge"},
		{"nobody listens", []string{"diagnose", "--json", "--mcp", "http://127.0.0.1:1/mcp"}, ExitHarness, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, env, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q\n%s", code, tc.code, errOut, out)
			}
			var doc struct {
				Causes []struct{ ID string } `json:"causes"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("stdout is no JSON document: %v\n%s", err, out)
			}
			if first := ""; len(doc.Causes) > 0 {
				first = doc.Causes[0].ID
				if first != tc.first {
					t.Errorf("first cause %q, want %q", first, tc.first)
				}
			} else if tc.first != "" {
				t.Errorf("no cause, want %q", tc.first)
			}
			if strings.Contains(out+errOut, diagClientSecret) {
				t.Error("the output shows the client secret")
			}
		})
	}
}

func TestDiagnoseUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no seller", []string{"diagnose"}, "adcp-conform diagnose: diagnose needs the seller: give --mcp URL or --a2a URL"},
		{"both faces", []string{"diagnose", "--mcp", "https://s.example/mcp", "--a2a", "https://s.example/a2a"},
			"adcp-conform diagnose: diagnose walks one face at a time: give --mcp or --a2a, not both"},
		{"a token in place of its variable", []string{"diagnose", "--mcp", "https://s.example/mcp", "--bearer-env", "eyJhbGciOiJIUzI1NiJ9abcdefGHIJ1234567"},
			"adcp-conform diagnose: --bearer-env wants the name of an environment variable holding the token (e.g. --bearer-env SELLER_TOKEN), not the token itself; the value given is not repeated here"},
		{"an OAuth flag without its token URL", []string{"diagnose", "--mcp", "https://s.example/mcp", "--oauth-client-id", "c"},
			"adcp-conform diagnose: --oauth-client-id, --oauth-client-secret-env, --oauth-scope, --oauth-resource and --oauth-audience go with --oauth-token-url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, nil, "", tc.args...)
			if code != ExitUsage || out != "" {
				t.Fatalf("exit %d, stdout %q; want %d and nothing", code, out, ExitUsage)
			}
			oneErrorLine(t, errOut, tc.want)
		})
	}
}
