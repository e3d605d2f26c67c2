// Package report is the report model of a run — one entry per catalogue
// rule with its outcome, the specs behind it and their evidence — and the
// writers that render it. The model is built once; every writer is a pure
// function of it.
//
//	run := &report.Run{Tool: "adcp-conform", Rules: []report.RuleResult{...}}
//	run.Settle()
//	report.WriteText(os.Stdout, run, report.TextOptions{Dir: "out"})
//	os.Exit(run.ExitCode(false))
package report

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
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
	// StaleBaseline: no rule failed beyond the baseline's expected
	// failures, but a rule the baseline lists now passes; the baseline must
	// shrink.
	StaleBaseline Verdict = "stale_baseline"
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
	// Baseline is set when the run's baseline lists the rule.
	Baseline *BaselineMark `json:"baseline,omitempty"`
}

// The baseline statuses of a listed rule.
const (
	// ExpectedFailure: the rule failed, as the baseline says; it does not
	// fail the run.
	ExpectedFailure = "expected_failure"
	// Stale: the rule passed although the baseline lists it; the run fails
	// until the entry is removed.
	Stale = "stale"
	// Unjudged: the rule was not judged (skipped, error or disabled); the
	// entry has no effect.
	Unjudged = "unjudged"
	// Unexpected: a storyboard step fails, but not as its entry says (other
	// check kinds), or a storyboard with step entries fails on a step none
	// lists; it fails the run as a failure nobody expected does.
	Unexpected = "unexpected"
)

// BaselineEntry is one expected failure a baseline file lists: a rule
// ("CTX-01") or a storyboard ("storyboard:<id>"), the whole storyboard or,
// with Step, one of its steps.
type BaselineEntry struct {
	Rule string `json:"rule"`
	// Step narrows a storyboard entry to one step, "<phase_id>/<step_id>":
	// the storyboard's failure is expected only when every step it fails on
	// is listed, and each listed step fails as its entry says.
	Step string `json:"step,omitempty"`
	// Checks are the check kinds the step fails, as StepFailures lists them
	// ("field_value", "field_present(advisory)", "error"): the step's
	// failure is expected when it fails some of them and nothing else (a
	// run without schemas grades response_schema not applicable); none:
	// any failure.
	Checks []string `json:"checks,omitempty"`
	Reason string   `json:"reason"`
	// Spec quotes the specification the reason rests on; Upstream points
	// to where the defect is reported or was introduced (a URL).
	Spec     string `json:"spec,omitempty"`
	Upstream string `json:"upstream,omitempty"`
	// Releases and Sandbox scope the entry: it applies to a run of one of
	// these compliance releases (none: any run) and, when Sandbox is set, to
	// runs with (true) or without (false) --sandbox only. An entry out of
	// scope is not applied.
	Releases []string `json:"releases,omitempty"`
	Sandbox  *bool    `json:"sandbox,omitempty"`
}

// AppliesTo reports whether the entry is in scope for a run of the
// compliance release (its storyboards', "" when none ran) with or without
// --sandbox.
func (e BaselineEntry) AppliesTo(release string, sandbox bool) bool {
	if len(e.Releases) > 0 && !slices.Contains(e.Releases, release) {
		return false
	}
	return e.Sandbox == nil || *e.Sandbox == sandbox
}

// BaselineMark is what the baseline made of a rule or a storyboard: its
// status and the entry's reason; a storyboard listed step by step has the
// mark of each listed step, and its own status sums them up.
type BaselineMark struct {
	Status string             `json:"status"`
	Reason string             `json:"reason"`
	Steps  []StepBaselineMark `json:"steps,omitempty"`
}

// StepBaselineMark is what the baseline made of one listed storyboard
// step: expected_failure (it fails listed checks only), unexpected (it
// fails another too), stale (it passes with no failed check) or unjudged
// (skipped, erred or not run).
type StepBaselineMark struct {
	Step   string `json:"step"`
	Status string `json:"status"`
	Reason string `json:"reason"`
	// Checks are the check kinds the entry lists; Failed those the step
	// failed (StepFailures).
	Checks []string `json:"checks,omitempty"`
	Failed []string `json:"failed,omitempty"`
}

// StepFailures are the check kinds of a step's failed validations, once
// each and sorted: "kind", or "kind(advisory)" for a failed advisory one
// (a step may pass with those), and "error" for a harness error. A step
// graded not applicable fails none.
func StepFailures(st Step) []string {
	var kinds []string
	for _, v := range st.Validations {
		if v.Passed || v.NotApplicable {
			continue
		}
		k := v.Check
		if v.Severity == Advisory {
			k += "(advisory)"
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	if st.Error != "" {
		kinds = append(kinds, "error")
	}
	slices.Sort(kinds)
	return kinds
}

// Failing reports whether the rule counts as a failure of the run: it
// failed and the baseline does not expect it.
func (r RuleResult) Failing() bool {
	return r.Outcome == Failed && (r.Baseline == nil || r.Baseline.Status != ExpectedFailure)
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
// contract (compliance/<release>/universal/runner-output-contract.yaml):
// one per call a rule's judge recorded (StoryboardID "adcp_conform"), and
// one per step of a storyboard the storyboard engine ran (StoryboardID the
// storyboard's id, listed in Run.Storyboards).
type Step struct {
	StoryboardID string `json:"storyboard_id"`
	PhaseID      string `json:"phase_id"`
	StepID       string `json:"step_id"`
	// Title is the storyboard step's title, when it has one (ours; the
	// contract does not name it).
	Title       string       `json:"title,omitempty"`
	Task        string       `json:"task"`
	Passed      bool         `json:"passed"`
	DurationMS  float64      `json:"duration_ms"`
	Validations []Validation `json:"validations"`
	Extraction  Extraction   `json:"extraction"`
	Skip        *Skip        `json:"skip,omitempty"`
	Error       string       `json:"error,omitempty"`
	Request     *Request     `json:"request,omitempty"`
	Response    *Response    `json:"response,omitempty"`
	// Notices are informational signals on a passing observation; they
	// never change Passed.
	Notices []Notice `json:"notices,omitempty"`
	// Optional marks a storyboard step of an optional phase: its failure
	// is reported but fails no storyboard on its own (storyboard-schema
	// .yaml, "Optional phase semantics").
	Optional bool `json:"optional,omitempty"`
}

// Notice is the contract's notice: an advisory about a passing
// observation (a deprecation, a capability required in a later release).
type Notice struct {
	Severity         string `json:"severity"`
	Code             string `json:"code"`
	Message          string `json:"message"`
	EffectiveVersion string `json:"effective_version,omitempty"`
	Requirement      string `json:"requirement,omitempty"`
	CapabilityPath   string `json:"capability_path,omitempty"`
	ReferenceURL     string `json:"reference_url,omitempty"`
}

// The severities of a validation: a failed Advisory validation does not
// fail its step; a failed Required one (or one with no severity) does.
const (
	Advisory = "advisory"
	Required = "required"
)

// Outcome is the step's outcome: skipped when it carries a skip, passed,
// failed when a required validation failed (or it failed without a
// recorded reason), error when only the harness or the network failed
// (Error set, no failed required validation).
func (s Step) Outcome() Outcome {
	switch {
	case s.Skip != nil:
		return Skipped
	case s.Passed:
		return Passed
	case s.FirstFailure() != nil:
		return Failed
	case s.Error != "":
		return Error
	}
	return Failed
}

// FirstFailure is the step's first failed required validation, nil when
// none failed.
func (s Step) FirstFailure() *Validation {
	for i := range s.Validations {
		if v := &s.Validations[i]; v.FailsStep() {
			return v
		}
	}
	return nil
}

// FailsStep reports whether the validation failed and is required: an
// advisory failure does not fail its step.
func (v Validation) FailsStep() bool { return !v.Passed && v.Severity != Advisory }

// Validation is one check of one step: a rule's (Rule set) or a
// storyboard's.
type Validation struct {
	// ID is the storyboard validation's id, echoed when it has one.
	ID          string `json:"id,omitempty"`
	Check       string `json:"check"`
	Rule        string `json:"rule,omitempty"`
	Passed      bool   `json:"passed"`
	Description string `json:"description"`
	// Severity is "required" or "advisory" (a failed advisory validation
	// does not fail its step); "" is required.
	Severity string `json:"severity,omitempty"`
	// SeverityPromotedFromAdvisory is the contract's tri-state: true when
	// the runner promoted an expired advisory to required, false when the
	// storyboard declared an expiry not yet reached, nil otherwise.
	SeverityPromotedFromAdvisory *bool `json:"severity_promoted_from_advisory,omitempty"`
	// NotApplicable marks a check graded not applicable (passed, Note says
	// why): a check kind the runner does not implement, the contract's
	// forward-compatibility rule.
	NotApplicable bool   `json:"not_applicable,omitempty"`
	Note          string `json:"note,omitempty"`
	// JSONPointer, Expected and Actual are set on a failed validation.
	JSONPointer *string         `json:"json_pointer,omitempty"`
	Expected    any             `json:"expected,omitempty"`
	Actual      json.RawMessage `json:"actual,omitempty"`
	// SchemaID and SchemaURL name the JSON Schema applied, when the check
	// applied one.
	SchemaID  *string `json:"schema_id,omitempty"`
	SchemaURL *string `json:"schema_url,omitempty"`
	// Observations are informational notes that do not change Passed
	// (context_key_absent, for example).
	Observations []string `json:"observations,omitempty"`
	Message      string   `json:"message,omitempty"`
}

// failedValidation is a failed Validation as the contract writes it: the
// diagnostic members are present, null when unknown.
type failedValidation struct {
	ID                           string          `json:"id,omitempty"`
	Check                        string          `json:"check"`
	Rule                         string          `json:"rule,omitempty"`
	Passed                       bool            `json:"passed"`
	Description                  string          `json:"description"`
	Severity                     string          `json:"severity,omitempty"`
	SeverityPromotedFromAdvisory *bool           `json:"severity_promoted_from_advisory,omitempty"`
	NotApplicable                bool            `json:"not_applicable,omitempty"`
	Note                         string          `json:"note,omitempty"`
	JSONPointer                  *string         `json:"json_pointer"`
	Expected                     any             `json:"expected"`
	Actual                       json.RawMessage `json:"actual"`
	SchemaID                     *string         `json:"schema_id"`
	SchemaURL                    *string         `json:"schema_url"`
	Observations                 []string        `json:"observations,omitempty"`
	Message                      string          `json:"message,omitempty"`
}

// MarshalJSON writes a failed validation with json_pointer, expected,
// actual, schema_id and schema_url always present (null when unknown), as
// the runner output contract requires; a passed one omits them.
func (v Validation) MarshalJSON() ([]byte, error) {
	type plain Validation
	if v.Passed {
		return json.Marshal(plain(v))
	}
	return json.Marshal(failedValidation(v))
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

// StoryboardResult is one compliance storyboard's result. Its steps are
// the entries of Run.Steps whose StoryboardID is its ID; Settle counts
// them and folds them into its outcome. Storyboard steps are MUST-level:
// a failed step fails the run as a failed MUST rule does.
type StoryboardResult struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	// Category groups storyboards in the reports: "universal", a protocol
	// ("media-buy"), or "specialism/<name>".
	Category string `json:"category"`
	// Path is the storyboard's file in the spec's compliance tree.
	Path  string `json:"path,omitempty"`
	Track string `json:"track,omitempty"`
	// Outcome is passed, failed, skipped or error. Settle folds it from
	// the steps (failed, else error, else passed, else skipped); a
	// storyboard skipped as a whole (Skip set) is skipped, and one with no
	// step keeps the outcome the runner gave it. Error set makes a
	// storyboard that did not fail an error.
	Outcome Outcome `json:"outcome"`
	// Skip says why the storyboard was skipped as a whole.
	Skip *Skip `json:"skip,omitempty"`
	// NotSelected says why the run mode left the storyboard out (a
	// read-only run, no sandbox, --storyboard): the contract's
	// selection_result, listed in run_summary.not_selected.
	NotSelected *Skip `json:"not_selected,omitempty"`
	// Error is a harness failure that stopped the storyboard.
	Error string `json:"error,omitempty"`
	// Counts are the storyboard's steps per outcome.
	Counts     Counts  `json:"counts"`
	DurationMS float64 `json:"duration_ms"`
	// Baseline is set when the run's baseline lists the storyboard
	// ("storyboard:<id>").
	Baseline *BaselineMark `json:"baseline,omitempty"`
}

// BaselineKey is the storyboard's name in a baseline: "storyboard:<id>".
func (s StoryboardResult) BaselineKey() string { return StoryboardBaselinePrefix + s.ID }

// StoryboardBaselinePrefix opens a baseline entry that names a storyboard
// rather than a rule.
const StoryboardBaselinePrefix = "storyboard:"

// Failing reports whether the storyboard counts as a failure of the run:
// it failed and the baseline does not expect it (a storyboard listed step
// by step is stale when its failures are all expected and a listed step
// passes: the stale entry fails the run, not the storyboard).
func (s StoryboardResult) Failing() bool {
	return s.Outcome == Failed && (s.Baseline == nil || (s.Baseline.Status != ExpectedFailure && s.Baseline.Status != Stale))
}

// StoryboardSteps returns the steps of the storyboard id, in order.
func (r *Run) StoryboardSteps(id string) []Step {
	var out []Step
	for _, st := range r.Steps {
		if st.StoryboardID == id {
			out = append(out, st)
		}
	}
	return out
}

// Counts are the number of rules per outcome.
type Counts map[Outcome]int

// Of returns the count for the outcome named o (for templates).
func (c Counts) Of(o string) int { return c[Outcome(o)] }

// TargetKind says what a run tested: a seller the user pointed it at, or
// the harness's own bundled reference seller (a run given no target). A
// registry reads it from the signed results.json, so a run against the
// reference can never pass for a seller's.
type TargetKind string

// The target kinds.
const (
	// TargetSeller: the seller the user named (--mcp, --a2a, --targets).
	TargetSeller TargetKind = "seller"
	// TargetBundledReference: the reference seller bundled with the
	// harness, started for the run; it proves the harness, not a seller.
	TargetBundledReference TargetKind = "bundled_reference"
)

// Release is the AdCP release a run graded the seller on, and why.
type Release struct {
	// Version is the published release ("3.2.0-beta.5"); "" when the run
	// could get no release the seller speaks.
	Version string `json:"version,omitempty"`
	// ChosenBy is what decided it: ReleaseBySeller (its
	// adcp.supported_versions), a flag ("--release", "--storyboards",
	// "--schemas"), or ReleaseByDefault (the seller's capabilities named no
	// version).
	ChosenBy string `json:"chosen_by"`
	// Reason says why, in one sentence.
	Reason string `json:"reason"`
	// Advertised is the seller's adcp.supported_versions, as read before
	// the probes (when the seller chose).
	Advertised []string `json:"advertised,omitempty"`
	// Mirror is where the releases came from (a folder or a site), and
	// Available the releases the run could get there.
	Mirror    string   `json:"mirror,omitempty"`
	Available []string `json:"available,omitempty"`
}

// What may choose a run's release besides a flag.
const (
	ReleaseBySeller  = "seller"
	ReleaseByDefault = "default"
)

// Run is the model of one run against one target.
type Run struct {
	Tool               string `json:"tool"`
	Version            string `json:"version"`
	AdcpRelease        string `json:"adcp_release"`
	MCPProtocolVersion string `json:"mcp_protocol_version,omitempty"`
	Target             string `json:"target"`
	// TargetKind says whether Target is a seller or the bundled reference
	// seller; "" in a report written before it was recorded.
	TargetKind TargetKind `json:"target_kind,omitempty"`
	// Face names the faces of the target this report covers when a run
	// spans several reports ("MCP + A2A 1.0", "A2A 0.3": the bundled
	// reference seller's two passes); "" otherwise.
	Face        string    `json:"face,omitempty"`
	StartedAt   time.Time `json:"started_at"`
	DurationMS  float64   `json:"duration_ms"`
	Strict      bool      `json:"strict"`
	Verdict     Verdict   `json:"verdict"`
	Counts      Counts    `json:"counts"`
	LabelFilter string    `json:"label_filter,omitempty"`
	// HarnessError is a failure that stopped the run before or while
	// probing (the target unreachable, the run deadline hit).
	HarnessError string `json:"harness_error,omitempty"`
	// Notes are what a user should know to read the run: probes the seller
	// refused for their arguments, for example.
	Notes []string `json:"notes,omitempty"`

	// Fuzz is a fuzz run's account (adcp-conform fuzz); nil for a run.
	Fuzz *Fuzz `json:"fuzz,omitempty"`
	// AllowedDomains and Transports are the judge options of the run, kept
	// so `adcp-conform judge` can judge the evidence again the same way.
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	Transports     []string `json:"transports,omitempty"`
	// SchemasRelease is the release of the schemas the run validated
	// against (--schemas), "" when none.
	SchemasRelease string `json:"schemas_release,omitempty"`
	// StoryboardsRelease is the compliance release whose storyboards the
	// run ran (--storyboards), "" when none; StoryboardIDs are the ones
	// --storyboard named. Kept so `adcp-conform judge` grades the same
	// storyboards again.
	StoryboardsRelease string   `json:"storyboards_release,omitempty"`
	StoryboardIDs      []string `json:"storyboard_ids,omitempty"`
	// Release is the AdCP release whose storyboards and schemas the run
	// used and what chose it; nil when it used neither.
	Release *Release `json:"release,omitempty"`
	// Sandbox is set when the run targeted a sandbox (--sandbox): the
	// controller-driven storyboards ran, and baseline entries scoped to
	// sandbox runs apply.
	Sandbox bool `json:"sandbox,omitempty"`
	// Certify is set on a certification run (--certify): every rule, no
	// label filter, no baseline.
	Certify bool `json:"certify,omitempty"`
	// Publishable says whether a registry may publish the result: only a
	// certification run over HTTPS, with every MUST rule judged, is.
	// PublishableReason says why not.
	Publishable       bool   `json:"publishable"`
	PublishableReason string `json:"publishable_reason,omitempty"`
	// Baseline are the expected failures the run was given (--baseline).
	Baseline []BaselineEntry `json:"baseline,omitempty"`
	// JudgedOffline is set when `adcp-conform judge` produced this report
	// from recorded evidence, without contacting the seller.
	JudgedOffline bool `json:"judged_offline,omitempty"`

	Rules []RuleResult `json:"rules"`
	// Storyboards are the spec's compliance storyboards the run ran (or
	// skipped), in the runner's order; their steps are in Steps.
	Storyboards []StoryboardResult `json:"storyboards,omitempty"`
	Steps       []Step             `json:"steps"`
	RunSummary  RunSummary         `json:"run_summary"`
	// Integrity holds the SHA-256 of every piece of evidence; results.json
	// is signed over it (see package report/certify).
	Integrity *Integrity `json:"integrity,omitempty"`
}

// Reference reports whether the run tested the bundled reference seller
// rather than a seller.
func (r *Run) Reference() bool { return r.TargetKind == TargetBundledReference }

// ReferenceLabel is how every report names a run against the bundled
// reference seller, beside its verdict.
const ReferenceLabel = "bundled reference seller, not a seller under test"

// StoryboardID names the project's own storyboard in the steps and in
// run_summary.
const StoryboardID = "adcp_conform"

// SkipReasons is the runner output contract's fixed skip_result.reason
// vocabulary.
var SkipReasons = []string{"not_applicable", "no_phases", "prerequisite_failed", "missing_tool",
	"missing_test_controller", "unsatisfied_contract", "peer_branch_taken", "peer_substituted", "requirement_unmet"}

// NotSelectedReason is the contract's selection_result reason for a rule a
// label filter left out.
const NotSelectedReason = "explicit_scope_excluded"

// RunSummary is the contract's run_summary over the steps, plus the
// rules the label filter left out as not-selected items.
type RunSummary struct {
	TotalSteps              int         `json:"total_steps"`
	StepsPassed             int         `json:"steps_passed"`
	StepsFailed             int         `json:"steps_failed"`
	StepsSkipped            int         `json:"steps_skipped"`
	StepsNotSelected        int         `json:"steps_not_selected"`
	Tracks                  []Track     `json:"tracks"`
	SchemasUsed             []SchemaRef `json:"schemas_used"`
	RunnerCapabilityVersion string      `json:"runner_capability_version"`
	// NotSelected are the judges (rule × transport) the label filter left
	// out.
	NotSelected         []NotSelected  `json:"not_selected,omitempty"`
	NotSelectedByReason map[string]int `json:"not_selected_by_reason,omitempty"`
	SkippedByReason     map[string]int `json:"skipped_by_reason"`
	// ValidationsNotApplicable counts the validations graded not
	// applicable (a check kind the runner does not implement);
	// ValidationsAdvisoryFailed the failed advisory validations, which
	// fail no step. The rules' own validations are never either; a
	// storyboard's may be.
	ValidationsNotApplicable  int `json:"validations_not_applicable"`
	ValidationsAdvisoryFailed int `json:"validations_advisory_failed"`
	// ExpectedFailures and StaleBaseline count the rules and storyboards
	// the baseline matched.
	ExpectedFailures int `json:"expected_failures"`
	StaleBaseline    int `json:"stale_baseline"`
}

// Track is one rule family's status, or one storyboard category's: the
// fold of its rules' (storyboards') outcomes (failed, error, passed,
// skipped, not_selected) and the count per outcome.
type Track struct {
	Track  string `json:"track"`
	Status string `json:"status"`
	Counts Counts `json:"counts"`
}

// SchemaRef names a JSON Schema the run applied.
type SchemaRef struct {
	SchemaID  string `json:"schema_id"`
	SchemaURL string `json:"schema_url"`
}

// NotSelected is a judge left out before it ran, with the contract's
// selection_result reason and detail.
type NotSelected struct {
	StoryboardID string `json:"storyboard_id"`
	PhaseID      string `json:"phase_id"`
	StepID       string `json:"step_id"`
	Reason       string `json:"reason"`
	Detail       string `json:"detail"`
}

// Integrity is the SHA-256 (lower-case hex) of every piece of evidence a
// report folder holds: each file written beside results.json, and each
// recorded call of evidence.json over its bytes in the file.
type Integrity struct {
	Algorithm string     `json:"algorithm"`
	Files     []FileHash `json:"files"`
	Calls     []CallHash `json:"calls"`
}

// FileHash is the hash of one file of the report folder.
type FileHash struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// CallHash is the hash of one recorded call: its index in evidence.json's
// calls, its probe ID, and the SHA-256 of its bytes in evidence.json, from
// its opening brace to its closing one (report/certify's HashCalls).
type CallHash struct {
	Index   int    `json:"index"`
	ProbeID string `json:"probe_id"`
	SHA256  string `json:"sha256"`
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

// Settle computes every rule's outcome from its specs, marks the rules the
// baseline lists, then computes the counts, the verdict and the run
// summary. A run is settled once, when every part of it is in: the specs,
// the storyboards and steps, what the run's diagnosis changed and the
// baseline (the CLI's finish does it, before any writer). It is idempotent:
// settling again gives the same model.
func (r *Run) Settle() {
	r.Counts = Counts{}
	baseline := map[string]string{}
	steps := map[string][]BaselineEntry{}
	for _, e := range r.Baseline {
		switch {
		case !e.AppliesTo(r.StoryboardsRelease, r.Sandbox):
		case e.Step != "":
			steps[e.Rule] = append(steps[e.Rule], e)
		default:
			baseline[e.Rule] = e.Reason
		}
	}
	for i := range r.Rules {
		rule := &r.Rules[i]
		rule.Outcome, rule.Message = Aggregate(rule.Specs)
		if rule.Message == NotImplemented && !r.appliesTo(*rule) {
			rule.Message = NotApplicable(rule.Transports)
		}
		rule.Baseline = nil
		if reason, ok := baseline[rule.ID]; ok {
			status := Unjudged
			switch rule.Outcome {
			case Failed:
				status = ExpectedFailure
			case Passed:
				status = Stale
			}
			rule.Baseline = &BaselineMark{Status: status, Reason: reason}
		}
		r.Counts[rule.Outcome]++
	}
	r.settleStoryboards(baseline, steps)
	r.Verdict = r.verdict()
	r.RunSummary = r.summary()
}

// settleStoryboards counts each storyboard's steps, folds them into its
// outcome and marks the storyboards the baseline lists, whole or step by
// step.
func (r *Run) settleStoryboards(baseline map[string]string, steps map[string][]BaselineEntry) {
	index := map[string]int{}
	for i := range r.Storyboards {
		r.Storyboards[i].Counts = Counts{}
		index[r.Storyboards[i].ID] = i
	}
	folds := make([]Counts, len(r.Storyboards))
	for _, st := range r.Steps {
		if i, ok := index[st.StoryboardID]; ok {
			o := st.Outcome()
			r.Storyboards[i].Counts[o]++
			if folds[i] == nil {
				folds[i] = Counts{}
			}
			if st.Optional && (o == Failed || o == Error) {
				o = Skipped // an optional phase's failure fails no storyboard
			}
			folds[i][o]++
		}
	}
	for i := range r.Storyboards {
		sb := &r.Storyboards[i]
		switch {
		case sb.NotSelected != nil:
			sb.Outcome = Disabled
		case sb.Skip != nil:
			sb.Outcome = Skipped
		case len(sb.Counts) > 0:
			sb.Outcome = Skipped
			for _, o := range []Outcome{Passed, Error, Failed} { // the last present wins
				if folds[i][o] > 0 {
					sb.Outcome = o
				}
			}
		case sb.Outcome == "":
			sb.Outcome = Skipped
		}
		if sb.Error != "" && (sb.Outcome == Passed || sb.Outcome == Skipped) && sb.Skip == nil {
			sb.Outcome = Error
		}
		sb.Baseline = nil
		if reason, ok := baseline[sb.BaselineKey()]; ok {
			status := Unjudged
			switch sb.Outcome {
			case Failed:
				status = ExpectedFailure
			case Passed:
				status = Stale
			}
			sb.Baseline = &BaselineMark{Status: status, Reason: reason}
		} else if es := steps[sb.BaselineKey()]; len(es) > 0 && (sb.Outcome == Failed || sb.Outcome == Passed) {
			sb.Baseline = r.stepMarks(r.StoryboardSteps(sb.ID), es)
		}
	}
}

// stepMarks marks a storyboard's listed steps and sums them up: unexpected
// when it fails on a step no entry expects, else stale when a listed step
// passes, else expected_failure when a listed step fails as listed, else
// unjudged.
func (r *Run) stepMarks(steps []Step, entries []BaselineEntry) *BaselineMark {
	m := &BaselineMark{Status: Unjudged}
	expected := map[string]bool{}
	var reasons []string
	for _, e := range entries {
		sm := StepBaselineMark{Step: e.Step, Status: Unjudged, Reason: e.Reason, Checks: e.Checks}
		i := slices.IndexFunc(steps, func(st Step) bool { return st.PhaseID+"/"+st.StepID == e.Step })
		if i >= 0 && steps[i].Skip == nil && steps[i].Outcome() != Error {
			sm.Failed = StepFailures(steps[i])
			switch {
			case len(sm.Failed) == 0:
				sm.Status = Stale
			case len(e.Checks) == 0 || !slices.ContainsFunc(sm.Failed, func(c string) bool { return !slices.Contains(e.Checks, c) }):
				sm.Status = ExpectedFailure
				expected[e.Step] = true
			default:
				sm.Status = Unexpected
			}
		}
		m.Steps = append(m.Steps, sm)
		if !slices.Contains(reasons, e.Reason) {
			reasons = append(reasons, e.Reason)
		}
	}
	m.Reason = strings.Join(reasons, "; ")
	has := func(status string) bool {
		return slices.ContainsFunc(m.Steps, func(sm StepBaselineMark) bool { return sm.Status == status })
	}
	unexpected := slices.ContainsFunc(steps, func(st Step) bool {
		return st.Outcome() == Failed && !st.Optional && !expected[st.PhaseID+"/"+st.StepID]
	})
	switch {
	case unexpected:
		m.Status = Unexpected
	case has(Stale):
		m.Status = Stale
	case has(ExpectedFailure):
		m.Status = ExpectedFailure
	}
	return m
}

// StepMark is the baseline's mark of one step of the storyboard, nil when
// its baseline lists no such step.
func (s StoryboardResult) StepMark(phaseID, stepID string) *StepBaselineMark {
	if s.Baseline == nil {
		return nil
	}
	for i := range s.Baseline.Steps {
		if s.Baseline.Steps[i].Step == phaseID+"/"+stepID {
			return &s.Baseline.Steps[i]
		}
	}
	return nil
}

// NotApplicable is the skip reason of a rule whose transports the run did
// not test: "not applicable (A2A only)".
func NotApplicable(transports []string) string {
	return "not applicable (" + strings.ToUpper(strings.Join(transports, ", ")) + " only)"
}

// Tested reports whether the run tested transport t (every transport when
// the run does not say).
func (r *Run) Tested(t string) bool {
	return len(r.Transports) == 0 || slices.Contains(r.Transports, t)
}

// appliesTo reports whether the run tested one of the rule's transports.
func (r *Run) appliesTo(rule RuleResult) bool {
	if len(rule.Transports) == 0 {
		return true
	}
	for _, t := range rule.Transports {
		if r.Tested(t) {
			return true
		}
	}
	return false
}

func (r *Run) verdict() Verdict {
	judged, harness, stale := false, false, false
	for _, rule := range r.Rules {
		binding := rule.Level == Must || r.Strict
		if rule.Baseline != nil && rule.Baseline.Status == Stale {
			stale = true
		}
		switch rule.Outcome {
		case Failed:
			if binding && rule.Failing() {
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
	// Storyboard steps are MUST-level; a skipped storyboard judges
	// nothing.
	for _, sb := range r.Storyboards {
		if sb.Baseline != nil && sb.Baseline.Status == Stale {
			stale = true
		}
		switch sb.Outcome {
		case Failed:
			if sb.Failing() {
				return NonConformant
			}
			judged = true
		case Passed:
			judged = true
		case Error:
			harness = true
		}
	}
	switch {
	case harness || r.HarnessError != "":
		return HarnessError
	case stale:
		return StaleBaseline
	case !judged:
		return Incomplete
	}
	return Conformant
}

// summary computes the contract's run_summary from the steps and rules.
func (r *Run) summary() RunSummary {
	s := RunSummary{Tracks: []Track{}, SchemasUsed: []SchemaRef{}, SkippedByReason: map[string]int{},
		RunnerCapabilityVersion: r.AdcpRelease}
	if s.RunnerCapabilityVersion == "" {
		s.RunnerCapabilityVersion = "0.0.0"
	}
	schemas := map[SchemaRef]bool{}
	for _, st := range r.Steps {
		s.TotalSteps++
		switch {
		case st.Skip != nil:
			s.StepsSkipped++
			s.SkippedByReason[st.Skip.Reason]++
		case st.Passed:
			s.StepsPassed++
		default:
			s.StepsFailed++
		}
		for _, v := range st.Validations {
			if v.SchemaID != nil && v.SchemaURL != nil {
				schemas[SchemaRef{*v.SchemaID, *v.SchemaURL}] = true
			}
			if v.NotApplicable {
				s.ValidationsNotApplicable++
			}
			if !v.Passed && v.Severity == Advisory {
				s.ValidationsAdvisoryFailed++
			}
		}
	}
	for ref := range schemas {
		s.SchemasUsed = append(s.SchemasUsed, ref)
	}
	sort.Slice(s.SchemasUsed, func(i, j int) bool { return s.SchemasUsed[i].SchemaID < s.SchemasUsed[j].SchemaID })
	var families []string
	tracks := map[string]Counts{}
	for _, rule := range r.Rules {
		if tracks[rule.Family] == nil {
			tracks[rule.Family] = Counts{}
			families = append(families, rule.Family)
		}
		tracks[rule.Family][rule.Outcome]++
		if rule.Baseline != nil {
			switch rule.Baseline.Status {
			case ExpectedFailure:
				s.ExpectedFailures++
			case Stale:
				s.StaleBaseline++
			}
		}
		for _, sp := range rule.Specs {
			if sp.Outcome == Disabled {
				s.NotSelected = append(s.NotSelected, NotSelected{StoryboardID: StoryboardID, PhaseID: sp.Transport,
					StepID: rule.ID + "/" + sp.Transport, Reason: NotSelectedReason, Detail: sp.Message})
			}
		}
	}
	for _, sb := range r.Storyboards {
		if sb.NotSelected != nil {
			s.NotSelected = append(s.NotSelected, NotSelected{StoryboardID: sb.ID, Reason: sb.NotSelected.Reason, Detail: sb.NotSelected.Detail})
		}
	}
	for _, sb := range r.Storyboards {
		if tracks[sb.Category] == nil {
			tracks[sb.Category] = Counts{}
			families = append(families, sb.Category)
		}
		tracks[sb.Category][sb.Outcome]++
		if sb.Baseline == nil {
			continue
		}
		statuses := []string{sb.Baseline.Status}
		if len(sb.Baseline.Steps) > 0 { // listed step by step: each counts
			statuses = nil
			for _, sm := range sb.Baseline.Steps {
				statuses = append(statuses, sm.Status)
			}
		}
		for _, status := range statuses {
			switch status {
			case ExpectedFailure:
				s.ExpectedFailures++
			case Stale:
				s.StaleBaseline++
			}
		}
	}
	for _, f := range families {
		status := "not_selected"
		for _, o := range []Outcome{Failed, Error, Passed, Skipped} {
			if tracks[f][o] > 0 {
				status = string(o)
				break
			}
		}
		s.Tracks = append(s.Tracks, Track{Track: f, Status: status, Counts: tracks[f]})
	}
	if s.StepsNotSelected = len(s.NotSelected); s.StepsNotSelected > 0 {
		s.NotSelectedByReason = map[string]int{NotSelectedReason: s.StepsNotSelected}
	}
	return s
}

// ExitCode is the process exit code the verdict implies: 0 conformant, 1
// non-conformant or a stale baseline, 3 harness error or nothing judged.
// (2, a usage error, is the command line's.)
func (r *Run) ExitCode() int {
	switch r.Verdict {
	case Conformant:
		return 0
	case NonConformant, StaleBaseline:
		return 1
	}
	return 3
}

// Fuzz is a fuzz run's account: its seed and budget, what each tool's
// turns came to, the ids it drew from, and each failed turn's shrunk
// reproduction. The verdicts are the FUZZ rules', judged from the evidence.
type Fuzz struct {
	Seed         uint64 `json:"seed"`
	TurnsPerTool int    `json:"turns_per_tool"`
	// CrossTenant: the run had a second tenant's credential (FUZZ-05).
	CrossTenant   bool                `json:"cross_tenant,omitempty"`
	Tools         []FuzzTool          `json:"tools"`
	Pools         map[string][]string `json:"pools,omitempty"`
	Notes         []string            `json:"notes,omitempty"`
	Reproductions []FuzzRepro         `json:"reproductions,omitempty"`
}

// FuzzTool is what one tool's turns came to under the two-path oracle.
type FuzzTool struct {
	Tool     string `json:"tool"`
	Tier     string `json:"tier,omitempty"`
	Turns    int    `json:"turns"`
	Accepted int    `json:"accepted"`
	Rejected int    `json:"rejected"`
	Failed   int    `json:"failed"`
	Unjudged int    `json:"unjudged,omitempty"`
	Shrinks  int    `json:"shrink_calls,omitempty"`
	// Skipped says why the tool was not fuzzed.
	Skipped string `json:"skipped,omitempty"`
}

// FuzzRepro is one failed turn's minimal reproduction.
type FuzzRepro struct {
	Rule string `json:"rule"`
	Tool string `json:"tool"`
	// Turn is the failed turn's probe ID, Call the probe ID of the
	// smallest request that still failed the same way (the turn's own
	// when no smaller one did).
	Turn string `json:"turn"`
	Call string `json:"call"`
	// What is the oracle's finding on the smallest request.
	What string `json:"what,omitempty"`
	// Arguments are the smallest request's arguments (redacted).
	Arguments string `json:"arguments"`
	// TurnBytes and Bytes are the sizes of the turn's arguments and of
	// the smallest; ShrinkCalls the calls the shrink made.
	TurnBytes   int `json:"turn_bytes"`
	Bytes       int `json:"bytes"`
	ShrinkCalls int `json:"shrink_calls"`
	// Shell is a ready-to-paste reproduction: curl sends the request
	// (after MCP's initialize), adcp-conform extract reads the reply.
	Shell string `json:"shell"`
}
