// Package auth obtains the bearer token of an OAuth-protected seller at run
// time: the OAuth 2.0 client credentials grant (RFC 6749 §4.4), the
// machine-to-machine flow a conformance run uses. A Source is a
// wire.TokenSource: a wire.Transport (mcp.Config.Token, a2a.Config.Token)
// sends its current token, renewed before it expires, and repeats a request
// the seller refused with HTTP 401 once with a renewed one. Every token it
// obtains and the client secret are learnt by its wire.SecretSet the moment
// they exist, so the run's redactors keep them out of every report.
//
//	src, err := auth.New(auth.Config{TokenURL: "https://auth.example.com/token", ClientID: "conform", ClientSecret: secret})
//	if err != nil { ... } // a configuration the harness refuses (an http URL, a short secret)
//	tok, err := src.Token(ctx) // an *auth.Error when the endpoint refuses: the harness's failure, never the seller's
//	cfg := mcp.Config{Endpoint: url, BearerToken: tok, Token: src, Limits: wire.Limits{LiveSecrets: src.Secrets()}}
//
// The token endpoint is reached under the probes/fetch policy (https, no
// proxy, every resolved address checked; http and loopback or private
// addresses only with Policy.Local), each request bounded in time
// (Config.Timeout) and its reply in bytes (MaxResponseBytes), and the reply
// is read strictly (RFC 6749 §5.1): a JSON object with a Bearer
// access_token and, when given, an integer expires_in.
package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// ClientAuth is how the client authenticates to the token endpoint (RFC
// 6749 §2.3.1; the names are RFC 7591's token_endpoint_auth_method values).
type ClientAuth string

// The client authentication methods.
const (
	// ClientSecretBasic sends the client id and secret in HTTP Basic
	// authentication, each form-urlencoded first (RFC 6749 §2.3.1: the
	// method every server supports).
	ClientSecretBasic ClientAuth = "client_secret_basic"
	// ClientSecretPost sends them as the client_id and client_secret
	// parameters of the request body.
	ClientSecretPost ClientAuth = "client_secret_post"
)

// MaxRenewMargin bounds how long before its expiry a token is renewed: a
// quarter of its lifetime, at most this, so a token is never sent in the
// last moments of its life and a short-lived one is still used.
const MaxRenewMargin = 30 * time.Second

// Config says how to obtain tokens.
type Config struct {
	// TokenURL is the token endpoint (RFC 6749 §3.2).
	TokenURL string
	// ClientID and ClientSecret are the client's credentials (RFC 6749
	// §2.3.1). The secret is at least wire.MinSecretLen bytes: a shorter
	// one could not be redacted.
	ClientID, ClientSecret string
	// Method is the client authentication; "" means ClientSecretBasic.
	Method ClientAuth
	// Scope is the scope asked for, space-delimited (RFC 6749 §3.3); ""
	// asks for the client's default.
	Scope string
	// Resource are the protected resources the token is for, absolute
	// URIs (RFC 8707 §2: the seller's endpoint).
	Resource []string
	// Audience is the audience parameter some servers take instead of
	// resource (Auth0, Okta); "" sends none.
	Audience string
	// Policy is how the endpoint is reached (probes/fetch): https only and
	// public addresses, unless Policy.Local (a seller on this machine or a
	// run allowing local fetches).
	Policy fetch.Policy
	// Timeout bounds one token request; 0 means fetch.Timeout.
	Timeout time.Duration
	// Now is the clock the expiry is measured with; nil means time.Now.
	Now func() time.Time
	// Secrets learns the client secret and every token obtained; nil
	// means a set of the source's own (Source.Secrets).
	Secrets *wire.SecretSet
}

// Source obtains tokens with the client credentials grant and hands out
// the current one. It is safe for concurrent use: every caller shares one
// token, and one token request is in flight at a time.
type Source struct {
	cfg    Config
	client *http.Client

	mu      sync.Mutex
	current token
	issued  map[string]bool
	flight  *flight
	refused error // an RFC 6749 §5.2 refusal: asking again gets the same answer
}

// token is an access token and when it is renewed (zero: never, for want
// of an expires_in; a 401 still renews it).
type token struct {
	value   string
	renewAt time.Time
}

// flight is one token request, shared by every caller waiting for it.
type flight struct {
	done  chan struct{}
	value string
	err   error
}

// New checks cfg and returns its source. It makes no request: the first
// Token does.
func New(cfg Config) (*Source, error) {
	if why := cfg.Policy.Refusal(cfg.TokenURL); why != "" {
		return nil, fmt.Errorf("the token URL %s cannot be used: %s", fetch.RedactURL(cfg.TokenURL), why)
	}
	switch {
	case cfg.ClientID == "":
		return nil, errors.New("the client id is empty")
	case len(cfg.ClientSecret) < wire.MinSecretLen:
		return nil, fmt.Errorf("the client secret is shorter than %d bytes: it could not be told apart from other text to keep it out of the reports", wire.MinSecretLen)
	}
	switch cfg.Method {
	case "":
		cfg.Method = ClientSecretBasic
	case ClientSecretBasic, ClientSecretPost:
	default:
		return nil, fmt.Errorf("client authentication %q: want %s or %s", wire.Sanitize(string(cfg.Method), 40), ClientSecretBasic, ClientSecretPost)
	}
	for _, r := range cfg.Resource {
		if !absoluteURI(r) {
			return nil, fmt.Errorf("the resource %q is not an absolute URI without a fragment (RFC 8707 §2)", wire.Sanitize(r, 200))
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = fetch.Timeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Secrets == nil {
		cfg.Secrets = &wire.SecretSet{}
	}
	cfg.Secrets.Add(cfg.ClientSecret)
	client, _ := cfg.Policy.Client()
	return &Source{cfg: cfg, client: client, issued: map[string]bool{}}, nil
}

// Secrets holds the client secret and every token the source obtained.
func (s *Source) Secrets() *wire.SecretSet { return s.cfg.Secrets }

// Issued reports whether tok is a token the source obtained.
func (s *Source) Issued(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued[tok]
}

// Token returns the current token, obtaining one when there is none yet or
// the current one is within its renewal margin of expiry. An error is an
// *Error (or ctx's); once the endpoint refused the client (an RFC 6749
// §5.2 error) every later call returns that refusal without asking again.
func (s *Source) Token(ctx context.Context) (string, error) { return s.get(ctx, "") }

// Refresh returns a token to repeat a request the seller refused with 401
// after it was sent with stale: the current one when it was obtained after
// stale, else a new one (the request in flight, when there is one, is
// joined). The token endpoint may give stale back: the caller then does
// not repeat the request.
func (s *Source) Refresh(ctx context.Context, stale string) (string, error) { return s.get(ctx, stale) }

// get returns the current token unless it is stale or about to expire,
// else the token of a request in flight (started when none is).
func (s *Source) get(ctx context.Context, stale string) (string, error) {
	s.mu.Lock()
	if s.refused != nil {
		s.mu.Unlock()
		return "", s.refused
	}
	if s.current.value != stale && s.fresh() {
		v := s.current.value
		s.mu.Unlock()
		return v, nil
	}
	f := s.start()
	s.mu.Unlock()
	return wait(ctx, f)
}

// fresh reports whether the current token may be sent. s.mu is held.
func (s *Source) fresh() bool {
	return s.current.value != "" && (s.current.renewAt.IsZero() || s.cfg.Now().Before(s.current.renewAt))
}

// start returns the token request in flight, starting one when there is
// none. s.mu is held.
func (s *Source) start() *flight {
	if s.flight == nil {
		s.flight = &flight{done: make(chan struct{})}
		go s.run(s.flight)
	}
	return s.flight
}

// run makes one token request for every caller waiting on f. Its time is
// bounded by Config.Timeout, not by a caller's context: the callers share
// it, and one giving up must not fail the others.
func (s *Source) run(f *flight) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	tok, err := s.request(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flight = nil
	f.value, f.err = tok.value, err
	var e *Error
	switch {
	case err == nil:
		s.current = tok
		s.issued[tok.value] = true
	case errors.As(err, &e) && e.Refused():
		s.refused = err
	}
	close(f.done)
}

func wait(ctx context.Context, f *flight) (string, error) {
	select {
	case <-f.done:
		return f.value, f.err
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for an OAuth token: %w", ctx.Err())
	}
}

// renewAt is when a token obtained at obtained, valid for lifetime, is
// renewed: MaxRenewMargin before its expiry, or a quarter of its lifetime
// before when that is less.
func renewAt(obtained time.Time, lifetime time.Duration) time.Time {
	return obtained.Add(lifetime - min(MaxRenewMargin, lifetime/4))
}

// absoluteURI reports whether s is an absolute URI with no fragment.
func absoluteURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && !strings.Contains(s, "#")
}
