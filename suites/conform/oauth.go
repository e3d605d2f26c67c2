package conform

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/adcp-conform/adcp-conform/probes/auth"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// source is the run's token source (it makes no request yet); cfg, when
// set, gives the client TLS configuration (--ca-cert). The token endpoint
// is reached under the fetch policy: https and public addresses only,
// unless every target is on this machine or a private network, or the run
// allows local fetches (--allow-local-fetch).
func (o *OAuth) source(c Config, cfg *plan.Config) (*auth.Source, error) {
	method, ok := map[string]auth.ClientAuth{"": auth.ClientSecretBasic, "basic": auth.ClientSecretBasic, string(auth.ClientSecretBasic): auth.ClientSecretBasic,
		"post": auth.ClientSecretPost, string(auth.ClientSecretPost): auth.ClientSecretPost}[o.ClientAuth]
	if !ok {
		return nil, configf("--oauth-client-auth %q: want basic or post", wire.Sanitize(o.ClientAuth, 40))
	}
	ac := auth.Config{TokenURL: o.TokenURL, ClientID: o.ClientID, ClientSecret: o.ClientSecret, Method: method, Scope: o.Scope,
		Resource: o.Resources, Audience: o.Audience, Timeout: c.Timeout, Secrets: &wire.SecretSet{},
		Policy: fetch.Policy{Local: c.LocalFetch || internalTargets(c.MCP, c.A2A)}}
	if cfg != nil {
		ac.Policy.TLS = cfg.TLS
	}
	src, err := auth.New(ac)
	if err != nil {
		return nil, configf("--oauth-token-url: %v", err)
	}
	return src, nil
}

// apply obtains the run's first token, before any probe: a token endpoint
// that refuses the client ends the run with its reason (an error, not a
// ConfigError: the harness could not start). The faces then
// send the source's current token, and every transport of the run
// redacts every token it obtains and the client secret.
func (o *OAuth) apply(c Config, cfg *plan.Config) error {
	src, err := o.source(c, cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	tok, err := src.Token(ctx)
	if err != nil {
		return errors.New(wire.NewLiveRedactor(nil, src.Secrets(), nil).String(err.Error())) // a harness error, redacted
	}
	cfg.MCP.BearerToken, cfg.A2A.BearerToken = tok, tok
	cfg.MCP.Token, cfg.A2A.Token = src, src
	cfg.MCP.Limits.LiveSecrets, cfg.A2A.Limits.LiveSecrets = src.Secrets(), src.Secrets()
	fmt.Fprintf(c.Log, "adcp-conform: bearer token obtained from %s (OAuth client credentials, client %s)\n",
		wire.Sanitize(fetch.RedactURL(o.TokenURL), 200), wire.Sanitize(o.ClientID, 80))
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
