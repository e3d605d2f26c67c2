package storyboard

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// fake answers each task with a canned payload (or an error reply, or a
// failure) and records the requests it got.
type fake struct {
	mu      sync.Mutex
	answers map[string]func(req Request) *spec.Observation
	got     []Request
}

func (f *fake) Call(_ context.Context, req Request) *spec.Observation {
	f.mu.Lock()
	f.got = append(f.got, req)
	f.mu.Unlock()
	if a, ok := f.answers[req.Task]; ok {
		o := a(req)
		o.Task, o.Request = req.Task, req.Args
		if o.Transport == "" {
			o.Transport = "mcp"
		}
		return o
	}
	return &spec.Observation{Transport: "mcp", Task: req.Task, Failure: "no answer for " + req.Task}
}

func (f *fake) Get(_ context.Context, probeID, path string) *spec.Observation {
	return &spec.Observation{Transport: "http", HTTPStatus: 404, Failure: ""}
}

func ok(payload map[string]any) func(Request) *spec.Observation {
	return func(Request) *spec.Observation {
		return &spec.Observation{Payload: spec.Normalize(payload), HTTPStatus: 200}
	}
}

func refuse(code string) func(Request) *spec.Observation {
	return func(Request) *spec.Observation {
		return &spec.Observation{IsError: true, Refused: true, ErrorCode: code, Error: map[string]any{"code": code, "message": "no"}, HTTPStatus: 200}
	}
}

func parse(t *testing.T, src string) *spec.Storyboard {
	t.Helper()
	sb, _, err := spec.Parse("protocols/media-buy/test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sb.Kind, sb.Path = spec.Protocols, "protocols/media-buy/test.yaml"
	return sb
}

func env(tools ...string) *Env {
	return &Env{Tools: tools, AllowMutations: true, Mutating: Mutating,
		Capabilities: spec.Normalize(map[string]any{"supported_protocols": []any{"media_buy"}}),
		NewUUID:      func() string { return "00000000-0000-4000-8000-000000000000" }}
}

// outcomes renders a result as "phase.step=outcome" lines.
func outcomes(res StoryboardResult) string {
	var b strings.Builder
	for _, s := range res.Steps {
		b.WriteString(s.PhaseID + "." + s.StepID + "=")
		switch {
		case s.Skip != nil:
			b.WriteString("skip:" + s.Skip.Reason)
		case s.Error != "":
			b.WriteString("error")
		case s.Passed:
			b.WriteString("pass")
		default:
			b.WriteString("fail")
		}
		b.WriteString(" ")
	}
	return strings.TrimSpace(b.String()) + " => " + string(res.Outcome)
}

const cascadeSB = `
id: t
version: "1.0.0"
title: t
category: t
narrative: t
phases:
  - id: setup
    title: setup
    steps:
      - id: create
        title: create
        task: create_media_buy
        stateful: true
        sample_request: {brand: {domain: acme.example}}
        context_outputs:
          - name: media_buy_id
            path: media_buy_id
        validations:
          - check: field_present
            path: media_buy_id
            description: id
  - id: read
    title: read
    steps:
      - id: get
        title: get
        task: get_media_buys
        stateful: true
        sample_request: {media_buy_ids: ["$context.media_buy_id"]}
        validations:
          - check: field_present
            path: media_buys
            description: buys
      - id: formats
        title: formats
        task: list_creative_formats
        stateful: false
        validations:
          - check: field_present
            path: formats
            description: formats
  - id: independent
    title: independent
    depends_on: []
    steps:
      - id: products
        title: products
        task: get_products
        stateful: true
        sample_request: {brief: x}
        validations:
          - check: field_present
            path: products
            description: products
`

func TestRunCascadesAFailedStatefulStep(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers map[string]func(Request) *spec.Observation
		want    string
	}{
		{"every step passes and the captured id reaches the next request", map[string]func(Request) *spec.Observation{
			"create_media_buy":      ok(map[string]any{"media_buy_id": "mb_1", "status": "active"}),
			"get_media_buys":        ok(map[string]any{"media_buys": []any{}}),
			"list_creative_formats": ok(map[string]any{"formats": []any{}}),
			"get_products":          ok(map[string]any{"products": []any{}}),
		}, "setup.create=pass read.get=pass read.formats=pass independent.products=pass => passed"},
		{"a failed create skips the dependent stateful step, not the stateless one nor the independent phase", map[string]func(Request) *spec.Observation{
			"create_media_buy":      ok(map[string]any{"status": "active"}),
			"get_media_buys":        ok(map[string]any{"media_buys": []any{}}),
			"list_creative_formats": ok(map[string]any{"formats": []any{}}),
			"get_products":          ok(map[string]any{"products": []any{}}),
		}, "setup.create=fail read.get=skip:prerequisite_failed read.formats=pass independent.products=pass => failed"},
		{"a refused create is a failure of the story", map[string]func(Request) *spec.Observation{
			"create_media_buy":      refuse("INVALID_REQUEST"),
			"list_creative_formats": ok(map[string]any{"formats": []any{}}),
			"get_products":          ok(map[string]any{"products": []any{}}),
		}, "setup.create=fail read.get=skip:prerequisite_failed read.formats=pass independent.products=pass => failed"},
		{"a call that proves nothing is an error, never a failure", map[string]func(Request) *spec.Observation{
			"create_media_buy":      func(Request) *spec.Observation { return &spec.Observation{Failure: "timeout"} },
			"list_creative_formats": ok(map[string]any{"formats": []any{}}),
			"get_products":          ok(map[string]any{"products": []any{}}),
		}, "setup.create=error read.get=skip:prerequisite_failed read.formats=pass independent.products=pass => error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{answers: tc.answers}
			res := Run(context.Background(), parse(t, cascadeSB), env("create_media_buy", "get_media_buys", "list_creative_formats", "get_products"), f)
			if got := outcomes(res); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			for _, r := range f.got {
				if r.Task == "get_media_buys" {
					if ids, _ := r.Args["media_buy_ids"].([]any); len(ids) != 1 || ids[0] != "mb_1" {
						t.Errorf("get_media_buys sent %v, want the captured mb_1", r.Args["media_buy_ids"])
					}
				}
				if r.Task == "create_media_buy" && r.Args["idempotency_key"] == nil {
					t.Errorf("a mutating request went out without an idempotency_key: %v", r.Args)
				}
			}
		})
	}
}

func TestRunGatesAStoryboardBeforeAnyCall(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		env        func() *Env
		want       string // skip reason, or "not_selected"
	}{
		{"a protocol the agent does not claim", cascadeSB, func() *Env {
			e := env("create_media_buy")
			e.Capabilities = spec.Normalize(map[string]any{"supported_protocols": []any{"signals"}})
			return e
		}, spec.NotApplicable},
		{"a read-only run leaves a mutating storyboard out", cascadeSB, func() *Env { e := env("create_media_buy"); e.AllowMutations = false; return e }, "not_selected"},
		{"none of the required tools", strings.Replace(cascadeSB, "narrative: t\n", "narrative: t\nrequired_tools: [sync_creatives]\n", 1), func() *Env { return env("get_products") }, spec.MissingTool},
		{"an unknown requirement", strings.Replace(cascadeSB, "narrative: t\n", "narrative: t\nrequires: [teleporter]\n", 1), func() *Env { return env("get_products") }, spec.RequirementUnmet},
		{"a capability gate that does not hold", strings.Replace(cascadeSB, "narrative: t\n", "narrative: t\nrequires_capability: {path: media_buy.supports_proposals, equals: true}\n", 1), func() *Env { return env("get_products") }, spec.NotApplicable},
		{"controller seeding", strings.Replace(cascadeSB, "narrative: t\n", "narrative: t\nprerequisites: {controller_seeding: true}\n", 1), func() *Env { return env("get_products") }, spec.NotApplicable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{}
			res := Run(context.Background(), parse(t, tc.yaml), tc.env(), f)
			got := ""
			switch {
			case res.Skip != nil:
				got = res.Skip.Reason
			case res.NotSelected != nil:
				got = "not_selected"
			}
			if got != tc.want || res.Outcome != Skipped {
				t.Errorf("got %q (%s), want %q skipped", got, res.Outcome, tc.want)
			}
			if len(f.got) != 0 {
				t.Errorf("a gated storyboard sent %d calls", len(f.got))
			}
		})
	}
}

const branchSB = `
id: b
version: "1.0.0"
title: b
category: b
narrative: b
phases:
  - id: accepted_path
    title: a
    optional: true
    branch_set: {id: handled, semantics: any_of}
    steps:
      - id: accept
        title: a
        task: get_products
        contributes: true
        sample_request: {brief: x}
        validations:
          - check: field_present
            path: products
            description: products
  - id: rejected_path
    title: r
    optional: true
    branch_set: {id: handled, semantics: any_of}
    steps:
      - id: reject
        title: r
        task: get_products
        contributes: true
        expect_error: true
        sample_request: {brief: x}
        validations:
          - check: error_code
            value: UNSUPPORTED_FEATURE
            description: code
  - id: gate
    title: g
    steps:
      - id: assert
        title: g
        task: assert_contribution
        validations:
          - check: any_of
            allowed_values: [handled]
            description: one path
`

func TestRunGradesBranchSets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(Request) *spec.Observation
		want   string
	}{
		{"the accepting peer contributes, the other is moot", ok(map[string]any{"products": []any{}}),
			"accepted_path.accept=pass rejected_path.reject=skip:peer_branch_taken gate.assert=pass => passed"},
		{"the rejecting peer contributes, the other is moot", refuse("UNSUPPORTED_FEATURE"),
			"accepted_path.accept=skip:peer_branch_taken rejected_path.reject=pass gate.assert=pass => passed"},
		{"no peer contributes: the assertion fails the storyboard", refuse("INTERNAL_ERROR"),
			"accepted_path.accept=fail rejected_path.reject=fail gate.assert=fail => failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{answers: map[string]func(Request) *spec.Observation{"get_products": tc.answer}}
			res := Run(context.Background(), parse(t, branchSB), env("get_products"), f)
			if got := outcomes(res); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestRunSkipsAStepWhoseToolIsMissingWithoutFailingTheStory(t *testing.T) {
	sb := parse(t, cascadeSB)
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"create_media_buy": ok(map[string]any{"media_buy_id": "mb_1"}),
		"get_products":     ok(map[string]any{"products": []any{}}),
	}}
	res := Run(context.Background(), sb, env("create_media_buy", "get_products"), f)
	want := "setup.create=pass read.get=skip:missing_tool read.formats=skip:missing_tool independent.products=pass => passed"
	if got := outcomes(res); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

const dispatchSB = `
id: d
version: "1.0.0"
title: d
category: d
narrative: d
phases:
  - id: p
    title: p
    steps:
      - id: parallel
        title: parallel
        task: create_media_buy
        requires_contract: parallel_dispatch_runner
        parallel_dispatch: {count: 3, same_idempotency_key: true}
        sample_request: {idempotency_key: "$generate:uuid_v4#k", brand: {domain: acme.example}}
        validations:
          - check: cross_response_field_equal
            path: media_buy_id
            description: one buy
      - id: trip
        title: trip
        task: expect_rate_limit_not_replayed
        requires_contract: rate_limit_trip_runner
        rate_limit_trip:
          trip_target_task: create_media_buy
          trip_target_sample_request: {brand: {domain: acme.example}}
          max_attempts: 5
          replay_max_wait_seconds: 1
        validations:
          - check: replay_not_cached_rate_limit
            description: not cached
`

func TestRunDispatchesParallelAndRateLimitTripSteps(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	keys := map[any]int{}
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"create_media_buy": func(req Request) *spec.Observation {
			mu.Lock()
			defer mu.Unlock()
			calls++
			keys[req.Args["idempotency_key"]]++
			if strings.Contains(req.ProbeID, "#burst3") {
				o := refuse("RATE_LIMITED")(req)
				o.Error["retry_after"] = 0.1
				return o
			}
			return ok(map[string]any{"media_buy_id": "mb_same", "status": "active"})(req)
		},
	}}
	e := env("create_media_buy")
	n := 0
	e.NewUUID = func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	}
	res := Run(context.Background(), parse(t, dispatchSB), e, f)
	if got, want := outcomes(res), "p.parallel=pass p.trip=pass => passed"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// 3 parallel calls with one key, 3 burst attempts with fresh keys, one
	// replay of the third attempt's key.
	if calls != 7 {
		t.Errorf("%d calls, want 7", calls)
	}
	var parallelKeys int
	for _, r := range f.got {
		if strings.Contains(r.ProbeID, "#dispatch") {
			parallelKeys = keys[r.Args["idempotency_key"]]
		}
	}
	if parallelKeys != 3 {
		t.Errorf("the parallel dispatches used their key %d times, want 3 (same_idempotency_key)", parallelKeys)
	}
}

func TestRunSkipsARateLimitTripThatNeverTrips(t *testing.T) {
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"create_media_buy": ok(map[string]any{"media_buy_id": "mb", "status": "active"}),
	}}
	sb := parse(t, dispatchSB)
	sb.Phases[0].Steps = sb.Phases[0].Steps[1:]
	res := Run(context.Background(), sb, env("create_media_buy"), f)
	if got := res.Steps[0].Skip; got == nil || got.Reason != spec.NotApplicable || got.Detail != "rate_limit_not_triggered" {
		t.Errorf("skip %+v, want not_applicable rate_limit_not_triggered", got)
	}
	if len(f.got) != 5 {
		t.Errorf("%d attempts, want max_attempts 5", len(f.got))
	}
}

const asyncSB = `
id: a
version: "1.0.0"
title: a
category: a
narrative: a
phases:
  - id: p
    title: p
    steps:
      - id: reject
        title: reject
        task: create_media_buy
        expect_error: true
        sample_request: {brand: {domain: acme.example}}
        validations:
          - check: error_code
            allowed_values: [PRODUCT_NOT_FOUND]
            description: code
      - id: create
        title: create
        task: create_media_buy
        sample_request: {brand: {domain: acme.example}}
        context_outputs:
          - name: media_buy_id
            path: task_completion.media_buy_id
      - id: read
        title: read
        task: get_media_buys
        sample_request: {media_buy_ids: ["$context.media_buy_id"]}
`

func TestRunFollowsAnAsynchronousTaskToItsEnd(t *testing.T) {
	var mu sync.Mutex
	n := 0
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"create_media_buy": func(req Request) *spec.Observation {
			mu.Lock()
			defer mu.Unlock()
			n++
			return ok(map[string]any{"status": "submitted", "task_id": fmt.Sprintf("t%d", n)})(req)
		},
		"tasks/get": func(req Request) *spec.Observation {
			if req.Args["task_id"] == "t1" {
				return ok(map[string]any{"task_id": "t1", "status": "failed", "error": map[string]any{"code": "PRODUCT_NOT_FOUND", "message": "no"}})(req)
			}
			return ok(map[string]any{"task_id": "t2", "status": "completed", "result": map[string]any{"media_buy_id": "mb_async"}})(req)
		},
		"get_media_buys": ok(map[string]any{"media_buys": []any{}}),
	}}
	res := Run(context.Background(), parse(t, asyncSB), env("create_media_buy", "get_media_buys", "tasks/get"), f)
	if got, want := outcomes(res), "p.reject=pass p.create=pass p.read=pass => passed"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, r := range f.got {
		if r.Task == "get_media_buys" {
			if ids, _ := r.Args["media_buy_ids"].([]any); len(ids) != 1 || ids[0] != "mb_async" {
				t.Errorf("get_media_buys sent %v, want the id from the completed task", r.Args["media_buy_ids"])
			}
		}
	}
}

func TestRunTreatsATaskItCannotFollowAsAnError(t *testing.T) {
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"create_media_buy": ok(map[string]any{"status": "submitted", "task_id": "t1"}),
	}}
	sb := parse(t, asyncSB)
	sb.Phases[0].Steps = sb.Phases[0].Steps[:1]
	res := Run(context.Background(), sb, env("create_media_buy"), f)
	if got, want := outcomes(res), "p.reject=error => error"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestUnknownInvariantIsNotApplicable(t *testing.T) {
	sb := &spec.Storyboard{ID: "t", Invariants: []string{"x.unknown"}, Phases: []spec.Phase{{ID: "p", Steps: []spec.Step{{ID: "a"}}}}}
	steps := []StepResult{{PhaseID: "p", StepID: "a", Passed: true, Obs: &spec.Observation{}}}
	gradeInvariants(sb, steps)
	if len(steps[0].Validations) != 1 || !steps[0].Validations[0].NotApplicable || !steps[0].Passed {
		t.Fatalf("got %+v", steps[0])
	}
}

// A failed invariant fails the step it grades, and only that step.
func TestAFailedInvariantFailsItsStep(t *testing.T) {
	sb := &spec.Storyboard{ID: "t", Invariants: []string{spec.InvariantStatusMonotonic}, Phases: []spec.Phase{{ID: "p", Steps: []spec.Step{{ID: "a"}, {ID: "b"}}}}}
	reply := func(status string) *spec.Observation {
		return &spec.Observation{Task: "get_media_buys", Transport: "mcp", Payload: map[string]any{"media_buys": []any{map[string]any{"media_buy_id": "mb1", "status": status}}}}
	}
	steps := []StepResult{{PhaseID: "p", StepID: "a", Task: "get_media_buys", Passed: true, Obs: reply("completed")},
		{PhaseID: "p", StepID: "b", Task: "get_media_buys", Passed: true, Obs: reply("active")}}
	gradeInvariants(sb, steps)
	if !steps[0].Passed || steps[1].Passed || len(steps[1].Validations) != 1 || steps[1].Validations[0].Passed {
		t.Fatalf("got %+v", steps)
	}
}
