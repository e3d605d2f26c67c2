package storyboard

import (
	"slices"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/expr"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// conventionNames are the $context names a storyboard's requests use but
// no step of it captures (no context_outputs, no root context): an
// authoring gap in the spec's storyboards (3.1.19: media_buy_id in three
// media-buy scenarios, proposal_id, content_standards_id), which the spec
// owners' JS runner closes by convention, extracting well-known ids from
// every reply. The engine closes it the narrowest way: after a step that
// passes, a name no step declares is captured from the reply's own
// top-level field of that name, and the step says so in its notes. A name
// any step declares is never captured by convention.
func conventionNames(sb *spec.Storyboard) []string {
	declared := map[string]bool{}
	for k := range sb.Context {
		declared[k] = true
	}
	for _, ph := range sb.Phases {
		for _, st := range ph.Steps {
			for _, o := range st.ContextOutputs {
				declared[o.Variable()] = true
			}
		}
	}
	refs, _ := expr.StoryboardRefs(sb)
	var out []string
	for _, r := range refs {
		if r.Kind == expr.RefContext && !declared[r.Name] && !slices.Contains(out, r.Name) {
			out = append(out, r.Name)
		}
	}
	return out
}

// captureByConvention captures the conventionNames a passed step's reply
// carries at its top level, and returns a note per capture.
func (r *runner) captureByConvention(payload any) []string {
	body, _ := payload.(map[string]any)
	var notes []string
	for _, name := range r.convention {
		v := body[name]
		switch v.(type) {
		case string, float64, bool:
		default:
			continue
		}
		if v == "" {
			continue
		}
		r.vars.Context[name] = v
		notes = append(notes, "captured $context."+name+" from the reply's "+name+" by convention: no step of the storyboard declares it in context_outputs")
	}
	return notes
}
