package storyboard

import (
	"mime"
	"net/url"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// oauth_metadata_graph (universal/storyboard-schema.yaml "OAuth discovery
// graph"; test-kits/oauth-setup-runner.yaml, 3.2.0-beta.5).
//
// With Facts.OAuthGraph (the engine walked the graph, oauth_walk.go,
// through a dispatcher that fetches under the kit's policy) the whole graph is graded by oauth_graph.go, which
// passes the kit's deterministic vector corpus. Without it, this grades
// what the RFC 9728 document fetched by the protected_resource_metadata
// step decides alone, in the kit's diagnostic_precedence order:
// oauth_graph_limit_exceeded (more than max_authorization_servers),
// _unavailable, _invalid, oauth_resource_mismatch,
// oauth_authorization_servers_empty, oauth_authorization_server_url_invalid;
// when the document passes those, the rest of the graph is not graded:
// not_applicable with the reason. Such a failure's code is the first among
// the checks made here; the full graph could report a fetch-level code
// (oauth_fetch_blocked) that outranks it — the verdict is the same.

// oauthGraphProfile is the expected object of runner-output-contract.yaml.
var oauthGraphProfile = map[string]any{
	"profile":                          "adcp/oauth-metadata-graph/v1",
	"require_authorization_servers":    true,
	"follow_all_authorization_servers": true,
	"probe_advertised_endpoints":       true,
}

// maxAuthorizationServers is graph_limits.max_authorization_servers.
const maxAuthorizationServers = 16

func checkOAuthMetadataGraph(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	if out, done := noObservation(r, f); done {
		return out
	}
	if f.Obs.Task != "protected_resource_metadata" {
		return r.NA("oauth_metadata_graph applies to a protected_resource_metadata step only (this step ran %q)", f.Obs.Task)
	}
	if f.OAuthGraph != nil {
		return gradeOAuthGraph(r, f)
	}
	failCode := func(code string, extra map[string]any, format string, args ...any) spec.Result {
		actual := map[string]any{"code": code}
		for k, x := range extra {
			actual[k] = x
		}
		return r.Fail(nil, oauthGraphProfile, actual, code+": "+format, args...)
	}
	if f.Obs.HTTPStatus != 200 {
		return failCode("oauth_protected_resource_metadata_unavailable", map[string]any{"http_status": float64(f.Obs.HTTPStatus)},
			"the RFC 9728 document answered HTTP %d, not 200", f.Obs.HTTPStatus)
	}
	doc, isObj := f.Obs.Payload.(map[string]any)
	if !isObj {
		return failCode("oauth_protected_resource_metadata_invalid", nil, "the RFC 9728 document is not a JSON object")
	}
	if ct := f.Obs.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return failCode("oauth_protected_resource_metadata_invalid", map[string]any{"detail": "content-type " + shown(ct)},
				"the RFC 9728 document is served as %s, not application/json", shown(ct))
		}
	}
	servers, isArr := doc["authorization_servers"].([]any)
	if len(servers) > maxAuthorizationServers {
		return failCode("oauth_graph_limit_exceeded", map[string]any{"field": "authorization_servers"},
			"%d authorization servers exceed the limit of %d", len(servers), maxAuthorizationServers)
	}
	res, _ := doc["resource"].(string)
	if !httpsURI(res, true) {
		return failCode("oauth_protected_resource_metadata_invalid", map[string]any{"field": "resource"},
			"resource %s is not an absolute HTTPS URI", shown(doc["resource"]))
	}
	if f.AgentURL == "" {
		return r.NA("the run has no agent URL to compare the protected resource with")
	}
	if canonResource(res) != canonResource(f.AgentURL) {
		return failCode("oauth_resource_mismatch", map[string]any{"field": "resource", "url": res},
			"resource %s is not the agent URL %s", shown(res), shown(f.AgentURL))
	}
	if !isArr || len(servers) == 0 {
		return failCode("oauth_authorization_servers_empty", map[string]any{"field": "authorization_servers"},
			"authorization_servers is absent, not an array, or empty")
	}
	for _, s := range servers {
		u, _ := s.(string)
		if !httpsURI(u, false) {
			return failCode("oauth_authorization_server_url_invalid", map[string]any{"issuer": s},
				"authorization server %s is not an absolute HTTPS issuer URI without userinfo, query or fragment", shown(s))
		}
	}
	return r.NA("the protected-resource document is consistent; the authorization-server graph (RFC 8414 documents, endpoint reachability, JWKS) needs fetches this run does not make")
}

// httpsURI reports whether s is an absolute https URI with a host and no
// userinfo or fragment; issuers (query false) also carry no query.
func httpsURI(s string, query bool) bool { return webURI(s, query, false) }

// webURI is httpsURI, or an http URI too when allowHTTP.
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

// gradeOAuthGraph grades the whole graph the engine fetched.
func gradeOAuthGraph(r spec.Result, f Facts) spec.Result {
	if f.AgentURL == "" {
		return r.NA("the run has no agent URL to derive the protected-resource document from")
	}
	first, needs := evalOAuthGraph(f.AgentURL, *f.OAuthGraph)
	if len(needs) > 0 {
		return r.NA("the engine did not fetch %d URL(s) of the OAuth discovery graph, e.g. %s", len(needs), shown(needs[0]))
	}
	if first == nil {
		return r.Pass()
	}
	actual := map[string]any{"code": first.code}
	if first.url != "" {
		actual["url"] = first.url
	}
	if first.field != "" {
		actual["field"] = first.field
	}
	if first.status != 0 {
		actual["http_status"] = float64(first.status)
	}
	if first.detail != "" {
		actual["detail"] = first.detail
	}
	msg := first.code
	for _, x := range []string{first.field, first.url, first.detail} {
		if x != "" {
			msg += " " + shown(x)
		}
	}
	return r.Fail(nil, oauthGraphProfile, actual, "%s", msg)
}
