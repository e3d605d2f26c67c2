package storyboard_test

import (
	"context"
	"fmt"

	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// seller answers every call with one product; a real run's dispatcher
// sends through the raw-byte clients and records each call.
type seller struct{}

func (seller) Call(_ context.Context, req storyboard.Request) *spec.Observation {
	return &spec.Observation{Task: req.Task, Transport: "mcp", Request: req.Args,
		Payload: map[string]any{"products": []any{map[string]any{"product_id": "p1"}}}}
}

func (seller) Get(context.Context, string, string) *spec.Observation {
	return &spec.Observation{Transport: "http", Failure: "no documents here"}
}

// Run one storyboard against an agent through a dispatcher: each step's
// validations are graded, and the storyboard's outcome folds its steps.
func ExampleRun() {
	sb, _, err := spec.Parse("universal/discovery.yaml", []byte(`id: discovery
version: "1.0.0"
title: Discovery
category: discovery
summary: s
narrative: n
phases:
  - id: browse
    title: Browse
    steps:
      - id: products
        title: Get products
        task: get_products
        sample_request: {brief: "video"}
        validations:
          - check: field_present
            path: products[0].product_id
            description: a product has an id
          - check: field_present
            path: products[0].pricing_options
            description: a product has pricing options
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	sb.Kind = spec.Universal // Load sets it from the folder; universal storyboards apply to every agent
	env := &storyboard.Env{Tools: []string{"get_products"}, AgentURL: "https://seller.example/mcp"}
	res := storyboard.Run(context.Background(), sb, env, seller{})
	for _, st := range res.Steps {
		for _, v := range st.Validations {
			fmt.Printf("%s.%s %s passed=%t\n", st.PhaseID, st.StepID, v.Check, v.Passed)
			if !v.Passed {
				fmt.Println("  ", v.Message)
			}
		}
	}
	fmt.Println(res.Outcome)
	// Output:
	// browse.products field_present passed=true
	// browse.products field_present passed=false
	//    products[0].pricing_options is missing
	// failed
}
