package expr_test

import (
	"encoding/json"
	"fmt"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/expr"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// A step's request is built from its sample_request: a whole-string token
// keeps the captured value's JSON type, an aliased $generate is minted
// once per run, and a token inside a longer string is interpolated.
func ExampleSubstitute() {
	vars := &expr.Vars{
		Context:    map[string]any{"format": map[string]any{"id": "banner"}, "budget": 500.0},
		WebhookURL: func(step string) (string, bool) { return "https://hooks.example/step/" + step, true },
		NewUUID:    func() string { return "00000000-0000-4000-8000-000000000001" },
	}
	req, err := expr.Substitute(map[string]any{
		"format_id":       "$context.format",
		"budget":          "$context.budget",
		"note":            "budget $context.budget",
		"idempotency_key": "$generate:uuid_v4#create",
		"push_notification_config": map[string]any{
			"url": "{{runner.webhook_url:create}}",
		},
	}, vars)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := json.Marshal(req)
	fmt.Println(string(out))

	_, err = expr.Substitute(map[string]any{"media_buy_id": "$context.media_buy_id"}, vars)
	fmt.Println(err)
	// Output:
	// {"budget":500,"format_id":{"id":"banner"},"idempotency_key":"00000000-0000-4000-8000-000000000001","note":"budget 500","push_notification_config":{"url":"https://hooks.example/step/create"}}
	// unresolved substitution "$context.media_buy_id" at /media_buy_id: no context value media_buy_id (its capturing step failed, was skipped or never ran)
}

// A phase's skip_if reads the context and the test kit with JavaScript
// semantics; a capability predicate gates on get_adcp_capabilities.
func ExampleEvalSkipIf() {
	vars := &expr.Vars{
		Context: map[string]any{"proposal_id_1": "p1", "proposal_id_2": "p1"},
		TestKit: map[string]any{"auth": map[string]any{"api_key": "k"}},
	}
	for _, e := range []string{
		"!test_kit.auth.api_key",
		"!context.proposal_id_2 || context.proposal_id_2 == context.proposal_id_1",
		"context.bills_through_adcp != false",
	} {
		skip, err := expr.EvalSkipIf(e, vars)
		fmt.Println(skip, err)
	}
	ok, detail := expr.EvalCapability(&spec.CapabilityPredicate{Path: "media_buy.supports_proposals", Equals: true},
		map[string]any{"media_buy": map[string]any{"supports_proposals": false}})
	fmt.Println(ok, detail)
	// Output:
	// false <nil>
	// true <nil>
	// true <nil>
	// false requires_capability media_buy.supports_proposals equals true is not satisfied; the agent declares false
}
