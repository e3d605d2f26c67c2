package spec

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Storyboard is one storyboard file: a narrative test workflow of phases
// and steps (universal/storyboard-schema.yaml, "Schema definition").
// Free-form payloads (sample requests, fixtures, filters) stay untyped.
type Storyboard struct {
	ID                      string                `yaml:"id"`
	Version                 string                `yaml:"version"`
	Title                   string                `yaml:"title"`
	Protocol                string                `yaml:"protocol"`
	Category                string                `yaml:"category"`
	Summary                 string                `yaml:"summary"`
	Status                  string                `yaml:"status"`
	Track                   string                `yaml:"track"`
	IntroducedIn            string                `yaml:"introduced_in"`
	PlatformTypes           []string              `yaml:"platform_types"`
	RequiredTools           []string              `yaml:"required_tools"`
	RequiredAnyOfTools      []ToolFamily          `yaml:"required_any_of_tools"`
	Requires                []string              `yaml:"requires"`
	RequiresCapability      *CapabilityPredicate  `yaml:"requires_capability"`
	RequiresAllCapabilities []CapabilityPredicate `yaml:"requires_all_capabilities"`
	RequiresScenarios       []string              `yaml:"requires_scenarios"`
	DefaultAgent            string                `yaml:"default_agent"`
	Invariants              []string              `yaml:"invariants"`
	Narrative               string                `yaml:"narrative"`
	Context                 map[string]any        `yaml:"context"`
	Agent                   *AgentInfo            `yaml:"agent"`
	Caller                  *Caller               `yaml:"caller"`
	Prerequisites           *Prerequisites        `yaml:"prerequisites"`
	Fixtures                map[string]any        `yaml:"fixtures"`
	FixtureResolution       map[string]any        `yaml:"fixture_resolution"`
	Grading                 map[string]any        `yaml:"grading"`
	References              any                   `yaml:"references"`
	Phases                  []Phase               `yaml:"phases"`

	// Kind is where the file sits: universal, protocols, specialisms or domains.
	Kind Category `yaml:"-"`
	// Path is the file, relative to the release folder, slash-separated.
	Path string `yaml:"-"`

	pos map[string]Position // YAML path ("phases[0].steps[1]") → position
}

// Group is the category a storyboard is reported under: "universal", its
// protocol ("media-buy") or "specialism/<name>".
func (sb *Storyboard) Group() string {
	parts := strings.Split(sb.Path, "/")
	switch {
	case sb.Kind == Universal || len(parts) < 2:
		return string(sb.Kind)
	case sb.Kind == Specialisms:
		return "specialism/" + parts[1]
	}
	return parts[1]
}

// ToolFamily is one AND-combined entry of required_any_of_tools: at least
// one of Tools must be advertised.
type ToolFamily struct {
	Tools     []string `yaml:"tools"`
	Rationale string   `yaml:"rationale"`
}

// CapabilityPredicate gates a storyboard, phase or step on the agent's
// get_adcp_capabilities reply. Exactly one matcher should be set.
type CapabilityPredicate struct {
	Path        string `yaml:"path"`
	Equals      any    `yaml:"equals"`
	Contains    any    `yaml:"contains"`
	NotContains any    `yaml:"not_contains"`
	Present     *bool  `yaml:"present"`
}

// AgentInfo describes the interaction model the storyboard targets.
type AgentInfo struct {
	InteractionModel string   `yaml:"interaction_model"`
	Capabilities     []string `yaml:"capabilities"`
	Examples         []string `yaml:"examples"`
}

// Caller says who initiates the calls.
type Caller struct {
	Role    string `yaml:"role"`
	Example string `yaml:"example"`
}

// Prerequisites names the test kit and seeding the storyboard needs.
type Prerequisites struct {
	Description       string `yaml:"description"`
	TestKit           string `yaml:"test_kit"`
	ControllerSeeding bool   `yaml:"controller_seeding"`
	Vectors           string `yaml:"vectors"`
}

// Phase is a group of steps with its own gating and cascade rules.
type Phase struct {
	ID                 string               `yaml:"id"`
	Title              string               `yaml:"title"`
	Narrative          string               `yaml:"narrative"`
	Comment            string               `yaml:"$comment"`
	Optional           bool                 `yaml:"optional"`
	SkipIf             string               `yaml:"skip_if"`
	BranchSet          *BranchSet           `yaml:"branch_set"`
	RequiresCapability *CapabilityPredicate `yaml:"requires_capability"`
	// DependsOn is nil when absent ("all prior phases") and empty for
	// `depends_on: []` ("no upstream dependencies").
	DependsOn []string `yaml:"depends_on"`
	Steps     []Step   `yaml:"steps"`
}

// BranchSet declares a phase a peer of an any_of branch set.
type BranchSet struct {
	ID        string `yaml:"id"`
	Semantics string `yaml:"semantics"`
}

// Step is one call (or runner-owned assertion task) in a phase.
type Step struct {
	ID                        string               `yaml:"id"`
	Title                     string               `yaml:"title"`
	Narrative                 string               `yaml:"narrative"`
	Task                      string               `yaml:"task"`
	TaskDefault               string               `yaml:"task_default"`
	Agent                     string               `yaml:"agent"`
	SchemaRef                 string               `yaml:"schema_ref"`
	ResponseSchemaRef         string               `yaml:"response_schema_ref"`
	DocRef                    string               `yaml:"doc_ref"`
	ComplyScenario            string               `yaml:"comply_scenario"`
	Expected                  string               `yaml:"expected"`
	Stateful                  bool                 `yaml:"stateful"`
	RequiresTool              string               `yaml:"requires_tool"`
	RequiresContract          string               `yaml:"requires_contract"`
	RequiresCapability        *CapabilityPredicate `yaml:"requires_capability"`
	Severity                  string               `yaml:"severity"`
	SampleRequest             any                  `yaml:"sample_request"`
	SampleResponse            any                  `yaml:"sample_response"`
	Auth                      *Auth                `yaml:"auth"`
	OmitIdempotencyKey        bool                 `yaml:"omit_idempotency_key"`
	ContributesTo             string               `yaml:"contributes_to"`
	Contributes               bool                 `yaml:"contributes"`
	ContributesIf             string               `yaml:"contributes_if"`
	ProvidesStateFor          StringList           `yaml:"provides_state_for"`
	ContextOutputs            []ContextOutput      `yaml:"context_outputs"`
	ContextInputs             []ContextInput       `yaml:"context_inputs"`
	Validations               []Validation         `yaml:"validations"`
	ExpectError               bool                 `yaml:"expect_error"`
	NegativePath              string               `yaml:"negative_path"`
	SampleRequestSkipSchema   bool                 `yaml:"sample_request_skip_schema"`
	ExpectedArm               string               `yaml:"expected_arm"`
	ReviewerChecks            []string             `yaml:"reviewer_checks"`
	VectorRef                 string               `yaml:"vector_ref"`
	SameEventAs               string               `yaml:"same_event_as"`
	ParallelDispatch          *ParallelDispatch    `yaml:"parallel_dispatch"`
	RateLimitTrip             *RateLimitTrip       `yaml:"rate_limit_trip"`
	TriggeredBy               string               `yaml:"triggered_by"`
	Filter                    map[string]any       `yaml:"filter"`
	TimeoutSeconds            *int                 `yaml:"timeout_seconds"`
	ExpectIdempotencyKey      *bool                `yaml:"expect_idempotency_key"`
	WebhookPayloadSchemaRef   string               `yaml:"webhook_payload_schema_ref"`
	ExpectMaxDeliveriesPerLog *int                 `yaml:"expect_max_deliveries_per_logical_event"`
	RetryTrigger              *RetryTrigger        `yaml:"retry_trigger"`
	ExpectMinDeliveries       *int                 `yaml:"expect_min_deliveries"`
	VerifySignatureEveryTime  *bool                `yaml:"verify_signature_on_every_delivery"`
	RequireTag                string               `yaml:"require_tag"`
	Source                    string               `yaml:"source"`
	SourcePath                string               `yaml:"source_path"`
	MacroTemplate             string               `yaml:"macro_template"`
	CatalogBindings           []CatalogBinding     `yaml:"catalog_bindings"`
	RequireEveryBinding       *bool                `yaml:"require_every_binding_observed"`
	// RequireAllBindings is require_every_binding_observed's deprecated
	// name (storyboard-schema.yaml), read when the new one is absent.
	RequireAllBindings *bool `yaml:"require_all_bindings_observed"`
}

// Auth overrides the transport credentials for one step: either the
// string "none" or an object.
type Auth struct {
	None          bool   `yaml:"-"`
	Type          string `yaml:"type"`
	FromTestKit   any    `yaml:"from_test_kit"` // true or a kit path
	ValueStrategy string `yaml:"value_strategy"`
	Value         any    `yaml:"value"` // disallowed; kept so lint can report it
}

// UnmarshalYAML accepts `auth: none` and the object form.
func (a *Auth) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value != "none" {
			return fmt.Errorf("line %d: auth must be \"none\" or an object, got %q", n.Line, n.Value)
		}
		*a = Auth{None: true}
		return nil
	}
	type plain Auth
	return n.Decode((*plain)(a))
}

// StringList is a string or a list of strings.
type StringList []string

// UnmarshalYAML accepts a scalar or a sequence of scalars.
func (s *StringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = StringList{n.Value}
		return nil
	}
	var l []string
	if err := n.Decode(&l); err != nil {
		return err
	}
	*s = l
	return nil
}

// ContextOutput captures a response value (Path) or mints one (Generate)
// into the context accumulator under Name. The shipped files also spell
// Name as `key`.
type ContextOutput struct {
	Name     string `yaml:"name"`
	Key      string `yaml:"key"`
	Path     string `yaml:"path"`
	Generate string `yaml:"generate"`
}

// Variable is the context name the entry populates (`name`, else `key`).
func (c ContextOutput) Variable() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Key
}

// ContextInput injects a captured value into the built request.
type ContextInput struct {
	Key      string `yaml:"key"`
	InjectAt string `yaml:"inject_at"`
}

// ParallelDispatch fires Count simultaneous requests.
type ParallelDispatch struct {
	Count              int  `yaml:"count"`
	SameIdempotencyKey bool `yaml:"same_idempotency_key"`
	BarrierTimeoutMS   int  `yaml:"barrier_timeout_ms"`
}

// RateLimitTrip drives a burst until RATE_LIMITED.
type RateLimitTrip struct {
	TripTargetTask          string `yaml:"trip_target_task"`
	TripTargetSampleRequest any    `yaml:"trip_target_sample_request"`
	MaxAttempts             int    `yaml:"max_attempts"`
	ReplayMaxWaitSeconds    int    `yaml:"replay_max_wait_seconds"`
}

// RetryTrigger makes the webhook receiver fail the first Count deliveries.
type RetryTrigger struct {
	Count      int `yaml:"count"`
	HTTPStatus int `yaml:"http_status"`
}

// CatalogBinding binds a macro to a catalog item for expect_substitution_safe.
type CatalogBinding struct {
	Macro           string `yaml:"macro"`
	CatalogItemID   string `yaml:"catalog_item_id"`
	VectorName      string `yaml:"vector_name"`
	RawValue        string `yaml:"raw_value"`
	ExpectedEncoded string `yaml:"expected_encoded"`
}

// Validation is one check on a step's result (storyboard-schema.yaml,
// "Validation").
type Validation struct {
	ID                      string             `yaml:"id"`
	Check                   string             `yaml:"check"`
	Description             string             `yaml:"description"`
	Severity                string             `yaml:"severity"`
	ExpiresAfterVersion     string             `yaml:"expires_after_version"`
	PermanentAdvisory       *PermanentAdvisory `yaml:"permanent_advisory"`
	Path                    *string            `yaml:"path"` // "" captures the whole body
	Pattern                 string             `yaml:"pattern"`
	Value                   any                `yaml:"value"`
	Min                     *int               `yaml:"min"`
	Max                     *int               `yaml:"max"`
	AllowedValues           []any              `yaml:"allowed_values"`
	ContextKey              string             `yaml:"context_key"`
	Source                  *RefSet            `yaml:"source"`
	Target                  *RefSet            `yaml:"target"`
	MatchKeys               []string           `yaml:"match_keys"`
	Scope                   *RefScope          `yaml:"scope"`
	OnOutOfScope            string             `yaml:"on_out_of_scope"`
	MinCount                *int               `yaml:"min_count"`
	EndpointPattern         string             `yaml:"endpoint_pattern"`
	PayloadMustContain      []MatchSpec        `yaml:"payload_must_contain"`
	IdentifierPaths         []string           `yaml:"identifier_paths"`
	PurposeFilter           []string           `yaml:"purpose_filter"`
	Since                   string             `yaml:"since"`
	AttestationModeRequired string             `yaml:"attestation_mode_required"`

	// set reports which keys were written, so absent and zero differ.
	set map[string]bool
}

// Has reports whether key was written on the validation.
func (v Validation) Has(key string) bool { return v.set[key] }

// PermanentAdvisory marks an advisory that is never promoted.
type PermanentAdvisory struct {
	Reason string `yaml:"reason"`
}

// RefSet is one side of a refs_resolve check.
type RefSet struct {
	From string `yaml:"from"`
	Path string `yaml:"path"`
}

// RefScope restricts refs_resolve to in-scope refs.
type RefScope struct {
	Key    string `yaml:"key"`
	Equals string `yaml:"equals"`
}

// MatchSpec is one payload_must_contain entry of upstream_traffic.
type MatchSpec struct {
	Path          string `yaml:"path"`
	Match         string `yaml:"match"`
	Value         any    `yaml:"value"`
	AllowedValues []any  `yaml:"allowed_values"`
}
