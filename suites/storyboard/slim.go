package storyboard

import "encoding/json"

// Slim drops from each step of a graded storyboard what only grading read,
// keeping what a report reads: a run holds every step of every storyboard
// until its report is built, and a step's decoded reply costs about five
// times its bytes (a seller's 10 000-item reply: megabytes a step). It
// drops the decoded reply and error object (Obs.Payload, Obs.Error; Obs.
// HasPayload still says whether there was a payload) and the A2A result,
// whose bytes the evidence store keeps; and it turns the expected and
// actual values of each failed validation into their JSON, cut by bound
// (a report's embedding: report.Embed), and drops those of the validations
// that passed, which no report shows. Call it once Run has returned.
func (res *StoryboardResult) Slim(bound func(json.RawMessage) json.RawMessage) {
	for i := range res.Steps {
		st := &res.Steps[i]
		if st.Obs != nil {
			st.Obs = st.Obs.Slimmed()
		}
		for j := range st.Validations {
			v := &st.Validations[j]
			if v.Passed {
				v.Expected, v.Actual = nil, nil
				continue
			}
			v.Expected, v.Actual = boundValue(v.Expected, bound), boundValue(v.Actual, bound)
		}
	}
}

// boundValue is v's JSON cut by bound (nil stays nil); a value already
// cut is left as it is.
func boundValue(v any, bound func(json.RawMessage) json.RawMessage) any {
	switch v := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return bound(b)
}
