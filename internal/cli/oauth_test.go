package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/shared"
)

// oauthRun runs 3.2.0-beta.5's oauth_setup storyboard against the reference
// seller over HTTPS on loopback, publishing its OAuth discovery graph, and
// returns the evaluate_oauth_metadata step's outcome and messages. extra
// are further flags.
func oauthRun(t *testing.T, meta *seller.OAuthMetadata, extra ...string) (code ExitCode, outcome, messages, out string) {
	t.Helper()
	sb, sc := shared.File(t, "spec/compliance/3.2.0-beta.5"), shared.File(t, "spec/schemas/3.2.0-beta.5")
	eps, cert, stop, err := seller.StartAllTLS(t.Context(), seller.Options{BearerToken: "oauth-test-token-7", Release: seller.Release32, OAuth: meta})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	out = t.TempDir()
	args := append([]string{"run", "--mcp", eps.MCP, "--bearer-env", "TOK", "--ca-cert", ca, "--storyboards", sb, "--schemas", sc,
		"--storyboard", "oauth_setup", "--out", out}, extra...)
	code, so, se := run(t, map[string]string{"TOK": "oauth-test-token-7"}, "", args...)
	r := readResults(t, out)
	for _, st := range r.Steps {
		if st.StoryboardID == "oauth_setup" && st.StepID == "evaluate_oauth_metadata" {
			var b strings.Builder
			b.WriteString(st.Error)
			for _, v := range st.Validations {
				b.WriteString(v.Check + ": " + v.Message + "\n")
			}
			return code, string(st.Outcome()), b.String(), out
		}
	}
	t.Fatalf("no evaluate_oauth_metadata step (exit %d)\n%s%s", code, so, se)
	return
}

// The engine walks the seller's real OAuth graph over the network: the
// protected-resource document, its issuer's RFC 8414 document, the token
// endpoint and the JWKS, each through probes/fetch with the run's CA. On
// loopback that takes --allow-local-fetch; without it every fetch is
// blocked, as the kit's policy says.
func TestOAuthSetupWalksTheSellersGraph(t *testing.T) {
	code, outcome, msgs, _ := oauthRun(t, &seller.OAuthMetadata{}, "--allow-local-fetch")
	if code != ExitOK || outcome != "passed" {
		t.Fatalf("a consistent graph: exit %d, step %s\n%s", code, outcome, msgs)
	}
	_, outcome, msgs, out := oauthRun(t, &seller.OAuthMetadata{IssuerMismatch: true}, "--allow-local-fetch")
	if outcome != "failed" || !strings.Contains(msgs, "oauth_metadata_graph: oauth_issuer_mismatch") {
		t.Fatalf("an issuer with a trailing slash: step %s\n%s", outcome, msgs)
	}
	// judge walks the same graph again from the recorded fetches, offline.
	jc, jo, je := run(t, nil, "", "judge", "--storyboards", shared.File(t, "spec/compliance/3.2.0-beta.5"),
		"--schemas", shared.File(t, "spec/schemas/3.2.0-beta.5"), "--out", filepath.Join(t.TempDir(), "j"), out)
	if !strings.Contains(jo, "agree:") {
		t.Fatalf("judge of the failing graph: exit %d\n%s%s", jc, jo, je)
	}
	_, outcome, msgs, _ = oauthRun(t, &seller.OAuthMetadata{})
	if outcome != "failed" || !strings.Contains(msgs, "oauth_metadata_graph: oauth_fetch_blocked") {
		t.Fatalf("a loopback graph without --allow-local-fetch: step %s\n%s", outcome, msgs)
	}
}

// On the A2A face the agent's well-known documents are same-origin fetches
// too: webhook_emission's signing-keys precheck reads brand.json and the
// JWKS from the A2A agent's origin (it was refused as a cross-origin http
// fetch, an error on every A2A run).
func TestTheA2AFaceFetchesTheAgentsOwnDocuments(t *testing.T) {
	sb := shared.File(t, "spec/compliance/3.1.19")
	eps, stop, err := seller.StartAll(t.Context(), seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	out := t.TempDir()
	// --allow-mutations: its webhook emitter is create_media_buy.
	code, so, se := run(t, nil, "", "run", "--a2a", eps.A2A10, "--allow-mutations", "--storyboards", sb, "--storyboard", "webhook_emission", "--schemas", "off", "--out", out)
	r := readResults(t, out)
	found := 0
	for _, st := range r.Steps {
		if st.StoryboardID == "webhook_emission" && (st.StepID == "fetch_brand_json" || st.StepID == "assert_webhook_signing_key_present") {
			found++
			if st.Outcome() != "passed" {
				t.Errorf("%s: %s %s (exit %d)\n%s%s", st.StepID, st.Outcome(), st.Error, code, so, se)
			}
		}
	}
	if found != 2 {
		t.Fatalf("the signing-keys steps did not run (exit %d)\n%s%s", code, so, se)
	}
}
