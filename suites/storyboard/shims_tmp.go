package storyboard

// TEMPORARY: stand-ins until the subst and chk1 branches merge.

import "errors"

type Vars struct {
	Context    map[string]any
	Generated  map[string]string
	TestKit    map[string]any
	AgentURL   string
	WebhookURL func(string) (string, bool)
	Prior      map[string]any
	NewUUID    func() string
}
type UnresolvedError struct{ Token string }

func (e *UnresolvedError) Error() string        { return "unresolved " + e.Token }
func Substitute(v any, vars *Vars) (any, error) { return v, nil }
func InjectInputs(req map[string]any, in []ContextInput, ctx map[string]any) error {
	return nil
}

type CaptureFailure struct {
	Name, Path string
	Value      any
}

func Capture(outs []ContextOutput, payload any, vars *Vars) (map[string]any, *CaptureFailure) {
	return nil, nil
}
func EvalCapability(p *CapabilityPredicate, caps any) (bool, string) { return true, "" }
func EvalSkipIf(expr string, vars *Vars) (bool, error)               { return false, errors.New("x") }
func EvalContributesIf(expr string, passed func(string) (bool, bool)) (bool, error) {
	return false, nil
}
func Grade(v Validation, f Facts, rv string) Result { return Result{Check: v.Check, Passed: true} }
