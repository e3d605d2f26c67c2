package storyboard

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// keysSB is the signing_keys_published phase of webhook-emission.yaml.
const keysSB = `
id: keys
version: "1.0.0"
title: t
category: t
narrative: t
phases:
  - id: signing_keys_published
    title: p
    steps:
      - id: fetch_brand_json
        title: fetch
        task: fetch_brand_jwks
        stateful: false
      - id: assert_webhook_signing_key_present
        title: assert
        task: assert_jwks_purpose
        stateful: false
`

const keysAgent = "https://seller.test/mcp"

// served is one document the fake origin serves: status and body, or a
// transport failure.
type served struct {
	status  int
	body    string
	failure string
}

// keyHost answers Get from docs keyed by URL (a path is on the agent's
// origin), recording each fetch as mcp.Get does: the body kept only when
// it is JSON.
type keyHost struct {
	fake
	docs  map[string]served
	store *evidence.Store
	urls  []string
}

func (h *keyHost) Get(_ context.Context, probeID, path string) *spec.Observation {
	u := path
	if strings.HasPrefix(path, "/") {
		u = "https://seller.test" + path
	}
	h.urls = append(h.urls, u)
	c := evidence.Call{ProbeID: probeID, Transport: evidence.MCP, Kind: evidence.KindHTTPGet, Method: "GET", URL: u}
	d, ok := h.docs[u]
	switch {
	case !ok:
		c.HTTPStatus = 404
	case d.failure != "":
		c.HarnessError = d.failure
	default:
		c.HTTPStatus = d.status
		if json.Valid([]byte(d.body)) {
			c.Body = []byte(d.body)
		}
	}
	h.store.Add(c)
	return spec.Observe(c, "", nil, true)
}

func keysEnv(caps map[string]any) *Env {
	e := env()
	e.AgentURL = keysAgent
	e.Webhooks = newFakeHooks()
	if caps != nil {
		caps["supported_protocols"] = []any{"media_buy"}
		e.Capabilities = spec.Normalize(caps)
	}
	return e
}

const (
	goodJWKS  = `{"keys":[{"kid":"k1","kty":"OKP","crv":"Ed25519","x":"AAAA","use":"sig","adcp_use":"request-signing"}]}`
	goodBrand = `{"agents":[{"type":"sales","url":"https://seller.test/mcp/","jwks_uri":"/.well-known/jwks.json"}]}`
)

// stepOutcome is "passed", "error: <Error>", "skipped <reason>", or
// "failed <message>" (the first failed validation's).
func stepOutcome(s StepResult) string {
	switch {
	case s.Skip != nil:
		return "skipped " + s.Skip.Reason
	case s.Error != "":
		return "error: " + s.Error
	case s.Passed:
		return "passed"
	}
	for _, v := range s.Validations {
		if !v.Passed {
			return "failed " + v.Message
		}
	}
	return "failed"
}

// The precheck grades crafted brand.json and JWKS documents: each failure
// code of webhook-emission.yaml, the capabilities' brand_json_url, a
// relative jwks_uri, the agents[] entry picked.
func TestSigningKeysPublished(t *testing.T) {
	wellKnown := "https://seller.test/.well-known/brand.json"
	jwks := "https://seller.test/.well-known/jwks.json"
	for _, tc := range []struct {
		name          string
		caps          map[string]any
		operator      string // Env.BrandJSON (--brand-json)
		docs          map[string]served
		fetch, assert string // outcome prefixes
		urls          []string
	}{
		{name: "an operator-configured brand.json where the capabilities name none", operator: "https://op.test/brand.json",
			docs:  map[string]served{"https://op.test/brand.json": {200, `{"agents":[{"url":"https://seller.test/mcp","jwks_uri":"https://seller.test/.well-known/jwks.json"}]}`, ""}, jwks: {200, goodJWKS, ""}},
			fetch: "passed", assert: "passed", urls: []string{"https://op.test/brand.json", jwks}},
		{name: "the capabilities' brand_json_url outranks the operator's", operator: "https://op.test/brand.json",
			caps:  map[string]any{"identity": map[string]any{"brand_json_url": "https://brand.test/op/brand.json"}},
			docs:  map[string]served{"https://brand.test/op/brand.json": {200, goodBrand, ""}, "https://brand.test/.well-known/jwks.json": {200, goodJWKS, ""}},
			fetch: "passed", assert: "passed", urls: []string{"https://brand.test/op/brand.json", "https://brand.test/.well-known/jwks.json"}},
		{name: "no brand.json at the origin names the operator flag", docs: map[string]served{},
			fetch:  "failed brand_json_unreachable: GET " + wellKnown + " answered HTTP 404, not 200 (the agent declares no identity.brand_json_url; an operator-configured brand.json is given with --brand-json URL)",
			assert: "skipped prerequisite_failed"},
		{name: "an operator brand.json that is not there fails without the hint", operator: "https://op.test/brand.json", docs: map[string]served{},
			fetch: "failed brand_json_unreachable: GET https://op.test/brand.json answered HTTP 404, not 200", assert: "skipped prerequisite_failed"},
		{name: "conformant", docs: map[string]served{wellKnown: {200, goodBrand, ""}, jwks: {200, goodJWKS, ""}},
			fetch: "passed", assert: "passed", urls: []string{wellKnown, jwks}},
		{name: "brand_json_url from the capabilities, relative jwks_uri",
			caps: map[string]any{"identity": map[string]any{"brand_json_url": "https://brand.test/op/brand.json"}},
			docs: map[string]served{
				"https://brand.test/op/brand.json":     {200, `{"agents":[{"url":"https://seller.test/mcp","jwks_uri":"keys/jwks.json"}]}`, ""},
				"https://brand.test/op/keys/jwks.json": {200, goodJWKS, ""}},
			fetch: "passed", assert: "passed", urls: []string{"https://brand.test/op/brand.json", "https://brand.test/op/keys/jwks.json"}},
		{name: "brand_json_url not https",
			caps:  map[string]any{"identity": map[string]any{"brand_json_url": "http://brand.test/op/brand.json"}},
			docs:  map[string]served{"http://brand.test/op/brand.json": {200, goodBrand, ""}},
			fetch: "failed brand_json_unreachable: identity.brand_json_url http://brand.test/op/brand.json is not an https URL", assert: "skipped prerequisite_failed"},
		{name: "the agent's own entry over the first",
			docs: map[string]served{wellKnown: {200, `{"agents":[{"url":"https://other.test/a","jwks_uri":"https://other.test/j.json"},{"url":"https://seller.test/mcp","jwks_uri":"/own.json"}]}`, ""},
				"https://seller.test/own.json": {200, goodJWKS, ""}},
			fetch: "passed", assert: "passed", urls: []string{wellKnown, "https://seller.test/own.json"}},
		{name: "no entry for the agent: the first naming a jwks_uri",
			docs: map[string]served{wellKnown: {200, `{"agents":[{"url":"https://other.test/a"},{"url":"https://other.test/b","jwks_uri":"/b.json"}]}`, ""},
				"https://seller.test/b.json": {200, goodJWKS, ""}},
			fetch: "passed", assert: "passed", urls: []string{wellKnown, "https://seller.test/b.json"}},
		{name: "deprecated webhook-signing", docs: map[string]served{wellKnown: {200, goodBrand, ""},
			jwks: {200, strings.Replace(goodJWKS, "request-signing", "webhook-signing", 1), ""}},
			fetch: "passed", assert: "passed"},
		{name: "brand.json 404", docs: map[string]served{},
			fetch: "failed brand_json_unreachable: GET " + wellKnown + " answered HTTP 404", assert: "skipped prerequisite_failed", urls: []string{wellKnown}},
		{name: "brand.json unreachable", docs: map[string]served{wellKnown: {failure: "dial tcp: connection refused"}},
			fetch: "error: brand_json_unreachable: fetching " + wellKnown + ": dial tcp", assert: "skipped prerequisite_failed"},
		{name: "brand.json not JSON", docs: map[string]served{wellKnown: {200, "<html>", ""}},
			fetch: "failed brand_json_malformed: " + wellKnown + ": the body is not JSON", assert: "skipped prerequisite_failed"},
		{name: "brand.json an array", docs: map[string]served{wellKnown: {200, "[]", ""}},
			fetch: "failed brand_json_malformed:", assert: "skipped prerequisite_failed"},
		{name: "agents not an array", docs: map[string]served{wellKnown: {200, `{"agents":"x"}`, ""}},
			fetch: "failed brand_json_malformed:", assert: "skipped prerequisite_failed"},
		{name: "no jwks_uri", docs: map[string]served{wellKnown: {200, `{"agents":[{"url":"https://seller.test/mcp"}]}`, ""}},
			fetch: "failed agents_jwks_uri_missing:", assert: "skipped prerequisite_failed", urls: []string{wellKnown}},
		{name: "jwks_uri not http", docs: map[string]served{wellKnown: {200, `{"agents":[{"url":"https://seller.test/mcp","jwks_uri":"ftp://x/j"}]}`, ""}},
			fetch: "failed agents_jwks_uri_missing:", assert: "skipped prerequisite_failed"},
		{name: "JWKS 404", docs: map[string]served{wellKnown: {200, goodBrand, ""}},
			fetch: "failed webhook_signing_keys_unpublished: GET " + jwks + " (the jwks_uri) answered HTTP 404", assert: "skipped prerequisite_failed"},
		{name: "JWKS not a JWK Set", docs: map[string]served{wellKnown: {200, goodBrand, ""}, jwks: {200, `{"kid":"k1"}`, ""}},
			fetch: "failed webhook_signing_keys_unpublished: " + jwks + ": not a JWK Set: no keys member", assert: "skipped prerequisite_failed"},
		{name: "JWKS not JSON", docs: map[string]served{wellKnown: {200, goodBrand, ""}, jwks: {200, "keys", ""}},
			fetch: "failed webhook_signing_keys_unpublished:", assert: "skipped prerequisite_failed"},
		{name: "empty JWKS", docs: map[string]served{wellKnown: {200, goodBrand, ""}, jwks: {200, `{"keys":[]}`, ""}},
			fetch: "passed", assert: "failed webhook_signing_keys_unpublished: the JWKS holds no keys"},
		{name: "wrong purpose", docs: map[string]served{wellKnown: {200, goodBrand, ""},
			jwks: {200, `{"keys":[{"kid":"a","kty":"OKP","adcp_use":"response-signing"},{"kid":"b","kty":"OKP"}]}`, ""}},
			fetch: "passed", assert: `failed webhook_signing_keys_wrong_purpose: none of the JWKS's 2 keys has adcp_use "request-signing" or "webhook-signing" (adcp_use: "response-signing", "")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &keyHost{docs: tc.docs, store: evidence.NewStore(evidence.Target{})}
			envOf := func() *Env {
				e := keysEnv(tc.caps)
				e.BrandJSON = tc.operator
				return e
			}
			res := Run(context.Background(), parse(t, keysSB), envOf(), h)
			if len(res.Steps) != 2 {
				t.Fatalf("steps: %+v", res.Steps)
			}
			if got := stepOutcome(res.Steps[0]); !strings.HasPrefix(got, tc.fetch) {
				t.Errorf("fetch_brand_json: %s, want %s…", got, tc.fetch)
			}
			if got := stepOutcome(res.Steps[1]); !strings.HasPrefix(got, tc.assert) {
				t.Errorf("assert_webhook_signing_key_present: %s, want %s…", got, tc.assert)
			}
			if tc.urls != nil && strings.Join(h.urls, " ") != strings.Join(tc.urls, " ") {
				t.Errorf("fetched %v, want %v", h.urls, tc.urls)
			}
			// A re-judging reads the two fetches back by probe ID and
			// grades the same.
			again := Run(context.Background(), parse(t, keysSB), envOf(), Replay{Store: h.store})
			for i := range res.Steps {
				if a, b := stepOutcome(res.Steps[i]), stepOutcome(again.Steps[i]); a != b {
					t.Errorf("step %d: live %q, replay %q", i, a, b)
				}
			}
		})
	}
}

// The fetches are recorded under the step's probe ID with #brand_json and
// #jwks; without that evidence a re-judging proves nothing (an error, and
// the purpose check is skipped), and without a receiver the precheck is
// not run.
func TestSigningKeysEvidence(t *testing.T) {
	h := &keyHost{docs: map[string]served{"https://seller.test/.well-known/brand.json": {200, goodBrand, ""},
		"https://seller.test/.well-known/jwks.json": {200, goodJWKS, ""}}, store: evidence.NewStore(evidence.Target{})}
	Run(context.Background(), parse(t, keysSB), keysEnv(nil), h)
	base := "storyboard/keys/signing_keys_published/fetch_brand_json"
	for _, id := range []string{base + "#brand_json", base + "#jwks"} {
		if _, ok := h.store.Call(id); !ok {
			t.Errorf("no call %s recorded", id)
		}
	}
	res := Run(context.Background(), parse(t, keysSB), keysEnv(nil), Replay{Store: evidence.NewStore(evidence.Target{})})
	if got := stepOutcome(res.Steps[0]); !strings.HasPrefix(got, "error: brand_json_unreachable: fetching /.well-known/brand.json: not recorded in the evidence") {
		t.Errorf("no evidence: %s", got)
	}
	if s := res.Steps[1]; s.Skip == nil || s.Skip.Reason != spec.PrerequisiteFailed || !strings.Contains(s.Skip.Detail, "proved nothing") {
		t.Errorf("no evidence, assert: %+v", s.Skip)
	}
	e := keysEnv(nil)
	e.Webhooks = nil
	res = Run(context.Background(), parse(t, keysSB), e, h)
	for _, s := range res.Steps {
		if s.Skip == nil || s.Skip.Reason != spec.RequirementUnmet || !strings.Contains(s.Skip.Detail, "webhook_receiver") {
			t.Errorf("without a receiver, %s: %+v", s.StepID, s.Skip)
		}
	}
	// An assert_jwks_purpose with no fetch step before it.
	only := strings.Replace(keysSB, "task: fetch_brand_jwks", "task: assert_jwks_purpose", 1)
	res = Run(context.Background(), parse(t, only), keysEnv(nil), h)
	if s := res.Steps[0]; s.Skip == nil || s.Skip.Reason != spec.PrerequisiteFailed {
		t.Errorf("no fetch step: %+v", s.Skip)
	}
}
