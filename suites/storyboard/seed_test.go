package storyboard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

const seedSB = `
id: seeded
version: "1.0.0"
title: t
category: t
narrative: t
prerequisites:
  controller_seeding: true
fixtures:
  media_buys:
    - media_buy_id: mb_fixture
      status: active
      packages: [{package_id: p1, product_id: test-product}]
  pricing_options:
    - product_id: test-product
      pricing_option_id: test-pricing
      pricing_model: cpm
  products:
    - product_id: test-product
      delivery_type: non_guaranteed
  accounts:
    - account_id: acct_test
      fixture: {sandbox: true}
phases:
  - id: buy
    title: buy
    steps:
      - id: get
        title: get
        task: get_media_buys
        stateful: true
        sample_request: {media_buy_ids: [mb_fixture]}
        validations:
          - check: field_present
            path: media_buys
            description: buys
`

func controllerEnv() *Env {
	e := env("get_media_buys", "comply_test_controller")
	e.Sandbox = true
	return e
}

func TestSeedingRunsTheFixturesInDependencyOrderFirst(t *testing.T) {
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"comply_test_controller": ok(map[string]any{"success": true, "message": "seeded"}),
		"get_media_buys":         ok(map[string]any{"media_buys": []any{}}),
	}}
	res := Run(t.Context(), parse(t, seedSB), controllerEnv(), f)
	if got := outcomes(res); got != "__controller_seeding__.seed_account.acct_test=pass __controller_seeding__.seed_product.test-product=pass "+
		"__controller_seeding__.seed_pricing_option.test-product.test-pricing=pass __controller_seeding__.seed_media_buy.mb_fixture=pass buy.get=pass => passed" {
		t.Fatal(got)
	}
	var calls []string
	for _, r := range f.got {
		b, _ := json.Marshal(r.Args)
		calls = append(calls, r.Task+" "+string(b))
	}
	want := []string{
		`comply_test_controller {"account":{"sandbox":true},"params":{"account_id":"acct_test","fixture":{"sandbox":true}},"scenario":"seed_account"}`,
		`comply_test_controller {"account":{"sandbox":true},"params":{"fixture":{"delivery_type":"non_guaranteed"},"product_id":"test-product"},"scenario":"seed_product"}`,
		`comply_test_controller {"account":{"sandbox":true},"params":{"fixture":{"pricing_model":"cpm"},"pricing_option_id":"test-pricing","product_id":"test-product"},"scenario":"seed_pricing_option"}`,
		`comply_test_controller {"account":{"sandbox":true},"params":{"fixture":{"packages":[{"package_id":"p1","product_id":"test-product"}],"status":"active"},"media_buy_id":"mb_fixture"},"scenario":"seed_media_buy"}`,
		`get_media_buys {"media_buy_ids":["mb_fixture"]}`,
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	if f.got[0].ProbeID != "storyboard/seeded/__controller_seeding__/seed_account.acct_test" {
		t.Fatal(f.got[0].ProbeID)
	}
}

func TestSeedingAScenarioTheControllerLacksMakesTheStoryboardNotApplicable(t *testing.T) {
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"comply_test_controller": func(req Request) *spec.Observation {
			if req.Args["scenario"] == "seed_pricing_option" {
				return ok(map[string]any{"success": false, "error": "UNKNOWN_SCENARIO", "error_detail": "no"})(req)
			}
			return ok(map[string]any{"success": true})(req)
		},
	}}
	res := Run(t.Context(), parse(t, seedSB), controllerEnv(), f)
	if res.Outcome != Skipped || res.Skip == nil || res.Skip.Reason != spec.NotApplicable || !strings.Contains(res.Skip.Detail, "seed_pricing_option") {
		t.Fatalf("%+v %+v", res.Outcome, res.Skip)
	}
	for _, r := range f.got {
		if r.Task == "get_media_buys" {
			t.Fatal("a phase ran after the seeding gap")
		}
	}
}

func TestSeedingRefusedFailsItsStepAndSkipsThePhases(t *testing.T) {
	for name, answer := range map[string]func(Request) *spec.Observation{
		"controller error": ok(map[string]any{"success": false, "error": "NOT_FOUND", "error_detail": "no such account"}),
		"task error":       refuse("INVALID_REQUEST"),
	} {
		t.Run(name, func(t *testing.T) {
			f := &fake{answers: map[string]func(Request) *spec.Observation{"comply_test_controller": answer}}
			res := Run(t.Context(), parse(t, seedSB), controllerEnv(), f)
			if got := outcomes(res); got != "__controller_seeding__.seed_account.acct_test=fail buy.get=skip:prerequisite_failed => failed" {
				t.Fatal(got)
			}
		})
	}
}

func TestSeedingNeedsASandbox(t *testing.T) {
	e := controllerEnv()
	e.Sandbox = false
	f := &fake{}
	res := Run(t.Context(), parse(t, seedSB), e, f)
	if res.NotSelected == nil || res.NotSelected.Reason != runModeExcluded || len(f.got) != 0 {
		t.Fatalf("%+v %+v", res.NotSelected, f.got)
	}
	e = env("get_media_buys")
	res = Run(t.Context(), parse(t, seedSB), e, f)
	if res.Skip == nil || res.Skip.Reason != spec.NotApplicable || len(f.got) != 0 {
		t.Fatalf("%+v", res.Skip)
	}
}

func TestSeedCallsReportAuthoringErrors(t *testing.T) {
	calls := seedCalls(map[string]any{"products": []any{map[string]any{"delivery_type": "x"}}, "widgets": []any{map[string]any{"widget_id": "w1"}}, "plans": "no"})
	var got []string
	for _, c := range calls {
		got = append(got, c.scenario+" "+c.step+" "+c.invalid)
	}
	want := "seed_product seed_product.#0 fixtures.products[0] lacks product_id|seed_plan seed_plan fixtures.plans is not a list|seed_widget seed_widget.w1 "
	if strings.Join(got, "|") != want {
		t.Fatalf("%q", strings.Join(got, "|"))
	}
}

const conventionSB = `
id: conv
version: "1.0.0"
title: t
category: t
narrative: t
phases:
  - id: buy
    title: buy
    steps:
      - id: create
        title: create
        task: create_media_buy
        stateful: true
        sample_request: {brand: {domain: acme.example}}
        validations:
          - check: field_present
            path: media_buy_id
            description: id
      - id: get
        title: get
        task: get_media_buys
        stateful: true
        sample_request: {media_buy_ids: ["$context.media_buy_id"]}
        validations:
          - check: field_present
            path: media_buys
            description: buys
`

func TestAnUndeclaredContextNameIsCapturedByConvention(t *testing.T) {
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"create_media_buy": ok(map[string]any{"media_buy_id": "mb_1", "media_buy_status": "active"}),
		"get_media_buys":   ok(map[string]any{"media_buys": []any{}}),
	}}
	res := Run(t.Context(), parse(t, conventionSB), env("create_media_buy", "get_media_buys"), f)
	if got := outcomes(res); got != "buy.create=pass buy.get=pass => passed" {
		t.Fatal(got)
	}
	if ids := f.got[1].Args["media_buy_ids"].([]any); ids[0] != "mb_1" || len(res.Steps[0].Notes) != 1 || !strings.Contains(res.Steps[0].Notes[0], "by convention") {
		t.Fatalf("%v %v", ids, res.Steps[0].Notes)
	}
	// A reply without the field: the dependent step is skipped, not failed.
	f = &fake{answers: map[string]func(Request) *spec.Observation{
		"create_media_buy": ok(map[string]any{"status": "submitted", "task_id": "t1", "media_buy_id": nil}),
	}}
	res = Run(t.Context(), parse(t, strings.Replace(conventionSB, "path: media_buy_id", "path: task_id", 1)), env("create_media_buy", "get_media_buys"), f)
	if got := outcomes(res); got != "buy.create=pass buy.get=skip:prerequisite_failed => passed" {
		t.Fatal(got)
	}
}

func TestSeedingAFixtureTheControllerCallsMalformedIsNotGraded(t *testing.T) {
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"comply_test_controller": ok(map[string]any{"success": false, "error": "INVALID_PARAMS", "error_detail": "fixture.channels: \"video\" is not a channel"}),
	}}
	res := Run(t.Context(), parse(t, seedSB), controllerEnv(), f)
	if res.Outcome != Skipped || res.Skip == nil || res.Skip.Reason != spec.PrerequisiteFailed || !strings.Contains(res.Skip.Detail, "video") {
		t.Fatalf("%v %+v", res.Outcome, res.Skip)
	}
}

// liveGateSB is comply_controller_mode_gate's shape: one step as the test
// kit's live-mode principal.
const liveGateSB = `
id: gate
version: "1.0.0"
title: t
category: t
narrative: t
prerequisites:
  test_kit: test-kits/live.yaml
phases:
  - id: deny
    title: deny
    optional: true
    steps:
      - id: deny_live_caller
        title: deny
        task: comply_test_controller
        auth: {type: api_key, from_test_kit: true}
        expect_error: true
        sample_request: {scenario: force_creative_status, params: {creative_id: x, status: approved}}
        validations:
          - check: field_value
            path: error
            allowed_values: [FORBIDDEN]
            description: forbidden
`

func TestAStepAsTheTestKitsLiveModePrincipalNeedsTheRunsLiveCredential(t *testing.T) {
	forbidden := func(Request) *spec.Observation {
		return &spec.Observation{Payload: spec.Normalize(map[string]any{"success": false, "error": "FORBIDDEN"}), HTTPStatus: 200}
	}
	for _, tc := range []struct {
		name     string
		live     bool
		sandbox  any // the kit's sandbox
		want     string
		wantLive bool // the request sent is marked live
		sent     int
	}{
		{name: "without a live credential the step is skipped naming the flag", sandbox: false,
			want: "deny.deny_live_caller=skip:requirement_unmet => skipped"},
		{name: "with a live credential the step is sent marked live", live: true, sandbox: false,
			want: "deny.deny_live_caller=pass => passed", wantLive: true, sent: 1},
		{name: "a sandbox kit's step is no live-mode step", sandbox: true,
			want: "deny.deny_live_caller=pass => passed", sent: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := controllerEnv()
			e.LiveCredential = tc.live
			e.TestKits = map[string]map[string]any{"test-kits/live.yaml": {"id": "live_kit", "sandbox": tc.sandbox, "auth": map[string]any{"api_key": "k"}}}
			f := &fake{answers: map[string]func(Request) *spec.Observation{controllerTool: forbidden}}
			res := Run(t.Context(), parse(t, liveGateSB), e, f)
			if got := outcomes(res); got != tc.want || len(f.got) != tc.sent {
				t.Fatalf("%s (%d sent)", got, len(f.got))
			}
			if tc.sent > 0 && f.got[0].Live != tc.wantLive {
				t.Fatalf("request Live = %v", f.got[0].Live)
			}
			if tc.sent == 0 {
				if d := res.Steps[0].Skip.Detail; !strings.Contains(d, "live-mode") || !strings.Contains(d, "--live-bearer-env") {
					t.Fatal(d)
				}
			}
		})
	}
}

func TestAControllerScenarioTheAgentLacksIsACoverageGap(t *testing.T) {
	sb := parse(t, `
id: gap
version: "1.0.0"
title: t
category: t
narrative: t
phases:
  - id: force
    title: force
    steps:
      - id: force_arm
        title: force
        task: comply_test_controller
        stateful: true
        sample_request: {scenario: force_get_products_arm, params: {arm: submitted, task_id: t1}}
        validations:
          - check: field_value
            path: success
            allowed_values: [true]
            description: forced
  - id: read
    title: read
    steps:
      - id: get
        title: get
        task: get_products
        stateful: true
        sample_request: {brief: x}
        validations:
          - check: field_value
            path: status
            allowed_values: [submitted]
            description: submitted
  - id: unknown
    title: unknown
    depends_on: []
    steps:
      - id: nonexistent
        title: nonexistent
        task: comply_test_controller
        expect_error: true
        sample_request: {scenario: nonexistent_scenario, params: {}}
        validations:
          - check: field_value
            path: error
            allowed_values: [UNKNOWN_SCENARIO]
            description: unknown
`)
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"comply_test_controller": ok(map[string]any{"success": false, "error": "UNKNOWN_SCENARIO"}),
		"get_products":           ok(map[string]any{"products": []any{}}),
	}}
	e := controllerEnv()
	e.Tools = append(e.Tools, "get_products")
	res := Run(t.Context(), sb, e, f)
	if got := outcomes(res); got != "force.force_arm=skip:not_applicable read.get=skip:prerequisite_failed unknown.nonexistent=pass => passed" {
		t.Fatal(got)
	}
	if !strings.Contains(res.Steps[0].Skip.Detail, "force_get_products_arm") {
		t.Fatal(res.Steps[0].Skip.Detail)
	}
}

func TestAStoryboardForcingTheNextCallsArmIsFlaggedToRunAlone(t *testing.T) {
	forcing := parse(t, "id: a\nversion: \"1\"\ntitle: t\ncategory: t\nnarrative: t\nphases:\n  - id: p\n    title: p\n    steps:\n      - id: s\n        title: s\n        task: comply_test_controller\n        sample_request: {scenario: force_get_products_arm, params: {arm: submitted}}\n")
	other := parse(t, "id: b\nversion: \"1\"\ntitle: t\ncategory: t\nnarrative: t\nphases:\n  - id: p\n    title: p\n    steps:\n      - id: s\n        title: s\n        task: comply_test_controller\n        sample_request: {scenario: force_media_buy_status, params: {}}\n")
	if !ShapesNextCall(forcing) || ShapesNextCall(other) {
		t.Fatal(ShapesNextCall(forcing), ShapesNextCall(other))
	}
}

// A seeded storyboard is graded by its own steps: seeding alone passes
// nothing (every authored step skipped → skipped), and a storyboard none of
// whose agent tasks the agent exposes is skipped missing_tool before any
// fixture is seeded (a sandbox's catalogue is shared by the run).
func TestSeedingGradesNothingAndIsLeftOutWhenNoStepCanRun(t *testing.T) {
	capGated := strings.Replace(seedSB, "        stateful: true\n", "        stateful: true\n        requires_capability: {path: media_buy.nothing, equals: true}\n", 1)
	for _, tc := range []struct {
		name, src string
		env       *Env
		want      string
		calls     int
	}{
		{"every step skipped", capGated, controllerEnv(), "__controller_seeding__.seed_account.acct_test=pass __controller_seeding__.seed_product.test-product=pass " +
			"__controller_seeding__.seed_pricing_option.test-product.test-pricing=pass __controller_seeding__.seed_media_buy.mb_fixture=pass buy.get=skip:not_applicable => skipped", 4},
		{"no agent task offered", seedSB, func() *Env { e := env("comply_test_controller"); e.Sandbox = true; return e }(), " => skipped", 0},
		{"a step runs", seedSB, controllerEnv(), "__controller_seeding__.seed_account.acct_test=pass __controller_seeding__.seed_product.test-product=pass " +
			"__controller_seeding__.seed_pricing_option.test-product.test-pricing=pass __controller_seeding__.seed_media_buy.mb_fixture=pass buy.get=pass => passed", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{answers: map[string]func(Request) *spec.Observation{
				"comply_test_controller": ok(map[string]any{"success": true, "message": "seeded"}),
				"get_media_buys":         ok(map[string]any{"media_buys": []any{}}),
			}}
			res := Run(t.Context(), parse(t, tc.src), tc.env, f)
			if got := outcomes(res); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if len(f.got) != tc.calls {
				t.Errorf("%d calls, want %d", len(f.got), tc.calls)
			}
			if tc.calls == 0 && (res.Skip == nil || res.Skip.Reason != spec.MissingTool || !strings.Contains(res.Skip.Detail, "[get_media_buys]")) {
				t.Errorf("skip %+v, want missing_tool naming get_media_buys", res.Skip)
			}
		})
	}
}

// Storyboards whose narrative gates them on a capability (proseGates) are
// not applicable to an agent that does not declare it, and run for one
// that does.
func TestProseGatedStoryboardsRunOnlyForAgentsDeclaringTheCapability(t *testing.T) {
	for _, tc := range []struct {
		id   string
		caps map[string]any
		skip bool
	}{
		{"agent_notification_configs", map[string]any{"adcp": map[string]any{"supported_versions": []any{"3.2-beta.5"}}}, true},
		{"agent_notification_configs", map[string]any{"adcp": map[string]any{"capability_changes": map[string]any{"notifications": map[string]any{"supported": false}}}}, true},
		{"agent_notification_configs", map[string]any{"adcp": map[string]any{"capability_changes": map[string]any{"notifications": map[string]any{"supported": true}}}}, false},
		{"signed_requests", map[string]any{}, true},
		{"signed_requests", map[string]any{"request_signing": map[string]any{"supported": true}}, false},
	} {
		sb := parse(t, strings.Replace(seedSB, "id: seeded", "id: "+tc.id, 1))
		sb.Prerequisites, sb.Fixtures = nil, nil
		e := env("get_media_buys")
		tc.caps["supported_protocols"] = []any{"media_buy"}
		e.Capabilities = spec.Normalize(tc.caps)
		skip := Gate(sb, e)
		if (skip != nil) != tc.skip || skip != nil && (skip.Reason != spec.NotApplicable || !strings.Contains(skip.Detail, "narrative gates it")) {
			t.Errorf("%s %v: skip %+v, want skipped %v", tc.id, tc.caps, skip, tc.skip)
		}
	}
}

func TestAStoryboardWithAWebhookStepOrARateLimitTripWaits(t *testing.T) {
	doc := func(task string) *spec.Storyboard {
		return parse(t, "id: a\nversion: \"1\"\ntitle: t\ncategory: t\nnarrative: t\nphases:\n  - id: p\n    title: p\n    steps:\n      - id: s\n        title: s\n        task: "+task+"\n")
	}
	for task, want := range map[string]bool{"expect_webhook": true, "expect_no_webhook": true, "expect_webhook_retry_keys_stable": true,
		"expect_webhook_signature_valid": true, "expect_rate_limit_not_replayed": true, "get_products": false, "comply_test_controller": false} {
		if got := Waits(doc(task)); got != want {
			t.Errorf("%s: waits %v, want %v", task, got, want)
		}
	}
}

// In a read-only sandbox run the controller's steps run (--sandbox is
// their consent, as for seeding), so the step reading the state they force
// is graded on it; other mutating steps stay skipped.
func TestAReadOnlySandboxRunDrivesTheController(t *testing.T) {
	sb := parse(t, "id: a\nversion: \"1\"\ntitle: t\ncategory: t\nnarrative: t\nphases:\n  - id: p\n    title: p\n    steps:\n"+
		"      - id: force\n        title: s\n        task: comply_test_controller\n        sample_request: {scenario: force_get_products_arm, params: {arm: submitted}}\n"+
		"      - id: read\n        title: s\n        task: get_media_buys\n        sample_request: {}\n")
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"comply_test_controller": ok(map[string]any{"success": true}),
		"get_media_buys":         ok(map[string]any{"media_buys": []any{}}),
	}}
	e := controllerEnv()
	e.AllowMutations = false
	if got := outcomes(Run(t.Context(), sb, e, f)); got != "p.force=pass p.read=pass => passed" {
		t.Fatal(got)
	}
}

// A task the test kit names ($test_kit.operations.…) is the task the step
// sends: a mutating one leaves the storyboard out of a read-only run.
func TestARunModeReadsTheTestKitsTask(t *testing.T) {
	sb := parse(t, "id: a\nversion: \"1\"\ntitle: t\ncategory: t\nnarrative: t\nprerequisites: {test_kit: test-kits/k.yaml}\nphases:\n  - id: p\n    title: p\n    steps:\n"+
		"      - id: s\n        title: s\n        task: $test_kit.operations.emitter\n        sample_request: {}\n")
	e := env("create_media_buy")
	e.TestKits = map[string]map[string]any{"test-kits/k.yaml": {"operations": map[string]any{"emitter": "create_media_buy"}}}
	if ns := runMode(sb, e); ns != nil {
		t.Errorf("with --allow-mutations: %+v", ns)
	}
	e.AllowMutations = false
	if ns := runMode(sb, e); ns == nil || !strings.Contains(ns.Detail, "create_media_buy") {
		t.Errorf("read-only: %+v, want it left out for create_media_buy", ns)
	}
}
