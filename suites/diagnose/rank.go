package diagnose

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
)

// Verdict is how strongly the evidence supports a hypothesis.
type Verdict string

// The verdicts.
const (
	// Likely: an observation shows it (the walk exits 1).
	Likely Verdict = "likely"
	// Possible: the evidence is consistent with it, and shows no more.
	Possible Verdict = "possible"
	// RuledOut: an observation excludes it.
	RuledOut Verdict = "ruled_out"
)

// Hypothesis is one cause of a refused (or mis-discovered) token: what
// supports it and what to change.
type Hypothesis struct {
	// ID names it: the kit's code for a discovery graph failure
	// (oauth_issuer_mismatch), the walk's own otherwise (token_audience).
	ID       string   `json:"id"`
	Verdict  Verdict  `json:"verdict"`
	Title    string   `json:"title"`
	Evidence []string `json:"evidence,omitempty"`
	Fix      string   `json:"fix,omitempty"`
}

// The walk's own hypotheses, in their precedence: among causes of one
// verdict, the one that stops a client earlier, or explains the seller's
// refusal more directly, comes first. The discovery graph's codes come
// after no_challenge in the kit's own precedence.
const (
	hTokenRequest   = "token_request_refused"
	hExpired        = "token_expired"
	hNotYetValid    = "token_not_yet_valid"
	hAudience       = "token_audience"
	hIssuer         = "token_issuer"
	hScope          = "token_scope"
	hNoChallenge    = "no_challenge"
	hNotBearer      = "challenge_not_bearer"
	hUnexplained    = "token_refused_unexplained"
	hTokenEndpoint  = "token_endpoint_not_advertised"
	graphPrecedence = 100 // where the graph's codes start
)

var precedence = []string{hTokenRequest, hExpired, hNotYetValid, hAudience, hIssuer, hScope, hNoChallenge, hNotBearer}

// after are ranked after the graph's codes.
var after = []string{hUnexplained, hTokenEndpoint}

func order(id string) int {
	if i := slices.Index(precedence, id); i >= 0 {
		return i
	}
	if i := slices.Index(after, id); i >= 0 {
		return graphPrecedence + 50 + i
	}
	if strings.HasPrefix(id, "oauth_") {
		return graphPrecedence + graphRank(id)
	}
	return graphPrecedence + 100
}

// graphRank is a graph code's place in the kit's diagnostic precedence.
func graphRank(code string) int {
	for i, c := range graphCodes {
		if c == code {
			return i
		}
	}
	return len(graphCodes)
}

// graphCodes are the kit's codes in its diagnostic precedence
// (oauth-setup-runner.yaml, diagnostic_precedence), with what each means
// and what to change.
var graphCodes = []string{
	"oauth_graph_limit_exceeded", "oauth_fetch_blocked", "oauth_protected_resource_metadata_unavailable",
	"oauth_protected_resource_metadata_invalid", "oauth_resource_mismatch", "oauth_authorization_servers_empty",
	"oauth_authorization_server_url_invalid", "oauth_authorization_server_metadata_unavailable",
	"oauth_authorization_server_metadata_invalid", "oauth_issuer_mismatch", "oauth_endpoint_url_invalid",
	"oauth_endpoint_unreachable", "oauth_jwks_unavailable",
}

var graphText = map[string][2]string{
	"oauth_graph_limit_exceeded":                      {"the discovery graph exceeds the walk's limits", "serve fewer authorization servers, smaller documents, fewer redirects"},
	"oauth_fetch_blocked":                             {"a discovery URL is one the fetch policy refuses", "name public https URLs; for a seller on this machine or a private network, give --allow-local-fetch"},
	"oauth_protected_resource_metadata_unavailable":   {"the protected-resource metadata is not served", "serve the RFC 9728 document at the well-known location (or the URL the challenge's resource_metadata names), HTTP 200 application/json"},
	"oauth_protected_resource_metadata_invalid":       {"the protected-resource metadata is not a valid RFC 9728 document", "serve a JSON object, application/json, whose resource is the endpoint's https URL"},
	"oauth_resource_mismatch":                         {"the protected-resource metadata names another resource than the endpoint", "make its resource the endpoint's URL exactly (RFC 9728 §3.3): a client must refuse metadata for another resource"},
	"oauth_authorization_servers_empty":               {"the protected-resource metadata names no authorization server", "list the issuer URL of the authorization server in authorization_servers"},
	"oauth_authorization_server_url_invalid":          {"an authorization_servers entry is not an https issuer URL", "list issuer URLs: https, no query or fragment"},
	"oauth_authorization_server_metadata_unavailable": {"an authorization server's RFC 8414 metadata is not served", "serve it at /.well-known/oauth-authorization-server inserted before the issuer's path (RFC 8414 §3.1)"},
	"oauth_authorization_server_metadata_invalid":     {"an authorization server's metadata is not a valid RFC 8414 document", "serve a JSON object with issuer, token_endpoint and the fields its grants need"},
	"oauth_issuer_mismatch":                           {"an authorization server's metadata names another issuer than the URL it is published for", "make the protected resource's authorization_servers entry and the metadata's issuer the same string exactly (RFC 8414 §3.3; a trailing slash counts)"},
	"oauth_endpoint_url_invalid":                      {"an endpoint the authorization server advertises is not a valid https URL", "advertise absolute https URLs"},
	"oauth_endpoint_unreachable":                      {"an endpoint the authorization server advertises does not answer", "serve the token endpoint (and the authorization endpoint, when advertised) at the URLs advertised"},
	"oauth_jwks_unavailable":                          {"the authorization server's jwks_uri does not serve a JWK Set", "serve {\"keys\": […]} at jwks_uri, application/json"},
}

// rank turns the facts into hypotheses: the causes (likely, then
// possible, each in precedence) and those ruled out.
func rank(f facts) (causes, ruledOut []Hypothesis) {
	var all []Hypothesis
	add := func(h *Hypothesis) {
		if h != nil {
			all = append(all, *h)
		}
	}
	add(tokenRequest(f))
	add(expired(f))
	add(notYetValid(f))
	add(audience(f))
	add(issuer(f))
	add(scope(f))
	add(noChallenge(f))
	add(notBearer(f))
	for _, h := range graph(f) {
		add(&h)
	}
	add(tokenEndpoint(f))
	likelyToken := slices.ContainsFunc(all, func(h Hypothesis) bool {
		return h.Verdict == Likely && slices.Contains([]string{hTokenRequest, hExpired, hNotYetValid, hAudience, hIssuer, hScope}, h.ID)
	})
	add(unexplained(f, likelyToken))
	slices.SortStableFunc(all, func(a, b Hypothesis) int {
		if a.Verdict != b.Verdict {
			return tier(a.Verdict) - tier(b.Verdict)
		}
		return order(a.ID) - order(b.ID)
	})
	for _, h := range all {
		if h.Verdict == RuledOut {
			ruledOut = append(ruledOut, h)
		} else {
			causes = append(causes, h)
		}
	}
	return causes, ruledOut
}

func tier(v Verdict) int {
	return map[Verdict]int{Likely: 0, Possible: 1, RuledOut: 2}[v]
}

// q quotes a value the seller or the token wrote, cleaned.
func q(s string) string { return fmt.Sprintf("%q", wire.Sanitize(s, 200)) }

func refusal(c *callFact) string {
	s := fmt.Sprintf("%s answered HTTP %d", c.label, c.status)
	if b := Bearer(c.challenges); b != nil && b.Params["error"] != "" {
		s += " error=" + q(b.Params["error"])
		if d := b.Params["error_description"]; d != "" {
			s += " (" + q(d) + ")"
		}
	}
	if c.adcpCode != "" {
		s += ", AdCP " + wire.Sanitize(c.adcpCode, 64)
	}
	return s
}

// tokenRequest: the token endpoint gave no token.
func tokenRequest(f facts) *Hypothesis {
	if f.credential != credOAuth {
		return nil
	}
	e := f.tokenErr
	if e == nil {
		return &Hypothesis{ID: hTokenRequest, Verdict: RuledOut, Title: "the token endpoint refuses the client", Evidence: []string{"the token endpoint issued a Bearer token"}}
	}
	h := &Hypothesis{ID: hTokenRequest, Verdict: Likely, Title: "the token endpoint gives no token", Evidence: []string{wire.Sanitize(e.Error(), 400)}}
	switch e.Code {
	case "invalid_client":
		h.Title = "the token endpoint does not take the client's id and secret"
		h.Fix = "check --oauth-client-id and the secret in the variable --oauth-client-secret-env names; the endpoint may take the other client authentication (--oauth-client-auth basic or post)"
	case "invalid_scope":
		h.Title = "the token endpoint refuses the scope asked"
		h.Fix = "ask for a scope the client is granted (--oauth-scope)"
		if sc := f.scopesSupported(); len(sc) > 0 {
			h.Fix += "; the seller supports " + q(strings.Join(sc, " "))
		}
	case "invalid_target":
		h.Title = "the token endpoint refuses the resource asked (RFC 8707 §2)"
		h.Fix = "ask for the seller's resource exactly: --oauth-resource " + f.endpoint
	case "unauthorized_client", "unsupported_grant_type":
		h.Title = "the client may not use the client credentials grant"
		h.Fix = "enable the client credentials grant for the client at the authorization server"
	case "":
		if e.Status == 0 {
			h.Title = "the token endpoint cannot be reached"
		}
		h.Fix = "check --oauth-token-url"
		if ads := f.advertisedTokenEndpoints(); len(ads) > 0 {
			h.Fix += "; the authorization server advertises " + strings.Join(ads, ", ")
		}
	default:
		h.Fix = "see the endpoint's error and error_description (RFC 6749 §5.2)"
	}
	return h
}

// expired: the token's exp is past.
func expired(f facts) *Hypothesis {
	c := f.claims
	if c == nil || c.Exp == nil {
		return nil
	}
	h := &Hypothesis{ID: hExpired, Title: "the token has expired"}
	if f.now.Before(*c.Exp) {
		h.Verdict, h.Evidence = RuledOut, []string{"exp is " + c.Exp.Format(time.RFC3339) + ", in " + c.Exp.Sub(f.now).Round(time.Second).String()}
		return h
	}
	h.Verdict = Likely
	h.Evidence = []string{fmt.Sprintf("exp is %s, %s before now (%s by the harness's clock; the claims are read without verifying the token)",
		c.Exp.Format(time.RFC3339), f.now.Sub(*c.Exp).Round(time.Second), f.now.Format(time.RFC3339))}
	if refused(f.withCred) {
		h.Evidence = append(h.Evidence, refusal(f.withCred))
	} else if f.withCred != nil {
		h.Title = "the seller takes an expired token"
		h.Evidence = append(h.Evidence, f.withCred.label+" took it")
		h.Fix = "the seller must refuse a token past its exp (RFC 7519 §4.1.4): check its validation"
		return h
	}
	switch f.credential {
	case credOAuth:
		h.Fix = "the authorization server just issued it already expired: check its clock and the lifetime it gives tokens"
		if c.Iat != nil {
			h.Evidence = append(h.Evidence, "iat is "+c.Iat.Format(time.RFC3339)+", "+f.now.Sub(*c.Iat).Round(time.Second).String()+" before now: the authorization server's clock is behind")
		}
	default:
		h.Fix = "obtain a fresh token and give it with --bearer-env (or let the harness obtain them: --oauth-token-url)"
	}
	return h
}

// notYetValid: the token's nbf or iat is in the future.
func notYetValid(f facts) *Hypothesis {
	c := f.claims
	if c == nil || (c.Nbf == nil && c.Iat == nil) {
		return nil
	}
	h := &Hypothesis{ID: hNotYetValid, Title: "the token is not valid yet: the clocks disagree", Verdict: RuledOut}
	for _, x := range []struct {
		name string
		t    *time.Time
	}{{"nbf", c.Nbf}, {"iat", c.Iat}} {
		if x.t != nil && x.t.After(f.now.Add(clockSkew)) {
			h.Verdict = Possible
			h.Evidence = append(h.Evidence, fmt.Sprintf("%s is %s, %s after now by the harness's clock", x.name, x.t.Format(time.RFC3339), x.t.Sub(f.now).Round(time.Second)))
		}
	}
	if h.Verdict == RuledOut {
		h.Evidence = []string{"nbf and iat are not in the future"}
		return h
	}
	if refused(f.withCred) {
		h.Verdict = Likely
		h.Evidence = append(h.Evidence, refusal(f.withCred))
	}
	h.Fix = "synchronize the clocks of the authorization server, the seller and this machine (NTP)"
	return h
}

// audience: the token is for another resource.
func audience(f facts) *Hypothesis {
	c := f.claims
	if c == nil {
		return nil
	}
	want := strings.Join(f.expectedResources(), " or ")
	h := &Hypothesis{ID: hAudience, Title: "the token is for another audience than this seller"}
	switch {
	case c.HasAud && f.audienceOK(c):
		h.Verdict, h.Evidence = RuledOut, []string{"aud " + q(strings.Join(c.Aud, ", ")) + " is the seller's resource"}
		return h
	case !c.HasAud:
		h.Title = "the token names no audience"
		h.Evidence = []string{"the token has no aud claim; the seller's resource is " + q(want)}
	default:
		h.Evidence = []string{"aud is " + q(strings.Join(c.Aud, ", ")) + "; the seller's resource is " + q(want)}
	}
	if len(f.resourcesAsked) > 0 {
		h.Evidence = append(h.Evidence, "the token was asked for resource "+q(strings.Join(f.resourcesAsked, ", "))+" (RFC 8707): the authorization server did not stamp it")
	}
	switch {
	case refused(f.withCred):
		h.Verdict = Likely
		h.Evidence = append(h.Evidence, refusal(f.withCred))
	case f.withCred != nil:
		h.Verdict = Possible
		h.Title = "the seller takes a token whose audience is not its resource"
		h.Evidence = append(h.Evidence, f.withCred.label+" took it")
		h.Fix = "when that audience is not the seller's own identifier, the seller must refuse the token (RFC 8707; the MCP authorization spec forbids token passthrough)"
		return h
	default:
		h.Verdict = Possible
	}
	h.Fix = "ask for the token for the seller's resource (--oauth-resource " + f.endpoint + ", RFC 8707); an authorization server that ignores resource stamps the audience configured for the client or API (Auth0, Okta: --oauth-audience)"
	if slices.ContainsFunc(f.resourcesAsked, func(r string) bool { return oauth.SameResource(r, f.endpoint) }) {
		h.Fix = "the authorization server ignores the resource asked: have it stamp aud from the resource parameter (RFC 8707 §2), or configure the audience of the client or API as the seller's resource (Auth0, Okta: --oauth-audience)"
	}
	return h
}

// issuer: the token comes from an authorization server the seller does
// not name. A token whose iss is what the server's metadata says, but not
// what the protected resource names, is oauth_issuer_mismatch's evidence.
func issuer(f facts) *Hypothesis {
	c := f.claims
	if c == nil || len(f.servers) == 0 {
		return nil
	}
	h := &Hypothesis{ID: hIssuer, Title: "the token comes from an authorization server the seller does not name"}
	if c.HasIss && slices.Contains(f.servers, c.Iss) {
		h.Verdict, h.Evidence = RuledOut, []string{"iss " + q(c.Iss) + " is one of the seller's authorization_servers"}
		return h
	}
	for _, s := range f.servers {
		if mi := f.metadataIssuer(s); mi != "" && mi == c.Iss {
			return nil // the metadata's own issuer: oauth_issuer_mismatch
		}
	}
	h.Evidence = []string{"iss is " + q(orNone(c.Iss)) + "; the seller's authorization_servers are " + q(strings.Join(f.servers, ", "))}
	if f.tokenURL != "" {
		h.Evidence = append(h.Evidence, "the token came from "+q(f.tokenURL))
	}
	switch {
	case refused(f.withCred):
		h.Verdict = Likely
		h.Evidence = append(h.Evidence, refusal(f.withCred))
	default:
		h.Verdict = Possible
	}
	h.Fix = "obtain the token from the authorization server the seller names (its token_endpoint"
	if ads := f.advertisedTokenEndpoints(); len(ads) > 0 {
		h.Fix += ": " + strings.Join(ads, ", ")
	}
	h.Fix += "), or have the seller trust that issuer"
	return h
}

// scope: the token lacks the scope the seller wants.
func scope(f facts) *Hypothesis {
	h := &Hypothesis{ID: hScope, Title: "the token lacks the scope the seller requires"}
	need, from := f.requiredScopes()
	insufficient := false
	if f.withCred != nil {
		if b := Bearer(f.withCred.challenges); b != nil && strings.EqualFold(b.Params["error"], "insufficient_scope") {
			insufficient = true
		}
	}
	var have []string
	if f.claims != nil {
		have = f.claims.Scopes
	}
	switch {
	case insufficient:
		h.Verdict = Likely
		h.Evidence = []string{refusal(f.withCred)}
		if len(need) > 0 {
			h.Evidence = append(h.Evidence, "the seller requires "+q(strings.Join(need, " "))+" ("+from+")")
		}
	case f.claims != nil && len(need) > 0 && len(missing(need, have)) > 0:
		h.Verdict = Possible
		h.Evidence = []string{"the seller asks for " + q(strings.Join(need, " ")) + " (" + from + ")"}
		if refused(f.withCred) {
			h.Verdict = Likely
			h.Evidence = append(h.Evidence, refusal(f.withCred))
		}
	case f.withCred != nil && f.withCred.status == 403:
		// RFC 6750 §3.1: a 403 is insufficient_scope's status.
		h.Verdict = Likely
		h.Evidence = []string{refusal(f.withCred) + ": a 403 refuses a token the seller authenticated, for what it may do (RFC 6750 §3.1)"}
	case f.claims != nil && f.claims.HasScope && len(need) > 0:
		h.Verdict, h.Evidence = RuledOut, []string{"the token carries " + q(strings.Join(have, " ")) + ", which the seller asks for"}
		return h
	default:
		return nil
	}
	if f.claims != nil {
		if f.claims.HasScope {
			h.Evidence = append(h.Evidence, "the token carries "+q(orNone(strings.Join(have, " "))))
		} else {
			h.Evidence = append(h.Evidence, "the token carries no scope claim")
		}
	}
	if f.scopeAsked != "" {
		h.Evidence = append(h.Evidence, "the token was asked for "+q(f.scopeAsked))
	}
	h.Fix = "grant the client the scope and ask for it"
	if len(need) > 0 {
		h.Fix += ": --oauth-scope " + q(strings.Join(need, " "))
	} else if sc := f.scopesSupported(); len(sc) > 0 {
		h.Fix += " (the seller supports " + q(strings.Join(sc, " ")) + ")"
	}
	return h
}

// noChallenge: a 401 without WWW-Authenticate.
func noChallenge(f facts) *Hypothesis {
	h := &Hypothesis{ID: hNoChallenge, Title: "the seller's 401 carries no WWW-Authenticate challenge"}
	seen := false
	for _, c := range []*callFact{f.noCred, f.withCred} {
		if c == nil || c.status != 401 {
			continue
		}
		seen = true
		if len(c.challenges) == 0 {
			h.Verdict = Likely
			h.Evidence = append(h.Evidence, c.label+" answered HTTP 401 with no WWW-Authenticate")
		}
	}
	switch {
	case !seen:
		return nil
	case h.Verdict == "":
		h.Verdict, h.Evidence = RuledOut, []string{"every 401 carries a challenge"}
		return h
	}
	prm := f.prmURL
	if prm == "" {
		prm, _ = oauth.WellKnownURL(f.endpoint, "oauth-protected-resource")
	}
	h.Evidence = append(h.Evidence, "a client cannot tell how to authenticate, nor find the authorization server (RFC 9110 §11.6.1: a 401 MUST carry one; RFC 6750 §3)")
	h.Fix = "answer a refused request with WWW-Authenticate: Bearer resource_metadata=\"" + prm + "\" (and error=\"invalid_token\" for a token refused)"
	return h
}

// notBearer: the challenge is of another scheme, while the seller speaks
// OAuth.
func notBearer(f facts) *Hypothesis {
	c := f.noCred
	if c == nil || len(c.challenges) == 0 || Bearer(c.challenges) != nil || !f.oauth() {
		return nil
	}
	schemes := make([]string, 0, len(c.challenges))
	for _, ch := range c.challenges {
		schemes = append(schemes, ch.Scheme)
	}
	return &Hypothesis{ID: hNotBearer, Verdict: Possible, Title: "the seller's challenge is not a Bearer one",
		Evidence: []string{c.label + " challenges with " + q(strings.Join(schemes, ", ")) + ", while the seller publishes OAuth discovery"},
		Fix:      "challenge with the Bearer scheme (RFC 6750 §3) and resource_metadata (RFC 9728 §5.1)"}
}

// graph: the discovery graph's failures, the kit's codes. An unavailable
// metadata document is a cause only for a seller that speaks OAuth.
func graph(f facts) []Hypothesis {
	var out []Hypothesis
	seen := map[string]bool{}
	for _, fl := range f.graph {
		if seen[fl.Code] {
			continue
		}
		seen[fl.Code] = true
		text := graphText[fl.Code]
		if text[0] == "" {
			text = [2]string{fl.Code, ""}
		}
		h := Hypothesis{ID: fl.Code, Verdict: Likely, Title: text[0], Fix: text[1]}
		ev := fl.Code
		if fl.URL != "" {
			ev += " at " + wire.Sanitize(fl.URL, 300)
		}
		if fl.Field != "" {
			ev += ", " + fl.Field
		}
		if fl.Detail != "" {
			ev += ": " + wire.Sanitize(fl.Detail, 300)
		}
		if fl.Status != 0 {
			ev += fmt.Sprintf(": HTTP %d", fl.Status)
		}
		h.Evidence = []string{ev}
		switch fl.Code {
		case "oauth_protected_resource_metadata_unavailable":
			switch {
			case f.prmNamed:
				h.Evidence = append(h.Evidence, "the challenge's resource_metadata names it")
			case !f.oauth():
				continue
			default:
				h.Verdict = Possible
				h.Evidence = append(h.Evidence, "a client that is not configured by hand cannot find the authorization server")
			}
		case "oauth_issuer_mismatch":
			if c := f.claims; c != nil && c.HasIss && !slices.Contains(f.servers, c.Iss) {
				h.Evidence = append(h.Evidence, "the token's iss is "+q(c.Iss)+", the metadata's issuer, not the protected resource's entry")
			}
		}
		if !f.oauth() {
			continue
		}
		out = append(out, h)
	}
	return out
}

// tokenEndpoint: the token came from an endpoint the seller's
// authorization servers do not advertise.
func tokenEndpoint(f facts) *Hypothesis {
	ads := f.advertisedTokenEndpoints()
	if f.credential != credOAuth || f.tokenURL == "" || len(ads) == 0 || slices.Contains(ads, f.tokenURL) {
		return nil
	}
	return &Hypothesis{ID: hTokenEndpoint, Verdict: Possible, Title: "the token comes from an endpoint the seller's authorization server does not advertise",
		Evidence: []string{"--oauth-token-url is " + q(f.tokenURL) + "; the metadata advertises " + q(strings.Join(ads, ", "))},
		Fix:      "use the advertised token_endpoint, unless the seller's operator gave this one"}
}

// unexplained: the seller refuses the token, and nothing read says why.
func unexplained(f facts, explained bool) *Hypothesis {
	if !refused(f.withCred) || explained {
		return nil
	}
	h := &Hypothesis{ID: hUnexplained, Verdict: Likely, Title: "the seller refuses the token, and nothing the walk can read says why",
		Evidence: []string{refusal(f.withCred)}}
	switch {
	case f.opaque != "":
		h.Evidence = append(h.Evidence, "the token is "+f.opaque+": its audience, issuer, lifetime and scope cannot be read")
	case f.claims != nil:
		h.Evidence = append(h.Evidence, "its audience, issuer, lifetime and scope look right (read without verifying)")
	}
	h.Fix = "check what the seller validates: the token itself (for a bearer token: the value in the variable --bearer-env names), the issuer and keys (JWKS) it trusts, the audience it expects, revocation"
	return h
}
