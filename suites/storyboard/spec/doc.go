// Package spec is the storyboard model: the YAML files of a compliance
// release (universal/storyboard-schema.yaml, typed; Load, Parse), their
// lint (Lint: the rules the schema states), the paths the storyboards use
// (Lookup, Resolve, Pointer), and the records a run reads and writes in the
// shape of universal/runner-output-contract.yaml: Observation (what a step
// saw, read from a recorded call by Observe), Response (a public fetch),
// Result (a validation_result) and Skip. It imports nothing of the
// storyboard engine; the languages (expr), the checks (check), the
// substitution observer (observer), OAuth (oauth) and the engine sit on it.
//
// Loading keeps every storyboard with its phases, steps, validations,
// context outputs and gates, the authored check kinds of the runner output
// contract and the test kits, whole; unknown or wrongly cased keys are
// lint findings, not load errors. Not linted: the rules that need the JSON
// schemas or enums, and "category matches the id's top segment", which the
// shipped files treat as descriptive.
//
//	rel, err := spec.Load("compliance/3.1.19") // a release's compliance folder, copied locally
//	if err != nil {
//		return err // names the file and the YAML line
//	}
//	for _, f := range spec.Lint(rel) {
//		fmt.Println(f) // universal/x.yaml:12:5: error depends_on: phases[1].depends_on[0]: …
//	}
package spec
