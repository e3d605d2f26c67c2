// Package report is the report model of a run — one entry per catalogue
// rule with its outcome, the specs behind it and their evidence — and the
// writers that render it. The model is built once; every writer is a pure
// function of it.
//
//	run := &report.Run{Tool: "adcp-conform", Rules: []report.RuleResult{...}}
//	run.Settle()
//	report.WriteText(os.Stdout, run)
//	os.Exit(run.ExitCode(false))
package report

import (
	"encoding/json"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// Outcome is the result of a spec or a rule. There are four outcomes a
// judge can reach, never two, plus disabled for a check turned off by
// configuration.
type Outcome string

// The outcomes.
const (
	// Passed: the seller met the rule on everything the run observed.
	Passed Outcome = "passed"
	// Failed: the seller broke the rule.
	Failed Outcome = "failed"
	// Skipped: the rule could not be judged, for a stated reason (not
	// declared, mutating probes not allowed, not implemented, …).
	Skipped Outcome = "skipped"
	// Error: the harness or the network failed; never counted against the
	// seller.
	Error Outcome = "error"
	// Disabled: the configuration turned the check off (a label filter).
	Disabled Outcome = "disabled"
)

// Level is how binding a rule is.
type Level string

// The levels.
const (
	Must   Level = "must"
	Should Level = "should"
)

// Verdict is the run's overall result.
type Verdict string

// The verdicts.
const (
	// Conformant: every applicable MUST rule passed, and at least one rule
	// was judged.
	Conformant Verdict = "conformant"
	// NonConformant: a MUST rule failed (or a SHOULD rule, when strict).
	NonConformant Verdict = "non_conformant"
	// HarnessError: a MUST rule could not be judged because the harness or
	// the network failed, and no rule failed.
	HarnessError Verdict = "error"
	// Incomplete: nothing was judged (every rule skipped or disabled). An
	// all-skipped run is never a pass.
	Incomplete Verdict = "incomplete"
)

// NotImplemented is the skip reason of a catalogue rule with no judge yet.
const NotImplemented = "not implemented"

// SpecResult is one judge's result: one rule on one transport.
type SpecResult struct {
	Name       string  `json:"name"`
	Transport  string  `json:"transport"`
	Outcome    Outcome `json:"outcome"`
	Message    string  `json:"message,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// RuleResult is one catalogue rule's result, aggregated over its specs.
type RuleResult struct {
	ID         string       `json:"id"`
	Family     string       `json:"family"`
	Level      Level        `json:"level"`
	Transports []string     `json:"transports"`
	Statement  string       `json:"statement"`
	Source     string       `json:"source"`
	Outcome    Outcome      `json:"outcome"`
	Message    string       `json:"message,omitempty"`
	Specs      []SpecResult `json:"specs,omitempty"`
	// Findings are the problems behind a failure, one per offending field.
	Findings []Finding `json:"findings,omitempty"`
	// Evidence are the redacted exchanges behind a failure or an error.
	Evidence []Evidence `json:"evidence,omitempty"`
}

// Finding is one problem a judge found in one recorded call.
type Finding struct {
	Transport string `json:"transport"`
	ProbeID   string `json:"probe_id"`
	// JSONPointer locates the field in the JSON-RPC response; a "#" steps
	// into a text item parsed as JSON.
	JSONPointer string `json:"json_pointer,omitempty"`
	Message     string `json:"message"`
}

// Evidence is one recorded call's exchanges, redacted.
type Evidence struct {
	Transport string          `json:"transport"`
	ProbeID   string          `json:"probe_id"`
	Exchanges []wire.Exchange `json:"exchanges"`
}

// Step is one recorded call in the shape of the spec's runner output
// contract (compliance/<release>/universal/runner-output-contract.yaml).
type Step struct {
	StoryboardID string       `json:"storyboard_id"`
	PhaseID      string       `json:"phase_id"`
	StepID       string       `json:"step_id"`
	Task         string       `json:"task"`
	Passed       bool         `json:"passed"`
	DurationMS   float64      `json:"duration_ms"`
	Validations  []Validation `json:"validations"`
	Extraction   Extraction   `json:"extraction"`
	Skip         *Skip        `json:"skip,omitempty"`
	Error        string       `json:"error,omitempty"`
	Request      *Request     `json:"request,omitempty"`
	Response     *Response    `json:"response,omitempty"`
}

// Validation is one rule's check of one step.
type Validation struct {
	Check       string `json:"check"`
	Rule        string `json:"rule"`
	Passed      bool   `json:"passed"`
	Description string `json:"description"`
	// JSONPointer, Expected and Actual are set on a failed validation.
	JSONPointer *string         `json:"json_pointer,omitempty"`
	Expected    any             `json:"expected,omitempty"`
	Actual      json.RawMessage `json:"actual,omitempty"`
	Message     string          `json:"message,omitempty"`
}

// Extraction records the path the extractor took over a reply.
type Extraction struct {
	Path string `json:"path"`
	Note string `json:"note,omitempty"`
}

// Skip says why a step was not run.
type Skip struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// Request is what the harness sent, redacted.
type Request struct {
	Transport string          `json:"transport"`
	Operation string          `json:"operation"`
	Payload   json.RawMessage `json:"payload"`
	URL       string          `json:"url,omitempty"`
}

// Response is what the seller answered, redacted; headers pass the
// contract's allowlist.
type Response struct {
	Transport  string              `json:"transport"`
	Payload    json.RawMessage     `json:"payload"`
	Status     int                 `json:"status,omitempty"`
	Headers    map[string][]string `json:"headers,omitempty"`
	DurationMS float64             `json:"duration_ms,omitempty"`
}

// Counts are the number of rules per outcome.
type Counts map[Outcome]int

// Of returns the count for the outcome named o (for templates).
func (c Counts) Of(o string) int { return c[Outcome(o)] }

// Run is the model of one run against one target.
type Run struct {
	Tool               string    `json:"tool"`
	Version            string    `json:"version"`
	AdcpRelease        string    `json:"adcp_release"`
	MCPProtocolVersion string    `json:"mcp_protocol_version,omitempty"`
	Target             string    `json:"target"`
	StartedAt          time.Time `json:"started_at"`
	DurationMS         float64   `json:"duration_ms"`
	Strict             bool      `json:"strict"`
	Verdict            Verdict   `json:"verdict"`
	Counts             Counts    `json:"counts"`
	LabelFilter        string    `json:"label_filter,omitempty"`
	// HarnessError is a failure that stopped the run before or while
	// probing (the target unreachable, the run deadline hit).
	HarnessError string `json:"harness_error,omitempty"`
	// Notes are what a user should know to read the run: probes the seller
	// refused for their arguments, for example.
	Notes []string     `json:"notes,omitempty"`
	Rules []RuleResult `json:"rules"`
	Steps []Step       `json:"steps"`
}

// Aggregate folds a rule's spec outcomes into the rule's outcome: failed if
// any spec failed; else error if any errored; else passed if any passed;
// else skipped if any was skipped; else disabled. A rule with no spec is
// skipped (not implemented).
func Aggregate(specs []SpecResult) (Outcome, string) {
	if len(specs) == 0 {
		return Skipped, NotImplemented
	}
	for _, want := range []Outcome{Failed, Error, Passed, Skipped} {
		for _, s := range specs {
			if s.Outcome == want {
				return want, s.Message
			}
		}
	}
	return Disabled, specs[0].Message
}

// Settle computes every rule's outcome from its specs, then the counts and
// the verdict. Call it once the specs are in.
func (r *Run) Settle() {
	r.Counts = Counts{}
	for i := range r.Rules {
		rule := &r.Rules[i]
		rule.Outcome, rule.Message = Aggregate(rule.Specs)
		r.Counts[rule.Outcome]++
	}
	r.Verdict = r.verdict()
}

func (r *Run) verdict() Verdict {
	judged, harness := false, false
	for _, rule := range r.Rules {
		binding := rule.Level == Must || r.Strict
		switch rule.Outcome {
		case Failed:
			if binding {
				return NonConformant
			}
			judged = true
		case Passed:
			judged = true
		case Error:
			if rule.Level == Must {
				harness = true
			}
		}
	}
	switch {
	case harness || r.HarnessError != "":
		return HarnessError
	case !judged:
		return Incomplete
	}
	return Conformant
}

// ExitCode is the process exit code the verdict implies: 0 conformant, 1
// non-conformant, 3 harness error or nothing judged. (2, a usage error, is
// the command line's.)
func (r *Run) ExitCode() int {
	switch r.Verdict {
	case Conformant:
		return 0
	case NonConformant:
		return 1
	}
	return 3
}
