package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/conform"
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

// addOAuthFlags registers the --oauth-* flags on fs.
func addOAuthFlags(fs *flag.FlagSet, o *oauthFlags) {
	fs.StringVar(&o.tokenURL, "oauth-token-url", "", "an OAuth-protected seller: the `URL` of the token endpoint the run obtains its bearer token from with the client credentials grant (RFC 6749 §4.4), renewed before it expires; instead of --bearer-env")
	fs.StringVar(&o.clientID, "oauth-client-id", "", "with --oauth-token-url: the client `ID`")
	fs.StringVar(&o.secretEnv, "oauth-client-secret-env", "", "with --oauth-token-url: the `NAME` of the environment variable holding the client secret (not the secret itself); redacted from every report like every token obtained with it")
	fs.StringVar(&o.scope, "oauth-scope", "", "with --oauth-token-url: the `SCOPE` to ask for, space-separated")
	fs.Var(&o.resources, "oauth-resource", "with --oauth-token-url: a resource `URI` the token is asked for (RFC 8707, e.g. the seller's endpoint), repeatable")
	fs.StringVar(&o.audience, "oauth-audience", "", "with --oauth-token-url: the `AUDIENCE` parameter some servers take instead of a resource")
	fs.StringVar(&o.clientAuth, "oauth-client-auth", "basic", "with --oauth-token-url: how the client authenticates to the token endpoint, `basic|post`: HTTP Basic (client_secret_basic) or body parameters (client_secret_post)")
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
	return nil // the rest conform.Run checks (the client authentication, the token URL)
}

// config is the run's OAuth configuration (nil without --oauth-token-url).
func (o *oauthFlags) config() *conform.OAuth {
	if o.tokenURL == "" {
		return nil
	}
	return &conform.OAuth{TokenURL: o.tokenURL, ClientID: o.clientID, ClientSecret: o.secret, Scope: o.scope, Resources: o.resources,
		Audience: o.audience, ClientAuth: o.clientAuth}
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

// flags are the --oauth-* flags of a target's keys.
func (k OAuthKeys) flags() oauthFlags {
	o := oauthFlags{tokenURL: k.OAuthTokenURL, clientID: k.OAuthClientID, secretEnv: k.OAuthClientSecretEnv, scope: k.OAuthScope,
		resources: k.OAuthResource, audience: k.OAuthAudience, clientAuth: k.OAuthClientAuth}
	if o.clientAuth == "" {
		o.clientAuth = "basic" // the flag's default
	}
	return o
}
