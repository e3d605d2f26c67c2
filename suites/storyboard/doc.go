// Package storyboard loads, lints and runs the storyboards the AdCP spec
// ships as its own compliance suite (compliance/<release>/{universal,
// protocols,specialisms,domains}), typed after
// universal/storyboard-schema.yaml, graded in the shape of
// universal/runner-output-contract.yaml.
//
//	rel, err := spec.Load("../shared/spec/compliance/3.1.19")
//	if err != nil {
//		return err // names the file and the YAML line
//	}
//	for _, f := range spec.Lint(rel) {
//		fmt.Println(f) // universal/x.yaml:12:5: error depends_on: phases[1].depends_on[0]: …
//	}
//	res := storyboard.Run(ctx, rel.Storyboards[0], &env, dispatcher)
//
// Loading: every storyboard with its phases, steps, validations, context
// outputs and gates; the authored check kinds of the runner output
// contract; the test kits, whole. Unknown or wrongly cased keys are lint
// findings, not load errors. Lint covers the rules storyboard-schema.yaml
// states for a storyboard alone or a release (see the Rule constants); not
// linted: the rules that need the JSON schemas or enums, and "category
// matches the id's top segment", which the shipped files treat as
// descriptive.
//
// Running (Run, one storyboard): the load-time gates (Gate: the protocol
// or specialism the agent claims, requires, required_any_of_tools,
// required_tools, requires_capability, controller seeding, webhook
// receivers) and the run mode (RunMode: mutating steps need
// --allow-mutations, the test controller a sandbox); then each phase
// (requires_capability, skip_if, the cascade of depends_on with the sole
// stateful step and branch-set exemptions) and each step (a $test_kit
// task, requires_tool, the step's own gates, the request built by
// Substitute with context_inputs injected and an idempotency_key minted
// for a mutating task, the call through a Dispatcher, the validations
// graded by Grade, the context outputs captured only when the step
// passed, branch-set contributions). A step whose call proves nothing (a
// timeout, a refusal before the application, a rate limit that stays) is
// an error, never a failure; a rate-limited step is sent again after the
// retry_after the seller asked for; a running task a step must see the end
// of is polled to its end; parallel_dispatch and rate_limit_trip steps
// make their several calls.
//
// Reading replies: Observe turns a recorded evidence.Call into what the
// checks see with the project's extractors over the raw bytes — the
// task payload (or, for an error, the body that carries it), the AdCP
// error and its code at any layer, the A2A task state, the HTTP status
// and headers. The checks (check_*.go) are pure functions of the
// Observation and the run's Facts, so a recorded run is graded again by
// Run over a Replay dispatcher.
//
// Webhook steps (webhook.go) run through Env.Webhooks, the run's
// receiver: {{runner.webhook_url:<step>}} mints a key per storyboard run
// and step, a retry step's failure plan is registered before its trigger
// sends, and each expect_webhook* step is judged from the deliveries it
// read, recorded as a KindWebhook call under its probe ID (Replay gives
// them back). Without a receiver they are skipped with the reason.
//
// The oauth_metadata_graph check of 3.2 grades the discovery graph the
// engine walks (oauth_walk.go) through a PublicFetcher dispatcher, under
// the OAuth setup kit's fetch policy (probes/fetch).
//
// Multi-agent storyboards (requires: [multi_agent], route.go) run when
// Env.Agents names the further logical agents: the agent under test
// answers for the storyboard's default_agent, and a step whose agent:
// names another key goes to that agent (Request.Agent; the dispatcher
// records its call with evidence.Call.Agent, which the rules never judge).
// Such a step skips the agent under test's tool and capability gates.
//
// The signing-keys precheck (jwks.go), run where the receiver is:
// fetch_brand_jwks fetches brand.json (the capabilities'
// identity.brand_json_url, else the agent origin's
// /.well-known/brand.json) and the agent's jwks_uri through the
// Dispatcher's Get, recorded under the step's probe ID with #brand_json
// and #jwks; assert_jwks_purpose reads that JWKS for a key with a
// webhook-valid adcp_use. Each failure message opens with the spec's code.
//
// A storyboard grading a buyer's webhook receiver (interaction_model
// webhook_receiver: replay_webhook_vector) is not_applicable to a seller.
//
// The substitution observer (observer.go, the substitution_observer_runner
// contract): expect_substitution_safe reads the preview_html at its
// source_path in the previous step's reply, extracts the URLs of the
// kit's attribute set (x/net/html; comments and script text unread),
// aligns each with macro_template (scheme, host, port, path segments,
// query pairs by key) and compares the bytes at each macro position with
// the encoding the release's test-vectors/catalog-macro-substitution.json
// gives the bound vector (hex digits case-insensitive, every other byte
// exact): one validation, check expect_substitution_safe, whose message
// opens with the kit's code (substitution_encoding_violation,
// nested_macro_re_expansion, substitution_binding_missing). Nothing is
// sent, so Replay re-grades it from the recorded reply. The previous
// step not passing skips it prerequisite_failed; no preview at
// source_path grades it not_applicable. A url_fetch source fetches the
// preview_url through the PublicFetcher (observer.go, fetchPreview).
//
// A whole-value macro_template ("{CLICK}", <a href="{CLICK}">) reads
// every attribute value of the set as a browser's URL parser does and adds
// the kit's url_scheme_preserved check (substitution_scheme_injection).
//
// Not run: the specialism-claimant match (slot 2 of storyboard-schema's
// routing order). In a multi-agent run a step that names no agent goes to
// the agent under test, which stands for the storyboard's default_agent
// and the run's default agent (slots 3 and 4); a step naming an agent the
// run lacks is unrouted_step. Every step of the shipped multi-agent
// storyboards names its agent.
//
// A storyboard's invariants (invariant*.go) are graded over its steps
// once they have run: one validation of check "invariant" on each step an
// invariant applies to.
package storyboard
