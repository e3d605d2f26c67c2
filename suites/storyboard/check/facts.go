package check

import (
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Facts are what a check reads besides its own validation: the step's
// observation and request, the run's accumulated context, earlier steps.
type Facts struct {
	// Obs is the step's observation; nil for a runner-owned step that
	// sent nothing (assert_contribution).
	Obs *spec.Observation
	// Dispatches are the observations of a multi-dispatch step
	// (parallel_dispatch, rate_limit_trip), in order; nil otherwise. For
	// parallel_dispatch they are the resolved responses (after the
	// IDEMPOTENCY_IN_FLIGHT retries). For rate_limit_trip they are the
	// burst attempts up to and including the first RATE_LIMITED one, then
	// the replay of that key as the last element when one was sent.
	Dispatches []*spec.Observation
	// Context is the storyboard's context accumulator.
	Context map[string]any
	// Prior are the earlier steps' observations of this storyboard run, in
	// order (for refs_resolve and canonical_format_satisfaction).
	Prior []*spec.Observation
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
	Step *spec.Step
	// Upstream is the comply_test_controller query_upstream_traffic reply
	// the engine fetched after the step for its upstream_traffic
	// validations (Payload is the controller result); nil when no query
	// was made (no test controller, or it does not advertise the
	// scenario): upstream_traffic then grades not_applicable. The query's
	// since_timestamp must open the earliest window any of the step's
	// upstream_traffic validations needs (its `since` step, else this
	// step's request, less the clock-skew tolerance); each validation
	// narrows to its own window by the calls' timestamps.
	Upstream *spec.Observation
	// A2AContextSent is the contextId the runner put in
	// params.message.contextId of this step's A2A send ("" when it sent
	// none: the first A2A step, or not A2A), for a2a_context_continuity.
	A2AContextSent string
	// OAuthGraph are the GET responses of the OAuth discovery graph, by
	// URL, for oauth_metadata_graph: the engine fills it with oauth.Walk
	// (the protected-resource document included); nil when it did
	// not walk the graph (the check then grades the step's own RFC 9728
	// document only).
	OAuthGraph *oauth.Graph
}
