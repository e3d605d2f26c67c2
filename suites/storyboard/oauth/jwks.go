package oauth

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// The signing_keys_published precheck of webhook-emission.yaml, judged
// over what the engine fetched: fetch_brand_jwks (BrandURL says where
// brand.json is, Brand judges it and names the jwks_uri, JWKS judges the
// key set) and assert_jwks_purpose (Purpose). Each failure message opens
// with the spec's code.

// The checks, named after the runner tasks they grade.
const (
	checkFetchBrandJWKS = "fetch_brand_jwks"
	checkJWKSPurpose    = "assert_jwks_purpose"
)

// The failure codes of the precheck (webhook-emission.yaml,
// signing_keys_published: the steps' expected text and the phase's
// narrative). webhook_signing_keys_all_revoked is never reported: see
// Purpose.
const (
	CodeBrandUnreachable = "brand_json_unreachable"
	CodeBrandMalformed   = "brand_json_malformed"
	CodeJWKSURIMissing   = "agents_jwks_uri_missing"
	CodeKeysUnpublished  = "webhook_signing_keys_unpublished"
	CodeKeysWrongPurpose = "webhook_signing_keys_wrong_purpose"
)

// KeyUses are the adcp_use values a webhook may be signed under:
// request-signing, and the deprecated webhook-signing (webhook-
// emission.yaml, signing_keys_published).
var KeyUses = []string{"request-signing", "webhook-signing"}

// fetchDescription is what fetch_brand_jwks checks.
const fetchDescription = "brand.json names the agent's jwks_uri, which serves a JWK Set"

// wellKnownBrand is where brand.json is looked for when the capabilities
// name none: the agent's origin.
const wellKnownBrand = "/.well-known/brand.json"

// keysFailed is fetch_brand_jwks failed with code.
func keysFailed(code, detail string) []spec.Result {
	return []spec.Result{{Check: checkFetchBrandJWKS, Severity: "required", Expected: code, Description: fetchDescription,
		Message: code + ": " + detail}}
}

// BrandURL is where fetch_brand_jwks reads brand.json: the capabilities'
// identity.brand_json_url (security.mdx, "Discovering an agent's signing
// keys via brand_json_url"), else the operator-configured one (the
// storyboard's "or, for agents not yet member-registered, from operator
// configuration"), else the agent origin's /.well-known/brand.json
// (origin). An advertised URL that is not https is the agent's defect:
// refused is then the step's failure, and nothing is fetched.
func BrandURL(caps any, configured string) (brandURL string, origin bool, refused []spec.Result) {
	brandURL, origin = wellKnownBrand, true
	if configured != "" {
		// Operator configuration: the storyboard's source "for agents not
		// yet member-registered"; the on-wire advertisement outranks it.
		brandURL, origin = configured, false
	}
	if u, _, _ := spec.Lookup(caps, "identity.brand_json_url"); u != nil {
		origin = false
		if s, ok := u.(string); ok && s != "" {
			brandURL = s
		}
		if !strings.HasPrefix(strings.ToLower(brandURL), "https://") {
			// security.mdx: a non-HTTPS value is rejected (the schema's
			// ^https://, which verifiers MUST restate): the agent's
			// defect, not a fetch the harness could not make.
			return brandURL, origin, keysFailed(CodeBrandUnreachable,
				"identity.brand_json_url "+wire.Sanitize(fmt.Sprint(u), 200)+" is not an https URL")
		}
	}
	return brandURL, origin, nil
}

// Brand judges the fetch of brand.json at brandURL (bo): ok with the
// jwks_uri of the agents[] entry whose url is agentURL (a trailing slash
// aside), else of the first entry naming one, resolved against
// brand.json's URL; else the step's failure. A fetch that proves nothing
// keeps its Failure, prefixed with the code: the step is then an error,
// not the agent's failure.
func Brand(bo *spec.Observation, brandURL, agentURL string, origin bool) (jwksURI string, failed []spec.Result, ok bool) {
	shown := wire.Sanitize(brandURL, 200)
	if bo.Call.URL != "" {
		shown = wire.Sanitize(bo.Call.URL, 200)
	}
	switch {
	case bo.Failure != "":
		bo.Failure = CodeBrandUnreachable + ": fetching " + shown + ": " + wire.Sanitize(bo.Failure, 300)
		return "", nil, false
	case bo.HTTPStatus != 200 && origin:
		return "", keysFailed(CodeBrandUnreachable, fmt.Sprintf("GET %s answered HTTP %d, not 200 (the agent declares no identity.brand_json_url; an operator-configured brand.json is given with --brand-json URL)", shown, bo.HTTPStatus)), false
	case bo.HTTPStatus != 200:
		return "", keysFailed(CodeBrandUnreachable, fmt.Sprintf("GET %s answered HTTP %d, not 200", shown, bo.HTTPStatus)), false
	case len(bo.Call.Body) == 0:
		return "", keysFailed(CodeBrandMalformed, shown+": the body is not JSON (or is over the fetch bound)"), false
	}
	agents, err := webhook.ParseBrandAgents(bo.Call.Body)
	if err != nil {
		return "", keysFailed(CodeBrandMalformed, shown+": "+wire.Sanitize(err.Error(), 200)), false
	}
	base := bo.Call.URL
	if base == "" {
		base = brandURL
	}
	jwksURI, _, err = webhook.AgentJWKSURI(agents, base, agentURL, true)
	switch {
	case errors.Is(err, webhook.ErrNoJWKSURI):
		return "", keysFailed(CodeJWKSURIMissing, fmt.Sprintf("%s: none of its %d agents[] entries names a jwks_uri", shown, len(agents))), false
	case err != nil:
		return "", keysFailed(CodeJWKSURIMissing, shown+": "+wire.Sanitize(err.Error(), 200)), false
	}
	return jwksURI, nil, true
}

// JWKS judges the fetch of the jwks_uri (jo): a JWK Set, else
// webhook_signing_keys_unpublished. A fetch that proves nothing keeps its
// Failure, prefixed with the code, and no result.
func JWKS(jo *spec.Observation, jwksURI string) []spec.Result {
	shown := wire.Sanitize(jwksURI, 200)
	// An absent or malformed JWKS is webhook_signing_keys_unpublished (the
	// phase's narrative); the step's expected text asks for a jwks_uri
	// "returning a valid JWKS document".
	switch {
	case jo.Failure != "":
		jo.Failure = CodeKeysUnpublished + ": fetching the JWKS at " + shown + ": " + wire.Sanitize(jo.Failure, 300)
		return nil
	case jo.HTTPStatus != 200:
		return keysFailed(CodeKeysUnpublished, fmt.Sprintf("GET %s (the jwks_uri) answered HTTP %d, not 200", shown, jo.HTTPStatus))
	}
	if _, err := jwkSet(jo.Call.Body); err != nil {
		return keysFailed(CodeKeysUnpublished, shown+": "+err.Error())
	}
	return []spec.Result{{Check: checkFetchBrandJWKS, Passed: true, Severity: "required", Description: fetchDescription}}
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

// Purpose grades assert_jwks_purpose over o, the JWKS a fetch_brand_jwks
// step fetched: at least one key has a webhook-valid adcp_use.
// Revocation: every key of the active JWKS counts as not revoked. Revoked
// keys are served apart from the active JWKS
// ({origin}/.well-known/jwks-archive.json, security.mdx "Revocation"), and
// the revocation list (revoked_kids) is a signed document "at the
// brand.json origin" whose URL 3.1.19 does not fix ("Transport
// revocation"); a JWK carries no revoked marker. So
// webhook_signing_keys_all_revoked is never reported.
func Purpose(o *spec.Observation) spec.Result {
	res := spec.Result{Check: checkJWKSPurpose, Severity: "required",
		Description: `the JWKS holds a key with adcp_use "request-signing" (or the deprecated "webhook-signing")`}
	keys, err := jwkSet(o.Call.Body)
	switch {
	case err != nil:
		res.Expected, res.Message = CodeKeysUnpublished, CodeKeysUnpublished+": "+err.Error()
		return res
	case len(keys) == 0:
		res.Expected, res.Message = CodeKeysUnpublished, CodeKeysUnpublished+": the JWKS holds no keys"
		return res
	}
	var uses []string
	for _, k := range keys {
		for _, u := range KeyUses {
			if k.AdcpUse == u {
				res.Passed = true
				return res
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
	res.Expected = CodeKeysWrongPurpose
	res.Actual = strings.Join(uses, ", ")
	res.Message = fmt.Sprintf("%s: none of the JWKS's %d keys has adcp_use \"request-signing\" or \"webhook-signing\" (adcp_use: %s)",
		CodeKeysWrongPurpose, len(keys), strings.Join(uses, ", "))
	return res
}
