package diagnose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/oauthgate"
	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/golden"
	"github.com/adcp-conform/adcp-conform/probes/auth"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/diagnose"
)

// The fixed clock of the set-ups: the tokens' claims and the walk's reading
// of them agree on it, so the text output is the same on every run.
var clock = func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

const (
	clientID     = "conform-client"
	clientSecret = "s3cret-of-the-conform-client"
)

// walked is a diagnosis and the secrets it must not show.
type walked struct {
	rep     *diagnose.Report
	secrets []string
	text    string
	json    string
}

// diagnoseWith runs the walk on endpoint with the client credentials of
// tokenURL ("" for none), under the local fetch policy.
func diagnoseWith(t *testing.T, endpoint, tokenURL, scope string) walked {
	t.Helper()
	cfg := diagnose.Config{MCP: mcp.Config{Endpoint: endpoint, Guard: fetch.NewGuard(fetch.GuardConfig{Agents: []string{endpoint}}), Timeout: 10 * time.Second},
		LocalFetch: true, Now: clock}
	var src *auth.Source
	if tokenURL != "" {
		var err error
		src, err = auth.New(auth.Config{TokenURL: tokenURL, ClientID: clientID, ClientSecret: clientSecret, Scope: scope,
			Resource: []string{endpoint}, Policy: fetch.Policy{Local: true}, Now: clock, Secrets: &wire.SecretSet{}})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Source, cfg.TokenURL, cfg.Scope, cfg.Resources = src, tokenURL, scope, []string{endpoint}
	}
	rep := diagnose.Run(context.Background(), cfg)
	var text, js bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	w := walked{rep: rep, text: text.String(), json: js.String(), secrets: []string{clientSecret}}
	if src != nil {
		w.secrets = append(w.secrets, src.Secrets().List()...)
	}
	return w
}

// gate starts the gate fixture with defect in front of the reference
// seller.
func gate(t *testing.T, defect oauthgate.Defect) oauthgate.Endpoints {
	t.Helper()
	ep, stop, err := oauthgate.Start(context.Background(), oauthgate.Options{Defect: defect, ClientID: clientID, ClientSecret: clientSecret,
		Now: clock, Next: seller.New(seller.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return ep
}

// reference starts the reference seller in 3.2 with its OAuth discovery
// graph and its client credentials token endpoint.
func reference(t *testing.T, meta seller.OAuthMetadata) seller.Endpoints {
	t.Helper()
	ep, stop, err := seller.StartAll(context.Background(), seller.Options{Release: seller.Release32, OAuth: &meta,
		ClientCredentials: &seller.ClientCredentials{ClientID: clientID, ClientSecret: clientSecret}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return ep
}

// firstCause is the ID and verdict of the cause ranked first, "" for none.
func firstCause(r *diagnose.Report) string {
	if len(r.Causes) == 0 {
		return ""
	}
	return r.Causes[0].ID + " " + string(r.Causes[0].Verdict)
}

// noSecret fails when the output shows a secret.
func noSecret(t *testing.T, w walked) {
	t.Helper()
	if len(w.secrets) < 2 && w.rep.Credential == "OAuth client credentials" && !strings.Contains(w.text, "gives no token") {
		t.Errorf("the walk obtained no token to look for (secrets %d)", len(w.secrets))
	}
	for _, s := range w.secrets {
		if strings.Contains(w.text, s) || strings.Contains(w.json, s) {
			t.Errorf("the output shows a secret (%d bytes)", len(s))
		}
	}
}

// TestBrokenSetupsNameTheRightCauseFirst is the acceptance: each
// broken OAuth set-up has its own cause ranked first, with exit 1; the
// sound ones have none, with exit 0; no token or secret is printed.
func TestBrokenSetupsNameTheRightCauseFirst(t *testing.T) {
	for _, tc := range []struct {
		defect oauthgate.Defect
		scope  string
		first  string
		exit   int
	}{
		{oauthgate.Sound, "", "", 0},
		{oauthgate.WrongAudience, "", "token_audience likely", 1},
		{oauthgate.IssuerMismatch, "", "oauth_issuer_mismatch likely", 1},
		{oauthgate.Expired, "", "token_expired likely", 1},
		{oauthgate.LacksScope, "", "token_scope likely", 1},
		{oauthgate.NoChallenge, "", "no_challenge likely", 1},
		{oauthgate.ForeignIssuer, "", "token_issuer likely", 1},
		{oauthgate.ResourceMismatch, "", "oauth_resource_mismatch likely", 1},
		// A scope the authorization server does not know: the token
		// request itself is refused.
		{oauthgate.Sound, "adcp:everything", "token_request_refused likely", 1},
	} {
		t.Run(string(tc.defect)+tc.scope, func(t *testing.T) {
			ep := gate(t, tc.defect)
			w := diagnoseWith(t, ep.MCP, ep.Token, tc.scope)
			if got := firstCause(w.rep); got != tc.first {
				t.Errorf("first cause %q, want %q\n%s", got, tc.first, w.text)
			}
			if got := w.rep.ExitCode(); got != tc.exit {
				t.Errorf("exit %d, want %d", got, tc.exit)
			}
			noSecret(t, w)
		})
	}
}

func TestTheReferenceSellersOAuthModes(t *testing.T) {
	t.Run("sound", func(t *testing.T) {
		ep := reference(t, seller.OAuthMetadata{})
		w := diagnoseWith(t, ep.MCP, ep.Token, "")
		if got := firstCause(w.rep); got != "" || w.rep.ExitCode() != 0 {
			t.Errorf("first cause %q, exit %d; want none, 0\n%s", got, w.rep.ExitCode(), w.text)
		}
		noSecret(t, w)
	})
	t.Run("issuer mismatch", func(t *testing.T) {
		ep := reference(t, seller.OAuthMetadata{IssuerMismatch: true})
		w := diagnoseWith(t, ep.MCP, ep.Token, "")
		if got := firstCause(w.rep); got != "oauth_issuer_mismatch likely" || w.rep.ExitCode() != 1 {
			t.Errorf("first cause %q, exit %d; want oauth_issuer_mismatch, 1\n%s", got, w.rep.ExitCode(), w.text)
		}
		noSecret(t, w)
	})
	t.Run("a wrong client secret", func(t *testing.T) {
		ep, stop, err := seller.StartAll(context.Background(), seller.Options{Release: seller.Release32, OAuth: &seller.OAuthMetadata{},
			ClientCredentials: &seller.ClientCredentials{ClientID: clientID, ClientSecret: "another-secret-entirely"}})
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		w := diagnoseWith(t, ep.MCP, ep.Token, "")
		if got := firstCause(w.rep); got != "token_request_refused likely" || !strings.Contains(w.text, "does not take the client's id and secret") {
			t.Errorf("first cause %q; want token_request_refused naming the client\n%s", got, w.text)
		}
		noSecret(t, w)
	})
}

func TestNoCredentialWalksTheDiscoveryOnly(t *testing.T) {
	ep := gate(t, oauthgate.Sound)
	w := diagnoseWith(t, ep.MCP, "", "")
	if w.rep.ExitCode() != 0 || len(w.rep.Causes) != 0 {
		t.Errorf("exit %d, causes %v; want 0 and none\n%s", w.rep.ExitCode(), w.rep.Causes, w.text)
	}
	if !strings.Contains(w.text, "no credential was given") {
		t.Errorf("the output does not say the token steps were not tried:\n%s", w.text)
	}
}

func TestAnUnreachableSellerIsTheHarnesssError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nothing listens there now
	w := diagnoseWith(t, endpoint, "", "")
	if w.rep.ExitCode() != 3 || w.rep.Unreachable == "" {
		t.Errorf("exit %d, unreachable %q; want 3 with the reason\n%s", w.rep.ExitCode(), w.rep.Unreachable, w.text)
	}
}

// ports normalizes the loopback ports of a text output.
var ports = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// TestTextOutputMatchesItsGoldenFiles keeps the text of three broken
// set-ups and a sound one (run with -update to rewrite them).
func TestTextOutputMatchesItsGoldenFiles(t *testing.T) {
	for _, d := range []oauthgate.Defect{oauthgate.Sound, oauthgate.WrongAudience, oauthgate.IssuerMismatch, oauthgate.NoChallenge, oauthgate.LacksScope} {
		name := string(d)
		if d == oauthgate.Sound {
			name = "sound"
		}
		t.Run(name, func(t *testing.T) {
			ep := gate(t, d)
			w := diagnoseWith(t, ep.MCP, ep.Token, "")
			golden.Check(t, "testdata/"+name+".golden", []byte(ports.ReplaceAllString(w.text, "127.0.0.1:PORT")))
		})
	}
}

func TestJSONOutputIsOneDocument(t *testing.T) {
	ep := gate(t, oauthgate.WrongAudience)
	w := diagnoseWith(t, ep.MCP, ep.Token, "")
	var doc struct {
		Causes []struct {
			ID, Verdict string
		} `json:"causes"`
		Handshake []json.RawMessage `json:"handshake"`
	}
	if err := json.Unmarshal([]byte(w.json), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Causes) == 0 || doc.Causes[0].ID != "token_audience" || doc.Causes[0].Verdict != "likely" || len(doc.Handshake) < 5 {
		t.Errorf("JSON causes %+v, %d steps", doc.Causes, len(doc.Handshake))
	}
}
