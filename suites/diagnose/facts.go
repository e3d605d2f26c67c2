package diagnose

import (
	"slices"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/auth"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
)

// credKind is the credential a walk was given.
type credKind int

const (
	credNone credKind = iota
	credBearer
	credOAuth
)

// facts are what the walk observed: the hypotheses are ranked from them
// alone (rank), so a table of facts proves the ranking.
type facts struct {
	endpoint   string
	now        time.Time
	credential credKind
	// tokenURL, scopeAsked, resourcesAsked and audienceAsked are what the
	// client credentials request asked.
	tokenURL, scopeAsked, audienceAsked string
	resourcesAsked                      []string

	noCred, withCred *callFact
	tokenErr         *auth.Error
	claims           *Claims
	// opaque says why the token's claims cannot be read.
	opaque string

	// prmURL is where the protected-resource metadata was read; prmNamed
	// says the challenge named it (resource_metadata).
	prmURL   string
	prmNamed bool
	// prmStatus is its status (0: no answer, or blocked); prm the document
	// when it is a JSON object, servers its authorization_servers strings.
	prmStatus int
	prm       map[string]any
	servers   []string
	// as are the authorization servers' metadata documents, by the issuer
	// the protected resource names.
	as map[string]map[string]any
	// graph are the discovery graph's failures (the kit's codes, in its
	// precedence).
	graph []oauth.Failure
}

// prmResource is the protected resource's resource, "" when none was read.
func (f *facts) prmResource() string {
	s, _ := f.prm["resource"].(string)
	return s
}

// expectedResources are the audiences the seller may check: its endpoint,
// and the resource its metadata names when that differs.
func (f *facts) expectedResources() []string {
	out := []string{f.endpoint}
	if r := f.prmResource(); r != "" && !oauth.SameResource(r, f.endpoint) {
		out = append(out, r)
	}
	return out
}

// audienceOK reports whether one of the token's audiences is the seller's.
func (f *facts) audienceOK(c *Claims) bool {
	for _, a := range c.Aud {
		for _, r := range f.expectedResources() {
			if oauth.SameResource(a, r) {
				return true
			}
		}
	}
	return false
}

// expectedIssuers are the authorization servers the protected resource
// names.
func (f *facts) expectedIssuers() []string { return f.servers }

// metadataIssuer is the issuer the metadata of server names itself, ""
// when none was read.
func (f *facts) metadataIssuer(server string) string {
	s, _ := f.as[server]["issuer"].(string)
	return s
}

// advertisedTokenEndpoints are the token endpoints the authorization
// servers' metadata advertise.
func (f *facts) advertisedTokenEndpoints() []string {
	var out []string
	for _, s := range f.servers {
		if te, ok := f.as[s]["token_endpoint"].(string); ok && te != "" && !slices.Contains(out, te) {
			out = append(out, te)
		}
	}
	return out
}

// scopesSupported are the scopes the protected resource says it takes.
func (f *facts) scopesSupported() []string {
	list, _ := f.prm["scopes_supported"].([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// requiredScopes are the scopes the seller's challenges ask for (RFC 6750
// §3's scope attribute), the insufficient_scope refusal's first; from
// says which challenge.
func (f *facts) requiredScopes() (need []string, from string) {
	if f.withCred != nil {
		if b := Bearer(f.withCred.challenges); b != nil && b.Params["scope"] != "" {
			return splitScope(b.Params["scope"]), "the scope attribute of the seller's challenge to the token"
		}
	}
	if f.noCred != nil {
		if b := Bearer(f.noCred.challenges); b != nil && b.Params["scope"] != "" {
			return splitScope(b.Params["scope"]), "the scope attribute of the seller's challenge"
		}
	}
	return nil, ""
}

// splitScope splits a scope value (RFC 6749 §3.3: space-delimited), at
// most 32 of them.
func splitScope(s string) []string {
	out := strings.Fields(s)
	return out[:min(len(out), 32)]
}

// missing are the scopes of need that have lacks.
func missing(need, have []string) []string {
	var out []string
	for _, n := range need {
		if !slices.Contains(have, n) {
			out = append(out, n)
		}
	}
	return out
}

// oauth reports whether the seller is expected to publish OAuth
// discovery: the walk was given client credentials, the challenge names
// the metadata, the metadata was found, or the seller refuses the
// credential given (or, given none, challenges for a Bearer token) — a
// seller that takes the API key it was given need publish none.
func (f *facts) oauth() bool {
	switch {
	case f.credential == credOAuth, f.prmNamed, f.prmStatus == 200, refused(f.withCred):
		return true
	}
	return f.credential == credNone && refused(f.noCred) && Bearer(f.noCred.challenges) != nil
}

// refused reports whether c refused its credential (or the lack of one).
func refused(c *callFact) bool { return c != nil && c.refused }
