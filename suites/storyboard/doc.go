// Package storyboard is the engine that runs the storyboards the AdCP spec
// ships as its compliance suite (compliance/<release>), graded in the
// shape of universal/runner-output-contract.yaml: the selection of a
// storyboard, its phases and steps, the dispatch of each call, the
// captures between steps and the cascade of a step that did not pass. It
// sits on the packages that judge: spec (the YAML model, loading, lint,
// the run's records), expr (skip_if and the substitution tokens), check
// (the check kinds and invariants), observer (the substitution observer)
// and oauth (the OAuth graph and the signing keys). The engine fetches;
// they judge.
//
//	rel, err := spec.Load("compliance/3.1.19") // a release's compliance folder, copied locally
//	if err != nil {
//		return err // names the file and the YAML line
//	}
//	res := storyboard.Run(ctx, rel.Storyboards[0], &env, dispatcher)
//	fmt.Println(res.Outcome) // passed, failed, skipped or error
//
// Run (one storyboard) applies the load-time gates (Gate: the protocol or
// specialism the agent claims, requires, the tool and capability
// requirements, controller seeding, webhook receivers) and the run mode
// (mutating steps need --allow-mutations, the test controller a sandbox);
// then each phase (requires_capability, skip_if, the cascade of depends_on
// with the sole stateful step and branch-set exemptions) and each step (a
// $test_kit task, its gates, the request built by expr.Substitute with
// context_inputs injected and an idempotency_key minted for a mutating
// task, the call through a Dispatcher, the validations graded by
// check.Grade, the context outputs captured only when the step passed,
// the branch-set contributions). A step whose call proves nothing (a
// timeout, a refusal before the application, a rate limit that stays) is
// an error, never a failure; a rate-limited step is sent again after the
// retry_after the seller asked for; a running task a step must see the end
// of is polled to its end; parallel_dispatch and rate_limit_trip steps
// make their several calls. The declared invariants are graded once every
// step has run (check.Invariants). A recorded run is graded again by Run
// over a Replay dispatcher, which reads each call back with spec.Observe.
//
// Webhook steps run through Env.Webhooks, the run's receiver:
// {{runner.webhook_url:<step>}} mints a key per storyboard run and step, a
// retry step's failure plan is registered before its trigger sends, and
// each expect_webhook* step is judged from the deliveries it read,
// recorded as a KindWebhook call under its probe ID (Replay gives them
// back). Without a receiver they are skipped with the reason. A storyboard
// grading a buyer's webhook receiver (interaction_model webhook_receiver)
// is not_applicable to a seller.
//
// Multi-agent storyboards (requires: [multi_agent]) run when Env.Agents
// names the further logical agents: the agent under test answers for the
// storyboard's default_agent, and a step whose agent: names another key
// goes to that agent (Request.Agent; the dispatcher records its call with
// evidence.Call.Agent, which the rules never judge). Such a step skips the
// agent under test's tool and capability gates. Not run: the
// specialism-claimant match (slot 2 of storyboard-schema's routing order);
// a step naming an agent the run lacks is unrouted_step.
package storyboard
