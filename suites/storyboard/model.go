package storyboard

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
)

// Observation is what one dispatched step saw, read from the raw bytes of
// its recorded call by the project's extractors. The checks read only
// this (and Facts): they do no I/O.
type Observation struct {
	// Call is the recorded call: raw, redacted exchanges; it is also in the
	// run's evidence store under Call.ProbeID.
	Call evidence.Call
	// Transport is "mcp", "a2a" or "http" (a plain HTTP GET such as
	// protected-resource metadata).
	Transport string
	// Task is the AdCP task invoked (or the HTTP pseudo-task's name).
	Task string
	// Request is the resolved request payload the step sent (redacted).
	Request map[string]any
	// Payload is the extracted task result (MCP structuredContent or text
	// fallback, A2A DataPart data; for "http" the JSON body), decoded; nil
	// when the reply held none.
	Payload any
	// PayloadRaw is Payload's raw bytes (nil when none).
	PayloadRaw json.RawMessage
	// Error is the extracted AdCP error object (adcp_error from any layer
	// of the client detection order, else errors[0] of the payload),
	// decoded; nil when the reply is no error.
	Error map[string]any
	// ErrorCode is Error's code ("" when none).
	ErrorCode string
	// IsError says the reply was an error by its transport's discipline
	// (MCP isError, A2A failed/rejected state, JSON-RPC error).
	IsError bool
	// Refused says the agent refused the call: an error by its transport's
	// discipline or an adcp_error at any layer (an errors[] array of a
	// success-shaped payload alone is not a refusal).
	Refused bool
	// ExtractionPath is the path the extractor took ("structured_content",
	// "text_fallback", "artifact", "status_message", "jsonrpc_error",
	// "none", or "http_body").
	ExtractionPath string
	// A2AState is the normalized A2A task state, "" over MCP.
	A2AState string
	// A2AResult is the raw JSON-RPC result (the A2A Task or Message), for
	// the a2a_* checks; nil over MCP.
	A2AResult json.RawMessage
	// HTTPStatus and Header are those of the exchange that answered.
	HTTPStatus int
	Header     http.Header
	// Failure is set when the call proves nothing about the seller: the
	// network or the harness failed, or the call never reached the
	// application (evidence.Call.Unreached). The step is then an error,
	// never a failure.
	Failure string

	// hadPayload is set by StoryboardResult.Slim when it dropped Payload.
	hadPayload bool
}

// Facts are what a check reads besides its own validation: the step's
// observation and request, the run's accumulated context, earlier steps.
type Facts struct {
	// Obs is the step's observation; nil for a runner-owned step that
	// sent nothing (assert_contribution).
	Obs *Observation
	// Dispatches are the observations of a multi-dispatch step
	// (parallel_dispatch, rate_limit_trip), in order; nil otherwise. For
	// parallel_dispatch they are the resolved responses (after the
	// IDEMPOTENCY_IN_FLIGHT retries). For rate_limit_trip they are the
	// burst attempts up to and including the first RATE_LIMITED one, then
	// the replay of that key as the last element when one was sent.
	Dispatches []*Observation
	// Context is the storyboard's context accumulator.
	Context map[string]any
	// Prior are the earlier steps' observations of this storyboard run, in
	// order (for refs_resolve and canonical_format_satisfaction).
	Prior []*Observation
	// Contributions are the branch-set flags contributed so far.
	Contributions map[string]string // flag → "phase.step" that contributed it
	// Schemas validate response_schema; nil when the run has none (the
	// check is then not applicable, with the reason).
	Schemas *schemas.Set
	// SchemaRef is the step's response_schema_ref ("" when none).
	SchemaRef string
	// AgentURL is the URL of the agent under test ($agent_url).
	AgentURL string
	// ExpectError is the step's expect_error.
	ExpectError bool

	// Step is the step being graded, for the checks that read its declared
	// contract and parameter blocks (the cross-response kinds are gated on
	// requires_contract plus parallel_dispatch / rate_limit_trip); nil
	// when the engine does not supply it (those checks then gate on
	// Dispatches alone).
	Step *Step
	// Upstream is the comply_test_controller query_upstream_traffic reply
	// the engine fetched after the step for its upstream_traffic
	// validations (Payload is the controller result); nil when no query
	// was made (no test controller, or it does not advertise the
	// scenario): upstream_traffic then grades not_applicable. The query's
	// since_timestamp must open the earliest window any of the step's
	// upstream_traffic validations needs (its `since` step, else this
	// step's request, less the clock-skew tolerance); each validation
	// narrows to its own window by the calls' timestamps.
	Upstream *Observation
	// A2AContextSent is the contextId the runner put in
	// params.message.contextId of this step's A2A send ("" when it sent
	// none: the first A2A step, or not A2A), for a2a_context_continuity.
	A2AContextSent string
	// OAuthGraph are the GET responses of the OAuth discovery graph, by
	// URL, for oauth_metadata_graph: the engine fills it by calling
	// OAuthGraphFetches and fetching what it returns until it returns
	// none (the protected-resource document included); nil when it did
	// not walk the graph (the check then grades the step's own RFC 9728
	// document only).
	OAuthGraph *OAuthGraph
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

// Request is one call a step asks the dispatcher to make.
type Request struct {
	// ProbeID names the call in the evidence store:
	// "storyboard/<storyboard>/<phase>/<step>".
	ProbeID string
	// Storyboard is the storyboard's id: each storyboard run is one
	// buyer's conversation (one MCP session, one A2A context).
	Storyboard string
	// Task is the AdCP task (MCP tool, A2A skill).
	Task string
	// Args is the resolved request payload.
	Args map[string]any
	// Auth overrides the run's credentials for this call; nil keeps them.
	Auth *Auth
	// TestKit is the storyboard's test kit (credentials for
	// auth.from_test_kit), nil when none.
	TestKit map[string]any
	// Agent is the logical agent the step routes to (its `agent:` key,
	// see Route); "" is the agent under test.
	Agent string
	// Live says the step authenticates as the test kit's live-mode
	// principal (sandbox: false): the dispatcher sends it with the run's
	// live-mode credential (Env.LiveCredential) instead of its own.
	Live bool
}

// Dispatcher makes a storyboard's calls through the project's raw-byte
// clients and records them; every call lands in the evidence store.
type Dispatcher interface {
	// Call sends one AdCP task and returns what came back.
	Call(ctx context.Context, req Request) *Observation
	// Get fetches a well-known HTTP document of the agent (the security
	// storyboard's protected_resource_metadata and
	// oauth_auth_server_metadata); path is absolute ("/.well-known/…") or
	// a full URL taken from an earlier reply.
	Get(ctx context.Context, probeID, path string) *Observation
}
