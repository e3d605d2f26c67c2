package storyboard

// checkFunc grades one validation of a step against its facts.
type checkFunc func(v Validation, f Facts) Result

// checks are the check kinds the engine grades: the single-response
// kinds (check_field.go) and the cross-step and cross-response kinds
// (check_cross.go).
var checks = func() map[string]checkFunc {
	m := map[string]checkFunc{}
	for _, part := range []map[string]checkFunc{fieldChecks, crossChecks} {
		for k, f := range part {
			if _, dup := m[k]; dup {
				panic("storyboard: check kind " + k + " registered twice")
			}
			m[k] = f
		}
	}
	return m
}()

// Known reports whether the engine grades check kind k.
func Known(k string) bool { _, ok := checks[k]; return ok }
