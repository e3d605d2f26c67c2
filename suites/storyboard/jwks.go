package storyboard

import (
	"context"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// The signing_keys_published precheck of webhook-emission.yaml: runner
// tasks that fetch and read the seller's published keys; no AdCP task is
// sent.
const (
	taskFetchBrandJWKS    = "fetch_brand_jwks"
	taskAssertJWKSPurpose = "assert_jwks_purpose"
)

// keyTasks are the precheck's tasks. They send nothing to a receiver, but
// they run only where the receiver does: "Runners without a receiver grade
// this universal as not_applicable" (webhook-emission.yaml, prerequisites).
var keyTasks = []string{taskFetchBrandJWKS, taskAssertJWKSPurpose}

// fetchBrandJWKS runs fetch_brand_jwks: brand.json where BrandURL says
// (Env.BrandJSON is the operator-configured one), then the jwks_uri Brand
// names; JWKS judges the key set. Both fetches go through the dispatcher,
// recorded under probeID#brand_json and probeID#jwks (a re-judging reads
// them back). The observation is the JWKS fetch (the brand.json one when
// that did not get as far); one that proves nothing carries its Failure,
// and the step is an error, not the agent's failure.
func (r *runner) fetchBrandJWKS(ctx context.Context, probeID string) (*spec.Observation, []spec.Result) {
	brandURL, origin, refused := oauth.BrandURL(r.env.Capabilities, r.env.BrandJSON)
	if refused != nil {
		return &spec.Observation{Task: taskFetchBrandJWKS, Transport: "http"}, refused
	}
	bo := r.d.Get(ctx, probeID+"#brand_json", brandURL)
	bo.Task = taskFetchBrandJWKS
	jwksURI, failed, ok := oauth.Brand(bo, brandURL, r.env.AgentURL, origin)
	if !ok {
		return bo, failed
	}
	jo := r.d.Get(ctx, probeID+"#jwks", jwksURI)
	jo.Task = taskFetchBrandJWKS
	return jo, oauth.JWKS(jo, jwksURI)
}

// assertJWKSPurpose runs assert_jwks_purpose (Purpose) over the JWKS the
// storyboard's last fetch_brand_jwks step fetched. The step is skipped
// when that step did not pass (nothing to read).
func (r *runner) assertJWKSPurpose() (*spec.Observation, []spec.Result, *spec.Skip) {
	var fetch *StepResult
	for k := range r.steps {
		if r.steps[k].Task == taskFetchBrandJWKS {
			fetch = &r.steps[k]
		}
	}
	switch {
	case fetch == nil:
		return nil, nil, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: "no earlier step of the storyboard fetches the JWKS (fetch_brand_jwks)"}
	case fetch.Skip != nil:
		return nil, nil, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: fetch.StepID + " (fetch_brand_jwks) was skipped (" + fetch.Skip.Reason + ")"}
	case fetch.Error != "":
		return nil, nil, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: fetch.StepID + " (fetch_brand_jwks) proved nothing (" + spec.Clip(fetch.Error, 200) + ")"}
	case !fetch.Passed || fetch.Obs == nil:
		return nil, nil, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: fetch.StepID + " (fetch_brand_jwks) did not pass"}
	}
	return fetch.Obs, []spec.Result{oauth.Purpose(fetch.Obs)}, nil
}
