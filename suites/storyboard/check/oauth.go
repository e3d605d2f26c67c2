package check

import (
	"mime"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// oauth_metadata_graph (universal/storyboard-schema.yaml "OAuth discovery
// graph"; test-kits/oauth-setup-runner.yaml, 3.2.0-beta.5).
//
// With Facts.OAuthGraph (the engine walked the graph with oauth.Walk,
// through a dispatcher that fetches under the kit's policy) the whole
// graph is graded by package oauth, which passes the kit's deterministic
// vector corpus. Without it, this grades
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
			return failCode("oauth_protected_resource_metadata_invalid", map[string]any{"detail": "content-type " + spec.Shown(ct)},
				"the RFC 9728 document is served as %s, not application/json", spec.Shown(ct))
		}
	}
	servers, isArr := doc["authorization_servers"].([]any)
	if len(servers) > oauth.MaxAuthorizationServers {
		return failCode("oauth_graph_limit_exceeded", map[string]any{"field": "authorization_servers"},
			"%d authorization servers exceed the limit of %d", len(servers), oauth.MaxAuthorizationServers)
	}
	res, _ := doc["resource"].(string)
	if !oauth.HTTPSURI(res, true) {
		return failCode("oauth_protected_resource_metadata_invalid", map[string]any{"field": "resource"},
			"resource %s is not an absolute HTTPS URI", spec.Shown(doc["resource"]))
	}
	if f.AgentURL == "" {
		return r.NA("the run has no agent URL to compare the protected resource with")
	}
	if !oauth.SameResource(res, f.AgentURL) {
		return failCode("oauth_resource_mismatch", map[string]any{"field": "resource", "url": res},
			"resource %s is not the agent URL %s", spec.Shown(res), spec.Shown(f.AgentURL))
	}
	if !isArr || len(servers) == 0 {
		return failCode("oauth_authorization_servers_empty", map[string]any{"field": "authorization_servers"},
			"authorization_servers is absent, not an array, or empty")
	}
	for _, s := range servers {
		u, _ := s.(string)
		if !oauth.HTTPSURI(u, false) {
			return failCode("oauth_authorization_server_url_invalid", map[string]any{"issuer": s},
				"authorization server %s is not an absolute HTTPS issuer URI without userinfo, query or fragment", spec.Shown(s))
		}
	}
	return r.NA("the protected-resource document is consistent; the authorization-server graph (RFC 8414 documents, endpoint reachability, JWKS) needs fetches this run does not make")
}

// gradeOAuthGraph grades the whole graph the engine fetched.
func gradeOAuthGraph(r spec.Result, f Facts) spec.Result {
	if f.AgentURL == "" {
		return r.NA("the run has no agent URL to derive the protected-resource document from")
	}
	if needs := oauth.Fetches(f.AgentURL, *f.OAuthGraph); len(needs) > 0 {
		return r.NA("the engine did not fetch %d URL(s) of the OAuth discovery graph, e.g. %s", len(needs), spec.Shown(needs[0]))
	}
	fails := oauth.Failures(f.AgentURL, *f.OAuthGraph)
	if len(fails) == 0 {
		return r.Pass()
	}
	first := fails[0]
	actual := map[string]any{"code": first.Code}
	if first.URL != "" {
		actual["url"] = first.URL
	}
	if first.Field != "" {
		actual["field"] = first.Field
	}
	if first.Status != 0 {
		actual["http_status"] = float64(first.Status)
	}
	if first.Detail != "" {
		actual["detail"] = first.Detail
	}
	msg := first.Code
	for _, x := range []string{first.Field, first.URL, first.Detail} {
		if x != "" {
			msg += " " + spec.Shown(x)
		}
	}
	return r.Fail(nil, oauthGraphProfile, actual, "%s", msg)
}
