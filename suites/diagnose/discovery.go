package diagnose

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// fetcher GETs the discovery documents under the walk's fetch policy.
type fetcher struct{ p fetch.Policy }

func (f fetcher) FetchPublic(ctx context.Context, probeID, u string, _ spec.FetchOptions) *spec.Response {
	_, r := fetch.Get(ctx, f.p, probeID, u)
	return spec.ResponseFrom(r)
}

// maxServersShown bounds the authorization servers a report shows.
const maxServersShown = 4

// discovery walks the OAuth discovery graph — the 3.2 storyboards' walk
// and evaluation (suites/storyboard), from the metadata the challenge
// names, else its well-known location — and shows the documents it read.
func (w *walker) discovery(ctx context.Context) {
	f := &w.f
	named := ""
	if f.noCred != nil {
		if b := Bearer(f.noCred.challenges); b != nil {
			named = b.Params["resource_metadata"]
		}
	}
	f.prmNamed = named != ""
	g := oauth.Walk(ctx, fetcher{w.policy}, "diagnose/oauth", f.endpoint, oauth.Graph{Local: w.cfg.LocalFetch, Metadata: named})
	f.graph = oauth.Failures(f.endpoint, *g)
	f.prmURL = named
	if named == "" {
		f.prmURL, _ = oauth.WellKnownURL(f.endpoint, "oauth-protected-resource")
	}
	step := Step{Title: "protected-resource metadata (RFC 9728)"}
	where := "its well-known location (RFC 9728 §3.1)"
	if f.prmNamed {
		where = "the resource_metadata of the challenge (RFC 9728 §5.1)"
	}
	doc, status, read := w.document(g, f.prmURL)
	f.prmStatus, f.prm = status, doc
	mark := OK
	switch {
	case doc == nil && !f.oauth():
		mark = Info
		read += ": the seller publishes no OAuth discovery (as a seller that takes API keys need not)"
	case doc == nil:
		mark = Bad
	}
	step.add(mark, "GET "+w.clean(f.prmURL, 300)+", "+where, read, "HTTP 200, a JSON object (application/json)")
	if doc != nil {
		res, isStr := doc["resource"].(string)
		switch {
		case !isStr:
			step.add(Bad, "resource", w.shown(doc["resource"]), "the endpoint, "+w.clean(f.endpoint, 300)+" (RFC 9728 §3.3)")
		case oauth.SameResource(res, f.endpoint):
			step.add(OK, "resource", w.clean(res, 300), "the endpoint, "+w.clean(f.endpoint, 300)+" (RFC 9728 §3.3)")
		default:
			step.add(Bad, "resource", w.clean(res, 300), "the endpoint, "+w.clean(f.endpoint, 300)+" (RFC 9728 §3.3)")
		}
		list, _ := doc["authorization_servers"].([]any)
		for _, x := range list {
			if s, ok := x.(string); ok && len(f.servers) < 16 {
				f.servers = append(f.servers, s)
			}
		}
		m := OK
		if len(f.servers) == 0 {
			m = Bad
		}
		step.add(m, "authorization_servers", w.shown(doc["authorization_servers"]), "one or more issuer URLs")
		if sc, has := doc["scopes_supported"]; has {
			step.add(Info, "scopes_supported", w.shown(sc), "")
		}
	}
	w.rep.Handshake = append(w.rep.Handshake, step)
	f.as = map[string]map[string]any{}
	for i, server := range f.servers {
		if i == maxServersShown {
			break
		}
		w.server(g, server)
	}
	gs := Step{Title: "the discovery graph, as the 3.2 storyboards grade it (oauth_metadata_graph)"}
	if !f.oauth() {
		gs.add(Info, "graph", "not graded: the seller shows no sign of OAuth", "")
	} else if len(f.graph) == 0 {
		gs.add(OK, "graph", "no failure", "no failure")
	}
	for _, fl := range f.graph {
		if !f.oauth() {
			break
		}
		read := fl.Code
		if fl.Field != "" {
			read += " (" + fl.Field + ")"
		}
		if fl.Detail != "" {
			read += ": " + fl.Detail
		}
		if fl.Status != 0 {
			read += fmt.Sprintf(": HTTP %d", fl.Status)
		}
		gs.add(Bad, w.clean(orNone(fl.URL), 300), w.clean(read, 400), "no failure")
	}
	w.rep.Handshake = append(w.rep.Handshake, gs)
}

// server shows one authorization server's metadata.
func (w *walker) server(g *oauth.Graph, server string) {
	f := &w.f
	step := Step{Title: "authorization-server metadata (RFC 8414) of " + w.clean(server, 300)}
	defer func() { w.rep.Handshake = append(w.rep.Handshake, step) }()
	u, err := oauth.WellKnownURL(server, "oauth-authorization-server")
	if err != nil {
		step.add(Bad, "issuer URL", w.clean(server, 300), "an absolute https URL (RFC 8414 §2)")
		return
	}
	doc, _, read := w.document(g, u)
	m := OK
	if doc == nil {
		m = Bad
	}
	step.add(m, "GET "+w.clean(u, 300), read, "HTTP 200, a JSON object (application/json)")
	if doc == nil {
		return
	}
	f.as[server] = doc
	iss, _ := doc["issuer"].(string)
	m = OK
	if iss != server {
		m = Bad
	}
	step.add(m, "issuer", w.shown(doc["issuer"]), w.clean(server, 300)+", the URL it was fetched for, exactly (RFC 8414 §3.3)")
	step.add(Info, "token_endpoint", w.shown(doc["token_endpoint"]), "")
	if gt, has := doc["grant_types_supported"]; has {
		list, _ := gt.([]any)
		m := Info
		exp := ""
		if f.credential == credOAuth {
			exp, m = "client_credentials, the grant the harness uses", OK
			if !slices.Contains(list, any("client_credentials")) {
				m = Bad
			}
		}
		step.add(m, "grant_types_supported", w.shown(gt), exp)
	}
	if j, has := doc["jwks_uri"]; has {
		step.add(Info, "jwks_uri", w.shown(j), "")
	}
}

// document reads the response at u in the walked graph, following its
// redirects as the walk did (at most 3): the JSON object, the status, and
// what to print of it.
func (w *walker) document(g *oauth.Graph, u string) (map[string]any, int, string) {
	var hops []string
	for hop := 0; hop <= 3; hop++ {
		r := g.Responses[u]
		switch {
		case r == nil:
			if why := w.policy.Refusal(u); why != "" {
				return nil, 0, "blocked by the fetch policy: " + w.clean(why, 200) + policyHint(w.cfg.LocalFetch)
			}
			return nil, 0, "not fetched"
		case r.Blocked != "":
			return nil, 0, "blocked by the fetch policy: " + w.clean(r.Blocked, 200) + policyHint(w.cfg.LocalFetch)
		case r.Failed != "":
			return nil, 0, "no answer: " + w.clean(r.Failed, 200)
		case r.Limit != "":
			return nil, r.Status, "cut: " + w.clean(r.Limit, 200)
		}
		if r.Status >= 300 && r.Status < 400 && r.Location != "" {
			next, err := url.Parse(r.Location)
			base, berr := url.Parse(u)
			if err != nil || berr != nil {
				return nil, r.Status, fmt.Sprintf("HTTP %d to an unreadable Location", r.Status)
			}
			u = base.ResolveReference(next).String()
			hops = append(hops, fmt.Sprintf("HTTP %d to %s", r.Status, w.clean(u, 200)))
			continue
		}
		read := strings.Join(append(hops, fmt.Sprintf("HTTP %d, %s", r.Status, w.clean(orNone(r.ContentType), 80))), ", then ")
		if r.Status != 200 {
			return nil, r.Status, read
		}
		var m map[string]any
		if json.Unmarshal(r.Body, &m) != nil || m == nil {
			return nil, r.Status, read + ", not a JSON object"
		}
		return m, r.Status, read
	}
	return nil, 0, "more than 3 redirects"
}

// policyHint says how a fetch the policy refused is allowed, for a seller
// on the user's own machine or network.
func policyHint(local bool) string {
	if local {
		return ""
	}
	return " (a seller on this machine or a private network: give --allow-local-fetch)"
}

// shown renders a JSON value the seller sent, bounded and clean.
func (w *walker) shown(v any) string {
	if v == nil {
		return "absent"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "unreadable"
	}
	return w.clean(string(b), 300)
}
