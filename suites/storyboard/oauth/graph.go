package oauth

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// The OAuth discovery graph of test-kits/oauth-setup-runner.yaml
// (3.2.0-beta.5), evaluated over responses already fetched: the
// evaluation does no I/O. Walk calls Fetches with what it has, fetches the
// URLs returned under the kit's fetch policy (no credentials, its SSRF
// rules; redirects are NOT followed by the fetcher — a 3xx is recorded
// with its Location and the evaluation follows it), and repeats until
// nothing is missing; the check's facts then hold the graph.

// Graph is the graph a walk fetched: the responses by URL, and
// whether the run was flagged for local development (http URLs and
// loopback and private addresses allowed, as the kit's
// allow_http_only_with_explicit_local_dev_flag permits).
type Graph struct {
	Responses map[string]*spec.Response
	Local     bool
	// Metadata is where the RFC 9728 document is read when the resource
	// named it (the resource_metadata parameter of its WWW-Authenticate
	// challenge, RFC 9728 §5.1); "" is its well-known location (§3).
	Metadata string
}

// oauthFailure is one graph failure.
type oauthFailure struct {
	code   string
	url    string
	field  string
	detail string
	status int
}

// oauthPrecedence is diagnostic_precedence.order.
var oauthPrecedence = []string{
	"oauth_graph_limit_exceeded",
	"oauth_fetch_blocked",
	"oauth_protected_resource_metadata_unavailable",
	"oauth_protected_resource_metadata_invalid",
	"oauth_resource_mismatch",
	"oauth_authorization_servers_empty",
	"oauth_authorization_server_url_invalid",
	"oauth_authorization_server_metadata_unavailable",
	"oauth_authorization_server_metadata_invalid",
	"oauth_issuer_mismatch",
	"oauth_endpoint_url_invalid",
	"oauth_endpoint_unreachable",
	"oauth_jwks_unavailable",
}

const (
	maxOAuthRedirects = 3
	maxOAuthURLs      = 64
)

// oauthEval walks the graph once.
type oauthEval struct {
	local    bool
	have     map[string]*spec.Response
	needs    []string
	needSeen map[string]bool
	fails    []oauthFailure
	urls     map[string]bool
}

func (e *oauthEval) fail(f oauthFailure) { e.fails = append(e.fails, f) }

// get returns the response for u, following redirects (validating every
// target); ok false with a failure code when the fetch was blocked or the
// response is missing (recorded as a need; graded fail-closed).
func (e *oauthEval) get(u string, follow bool) (resp *spec.Response, final string, blocked string, missing bool) {
	for hop := 0; ; hop++ {
		if why := (fetch.Policy{Local: e.local}).Refusal(u); why != "" {
			return nil, u, why, false
		}
		e.urls[u] = true
		r, ok := e.have[u]
		if !ok || r == nil {
			if !e.needSeen[u] && len(e.needSeen) < maxOAuthURLs {
				e.needSeen[u] = true
				e.needs = append(e.needs, u)
			}
			return nil, u, "", true
		}
		if r.Blocked != "" {
			return nil, u, r.Blocked, false
		}
		if r.Limit != "" {
			e.fail(oauthFailure{code: "oauth_graph_limit_exceeded", url: u, detail: r.Limit})
			return nil, u, "", true
		}
		if !follow || r.Status < 300 || r.Status > 399 || r.Location == "" {
			return r, u, "", false
		}
		if hop >= maxOAuthRedirects {
			return nil, u, "more than 3 redirects", false
		}
		next, err := url.Parse(r.Location)
		base, _ := url.Parse(u)
		if err != nil || base == nil {
			return nil, u, "unparseable redirect target", false
		}
		u = base.ResolveReference(next).String()
	}
}

// WellKnownURL inserts a well-known suffix between host and path (RFC
// 9728 §3, RFC 8414 §3): https://h/p → https://h/.well-known/<name>/p.
func WellKnownURL(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", base)
	}
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	return u.Scheme + "://" + u.Host + "/.well-known/" + name + p, nil
}

func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// doc decodes a 200 application/json object.
func doc(r *spec.Response) (map[string]any, string) {
	if !isJSONContentType(r.ContentType) {
		return nil, "content-type " + spec.Shown(r.ContentType)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil || m == nil {
		return nil, "not a JSON object"
	}
	return m, ""
}

// evalOAuth walks the graph of agentURL once over g's responses.
func evalOAuth(agentURL string, g Graph) *oauthEval {
	e := &oauthEval{local: g.Local, have: g.Responses, needSeen: map[string]bool{}, urls: map[string]bool{}}
	e.walk(agentURL, g.Metadata)
	return e
}

// evalOAuthGraph evaluates the graph from agentURL over have. needs are
// the URLs it would read that have no response (graded fail-closed).
func evalOAuthGraph(agentURL string, g Graph) (first *oauthFailure, needs []string) {
	e := evalOAuth(agentURL, g)
	best := -1
	for i, f := range e.fails {
		if best < 0 || rank(f.code) < rank(e.fails[best].code) {
			best = i
		}
	}
	if best >= 0 {
		f := e.fails[best]
		first = &f
	}
	return first, e.needs
}

// Failure is one failure of the discovery graph: the kit's code
// (oauth_issuer_mismatch, …), the URL and field it concerns, what was
// read, and the HTTP status of an unavailable document.
type Failure struct {
	Code, URL, Field, Detail string
	Status                   int
}

// Failures evaluates the walked graph of agentURL and returns
// every failure, in the kit's diagnostic precedence (the first is the one
// the oauth_metadata_graph check reports); none for a sound graph.
func Failures(agentURL string, g Graph) []Failure {
	e := evalOAuth(agentURL, g)
	out := make([]Failure, 0, len(e.fails))
	for _, f := range e.fails {
		out = append(out, Failure{Code: f.code, URL: f.url, Field: f.field, Detail: f.detail, Status: f.status})
	}
	slices.SortStableFunc(out, func(a, b Failure) int { return rank(a.Code) - rank(b.Code) })
	return out
}

// SameResource reports whether two resource identifiers are one (RFC 9728
// §3.3's comparison as the kit's resource_equals_agent_url makes it:
// scheme and host without case, default ports elided, the rest exact).
func SameResource(a, b string) bool { return canonResource(a) == canonResource(b) }

func rank(code string) int {
	for i, c := range oauthPrecedence {
		if c == code {
			return i
		}
	}
	return len(oauthPrecedence)
}

func (e *oauthEval) walk(agentURL, prmURL string) {
	var err error
	if prmURL == "" {
		prmURL, err = WellKnownURL(agentURL, "oauth-protected-resource")
	}
	if err != nil {
		e.fail(oauthFailure{code: "oauth_protected_resource_metadata_unavailable", url: agentURL, detail: err.Error()})
		return
	}
	prm, at, ok := e.metadata(prmURL, "oauth_protected_resource_metadata")
	if !ok {
		return
	}
	servers, isArr := prm["authorization_servers"].([]any)
	if len(servers) > MaxAuthorizationServers {
		e.fail(oauthFailure{code: "oauth_graph_limit_exceeded", field: "authorization_servers", detail: fmt.Sprintf("%d authorization servers", len(servers))})
		return
	}
	res, _ := prm["resource"].(string)
	if !e.uri(res, true) {
		e.fail(oauthFailure{code: "oauth_protected_resource_metadata_invalid", url: at, field: "resource"})
		return
	}
	if canonResource(res) != canonResource(agentURL) {
		e.fail(oauthFailure{code: "oauth_resource_mismatch", url: res, field: "resource"})
		return
	}
	if !isArr || len(servers) == 0 {
		e.fail(oauthFailure{code: "oauth_authorization_servers_empty", field: "authorization_servers"})
		return
	}
	for _, s := range servers {
		issuer, _ := s.(string)
		if why := (fetch.Policy{Local: e.local}).Refusal(issuer); why != "" && e.uri(issuer, false) {
			e.fail(oauthFailure{code: "oauth_fetch_blocked", url: issuer, detail: why})
			continue
		}
		if !e.uri(issuer, false) {
			e.fail(oauthFailure{code: "oauth_authorization_server_url_invalid", url: spec.Shown(s)})
			continue
		}
		e.server(issuer)
		if len(e.urls) > maxOAuthURLs {
			e.fail(oauthFailure{code: "oauth_graph_limit_exceeded", detail: "more than 64 URLs"})
			return
		}
	}
}

// metadata fetches one metadata document and decodes it, or records why
// not: a blocked fetch, <codePrefix>_unavailable (absent, not 200),
// <codePrefix>_invalid (not a JSON object). at is the URL answered.
func (e *oauthEval) metadata(url, codePrefix string) (md map[string]any, at string, ok bool) {
	r, at, blocked, missing := e.get(url, true)
	switch {
	case blocked != "":
		e.fail(oauthFailure{code: "oauth_fetch_blocked", url: at, detail: blocked})
		return nil, at, false
	case missing || r.Status != 200:
		f := oauthFailure{code: codePrefix + "_unavailable", url: at}
		if r != nil {
			f.status = r.Status
		}
		e.fail(f)
		return nil, at, false
	}
	md, why := doc(r)
	if md == nil {
		e.fail(oauthFailure{code: codePrefix + "_invalid", url: at, detail: why})
		return nil, at, false
	}
	return md, at, true
}

// server evaluates one RFC 8414 authorization server.
func (e *oauthEval) server(issuer string) {
	asURL, err := WellKnownURL(issuer, "oauth-authorization-server")
	if err != nil {
		e.fail(oauthFailure{code: "oauth_authorization_server_url_invalid", url: issuer})
		return
	}
	md, at, ok := e.metadata(asURL, "oauth_authorization_server_metadata")
	if !ok {
		return
	}
	got, isStr := md["issuer"].(string)
	if !isStr || !e.uri(got, false) {
		e.fail(oauthFailure{code: "oauth_authorization_server_metadata_invalid", url: at, field: "issuer"})
		return
	}
	if got != issuer {
		e.fail(oauthFailure{code: "oauth_issuer_mismatch", url: at, field: "issuer", detail: spec.Shown(got) + " != " + spec.Shown(issuer)})
		return
	}
	// The effective grant set: grant_types_supported, else RFC 8414's
	// default [authorization_code, implicit].
	grants := []string{"authorization_code", "implicit"}
	if g, has := md["grant_types_supported"]; has {
		list, ok := g.([]any)
		if !ok {
			e.fail(oauthFailure{code: "oauth_authorization_server_metadata_invalid", url: at, field: "grant_types_supported"})
			return
		}
		grants = grants[:0]
		for _, x := range list {
			if s, ok := x.(string); ok {
				grants = append(grants, s)
			}
		}
	}
	usesAuthz, onlyImplicit := false, len(grants) > 0
	for _, g := range grants {
		if g == "authorization_code" || g == "implicit" {
			usesAuthz = true
		}
		if g != "implicit" {
			onlyImplicit = false
		}
	}
	rts, hasRT := md["response_types_supported"]
	rtList, rtOK := rts.([]any)
	switch {
	case usesAuthz && (!rtOK || len(rtList) == 0):
		e.fail(oauthFailure{code: "oauth_authorization_server_metadata_invalid", url: at, field: "response_types_supported"})
		return
	case !usesAuthz && hasRT && (!rtOK || len(rtList) == 0):
		// Erratum 7793 as the kit adopts it: omitted, not empty.
		e.fail(oauthFailure{code: "oauth_authorization_server_metadata_invalid", url: at, field: "response_types_supported"})
		return
	}
	authz, hasAuthz := md["authorization_endpoint"]
	if usesAuthz && !hasAuthz {
		e.fail(oauthFailure{code: "oauth_authorization_server_metadata_invalid", url: at, field: "authorization_endpoint"})
		return
	}
	token, hasToken := md["token_endpoint"]
	if !onlyImplicit && !hasToken {
		e.fail(oauthFailure{code: "oauth_authorization_server_metadata_invalid", url: at, field: "token_endpoint"})
		return
	}
	type endpoint struct {
		field string
		v     any
		probe string
	}
	var eps []endpoint
	if hasAuthz {
		eps = append(eps, endpoint{"authorization_endpoint", authz, "authorization"})
	}
	if hasToken {
		eps = append(eps, endpoint{"token_endpoint", token, "token"})
	}
	if j, has := md["jwks_uri"]; has {
		eps = append(eps, endpoint{"jwks_uri", j, "jwks"})
	}
	if reg, has := md["registration_endpoint"]; has {
		eps = append(eps, endpoint{"registration_endpoint", reg, ""}) // syntax only; never submitted
	}
	for _, ep := range eps {
		s, _ := ep.v.(string)
		if !e.uri(s, true) {
			e.fail(oauthFailure{code: "oauth_endpoint_url_invalid", url: spec.Shown(ep.v), field: ep.field})
			return
		}
	}
	for _, ep := range eps {
		s, _ := ep.v.(string)
		switch ep.probe {
		case "authorization", "token":
			r, at, blocked, missing := e.get(s, false)
			switch {
			case blocked != "":
				e.fail(oauthFailure{code: "oauth_fetch_blocked", url: at, field: ep.field, detail: blocked})
			case missing || !reachable(ep.probe, r.Status):
				f := oauthFailure{code: "oauth_endpoint_unreachable", url: at, field: ep.field}
				if r != nil {
					f.status = r.Status
				}
				e.fail(f)
			}
		case "jwks":
			r, at, blocked, missing := e.get(s, true)
			switch {
			case blocked != "":
				e.fail(oauthFailure{code: "oauth_fetch_blocked", url: at, field: ep.field, detail: blocked})
			case missing || r.Status != 200:
				e.fail(oauthFailure{code: "oauth_jwks_unavailable", url: at, field: ep.field})
			default:
				if m, _ := doc(r); m == nil {
					e.fail(oauthFailure{code: "oauth_jwks_unavailable", url: at, field: ep.field, detail: "not a JSON object"})
				} else if _, ok := m["keys"].([]any); !ok {
					e.fail(oauthFailure{code: "oauth_jwks_unavailable", url: at, field: ep.field, detail: "no keys array"})
				}
			}
		}
	}
}

// reachable is endpoint_probes' passive reachability: the authorization
// endpoint fails on 404, 410 and 5xx; the token endpoint on 410 and 5xx.
// Statuses the kit lists neither way count as reachable (a deployed
// endpoint answered).
func reachable(probe string, status int) bool {
	switch {
	case status <= 0:
		return false
	case status >= 500 || status == 410:
		return false
	case probe == "authorization" && status == 404:
		return false
	}
	return true
}

// Fetches returns the URLs the oauth_metadata_graph evaluation
// of agentURL still needs, given the responses in have (nil for none):
// the engine fetches them and calls again until it returns none. At most
// 64 URLs (graph_limits.max_unique_urls).
func Fetches(agentURL string, g Graph) []string {
	_, needs := evalOAuthGraph(agentURL, g)
	return needs
}

// uri is HTTPSURI, http allowed too in a local-development walk.
func (e *oauthEval) uri(s string, query bool) bool {
	return webURI(s, query, e.local)
}

// MaxAuthorizationServers is graph_limits.max_authorization_servers.
const MaxAuthorizationServers = 16

// HTTPSURI reports whether s is an absolute https URI with a host and no
// userinfo or fragment; issuers (query false) also carry no query.
func HTTPSURI(s string, query bool) bool { return webURI(s, query, false) }

// webURI is HTTPSURI, or an http URI too when allowHTTP.
func webURI(s string, query, allowHTTP bool) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(s, "#") {
		return false
	}
	if !strings.EqualFold(u.Scheme, "https") && !(allowHTTP && strings.EqualFold(u.Scheme, "http")) {
		return false
	}
	return query || (u.RawQuery == "" && !strings.Contains(s, "?"))
}

// canonResource is resource_equals_agent_url's form: scheme and host
// lowercased, default ports elided, the rest exact (path case and a
// trailing slash are significant).
func canonResource(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if p := u.Port(); p != "" && !(scheme == "https" && p == "443") && !(scheme == "http" && p == "80") {
		host += ":" + p
	}
	if strings.Contains(u.Hostname(), ":") {
		host = "[" + strings.ToLower(u.Hostname()) + "]"
		if p := u.Port(); p != "" && !(scheme == "https" && p == "443") && !(scheme == "http" && p == "80") {
			host += ":" + p
		}
	}
	rest := u.EscapedPath()
	if u.RawQuery != "" || u.ForceQuery {
		rest += "?" + u.RawQuery
	}
	return scheme + "://" + host + rest
}
