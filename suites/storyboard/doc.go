// Package storyboard loads and lints the storyboards the AdCP spec ships
// as its own compliance suite (compliance/<release>/{universal,protocols,
// specialisms,domains}), typed after universal/storyboard-schema.yaml.
//
//	rel, err := storyboard.Load("../shared/spec/compliance/3.1.19")
//	if err != nil {
//		return err // names the file and the YAML line
//	}
//	for _, f := range storyboard.Lint(rel) {
//		fmt.Println(f) // universal/x.yaml:12:5: error depends_on: phases[1].depends_on[0]: …
//	}
//
// What is loaded: every storyboard (a YAML file with a top-level phases
// key) with its phases, steps, validations, context outputs and gates;
// the authored check kinds of universal/runner-output-contract.yaml; the
// test kits by id and shape. Test vectors are listed, not read. Unknown
// or wrongly cased keys are lint findings, not load errors.
//
// Lint covers the rules storyboard-schema.yaml states for a storyboard
// alone or a release (see the Rule constants). Not linted yet: the rules
// that need the JSON schemas or enums (error-code vocabulary,
// expected_arm, context-output and validation paths, x-mutates-state
// contradictions); "category matches the id's top segment", which the
// universal storyboards treat as descriptive (70 shipped files differ);
// and $context.<name> resolution, which the schema grades at run time.
//
// What is not done yet: nothing here runs a storyboard against an agent —
// no substitution, no capability gating, no grading. An engine built on
// these types comes later.
package storyboard
