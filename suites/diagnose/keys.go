package diagnose

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// keys walks the signing-key chain (security.mdx, "Discovering an agent's
// signing keys via brand_json_url"): brand.json from the capabilities'
// identity.brand_json_url, else the operator's (Config.BrandJSON), else
// the origin's /.well-known/brand.json; the agents[] entry of the
// endpoint (else the first naming a jwks_uri); its jwks_uri; a key with a
// signing adcp_use. A broken chain is a cause, ranked after the
// handshake's — but for a seller that declares no brand.json and serves
// none at its origin, which publishes no keys (a note).
func (w *walker) keys(ctx context.Context) {
	if w.rep.Unreachable != "" {
		return
	}
	step := Step{Title: "where brand.json is"}
	brandURL, declared := "", false
	raw, _, found := spec.Lookup(w.caps, "identity.brand_json_url")
	switch s, _ := raw.(string); {
	case found:
		declared, brandURL = true, s
		step.add(Info, "identity.brand_json_url", w.shown(raw), "")
	case w.cfg.BrandJSON != "":
		brandURL = w.cfg.BrandJSON
		step.add(Info, "identity.brand_json_url", "absent; --brand-json gives "+w.clean(brandURL, 300), "")
	default:
		u, err := url.Parse(w.f.endpoint)
		if err == nil {
			brandURL = u.Scheme + "://" + u.Host + "/.well-known/brand.json"
		}
		read := "absent: the origin's /.well-known/brand.json"
		if w.caps == nil {
			read = "no capabilities were read: the origin's /.well-known/brand.json"
		}
		step.add(Info, "identity.brand_json_url", read, "")
	}
	w.rep.Keys = append(w.rep.Keys, step)
	fail := func(step Step, code, read string) {
		w.rep.Keys = append(w.rep.Keys, step)
		w.rep.Causes = append(w.rep.Causes, Hypothesis{ID: code, Verdict: Likely, Title: keyTitles[code], Evidence: []string{read}, Fix: keyFixes[code]})
	}
	step = Step{Title: "brand.json"}
	if declared && !strings.HasPrefix(strings.ToLower(brandURL), "https://") {
		step.add(Bad, "identity.brand_json_url", w.shown(raw), "an https URL (security.mdx)")
		fail(step, oauth.CodeBrandUnreachable, "identity.brand_json_url "+w.shown(raw)+" is not an https URL")
		return
	}
	call, resp := fetch.Get(ctx, w.policy, "diagnose/brand_json", brandURL)
	read := w.fetched(call.HTTPStatus, resp)
	if resp.Status != 200 {
		step.add(Bad, "GET "+w.clean(brandURL, 300), read, "HTTP 200, a brand.json document")
		if !declared && w.cfg.BrandJSON == "" && (resp.Status == 404 || resp.Status == 410) {
			step.Lines[len(step.Lines)-1].Mark = Info
			w.rep.Keys = append(w.rep.Keys, step)
			w.rep.Notes = append(w.rep.Notes, "the seller declares no identity.brand_json_url and serves no brand.json at its origin: it publishes no signing keys (the storyboards that verify its signatures give --brand-json URL)")
			return
		}
		fail(step, oauth.CodeBrandUnreachable, "GET "+w.clean(brandURL, 300)+": "+read)
		return
	}
	agents, err := webhook.ParseBrandAgents(resp.Body)
	if err != nil {
		step.add(Bad, "GET "+w.clean(brandURL, 300), read+": "+w.clean(err.Error(), 200), "HTTP 200, a brand.json document")
		fail(step, oauth.CodeBrandMalformed, w.clean(brandURL, 300)+": "+w.clean(err.Error(), 200))
		return
	}
	step.add(OK, "GET "+w.clean(brandURL, 300), fmt.Sprintf("%s, %d agents[] entries", read, len(agents)), "HTTP 200, a brand.json document")
	jwksURI, own, err := webhook.AgentJWKSURI(agents, brandURL, w.f.endpoint, true)
	switch {
	case errors.Is(err, webhook.ErrNoJWKSURI):
		step.add(Bad, "agents[]", fmt.Sprintf("none of the %d entries names a jwks_uri", len(agents)), "the entry whose url is "+w.clean(w.f.endpoint, 300)+", with a jwks_uri")
		fail(step, oauth.CodeJWKSURIMissing, fmt.Sprintf("%s: none of its %d agents[] entries names a jwks_uri", w.clean(brandURL, 300), len(agents)))
		return
	case err != nil:
		step.add(Bad, "agents[]", w.clean(err.Error(), 200), "a jwks_uri that is an http(s) URL")
		fail(step, oauth.CodeJWKSURIMissing, w.clean(err.Error(), 200))
		return
	case own:
		step.add(OK, "agents[] entry", "url "+w.clean(w.f.endpoint, 300)+", jwks_uri "+w.clean(jwksURI, 300), "the entry whose url is the endpoint, with a jwks_uri")
	default:
		step.add(Info, "agents[] entry", "none whose url is the endpoint; the first naming a jwks_uri: "+w.clean(jwksURI, 300), "the entry whose url is "+w.clean(w.f.endpoint, 300))
	}
	w.rep.Keys = append(w.rep.Keys, step)
	step = Step{Title: "the JWKS"}
	call, resp = fetch.Get(ctx, w.policy, "diagnose/jwks", jwksURI)
	read = w.fetched(call.HTTPStatus, resp)
	if resp.Status != 200 {
		step.add(Bad, "GET "+w.clean(jwksURI, 300), read, "HTTP 200, a JWK Set")
		fail(step, oauth.CodeKeysUnpublished, "GET "+w.clean(jwksURI, 300)+" (the jwks_uri): "+read)
		return
	}
	keys, err := webhook.ParseJWKS(resp.Body)
	if err != nil {
		step.add(Bad, "GET "+w.clean(jwksURI, 300), read+": "+w.clean(err.Error(), 200), "HTTP 200, a JWK Set")
		fail(step, oauth.CodeKeysUnpublished, w.clean(jwksURI, 300)+": "+w.clean(err.Error(), 200))
		return
	}
	step.add(OK, "GET "+w.clean(jwksURI, 300), fmt.Sprintf("%s, %d keys", read, len(keys)), "HTTP 200, a JWK Set")
	var uses []string
	signing := false
	for i, k := range keys {
		if i < 8 {
			uses = append(uses, fmt.Sprintf("kid %s adcp_use %s", w.shown(k.Kid), w.shown(k.AdcpUse)))
		}
		for _, u := range oauth.KeyUses {
			signing = signing || k.AdcpUse == u
		}
	}
	m := OK
	if !signing {
		m = Bad
	}
	step.add(m, "keys", strings.Join(uses, "; "), `a key with adcp_use "request-signing" (or the deprecated "webhook-signing")`)
	if !signing {
		fail(step, oauth.CodeKeysWrongPurpose, fmt.Sprintf("none of the JWKS's %d keys has adcp_use request-signing or webhook-signing", len(keys)))
		return
	}
	w.rep.Keys = append(w.rep.Keys, step)
}

// fetched renders a fetch's outcome.
func (w *walker) fetched(status int, r fetch.Response) string {
	switch {
	case r.Blocked != "":
		return "blocked by the fetch policy: " + w.clean(r.Blocked, 200) + policyHint(w.cfg.LocalFetch)
	case r.Failed != "":
		return "no answer: " + w.clean(r.Failed, 200)
	case r.TooLarge:
		return fmt.Sprintf("HTTP %d, over %d bytes", status, fetch.MaxBytes)
	case r.Status >= 300 && r.Status < 400:
		return fmt.Sprintf("HTTP %d to %s, not followed (security.mdx: brand.json and JWKS fetches follow no redirect)", r.Status, w.clean(orNone(r.Location), 200))
	}
	return fmt.Sprintf("HTTP %d, %s", r.Status, w.clean(orNone(r.ContentType), 80))
}

var keyTitles = map[string]string{
	oauth.CodeBrandUnreachable: "the seller's brand.json cannot be read",
	oauth.CodeBrandMalformed:   "the seller's brand.json is not a brand.json document",
	oauth.CodeJWKSURIMissing:   "the seller's brand.json names no jwks_uri for the agent",
	oauth.CodeKeysUnpublished:  "the agent's jwks_uri serves no JWK Set",
	oauth.CodeKeysWrongPurpose: "no published key is a signing key (adcp_use)",
}

var keyFixes = map[string]string{
	oauth.CodeBrandUnreachable: "serve brand.json at the URL identity.brand_json_url names (https), or at the origin's /.well-known/brand.json",
	oauth.CodeBrandMalformed:   "serve a JSON object whose agents[] are objects with url and jwks_uri",
	oauth.CodeJWKSURIMissing:   "give the agents[] entry whose url is the endpoint a jwks_uri",
	oauth.CodeKeysUnpublished:  "serve {\"keys\": […]} at the jwks_uri, HTTP 200 application/json",
	oauth.CodeKeysWrongPurpose: "publish the signing key with adcp_use \"request-signing\"",
}
