// Package expr is the storyboards' small languages, read over what a run
// has seen (storyboard-schema.yaml): the skip_if and contributes_if
// expressions (EvalSkipIf, EvalContributesIf), the requires_capability
// predicates over get_adcp_capabilities (EvalCapability), and the
// substitution tokens of a step's request — $context, $generate, $test_kit,
// $agent_url, {{runner.…}} and {{prior_step.…}} (Substitute, StoryboardRefs,
// Preflight) — with the context_outputs captures that feed them (Capture).
// It does no I/O; the engine (package storyboard) keeps the Vars of a run.
//
//	vars := &expr.Vars{Context: map[string]any{"media_buy_id": "mb_1"}}
//	req, err := expr.Substitute(map[string]any{"media_buy_id": "$context.media_buy_id"}, vars)
//	skip, err := expr.EvalSkipIf("!context.media_buy_id", vars)
package expr
