package spec_test

import (
	"fmt"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Load a release folder and lint it.
func Example() {
	rel, err := spec.Load("testdata/release")
	if err != nil {
		fmt.Println(err) // names the file and the YAML line
		return
	}
	for _, sb := range rel.Storyboards {
		fmt.Printf("%-11s %-24s %d phases\n", sb.Kind, sb.ID, len(sb.Phases))
	}
	c := spec.Count(rel)
	fmt.Printf("%d storyboards, %d phases, %d steps, %d validations, %d findings\n",
		c.Storyboards, c.Phases, c.Steps, c.Validations, len(spec.Lint(rel)))
	// Output:
	// protocols   widget_seller            2 phases
	// protocols   widget_seller/branching  3 phases
	// specialisms widget_seller_specialism 0 phases
	// universal   ping                     2 phases
	// 4 storyboards, 7 phases, 8 steps, 8 validations, 0 findings
}

// A storyboard that breaks a rule yields findings with the file, the YAML
// path and the position.
func ExampleLint() {
	rel, _ := spec.Load("testdata/release")
	sb, findings, _ := spec.Parse("universal/loop.yaml", []byte(`id: loop
version: "1.0.0"
title: "A phase that waits for itself"
category: loop
summary: "s"
narrative: "n"
phases:
  - id: wait
    title: "Wait"
    depends_on: [wait]
    steps: []
`))
	rel.Storyboards = append(rel.Storyboards, sb)
	rel.Findings = append(rel.Findings, findings...)
	for _, f := range spec.Lint(rel) {
		fmt.Println(f)
	}
	// Output:
	// universal/loop.yaml:10:18: error depends_on: phases[0].depends_on[0]: phase "wait" depends on itself
}
