package storyboard

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// seedingPhase is the synthetic phase of a storyboard's controller
// seeding: before its own phases, the runner seeds every entry of its
// `fixtures:` block through comply_test_controller
// (runner-output-contract.yaml, prerequisites.controller_seeding).
const seedingPhase = "__controller_seeding__"

// checkSeeded is the check name of a seeding step's validation.
const checkSeeded = "controller_seeding"

// seedKinds are the fixture keys in the order the foreign-key DAG needs
// (storyboard-schema.yaml, fixtures: account → product → pricing_option,
// plan, media_buy; creative → media_buy; plan → media_buy), with the
// scenario each maps to and the ids lifted out of an entry into params.
var seedKinds = []struct {
	key, scenario string
	ids           []string
}{
	{"accounts", "seed_account", []string{"account_id"}},
	{"products", "seed_product", []string{"product_id"}},
	{"pricing_options", "seed_pricing_option", []string{"product_id", "pricing_option_id"}},
	{"creative_formats", "seed_creative_format", []string{"format_id"}},
	{"creatives", "seed_creative", []string{"creative_id"}},
	{"plans", "seed_plan", []string{"plan_id"}},
	{"media_buys", "seed_media_buy", []string{"media_buy_id"}},
}

// seedCall is one seed_* call a fixtures block asks for.
type seedCall struct {
	step, title, scenario string
	params                map[string]any
	// invalid says why the entry cannot be seeded (an authoring error): the
	// step fails without a call.
	invalid string
}

// seedCalls turns a storyboard's fixtures block into its seed calls, in
// dependency order. Each entry's id fields ride in params; the rest is
// params.fixture (an entry that holds only a `fixture` object gives that
// object). A fixture key this engine does not know is seeded as
// seed_<key without its final s> (the scenario enum is open for
// extension: a controller answers UNKNOWN_SCENARIO, and the storyboard is
// not applicable).
func seedCalls(fixtures map[string]any) []seedCall {
	var out []seedCall
	add := func(key, scenario string, ids []string) {
		entries, ok := fixtures[key].([]any)
		if !ok {
			if _, present := fixtures[key]; present {
				out = append(out, seedCall{step: scenario, title: "Seed " + key, scenario: scenario, invalid: "fixtures." + key + " is not a list"})
			}
			return
		}
		for i, e := range entries {
			entry, ok := e.(map[string]any)
			if !ok {
				out = append(out, seedCall{step: fmt.Sprintf("%s.#%d", scenario, i), title: fmt.Sprintf("Seed %s #%d", key, i), scenario: scenario,
					invalid: fmt.Sprintf("fixtures.%s[%d] is not an object", key, i)})
				continue
			}
			params := map[string]any{}
			fixture := map[string]any{}
			var label []string
			var missing []string
			for _, id := range ids {
				v, _ := entry[id].(string)
				if v == "" {
					missing = append(missing, id)
					continue
				}
				params[id] = v
				label = append(label, v)
			}
			for k, v := range entry {
				if _, isID := params[k]; !isID {
					fixture[k] = v
				}
			}
			if f, ok := fixture["fixture"].(map[string]any); ok && len(fixture) == 1 {
				fixture = f
			}
			if len(fixture) > 0 {
				params["fixture"] = fixture
			}
			name := strings.Join(label, ".") // the JS runner's step ids, so the two join
			if name == "" {
				name = fmt.Sprintf("#%d", i)
			}
			c := seedCall{step: scenario + "." + name, title: "Seed " + strings.TrimPrefix(scenario, "seed_") + " " + name, scenario: scenario, params: params}
			if len(missing) > 0 {
				c.invalid = fmt.Sprintf("fixtures.%s[%d] lacks %s", key, i, strings.Join(missing, ", "))
			}
			out = append(out, c)
		}
	}
	for _, k := range seedKinds {
		if k.key == "media_buys" {
			// Unknown kinds before media buys: what they seed may be
			// referenced by a buy, never the other way round.
			var extra []string
			for key := range fixtures {
				if !knownKey(key) {
					extra = append(extra, key)
				}
			}
			sort.Strings(extra)
			for _, key := range extra {
				singular := strings.TrimSuffix(key, "s")
				add(key, "seed_"+singular, []string{singular + "_id"})
			}
		}
		add(k.key, k.scenario, k.ids)
	}
	return out
}

func knownKey(key string) bool {
	for _, k := range seedKinds {
		if k.key == key {
			return true
		}
	}
	return false
}

// seed runs the storyboard's controller seeding as the synthetic first
// phase. It returns a storyboard skip when the agent's controller does
// not implement a seed scenario (a coverage gap: not_applicable), and
// reports whether every fixture was seeded: when one was not, the
// storyboard's phases are skipped as prerequisite_failed.
func (r *runner) seed(ctx context.Context) (*spec.Skip, bool) {
	for _, c := range seedCalls(r.sb.Fixtures) {
		res := StepResult{PhaseID: seedingPhase, StepID: c.step, Title: c.title, Task: controllerTool}
		start := r.env.now()
		desc := fmt.Sprintf("comply_test_controller %s seeds the fixture", c.scenario)
		if c.invalid != "" {
			res.Validations = []spec.Result{{Check: checkSeeded, Passed: false, Description: desc, Message: "the storyboard's fixture cannot be seeded: " + c.invalid}}
			r.steps = append(r.steps, res)
			return nil, false
		}
		args := map[string]any{"account": map[string]any{"sandbox": true}, "scenario": c.scenario, "params": c.params}
		res.Request = args
		obs := r.d.Call(ctx, Request{ProbeID: "storyboard/" + r.sb.ID + "/" + seedingPhase + "/" + c.step, Storyboard: r.sb.ID,
			Task: controllerTool, Args: args, TestKit: r.kit})
		res.Obs = obs
		res.DurationMS = float64(r.env.now().Sub(start).Microseconds()) / 1000
		if obs.Failure != "" {
			res.Error = obs.Failure
			r.steps = append(r.steps, res)
			return nil, false
		}
		body, _ := obs.Payload.(map[string]any)
		code, _ := body["error"].(string)
		if code == "" {
			code = obs.ErrorCode
		}
		if code == "UNKNOWN_SCENARIO" {
			res.Skip = &spec.Skip{Reason: spec.NotApplicable, Detail: "UNKNOWN_SCENARIO: a coverage gap, not a failure"}
			r.steps = append(r.steps, res)
			return &spec.Skip{Reason: spec.NotApplicable, Detail: fmt.Sprintf("controller_seeding: the agent's comply_test_controller does not implement %s (UNKNOWN_SCENARIO)", c.scenario)}, false
		}
		if code == "INVALID_PARAMS" {
			// "Sellers MAY reject clearly malformed fixtures with
			// INVALID_PARAMS" (comply-test-controller.mdx, seeding
			// semantics), and the release's own fixtures are not all
			// schema-valid (a "video" channel in 3.1.19): the storyboard
			// cannot run, and that is not graded against the agent.
			d, _ := body["error_detail"].(string)
			res.Skip = &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: "INVALID_PARAMS: " + spec.Clip(d, 200)}
			r.steps = append(r.steps, res)
			return &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: fmt.Sprintf("controller_seeding: the agent's comply_test_controller refused the fixture of %s (INVALID_PARAMS: %s); a seller may refuse a fixture it judges malformed",
				c.step, spec.Clip(d, 200))}, false
		}
		if body["success"] == true && !obs.Refused {
			res.Passed = true
			res.Validations = []spec.Result{{Check: checkSeeded, Passed: true, Description: desc}}
			r.steps = append(r.steps, res)
			continue
		}
		msg := "the controller did not answer success: true"
		if code != "" {
			msg = "the controller answered " + code
			if d, _ := body["error_detail"].(string); d != "" {
				msg += ": " + spec.Clip(d, 200)
			}
		}
		res.Validations = []spec.Result{{Check: checkSeeded, Passed: false, Description: desc, Message: msg, Expected: true, Actual: body["success"]}}
		r.steps = append(r.steps, res)
		return nil, false
	}
	return nil, true
}
