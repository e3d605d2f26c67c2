// Package oauth judges what a seller publishes for OAuth and request
// signing, over documents already fetched: the OAuth discovery graph of
// test-kits/oauth-setup-runner.yaml (Walk fetches it through the run's
// spec.PublicFetcher under the kit's fetch policy; Failures and Fetches
// evaluate it with no I/O), and the signing-keys precheck of
// webhook-emission.yaml (BrandURL, Brand and JWKS judge brand.json and the
// agent's JWK Set the engine fetched; Purpose grades assert_jwks_purpose).
// It sits on spec; the oauth_metadata_graph check (package check) and the
// engine read it.
//
//	g := oauth.Walk(ctx, fetcher, "diagnose/oauth", agentURL, oauth.Graph{})
//	for _, f := range oauth.Failures(agentURL, *g) {
//		fmt.Println(f.Code, f.URL) // in the kit's diagnostic precedence
//	}
package oauth
