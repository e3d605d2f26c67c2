package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/report"
)

const ccSecret = "cc-secret-2b7f9e41d0"

// ccSeller is the reference seller in client-credentials mode behind a
// wrapper that keeps every token its endpoint issued and, to make a run
// renew its token after a 401 too, revokes each token once it has served
// uses requests (answering 401 invalid_token itself; 0: never); with
// echo, every response carries the request's Authorization back in a
// header, as a careless seller's debug output would.
type ccSeller struct {
	url  string
	uses int
	echo bool

	mu     sync.Mutex
	issued []string
	used   map[string]int
}

func startCCSeller(t *testing.T, expiresIn time.Duration, uses int, echo bool) *ccSeller {
	t.Helper()
	s := &ccSeller{uses: uses, echo: echo, used: map[string]int{}}
	inner := seller.New(seller.Options{ClientCredentials: &seller.ClientCredentials{ClientID: "conform", ClientSecret: ccSecret, ExpiresIn: expiresIn}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authz := r.Header.Get("Authorization")
		if s.echo {
			w.Header().Set("X-Debug-Echo", authz)
		}
		if r.URL.Path == seller.TokenPath {
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			var m struct {
				AccessToken string `json:"access_token"`
			}
			if json.Unmarshal(rec.Body.Bytes(), &m) == nil && m.AccessToken != "" {
				s.mu.Lock()
				s.issued = append(s.issued, m.AccessToken)
				s.mu.Unlock()
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		if tok, ok := strings.CutPrefix(authz, "Bearer rs-cc-"); ok && s.uses > 0 {
			s.mu.Lock()
			s.used[tok]++
			revoked := s.used[tok] > s.uses
			s.mu.Unlock()
			if revoked {
				w.Header().Set("WWW-Authenticate", `Bearer realm="adcp", error="invalid_token"`)
				http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *ccSeller) tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// ccArgs are the flags of a run against s with client credentials.
func ccArgs(s *ccSeller, out string) []string {
	return []string{"run", "--mcp", s.url + "/mcp", "--a2a", s.url + "/a2a/v1", "--out", out,
		"--oauth-token-url", s.url + seller.TokenPath, "--oauth-client-id", "conform", "--oauth-client-secret-env", "CC_SECRET",
		"--oauth-resource", s.url + "/mcp"}
}

// The reference seller behind OAuth client credentials, its tokens valid
// for two seconds and revoked after 30 requests each: the whole
// run (probes and storyboards, MCP and A2A) is green; the run renewed its
// token before expiry and repeated revoked requests once with a renewed
// one; and neither the client secret nor any token the seller issued is
// in a report file, the terminal or the GitHub step summary.
func TestARunBehindClientCredentialsIsGreenAndLeaksNothing(t *testing.T) {
	compliance, schemas := specDirs(t)
	s := startCCSeller(t, 2*time.Second, 30, false)
	dir := t.TempDir()
	summary := filepath.Join(t.TempDir(), "summary.md")
	code, out, errOut := run(t, map[string]string{"CC_SECRET": ccSecret, "GITHUB_STEP_SUMMARY": summary}, "",
		append(ccArgs(s, dir), "--storyboards", compliance, "--schemas", schemas)...)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := readResults(t, dir)
	if r.Verdict != report.Conformant || r.Counts[report.Failed] != 0 || len(r.Steps) == 0 {
		t.Errorf("verdict %s, counts %v, %d steps", r.Verdict, r.Counts, len(r.Steps))
	}
	for _, rule := range r.Rules {
		if strings.HasPrefix(rule.ID, "AUTH-") && rule.Outcome != report.Passed {
			t.Errorf("%s: %s (the auth probes run without and with a random credential under OAuth too)", rule.ID, rule.Outcome)
		}
	}
	tokens := s.tokens()
	if len(tokens) < 2 {
		t.Errorf("the seller issued %d tokens: the run never renewed its token", len(tokens))
	}
	ev, _ := os.ReadFile(filepath.Join(dir, FileEvidence))
	if !bytes.Contains(ev, []byte(`"token_refreshed": true`)) {
		t.Error("no exchange was repeated after a revoked token's 401")
	}
	if !strings.Contains(errOut, "bearer token obtained from "+s.url+seller.TokenPath) {
		t.Errorf("stderr does not say where the token came from:\n%s", errOut)
	}
	sum, _ := os.ReadFile(summary)
	assertNoSecret(t, dir, append(tokens, ccSecret), out, errOut, string(sum))
	t.Logf("%d tokens issued over the run; verdict %s, counts %v, %d storyboard steps", len(tokens), r.Verdict, r.Counts, len(r.Steps))
}

// A seller echoing every credential it receives, renewed ones included:
// each echo is redacted from every output and still judged (EOBJ-07
// fails on error replies that echo the caller's credential), since the
// redactors learn each token the moment it is obtained.
func TestARenewedTokenEchoedBySellerIsRedactedAndJudged(t *testing.T) {
	s := startCCSeller(t, time.Hour, 20, true)
	dir := t.TempDir()
	code, out, errOut := run(t, map[string]string{"CC_SECRET": ccSecret}, "",
		append(ccArgs(s, dir), "--storyboards", "off", "--schemas", "off", "--label-filter", "rule:EOBJ-07")...)
	if code != ExitNonConformant {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitNonConformant, out, errOut)
	}
	tokens := s.tokens()
	if len(tokens) < 2 {
		t.Fatalf("the seller issued %d tokens: no token was renewed mid-run", len(tokens))
	}
	for _, rule := range readResults(t, dir).Rules {
		if rule.ID == "EOBJ-07" && rule.Outcome != report.Failed {
			t.Errorf("EOBJ-07 %s, want failed", rule.Outcome)
		}
	}
	assertNoSecret(t, dir, append(tokens, ccSecret), out, errOut)
}

// A token endpoint refusing the client ends the run before any probe with
// exit 3 and the endpoint's reason (its RFC 6749 error and description),
// never a failure of the seller; the wrong secret is not repeated.
func TestARefusedClientIsAHarnessErrorWithTheReason(t *testing.T) {
	s := startCCSeller(t, time.Hour, 0, false)
	dir := t.TempDir()
	const wrong = "not-the-client-secret-42"
	code, out, errOut := run(t, map[string]string{"CC_SECRET": wrong}, "", ccArgs(s, dir)...)
	if code != ExitHarness {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitHarness, out, errOut)
	}
	oneErrorLine(t, errOut, "adcp-conform run: the OAuth token endpoint "+s.url+seller.TokenPath+
		" refused the client credentials grant: invalid_client (Client authentication failed.), HTTP 401")
	assertNoSecret(t, dir, []string{wrong}, out, errOut)
	if _, err := os.Stat(filepath.Join(dir, FileResults)); err == nil {
		t.Error("a run that never probed wrote results.json")
	}
}

// The configurations refused before any request (exit 2): the flags
// without --oauth-token-url, with --bearer-env or an Authorization header,
// without a client, with a secret in place of its variable's name, an
// http token endpoint for a seller that is not local, --targets or the
// bundled reference seller, an unknown client authentication.
func TestOAuthFlagsRefuseWhatCannotWork(t *testing.T) {
	env := map[string]string{"CC_SECRET": ccSecret, "TOK": "static-token-123"}
	mcpURL := []string{"--mcp", "https://seller.example/mcp"}
	oauth := []string{"--oauth-token-url", "https://auth.example/token", "--oauth-client-id", "conform", "--oauth-client-secret-env", "CC_SECRET"}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no token URL":  {append(mcpURL, "--oauth-client-id", "conform"), "go with --oauth-token-url"},
		"no client id":  {append(mcpURL, "--oauth-token-url", "https://auth.example/token", "--oauth-client-secret-env", "CC_SECRET"), "needs --oauth-client-id and --oauth-client-secret-env"},
		"bearer too":    {append(append(mcpURL, oauth...), "--bearer-env", "TOK"), "give one"},
		"authorization": {append(append(mcpURL, oauth...), "--header", "Authorization: Bearer x"), "do not give an Authorization --header"},
		"secret given":  {append(mcpURL, "--oauth-token-url", "https://auth.example/token", "--oauth-client-id", "conform", "--oauth-client-secret-env", "Zx81kQ3mN7pL2vR9tY4w"), "not the secret itself"},
		"unset secret":  {append(mcpURL, "--oauth-token-url", "https://auth.example/token", "--oauth-client-id", "conform", "--oauth-client-secret-env", "NO_SUCH_SECRET"), "NO_SUCH_SECRET: the variable is empty or unset"},
		"http endpoint": {append(mcpURL, "--oauth-token-url", "http://auth.example/token", "--oauth-client-id", "conform", "--oauth-client-secret-env", "CC_SECRET"), "http is not https"},
		"targets":       {append([]string{"--targets", "t.yaml"}, oauth...), "oauth_* keys"},
		"reference":     {oauth, "needs --mcp or --a2a"},
		"client auth":   {append(append(mcpURL, oauth...), "--oauth-client-auth", "jwt"), `--oauth-client-auth "jwt": want basic or post`},
		"resource":      {append(append(mcpURL, oauth...), "--oauth-resource", "not a uri"), "RFC 8707"},
	} {
		code, _, errOut := run(t, env, "", append([]string{"run", "--out", t.TempDir()}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", name, code, errOut, ExitUsage, tc.want)
		}
		if strings.Contains(errOut, ccSecret) || strings.Contains(errOut, "Zx81kQ3mN7pL2vR9tY4w") {
			t.Errorf("%s: stderr quotes a secret: %s", name, errOut)
		}
	}
}

// A --targets file gives each target its own OAuth keys: a target behind
// client credentials runs green with none of its secrets in its folder,
// run.log or the index; keys that cannot work are refused when the file
// is read.
func TestTargetsCarryOAuthKeysPerTarget(t *testing.T) {
	s := startCCSeller(t, time.Hour, 0, false)
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "targets.yaml")
	yaml := "- name: oauth-seller\n  mcp: " + s.url + "/mcp\n  oauth_token_url: " + s.url + seller.TokenPath +
		"\n  oauth_client_id: conform\n  oauth_client_secret_env: CC_SECRET\n  oauth_scope: adcp\n  oauth_client_auth: post\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, map[string]string{"CC_SECRET": ccSecret}, "",
		"run", "--targets", file, "--out", dir, "--label-filter", "family:auth", "--schemas", "off", "--storyboards", "off")
	if code != ExitOK {
		log, _ := os.ReadFile(filepath.Join(dir, "oauth-seller", FileRunLog))
		t.Fatalf("exit %d\n%s\n%s\n%s", code, out, errOut, log)
	}
	if r := readResults(t, filepath.Join(dir, "oauth-seller")); r.Verdict != report.Conformant || r.Counts[report.Passed] == 0 {
		t.Errorf("verdict %s, counts %v", r.Verdict, r.Counts)
	}
	assertNoSecret(t, dir, append(s.tokens(), ccSecret), out, errOut)

	for _, tc := range []struct{ keys, want string }{
		{"  oauth_client_id: conform\n", "go with oauth_token_url"},
		{"  bearer_env: TOK\n  oauth_token_url: https://auth.example/token\n", "give one"},
		{"  oauth_token_url: https://auth.example/token\n  oauth_client_secret_env: Zx81kQ3mN7pL2vR9tY4w\n", "not the secret itself"},
	} {
		bad := filepath.Join(t.TempDir(), "bad.yaml")
		_ = os.WriteFile(bad, []byte("- mcp: https://seller.example/mcp\n"+tc.keys), 0o600)
		if _, err := LoadTargets(bad); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Zx81kQ3m") {
			t.Errorf("%q: %v, want %q", tc.keys, err, tc.want)
		}
	}
}
