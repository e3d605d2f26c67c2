package spec

import (
	"encoding/json"
	"fmt"
)

// The skip reasons of the runner output contract (skip_result.reasons).
const (
	NotApplicable         = "not_applicable"
	NoPhases              = "no_phases"
	PrerequisiteFailed    = "prerequisite_failed"
	MissingTool           = "missing_tool"
	MissingTestController = "missing_test_controller"
	UnsatisfiedContract   = "unsatisfied_contract"
	PeerBranchTaken       = "peer_branch_taken"
	PeerSubstituted       = "peer_substituted"
	RequirementUnmet      = "requirement_unmet"
)

// Skip says why a storyboard, phase or step did not run.
type Skip struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// Result is one validation's result, in the runner output contract's
// validation_result shape.
type Result struct {
	ID          string `json:"id,omitempty"`
	Check       string `json:"check"`
	Passed      bool   `json:"passed"`
	Description string `json:"description"`
	Severity    string `json:"severity,omitempty"`
	// SeverityPromoted is the contract's tri-state
	// severity_promoted_from_advisory: nil when the validation declares no
	// expires_after_version (or was not graded), true when the runner's
	// capability version reached it and Severity was promoted to
	// "required", false when it did not.
	SeverityPromoted *bool `json:"severity_promoted_from_advisory,omitempty"`
	// NotApplicable marks a check graded not_applicable (passed, with
	// Note saying why): an unknown kind, a transport it does not cover.
	NotApplicable bool   `json:"not_applicable,omitempty"`
	Note          string `json:"note,omitempty"`
	// JSONPointer, Expected and Actual say where and what, on failure.
	JSONPointer *string `json:"json_pointer,omitempty"`
	Expected    any     `json:"expected,omitempty"`
	Actual      any     `json:"actual,omitempty"`
	SchemaID    string  `json:"schema_id,omitempty"`
	SchemaURL   string  `json:"schema_url,omitempty"`
	// Observations are informational notes (context_key_absent,
	// out-of-scope refs) that do not change Passed.
	Observations []string `json:"observations,omitempty"`
	// Message is a one-line human reading of a failure.
	Message string `json:"message,omitempty"`
}

// The builders a check grades with: r (its id, check and description
// set) passed, not applicable, failed, or with an observation noted.

// Pass grades r passed.
func (r Result) Pass() Result { r.Passed = true; return r }

// NA grades r not_applicable: passed, with the reason.
func (r Result) NA(format string, args ...any) Result {
	r.Passed, r.NotApplicable = true, true
	r.Note = fmt.Sprintf(format, args...)
	return r
}

// Fail grades r failed at pointer (nil when no field is implicated).
func (r Result) Fail(pointer *string, expected, actual any, format string, args ...any) Result {
	r.Passed = false
	r.JSONPointer, r.Expected, r.Actual = pointer, Bounded(expected), Bounded(actual)
	r.Message = fmt.Sprintf(format, args...)
	return r
}

// Observe adds an observation to r, which does not change its verdict.
func (r Result) Observe(format string, args ...any) Result {
	r.Observations = append(r.Observations, fmt.Sprintf(format, args...))
	return r
}

// maxValueBytes bounds the JSON size of one expected or actual value; a
// larger value (an agent's whole reply, a huge captured array) is
// replaced by the start of its JSON text and its size.
const maxValueBytes = 8 << 10

// boundedHead is how much of such a value's JSON text is kept.
const boundedHead = 200

// Bounded is v for a result's expected or actual: v itself, or the start
// of its JSON text and its size when that is over maxValueBytes.
func Bounded(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%.200v", v)
	}
	if len(b) <= maxValueBytes {
		return v
	}
	return fmt.Sprintf("%s… (%d bytes of JSON, cut)", b[:boundedHead], len(b))
}

// shownMax bounds what Shown keeps of a value's JSON text.
const shownMax = 200

// Shown renders an untrusted value for a message: JSON, cut short.
func Shown(v any) string {
	b, err := json.Marshal(v)
	s := string(b)
	if err != nil {
		s = fmt.Sprintf("%v", v)
	}
	if len(s) > shownMax {
		s = s[:shownMax] + "…"
	}
	return s
}
