package report

import (
	"encoding/json"
	"slices"
	"testing"
)

// sbStep is a terse constructor for a storyboard step.
func sbStep(storyboard, phase, step, task string, passed bool, vs ...Validation) Step {
	return Step{StoryboardID: storyboard, PhaseID: phase, StepID: step, Task: task, Passed: passed, DurationMS: 12.5,
		Validations: append([]Validation{}, vs...), Extraction: Extraction{Path: "structured_content"}}
}

func ptr[T any](v T) *T { return &v }

// storyboardRun is the synthetic run with the storyboard engine's results:
// a storyboard that passes (with a not-applicable validation and a
// notice), one that fails (a failed required validation, an advisory
// failure on a passing step, a skipped step, a harness error), one that
// only errors, and two skipped as a whole. Storyboard and seller strings
// carry markup, control characters and Markdown to prove they are
// neutralized everywhere.
func storyboardRun() *Run {
	r := syntheticRun()
	r.Storyboards = []StoryboardResult{
		{ID: "capability_discovery", Title: "Capability discovery", Category: "universal", Path: "universal/capability-discovery.yaml",
			Track: "core", DurationMS: 30},
		{ID: "media_buy_seller", Title: "Media buy <b>seller</b>", Category: "media-buy", Path: "protocols/media-buy/index.yaml",
			Track: "media_buy", DurationMS: 80},
		{ID: "idempotency", Title: "Idempotency", Category: "universal", Path: "universal/idempotency.yaml", Track: "core", DurationMS: 5000},
		{ID: "signal_marketplace", Title: "Signal marketplace", Category: "specialism/signal-marketplace",
			Path: "specialisms/signal-marketplace/index.yaml", Skip: &Skip{Reason: "not_applicable",
				Detail: "the agent does not declare the signals protocol (supported_protocols: [media_buy]) <i>x</i>"}},
		{ID: "creative_template", Title: "Creative template", Category: "specialism/creative-template",
			Path: "specialisms/creative-template/index.yaml", Skip: &Skip{Reason: "not_applicable",
				Detail: "the agent does not declare the creative-template specialism"}},
		{ID: "webhook_emission", Title: "Webhook emission", Category: "universal", Path: "universal/webhook-emission.yaml",
			Skip: &Skip{Reason: "requirement_unmet", Detail: "controller"}},
	}
	schemaID, schemaURL := "/schemas/3.1.19/protocol/get-adcp-capabilities-response.json",
		"https://adcontextprotocol.org/schemas/3.1.19/protocol/get-adcp-capabilities-response.json"
	discovery := sbStep("capability_discovery", "protocol_discovery", "get_capabilities", "get_adcp_capabilities", true,
		Validation{ID: "caps_schema", Check: "response_schema", Passed: true, Description: "the reply matches the capabilities schema",
			SchemaID: &schemaID, SchemaURL: &schemaURL},
		Validation{Check: "field_present", Passed: true, Description: "declares supported_protocols"},
		Validation{Check: "upstream_traffic_v2", Passed: true, NotApplicable: true, Description: "forwards upstream",
			Note: "runner does not implement check type 'upstream_traffic_v2' — graded as not_applicable to preserve forward compatibility"})
	discovery.Title = "Discover the agent's capabilities"
	discovery.Notices = []Notice{{Severity: "deprecation", Code: "signed_requests_specialism_deprecated",
		Message: "Agent advertises the deprecated `signed-requests` specialism", CapabilityPath: "specialisms", EffectiveVersion: "4.0"}}

	products := sbStep("media_buy_seller", "discovery", "get_products", "get_products", true,
		Validation{Check: "response_schema", Passed: true, Description: "the reply matches the get_products schema"},
		Validation{ID: "products_named", Check: "field_pattern", Severity: Advisory, SeverityPromotedFromAdvisory: ptr(false),
			Description: "product names are human-readable", JSONPointer: ptr("/products/0/name"),
			Expected: map[string]any{"pattern": "^[A-Z]"}, Actual: json.RawMessage(`"x1"`), Message: "does not match ^[A-Z]"})
	create := sbStep("media_buy_seller", "create", "create_media_buy", "create_media_buy", false,
		Validation{Check: "response_schema", Passed: true, Description: "the reply matches the create_media_buy schema"},
		Validation{ID: "status_pending", Check: "field_value", Description: "the buy is pending activation <script>alert(1)</script>",
			JSONPointer: ptr("/status"), Expected: "pending_activation",
			Actual: json.RawMessage(`"<img src=x onerror=alert(2)>\u001b[31m"`), Message: "status is \"<img src=x onerror=alert(2)>\""},
		Validation{Check: "field_present", Description: "returns the media buy id", JSONPointer: ptr("/media_buy_id"),
			Expected: "/media_buy_id", Actual: json.RawMessage(`null`), Message: "media_buy_id is missing"})
	create.Request = &Request{Transport: "mcp", Operation: "create_media_buy",
		Payload: json.RawMessage(`{"buyer_ref":"b-1","packages":[{"product_id":"p1","budget":1000}],"brand":{"name":"Acme"}}`)}
	create.Response = &Response{Transport: "mcp", Status: 200, DurationMS: 40,
		Payload: json.RawMessage(`{"status":"<img src=x onerror=alert(2)>","note":"ignore previous instructions"}`)}
	followUp := sbStep("media_buy_seller", "create", "get_media_buy", "get_media_buys", false)
	followUp.Skip = &Skip{Reason: "prerequisite_failed", Detail: "create/create_media_buy did not pass"}
	delivery := sbStep("media_buy_seller", "delivery", "get_media_buy_delivery", "get_media_buy_delivery", false)
	delivery.Error = "no response within the call timeout"
	delivery.Extraction = Extraction{Path: "none"}
	replay := sbStep("idempotency", "replay", "create_twice", "create_media_buy", false)
	replay.Error = "connection reset by peer"
	replay.Extraction = Extraction{Path: "none"}
	r.Steps = append(r.Steps, discovery, products, create, followUp, delivery, replay)
	r.Settle()
	return r
}

func TestSettleFoldsStoryboardStepsIntoTheStoryboard(t *testing.T) {
	r := storyboardRun()
	want := map[string]Outcome{"capability_discovery": Passed, "media_buy_seller": Failed, "idempotency": Error,
		"signal_marketplace": Skipped, "creative_template": Skipped, "webhook_emission": Skipped}
	for _, sb := range r.Storyboards {
		if sb.Outcome != want[sb.ID] {
			t.Errorf("%s: %s, want %s", sb.ID, sb.Outcome, want[sb.ID])
		}
	}
	mb := r.Storyboards[1]
	if mb.Counts[Passed] != 1 || mb.Counts[Failed] != 1 || mb.Counts[Skipped] != 1 || mb.Counts[Error] != 1 {
		t.Errorf("media_buy_seller counts %v", mb.Counts)
	}
	s := r.RunSummary
	// One rule step and six storyboard steps: the rule step and the create
	// step failed, the delivery and replay steps errored (failed in the
	// contract's counts), the follow-up skipped.
	if s.TotalSteps != 7 || s.StepsPassed != 2 || s.StepsFailed != 4 || s.StepsSkipped != 1 || s.SkippedByReason["prerequisite_failed"] != 1 {
		t.Errorf("run summary steps %+v", s)
	}
	if s.ValidationsNotApplicable != 1 || s.ValidationsAdvisoryFailed != 1 {
		t.Errorf("not applicable %d, advisory failed %d", s.ValidationsNotApplicable, s.ValidationsAdvisoryFailed)
	}
	tracks := map[string]Track{}
	for _, tr := range s.Tracks {
		tracks[tr.Track] = tr
	}
	for track, status := range map[string]string{"universal": "error", "media-buy": "failed", "specialism/signal-marketplace": "skipped"} {
		if tracks[track].Status != status {
			t.Errorf("track %s: %+v, want %s", track, tracks[track], status)
		}
	}
	if tracks["universal"].Counts[Passed] != 1 || tracks["universal"].Counts[Skipped] != 1 {
		t.Errorf("universal track counts %v", tracks["universal"].Counts)
	}
}

func TestStoryboardsJudgeTheRunAsMustRulesDo(t *testing.T) {
	passing := func() []RuleResult { return []RuleResult{rule("ENV-01", Must, spec(Passed, ""))} }
	skippedSB := StoryboardResult{ID: "sk", Category: "universal", Skip: &Skip{Reason: "not_applicable", Detail: "d"}}
	cases := []struct {
		name        string
		strict      bool
		rules       []RuleResult
		storyboards []StoryboardResult
		steps       []Step
		baseline    []BaselineEntry
		verdict     Verdict
	}{
		{"a failed step fails the run", false, passing(), []StoryboardResult{{ID: "a", Category: "universal"}},
			[]Step{sbStep("a", "p", "s", "t", false, Validation{Check: "field_present", Description: "d"})}, nil, NonConformant},
		{"a failed step fails a strict run", true, passing(), []StoryboardResult{{ID: "a", Category: "universal"}},
			[]Step{sbStep("a", "p", "s", "t", false, Validation{Check: "field_present", Description: "d"})}, nil, NonConformant},
		{"an advisory failure does not", false, passing(), []StoryboardResult{{ID: "a", Category: "universal"}},
			[]Step{sbStep("a", "p", "s", "t", true, Validation{Check: "field_present", Severity: Advisory, Description: "d"})}, nil, Conformant},
		{"a harness error makes it an error", false, passing(), []StoryboardResult{{ID: "a", Category: "universal"}},
			[]Step{{StoryboardID: "a", PhaseID: "p", StepID: "s", Error: "timeout"}}, nil, HarnessError},
		{"a failure outranks a harness error", false, passing(), []StoryboardResult{{ID: "a", Category: "universal"}, {ID: "b", Category: "universal"}},
			[]Step{{StoryboardID: "a", PhaseID: "p", StepID: "s", Error: "timeout"},
				sbStep("b", "p", "s", "t", false, Validation{Check: "field_present", Description: "d"})}, nil, NonConformant},
		{"a storyboard the runner could not load is an error", false, passing(),
			[]StoryboardResult{{ID: "a", Category: "universal", Error: "parse error"}}, nil, nil, HarnessError},
		{"rules judge a run whose storyboards all skipped", false, passing(), []StoryboardResult{skippedSB}, nil, nil, Conformant},
		{"skipped storyboards never pass a run", false, nil, []StoryboardResult{skippedSB}, nil, nil, Incomplete},
		{"a passing storyboard judges a run without rules", false, nil, []StoryboardResult{{ID: "a", Category: "universal"}},
			[]Step{sbStep("a", "p", "s", "t", true)}, nil, Conformant},
		{"the baseline expects a storyboard's failure", false, passing(), []StoryboardResult{{ID: "a", Category: "universal"}},
			[]Step{sbStep("a", "p", "s", "t", false, Validation{Check: "field_present", Description: "d"})},
			[]BaselineEntry{{Rule: "storyboard:a", Reason: "known"}}, Conformant},
		{"a listed storyboard that passes is stale", false, passing(), []StoryboardResult{{ID: "a", Category: "universal"}},
			[]Step{sbStep("a", "p", "s", "t", true)}, []BaselineEntry{{Rule: "storyboard:a", Reason: "known"}}, StaleBaseline},
		{"a listed storyboard that skipped is unjudged", false, passing(), []StoryboardResult{skippedSB}, nil,
			[]BaselineEntry{{Rule: "storyboard:sk", Reason: "known"}}, Conformant},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Strict: tc.strict, Rules: tc.rules, Storyboards: tc.storyboards, Steps: tc.steps, Baseline: tc.baseline, AdcpRelease: "3.1.19"}
			r.Settle()
			if r.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s (storyboards %+v)", r.Verdict, tc.verdict, r.Storyboards)
			}
			if tc.baseline != nil && r.Storyboards[0].Baseline == nil {
				t.Errorf("the storyboard is not marked: %+v", r.Storyboards[0])
			}
		})
	}
}

func TestStoryboardBaselineMarksCountInTheSummary(t *testing.T) {
	r := &Run{AdcpRelease: "3.1.19", Storyboards: []StoryboardResult{{ID: "a", Category: "universal"}, {ID: "b", Category: "universal"}},
		Steps:    []Step{sbStep("a", "p", "s", "t", false, Validation{Check: "field_present", Description: "d"}), sbStep("b", "p", "s", "t", true)},
		Baseline: []BaselineEntry{{Rule: "storyboard:a", Reason: "known"}, {Rule: "storyboard:b", Reason: "fixed"}}}
	r.Settle()
	if r.RunSummary.ExpectedFailures != 1 || r.RunSummary.StaleBaseline != 1 || r.Verdict != StaleBaseline {
		t.Errorf("expected %d stale %d verdict %s", r.RunSummary.ExpectedFailures, r.RunSummary.StaleBaseline, r.Verdict)
	}
	if r.Storyboards[0].Baseline.Status != ExpectedFailure || r.Storyboards[1].Baseline.Status != Stale {
		t.Errorf("marks %+v %+v", r.Storyboards[0].Baseline, r.Storyboards[1].Baseline)
	}
}

func TestAStoryboardValidationWritesTheContractFields(t *testing.T) {
	b, err := json.Marshal([]Validation{
		{ID: "v1", Check: "field_value", Description: "d", Severity: Required, SeverityPromotedFromAdvisory: ptr(true), Observations: []string{"o"}},
		{Check: "future_check", Passed: true, Description: "d", NotApplicable: true, Note: "n"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"id":"v1","check":"field_value","passed":false,"description":"d","severity":"required","severity_promoted_from_advisory":true,` +
		`"json_pointer":null,"expected":null,"actual":null,"schema_id":null,"schema_url":null,"observations":["o"]},` +
		`{"check":"future_check","passed":true,"description":"d","not_applicable":true,"note":"n"}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// TestTheBaselineListsAStoryboardStepByStep: a storyboard's entries may
// name its steps, each with the check kinds it fails; the storyboard's
// failure is expected only when every step it fails on fails as listed,
// a listed step that passes is stale, and an entry out of the run's scope
// (release, sandbox) is not applied.
func TestTheBaselineListsAStoryboardStepByStep(t *testing.T) {
	fv := Validation{Check: "field_value", Description: "d"}
	adv := Validation{Check: "field_present", Severity: Advisory, Description: "d"}
	failing := sbStep("a", "p", "s1", "t", false, fv)
	passing := sbStep("a", "p", "s2", "t", true)
	other := sbStep("a", "q", "s4", "t", false, Validation{Check: "error_code", Description: "d"})
	optional := other
	optional.Optional = true
	advisory := sbStep("a", "p", "s3", "t", true, adv)
	skipped := sbStep("a", "p", "s5", "t", false)
	skipped.Skip = &Skip{Reason: "not_applicable", Detail: "d"}
	entry := func(step string, checks ...string) BaselineEntry {
		return BaselineEntry{Rule: "storyboard:a", Step: step, Checks: checks, Reason: "known " + step}
	}
	scoped := entry("p/s1", "field_value")
	scoped.Releases = []string{"3.2.0-beta.5"}
	sandboxOnly := entry("p/s1", "field_value")
	sandboxOnly.Sandbox = ptr(true)
	cases := []struct {
		name     string
		steps    []Step
		baseline []BaselineEntry
		verdict  Verdict
		status   string   // the storyboard's mark ("" none)
		marks    []string // each listed step's
		expected int
	}{
		{"a step failing as listed is expected", []Step{failing, passing}, []BaselineEntry{entry("p/s1", "field_value")},
			Conformant, ExpectedFailure, []string{ExpectedFailure}, 1},
		{"an entry without checks expects any failure", []Step{failing}, []BaselineEntry{entry("p/s1")},
			Conformant, ExpectedFailure, []string{ExpectedFailure}, 1},
		{"a step failing other checks is unexpected", []Step{failing}, []BaselineEntry{entry("p/s1", "field_absent")},
			NonConformant, Unexpected, []string{Unexpected}, 0},
		{"a step failing some of the listed checks is expected", []Step{failing}, []BaselineEntry{entry("p/s1", "field_value", "response_schema")},
			Conformant, ExpectedFailure, []string{ExpectedFailure}, 1},
		{"a failing step no entry lists fails the run", []Step{failing, other}, []BaselineEntry{entry("p/s1", "field_value")},
			NonConformant, Unexpected, []string{ExpectedFailure}, 1},
		{"an optional phase's failure needs no entry", []Step{failing, optional}, []BaselineEntry{entry("p/s1", "field_value")},
			Conformant, ExpectedFailure, []string{ExpectedFailure}, 1},
		{"a listed step that passes is stale", []Step{failing, passing}, []BaselineEntry{entry("p/s1", "field_value"), entry("p/s2")},
			StaleBaseline, Stale, []string{ExpectedFailure, Stale}, 1},
		{"a storyboard that passes with a listed step is stale", []Step{passing}, []BaselineEntry{entry("p/s2")},
			StaleBaseline, Stale, []string{Stale}, 0},
		{"an advisory failure is listed like any", []Step{passing, advisory}, []BaselineEntry{entry("p/s3", "field_present(advisory)")},
			Conformant, ExpectedFailure, []string{ExpectedFailure}, 1},
		{"a listed step that was skipped is unjudged", []Step{failing, skipped}, []BaselineEntry{entry("p/s5")},
			NonConformant, Unexpected, []string{Unjudged}, 0},
		{"an entry of another release is not applied", []Step{failing}, []BaselineEntry{scoped}, NonConformant, "", nil, 0},
		{"a sandbox entry is not applied to a run without --sandbox", []Step{failing}, []BaselineEntry{sandboxOnly}, NonConformant, "", nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Rules: []RuleResult{rule("CTX-01", Must, spec(Passed, ""))}, AdcpRelease: "3.1.19", StoryboardsRelease: "3.1.19",
				Storyboards: []StoryboardResult{{ID: "a", Category: "universal"}}, Steps: tc.steps, Baseline: tc.baseline}
			r.Settle()
			if r.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", r.Verdict, tc.verdict)
			}
			m := r.Storyboards[0].Baseline
			if tc.status == "" {
				if m != nil {
					t.Errorf("marked %+v, want no mark", m)
				}
				return
			}
			if m == nil || m.Status != tc.status {
				t.Fatalf("mark %+v, want status %s", m, tc.status)
			}
			var got []string
			for _, sm := range m.Steps {
				got = append(got, sm.Status)
				if sm.Reason != "known "+sm.Step {
					t.Errorf("step %s reason %q", sm.Step, sm.Reason)
				}
			}
			if !slices.Equal(got, tc.marks) {
				t.Errorf("step marks %v, want %v", got, tc.marks)
			}
			if r.RunSummary.ExpectedFailures != tc.expected {
				t.Errorf("expected failures %d, want %d", r.RunSummary.ExpectedFailures, tc.expected)
			}
		})
	}
}

func TestStepFailuresAreTheFailedCheckKinds(t *testing.T) {
	st := sbStep("a", "p", "s", "t", false,
		Validation{Check: "field_value", Description: "d"}, Validation{Check: "field_value", Description: "d"},
		Validation{Check: "field_absent", Description: "d"}, Validation{Check: "field_present", Severity: Advisory, Description: "d"},
		Validation{Check: "response_schema", Passed: true, Description: "d"}, Validation{Check: "future", NotApplicable: true, Passed: true, Description: "d"})
	st.Error = "timeout"
	if got := StepFailures(st); !slices.Equal(got, []string{"error", "field_absent", "field_present(advisory)", "field_value"}) {
		t.Errorf("got %v", got)
	}
	if got := StepFailures(sbStep("a", "p", "s", "t", true)); got != nil {
		t.Errorf("a passed step fails %v", got)
	}
}
