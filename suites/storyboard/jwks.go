package storyboard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// The signing_keys_published precheck of webhook-emission.yaml: runner
// tasks that fetch and read the seller's published keys; no AdCP task is
// sent.
const (
	taskFetchBrandJWKS    = "fetch_brand_jwks"
	taskAssertJWKSPurpose = "assert_jwks_purpose"
)

// The failure codes of the precheck (webhook-emission.yaml,
// signing_keys_published: the steps' expected text and the phase's
// narrative). webhook_signing_keys_all_revoked is never reported: see
// assertJWKSPurpose.
const (
	codeBrandUnreachable = "brand_json_unreachable"
	codeBrandMalformed   = "brand_json_malformed"
	codeJWKSURIMissing   = "agents_jwks_uri_missing"
	codeKeysUnpublished  = "webhook_signing_keys_unpublished"
	codeKeysWrongPurpose = "webhook_signing_keys_wrong_purpose"
)

// keyTasks are the precheck's tasks. They send nothing to a receiver, but
// they run only where the receiver does: "Runners without a receiver grade
// this universal as not_applicable" (webhook-emission.yaml, prerequisites).
var keyTasks = []string{taskFetchBrandJWKS, taskAssertJWKSPurpose}

// webhookKeyUses are the adcp_use values a webhook may be signed under:
// request-signing, and the deprecated webhook-signing (webhook-
// emission.yaml, signing_keys_published).
var webhookKeyUses = []string{"request-signing", "webhook-signing"}

// fetchDescription is what fetch_brand_jwks checks.
const fetchDescription = "brand.json names the agent's jwks_uri, which serves a JWK Set"

// wellKnownBrand is where brand.json is looked for when the capabilities
// name none: the agent's origin.
const wellKnownBrand = "/.well-known/brand.json"

// fetchBrandJWKS runs fetch_brand_jwks: brand.json from the capabilities'
// identity.brand_json_url (security.mdx, "Discovering an agent's signing
// keys via brand_json_url"), else the operator-configured one
// (Env.BrandJSON: the storyboard's "or, for agents not yet
// member-registered, from operator configuration"), else the agent
// origin's /.well-known/brand.json; then the jwks_uri of the agents[] entry whose
// url is the agent's (a trailing slash aside), else of the first entry
// naming one, resolved against brand.json's URL. Both fetches go through
// the dispatcher, recorded under probeID#brand_json and probeID#jwks (a
// re-judging reads them back). The observation is the JWKS fetch (the
// brand.json one when that did not get as far); one that proves nothing
// carries its Failure, and the step is an error, not the agent's failure.
func (r *runner) fetchBrandJWKS(ctx context.Context, probeID string) (*Observation, []Result) {
	fail := func(code, detail string) []Result {
		return []Result{{Check: taskFetchBrandJWKS, Severity: "required", Expected: code, Description: fetchDescription,
			Message: code + ": " + detail}}
	}
	brandURL, origin := wellKnownBrand, true
	if r.env.BrandJSON != "" {
		// Operator configuration: the storyboard's source "for agents not
		// yet member-registered"; the on-wire advertisement outranks it.
		brandURL, origin = r.env.BrandJSON, false
	}
	if u, _, _ := Lookup(r.env.Capabilities, "identity.brand_json_url"); u != nil {
		origin = false
		if s, ok := u.(string); ok && s != "" {
			brandURL = s
		}
		if !strings.HasPrefix(strings.ToLower(brandURL), "https://") {
			// security.mdx: a non-HTTPS value is rejected (the schema's
			// ^https://, which verifiers MUST restate): the agent's
			// defect, not a fetch the harness could not make.
			return &Observation{Task: taskFetchBrandJWKS, Transport: "http"}, fail(codeBrandUnreachable,
				"identity.brand_json_url "+wire.Sanitize(fmt.Sprint(u), 200)+" is not an https URL")
		}
	}
	bo := r.d.Get(ctx, probeID+"#brand_json", brandURL)
	bo.Task = taskFetchBrandJWKS
	shown := wire.Sanitize(brandURL, 200)
	if bo.Call.URL != "" {
		shown = wire.Sanitize(bo.Call.URL, 200)
	}
	switch {
	case bo.Failure != "":
		bo.Failure = codeBrandUnreachable + ": fetching " + shown + ": " + wire.Sanitize(bo.Failure, 300)
		return bo, nil
	case bo.HTTPStatus != 200 && origin:
		return bo, fail(codeBrandUnreachable, fmt.Sprintf("GET %s answered HTTP %d, not 200 (the agent declares no identity.brand_json_url; an operator-configured brand.json is given with --brand-json URL)", shown, bo.HTTPStatus))
	case bo.HTTPStatus != 200:
		return bo, fail(codeBrandUnreachable, fmt.Sprintf("GET %s answered HTTP %d, not 200", shown, bo.HTTPStatus))
	case len(bo.Call.Body) == 0:
		return bo, fail(codeBrandMalformed, shown+": the body is not JSON (or is over the fetch bound)")
	}
	agents, err := webhook.ParseBrandAgents(bo.Call.Body)
	if err != nil {
		return bo, fail(codeBrandMalformed, shown+": "+wire.Sanitize(err.Error(), 200))
	}
	base := bo.Call.URL
	if base == "" {
		base = brandURL
	}
	jwksURI, _, err := webhook.AgentJWKSURI(agents, base, r.env.AgentURL, true)
	switch {
	case errors.Is(err, webhook.ErrNoJWKSURI):
		return bo, fail(codeJWKSURIMissing, fmt.Sprintf("%s: none of its %d agents[] entries names a jwks_uri", shown, len(agents)))
	case err != nil:
		return bo, fail(codeJWKSURIMissing, shown+": "+wire.Sanitize(err.Error(), 200))
	}
	jo := r.d.Get(ctx, probeID+"#jwks", jwksURI)
	jo.Task = taskFetchBrandJWKS
	shown = wire.Sanitize(jwksURI, 200)
	// An absent or malformed JWKS is webhook_signing_keys_unpublished (the
	// phase's narrative); the step's expected text asks for a jwks_uri
	// "returning a valid JWKS document".
	switch {
	case jo.Failure != "":
		jo.Failure = codeKeysUnpublished + ": fetching the JWKS at " + shown + ": " + wire.Sanitize(jo.Failure, 300)
		return jo, nil
	case jo.HTTPStatus != 200:
		return jo, fail(codeKeysUnpublished, fmt.Sprintf("GET %s (the jwks_uri) answered HTTP %d, not 200", shown, jo.HTTPStatus))
	}
	if _, err := jwkSet(jo.Call.Body); err != nil {
		return jo, fail(codeKeysUnpublished, shown+": "+err.Error())
	}
	return jo, []Result{{Check: taskFetchBrandJWKS, Passed: true, Severity: "required", Description: fetchDescription}}
}

// jwkSet reads a JWK Set document (RFC 7517 §5: an object whose keys
// member is an array of JWKs); an empty set is a set.
func jwkSet(b []byte) ([]webhook.JWK, error) {
	if len(b) == 0 {
		return nil, errors.New("the body is not JSON (or is over the fetch bound)")
	}
	obj, err := rawjson.ParseObject(b)
	if err != nil {
		return nil, errors.New("not a JWK Set: " + wire.Sanitize(err.Error(), 200))
	}
	raw, ok := obj.Get("keys")
	if !ok {
		return nil, errors.New("not a JWK Set: no keys member")
	}
	var keys []webhook.JWK
	if err := rawjson.Decode(raw, &keys); err != nil {
		return nil, errors.New("not a JWK Set: keys: " + wire.Sanitize(err.Error(), 200))
	}
	return keys, nil
}

// assertJWKSPurpose runs assert_jwks_purpose over the JWKS the
// storyboard's last fetch_brand_jwks step fetched: at least one key has a
// webhook-valid adcp_use. The step is skipped when that step did not pass
// (nothing to read). Revocation: every key of the active JWKS counts as
// not revoked. Revoked keys are served apart from the active JWKS
// ({origin}/.well-known/jwks-archive.json, security.mdx "Revocation"),
// and the revocation list (revoked_kids) is a signed document "at the
// brand.json origin" whose URL 3.1.19 does not fix ("Transport
// revocation"); a JWK carries no revoked marker. So
// webhook_signing_keys_all_revoked is never reported.
func (r *runner) assertJWKSPurpose() (*Observation, []Result, *Skip) {
	var fetch *StepResult
	for k := range r.steps {
		if r.steps[k].Task == taskFetchBrandJWKS {
			fetch = &r.steps[k]
		}
	}
	switch {
	case fetch == nil:
		return nil, nil, &Skip{Reason: PrerequisiteFailed, Detail: "no earlier step of the storyboard fetches the JWKS (fetch_brand_jwks)"}
	case fetch.Skip != nil:
		return nil, nil, &Skip{Reason: PrerequisiteFailed, Detail: fetch.StepID + " (fetch_brand_jwks) was skipped (" + fetch.Skip.Reason + ")"}
	case fetch.Error != "":
		return nil, nil, &Skip{Reason: PrerequisiteFailed, Detail: fetch.StepID + " (fetch_brand_jwks) proved nothing (" + clip(fetch.Error, 200) + ")"}
	case !fetch.Passed || fetch.Obs == nil:
		return nil, nil, &Skip{Reason: PrerequisiteFailed, Detail: fetch.StepID + " (fetch_brand_jwks) did not pass"}
	}
	o := fetch.Obs
	res := Result{Check: taskAssertJWKSPurpose, Severity: "required",
		Description: `the JWKS holds a key with adcp_use "request-signing" (or the deprecated "webhook-signing")`}
	keys, err := jwkSet(o.Call.Body)
	switch {
	case err != nil:
		res.Expected, res.Message = codeKeysUnpublished, codeKeysUnpublished+": "+err.Error()
		return o, []Result{res}, nil
	case len(keys) == 0:
		res.Expected, res.Message = codeKeysUnpublished, codeKeysUnpublished+": the JWKS holds no keys"
		return o, []Result{res}, nil
	}
	var uses []string
	for _, k := range keys {
		for _, u := range webhookKeyUses {
			if k.AdcpUse == u {
				res.Passed = true
				return o, []Result{res}, nil
			}
		}
		use := `""`
		if k.AdcpUse != "" {
			use = fmt.Sprintf("%q", wire.Sanitize(k.AdcpUse, 40))
		}
		if len(uses) < 5 && !slices.Contains(uses, use) {
			uses = append(uses, use)
		}
	}
	res.Expected = codeKeysWrongPurpose
	res.Actual = strings.Join(uses, ", ")
	res.Message = fmt.Sprintf("%s: none of the JWKS's %d keys has adcp_use \"request-signing\" or \"webhook-signing\" (adcp_use: %s)",
		codeKeysWrongPurpose, len(keys), strings.Join(uses, ", "))
	return o, []Result{res}, nil
}
