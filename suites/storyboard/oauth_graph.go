package storyboard

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// The OAuth discovery graph of test-kits/oauth-setup-runner.yaml
// (3.2.0-beta.5), evaluated over responses the engine fetched: the check
// does no I/O. The engine calls OAuthGraphFetches with what it has,
// fetches the URLs returned under the kit's fetch policy (no credentials,
// its SSRF rules; redirects are NOT followed by the fetcher — a 3xx is
// recorded with its Location and the evaluation follows it), and repeats
// until nothing is missing; Facts.OAuthGraph then holds the responses.

// OAuthResponse is one GET of the graph.
type OAuthResponse struct {
	Status      int
	ContentType string
	// Location is a redirect's target, "" otherwise.
	Location string
	// Body is the raw body (bounded by the kit's max_response_bytes).
	Body []byte
	// Blocked says the fetch policy refused the request (a blocked
	// address after DNS resolution, a rebinding peer): the reason.
	Blocked string
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
	have     map[string]*OAuthResponse
	needs    []string
	needSeen map[string]bool
	fails    []oauthFailure
	urls     map[string]bool
}

func (e *oauthEval) fail(f oauthFailure) { e.fails = append(e.fails, f) }

// get returns the response for u, following redirects (validating every
// target); ok false with a failure code when the fetch was blocked or the
// response is missing (recorded as a need; graded fail-closed).
func (e *oauthEval) get(u string, follow bool) (resp *OAuthResponse, final string, blocked string, missing bool) {
	for hop := 0; ; hop++ {
		if why := blockedURL(u); why != "" {
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

// blockedURL applies the URL-level fetch policy: https only, no
// credentials or fragment, and no IP literal outside globally routable
// unicast (every literal form canonicalised first).
func blockedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "not an absolute URL"
	}
	if u.Scheme != "https" {
		return "not https"
	}
	if u.User != nil {
		return "URL credentials"
	}
	if u.Fragment != "" {
		return "fragment"
	}
	if ip, ok := ipLiteral(u.Hostname()); ok && !globalUnicast(ip) {
		return "address " + ip.String() + " is not globally routable"
	}
	return ""
}

// ipLiteral parses every IP literal form a URL host can carry: IPv6, and
// IPv4 in inet_aton forms (decimal, octal, hex, 1 to 4 parts).
func ipLiteral(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return a.Unmap(), true
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base := 10
		switch {
		case strings.HasPrefix(strings.ToLower(p), "0x"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		n, err := strconv.ParseUint(p, base, 32)
		if err != nil && p != "" {
			return netip.Addr{}, false
		}
		vals = append(vals, n)
	}
	var v uint64
	last := len(vals) - 1
	for i, n := range vals[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - uint(i)))
	}
	if vals[last] >= 1<<(8*(4-uint(last))) {
		return netip.Addr{}, false
	}
	v |= vals[last]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
		"::/128", "::1/128", "64:ff9b::/96", "100::/64", "2001::/23", "2001:db8::/32", "fc00::/7", "fe80::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

func globalUnicast(a netip.Addr) bool {
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// wellKnown inserts a well-known suffix between host and path (RFC 9728
// §3, RFC 8414 §3): https://h/p → https://h/.well-known/<name>/p.
func wellKnown(base, name string) (string, error) {
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
func doc(r *OAuthResponse) (map[string]any, string) {
	if !isJSONContentType(r.ContentType) {
		return nil, "content-type " + shown(r.ContentType)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil || m == nil {
		return nil, "not a JSON object"
	}
	return m, ""
}

// evalOAuthGraph evaluates the graph from agentURL over have. needs are
// the URLs it would read that have no response (graded fail-closed).
func evalOAuthGraph(agentURL string, have map[string]*OAuthResponse) (first *oauthFailure, needs []string) {
	e := &oauthEval{have: have, needSeen: map[string]bool{}, urls: map[string]bool{}}
	e.walk(agentURL)
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

func rank(code string) int {
	for i, c := range oauthPrecedence {
		if c == code {
			return i
		}
	}
	return len(oauthPrecedence)
}

func (e *oauthEval) walk(agentURL string) {
	prmURL, err := wellKnown(agentURL, "oauth-protected-resource")
	if err != nil {
		e.fail(oauthFailure{code: "oauth_protected_resource_metadata_unavailable", url: agentURL, detail: err.Error()})
		return
	}
	prm, at, ok := e.metadata(prmURL, "oauth_protected_resource_metadata")
	if !ok {
		return
	}
	servers, isArr := prm["authorization_servers"].([]any)
	if len(servers) > maxAuthorizationServers {
		e.fail(oauthFailure{code: "oauth_graph_limit_exceeded", field: "authorization_servers", detail: fmt.Sprintf("%d authorization servers", len(servers))})
		return
	}
	res, _ := prm["resource"].(string)
	if !httpsURI(res, true) {
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
		if why := blockedURL(issuer); why != "" && httpsURI(issuer, false) {
			e.fail(oauthFailure{code: "oauth_fetch_blocked", url: issuer, detail: why})
			continue
		}
		if !httpsURI(issuer, false) {
			e.fail(oauthFailure{code: "oauth_authorization_server_url_invalid", url: shown(s)})
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
	asURL, err := wellKnown(issuer, "oauth-authorization-server")
	if err != nil {
		e.fail(oauthFailure{code: "oauth_authorization_server_url_invalid", url: issuer})
		return
	}
	md, at, ok := e.metadata(asURL, "oauth_authorization_server_metadata")
	if !ok {
		return
	}
	got, isStr := md["issuer"].(string)
	if !isStr || !httpsURI(got, false) {
		e.fail(oauthFailure{code: "oauth_authorization_server_metadata_invalid", url: at, field: "issuer"})
		return
	}
	if got != issuer {
		e.fail(oauthFailure{code: "oauth_issuer_mismatch", url: at, field: "issuer", detail: shown(got) + " != " + shown(issuer)})
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
		if !httpsURI(s, true) {
			e.fail(oauthFailure{code: "oauth_endpoint_url_invalid", url: shown(ep.v), field: ep.field})
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

// OAuthGraphFetches returns the URLs the oauth_metadata_graph evaluation
// of agentURL still needs, given the responses in have (nil for none):
// the engine fetches them and calls again until it returns none. At most
// 64 URLs (graph_limits.max_unique_urls).
func OAuthGraphFetches(agentURL string, have map[string]*OAuthResponse) []string {
	_, needs := evalOAuthGraph(agentURL, have)
	return needs
}
