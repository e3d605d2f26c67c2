package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/auth"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// oauthFlags are run's OAuth client credentials flags (--oauth-*): the
// seller is called with bearer tokens the harness obtains from its token
// endpoint (probes/auth), renewed before they expire and after a 401,
// instead of a fixed --bearer-env token.
type oauthFlags struct {
	tokenURL   string
	clientID   string
	secretEnv  string
	scope      string
	resources  multiValue
	audience   string
	clientAuth string

	secret string // read from secretEnv by check
}

// oauthFlagNames are the --oauth-* flags, which a --targets file sets per
// target (oauthKeys).
var oauthFlagNames = []string{"oauth-token-url", "oauth-client-id", "oauth-client-secret-env", "oauth-scope", "oauth-resource", "oauth-audience", "oauth-client-auth"}

// addOAuthFlags registers the --oauth-* flags on fs.
func addOAuthFlags(fs *flag.FlagSet, o *oauthFlags) {
	fs.StringVar(&o.tokenURL, "oauth-token-url", "", "an OAuth-protected seller: the `URL` of the token endpoint the run obtains its bearer token from with the client credentials grant (RFC 6749 §4.4), renewed before it expires; instead of --bearer-env")
	fs.StringVar(&o.clientID, "oauth-client-id", "", "with --oauth-token-url: the client `ID`")
	fs.StringVar(&o.secretEnv, "oauth-client-secret-env", "", "with --oauth-token-url: the `NAME` of the environment variable holding the client secret (not the secret itself); redacted from every report like every token obtained with it")
	fs.StringVar(&o.scope, "oauth-scope", "", "with --oauth-token-url: the scope to ask for, space-separated")
	fs.Var(&o.resources, "oauth-resource", "with --oauth-token-url: a resource `URI` the token is asked for (RFC 8707, e.g. the seller's endpoint), repeatable")
	fs.StringVar(&o.audience, "oauth-audience", "", "with --oauth-token-url: the audience parameter some servers take instead of a resource")
	fs.StringVar(&o.clientAuth, "oauth-client-auth", "basic", "with --oauth-token-url: how the client authenticates to the token endpoint, basic (client_secret_basic) or post (client_secret_post)")
}

// given reports whether any --oauth-* flag but the defaulted
// --oauth-client-auth was given.
func (o *oauthFlags) given() bool {
	return o.tokenURL != "" || o.clientID != "" || o.secretEnv != "" || o.scope != "" || len(o.resources) > 0 || o.audience != ""
}

// check refuses --oauth-* flags that cannot work together or with the
// rest of the command line, and reads the client secret. targets says the
// run is a --targets run.
func (o *oauthFlags) check(c *runConfig, targets bool, stdio Stdio) error {
	if !o.given() {
		return nil
	}
	switch {
	case targets:
		return usagef("--targets gives each target its own oauth_* keys; do not give --oauth-* flags too")
	case o.tokenURL == "":
		return usagef("--oauth-client-id, --oauth-client-secret-env, --oauth-scope, --oauth-resource and --oauth-audience go with --oauth-token-url")
	case c.mcpURL == "" && c.a2aURL == "":
		return usagef("--oauth-token-url needs --mcp or --a2a: the bundled reference seller is protected by a token of its own")
	case c.bearerEnv != "":
		return usagef("--oauth-token-url and --bearer-env are two sources of the same credential: give one")
	case slices.ContainsFunc(c.headers, func(h string) bool {
		name, _, _ := strings.Cut(h, ":")
		return strings.EqualFold(strings.TrimSpace(name), "Authorization")
	}):
		return usagef("--oauth-token-url sends the token as Authorization: do not give an Authorization --header too")
	case o.clientID == "" || o.secretEnv == "":
		return usagef("--oauth-token-url needs --oauth-client-id and --oauth-client-secret-env")
	case !envNameRE.MatchString(o.secretEnv) || looksLikeSecret(o.secretEnv):
		return usagef("--oauth-client-secret-env wants the name of an environment variable holding the client secret (e.g. --oauth-client-secret-env SELLER_CLIENT_SECRET), not the secret itself; the value given is not repeated here")
	}
	o.secret = stdio.getenv(o.secretEnv)
	if o.secret == "" {
		return usagef("--oauth-client-secret-env %s: the variable is empty or unset", o.secretEnv)
	}
	_, err := o.source(c, nil)
	return err
}

// source is the run's token source (it makes no request yet); cfg, when
// set, gives the client TLS configuration (--ca-cert). The token endpoint
// is reached under the fetch policy: https and public addresses only,
// unless every target is on this machine or a private network, or the run
// allows local fetches (--allow-local-fetch).
func (o *oauthFlags) source(c *runConfig, cfg *plan.Config) (*auth.Source, error) {
	method, ok := map[string]auth.ClientAuth{"basic": auth.ClientSecretBasic, string(auth.ClientSecretBasic): auth.ClientSecretBasic,
		"post": auth.ClientSecretPost, string(auth.ClientSecretPost): auth.ClientSecretPost}[o.clientAuth]
	if !ok {
		return nil, usagef("--oauth-client-auth %q: want basic or post", wire.Sanitize(o.clientAuth, 40))
	}
	ac := auth.Config{TokenURL: o.tokenURL, ClientID: o.clientID, ClientSecret: o.secret, Method: method, Scope: o.scope,
		Resource: o.resources, Audience: o.audience, Timeout: c.timeout, Secrets: &wire.SecretSet{},
		Policy: fetch.Policy{Local: c.localFetch || internalTargets(c.mcpURL, c.a2aURL)}}
	if cfg != nil {
		ac.Policy.TLS = cfg.TLS
	}
	src, err := auth.New(ac)
	if err != nil {
		return nil, usagef("--oauth-token-url: %v", err)
	}
	return src, nil
}

// apply obtains the run's first token, before any probe: a token endpoint
// that refuses the client ends the run with exit 3 and its reason. The
// faces then send the source's current token, and every transport of the
// run redacts every token it obtains and the client secret.
func (o *oauthFlags) apply(c *runConfig, cfg *plan.Config, stdio Stdio) error {
	if o.tokenURL == "" {
		return nil
	}
	src, err := o.source(c, cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	tok, err := src.Token(ctx)
	if err != nil {
		return &codeError{code: ExitHarness, msg: wire.NewLiveRedactor(nil, src.Secrets(), nil).String(err.Error())}
	}
	cfg.MCP.BearerToken, cfg.A2A.BearerToken = tok, tok
	cfg.MCP.Token, cfg.A2A.Token = src, src
	cfg.MCP.Limits.LiveSecrets, cfg.A2A.Limits.LiveSecrets = src.Secrets(), src.Secrets()
	fmt.Fprintf(stdio.Err, "adcp-conform: bearer token obtained from %s (OAuth client credentials, client %s)\n",
		wire.Sanitize(fetch.RedactURL(o.tokenURL), 200), wire.Sanitize(o.clientID, 80))
	return nil
}

// internalTargets reports whether every URL given is on this machine or a
// private network (wire.Internal), and at least one is.
func internalTargets(urls ...string) bool {
	n := 0
	for _, u := range urls {
		if u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || !wire.Internal(p.Hostname()) {
			return false
		}
		n++
	}
	return n > 0
}

// oauthEnv reports whether k is the variable of an --oauth-* flag: a
// target of a --targets run never reads it (each sets its own).
func oauthEnv(k string) bool {
	for _, n := range oauthFlagNames {
		if k == envName(n) {
			return true
		}
	}
	return false
}

// OAuthKeys are a --targets entry's OAuth client credentials, as the
// --oauth-* flags.
type OAuthKeys struct {
	OAuthTokenURL        string   `json:"oauth_token_url,omitempty"`
	OAuthClientID        string   `json:"oauth_client_id,omitempty"`
	OAuthClientSecretEnv string   `json:"oauth_client_secret_env,omitempty"`
	OAuthScope           string   `json:"oauth_scope,omitempty"`
	OAuthResource        []string `json:"oauth_resource,omitempty"`
	OAuthAudience        string   `json:"oauth_audience,omitempty"`
	OAuthClientAuth      string   `json:"oauth_client_auth,omitempty"`
}

// check refuses a target's keys that cannot work: the other keys without
// oauth_token_url, oauth_token_url with bearer_env, a secret given in
// place of its variable's name (not repeated).
func (k OAuthKeys) check(bearerEnv string) error {
	others := k.OAuthClientID != "" || k.OAuthClientSecretEnv != "" || k.OAuthScope != "" || len(k.OAuthResource) > 0 || k.OAuthAudience != "" || k.OAuthClientAuth != ""
	switch {
	case k.OAuthTokenURL == "" && others:
		return fmt.Errorf("the oauth_* keys go with oauth_token_url")
	case k.OAuthTokenURL == "":
		return nil
	case bearerEnv != "":
		return fmt.Errorf("oauth_token_url and bearer_env are two sources of the same credential: give one")
	case k.OAuthClientSecretEnv != "" && (!envNameRE.MatchString(k.OAuthClientSecretEnv) || looksLikeSecret(k.OAuthClientSecretEnv)):
		return fmt.Errorf("oauth_client_secret_env wants the name of an environment variable holding the client secret, not the secret itself (the value is not repeated here)")
	}
	return nil
}

// args are the run flags of a target's keys.
func (k OAuthKeys) args() []string {
	var out []string
	for _, kv := range [][2]string{{"oauth-token-url", k.OAuthTokenURL}, {"oauth-client-id", k.OAuthClientID},
		{"oauth-client-secret-env", k.OAuthClientSecretEnv}, {"oauth-scope", k.OAuthScope}, {"oauth-audience", k.OAuthAudience},
		{"oauth-client-auth", k.OAuthClientAuth}} {
		if kv[1] != "" {
			out = append(out, "--"+kv[0]+"="+kv[1])
		}
	}
	for _, r := range k.OAuthResource {
		out = append(out, "--oauth-resource="+r)
	}
	return out
}
