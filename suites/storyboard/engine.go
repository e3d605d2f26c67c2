package storyboard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/check"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/expr"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/observer"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// The selection_result reasons of a storyboard left out before it ran:
// by the run mode (a read-only run, no sandbox) or by the caller's scope
// (--storyboard, the label filter).
const (
	runModeExcluded = "run_mode_excluded"
	ScopeExcluded   = "explicit_scope_excluded"
)

// Env is what a storyboard run knows about the agent and the run.
type Env struct {
	// Tools are the tools (MCP) or skills (A2A) the agent advertises.
	Tools []string
	// Capabilities is the decoded get_adcp_capabilities payload; nil when
	// the agent gave none.
	Capabilities any
	// AgentURL is the agent's URL ($agent_url).
	AgentURL string
	// AllowMutations lets storyboards with mutating steps run.
	AllowMutations bool
	// Sandbox says the user declared the agent a sandbox: the test
	// controller may be driven.
	Sandbox bool
	// BrandJSON is the operator-configured URL of the agent's brand.json
	// (--brand-json), read by fetch_brand_jwks when the capabilities
	// advertise no identity.brand_json_url; "" falls back to the agent's
	// origin.
	BrandJSON string
	// LocalFetch is the explicit local-development flag of the OAuth
	// setup kit: the discovery graph may be fetched over http and from
	// loopback and private addresses (never link-local).
	LocalFetch bool
	// Credential says the run authenticates with a configured credential
	// (the test kit's auth.api_key, for the storyboards: see testKitFor).
	Credential bool
	// LiveCredential says the run holds the credential of a live-mode
	// (non-sandbox) principal on the same seller (--live-bearer-env): a
	// step that authenticates as a live-mode test kit is then sent with it
	// (Request.Live), not skipped.
	LiveCredential bool
	// ProbeTask is the protected read the security storyboard probes
	// ($test_kit.auth.probe_task); "" keeps the test kit's.
	ProbeTask string
	// Schemas validate response_schema; nil when the run has none.
	Schemas *schemas.Set
	// RunnerVersion is the runner_capability_version (the AdCP release the
	// engine implements), for advisory promotion.
	RunnerVersion string
	// Mutating says whether a task changes seller state.
	Mutating func(task string) bool
	// TestKits are the release's test kits, decoded, by path relative to
	// the release ("test-kits/acme-outdoor.yaml").
	TestKits map[string]map[string]any
	// MacroVectors are the release's catalog-macro substitution vectors
	// by name (LoadMacroVectors), for expect_substitution_safe; nil when
	// the release has none (the steps naming a vector are then skipped).
	MacroVectors map[string]observer.MacroVector
	// NewUUID mints the run's generated values; nil uses a random v4.
	NewUUID func() string
	// Generated seeds the generated values by storyboard id (a re-judging
	// of a recorded run); nil mints fresh ones.
	Generated map[string]map[string]string
	// Clock is the time source of step durations; nil is time.Now.
	Clock func() time.Time
	// Webhooks is the run's webhook receiver; nil when the run has none
	// (the webhook storyboards and steps are then skipped).
	Webhooks Webhooks
	// Agents are the keys of the run's further logical agents (--agent
	// NAME=URL), besides the agent under test, which every storyboard's
	// default_agent names. Empty is a single-agent run: every step goes
	// to the agent under test.
	Agents []string
	// AgentURLs are the URLs of the further logical agents, by key: a
	// storyboard's root context key KEY_agent_url takes the URL of the
	// run's agent KEY (route.go, overrideAgentURLs).
	AgentURLs map[string]string
}

func (e *Env) has(tool string) bool { return slices.Contains(e.Tools, tool) }

func (e *Env) now() time.Time {
	if e.Clock != nil {
		return e.Clock()
	}
	return time.Now()
}

// StepResult is one step's result (runner output contract step_result).
type StepResult struct {
	PhaseID     string
	StepID      string
	Title       string
	Task        string
	Agent       string // the logical agent the step's call went to; "" is the agent under test
	Passed      bool
	Optional    bool // the step is in an optional phase: its failure alone fails no storyboard
	Skip        *spec.Skip
	Error       string // transport-level: the call proves nothing
	Validations []spec.Result
	Obs         *spec.Observation
	Request     map[string]any
	DurationMS  float64
	Notes       []string
}

// Failed reports whether the step failed (ran, and a required validation
// failed).
func (s StepResult) Failed() bool { return s.Skip == nil && s.Error == "" && !s.Passed }

// Outcome is a storyboard's result.
type Outcome string

// The outcomes of a storyboard.
const (
	Passed  Outcome = "passed"
	Failed  Outcome = "failed"
	Skipped Outcome = "skipped"
	Errored Outcome = "error"
)

// StoryboardResult is the result of one storyboard.
type StoryboardResult struct {
	Storyboard *spec.Storyboard
	Outcome    Outcome
	// Skip is set when the storyboard did not run at all (a gate).
	Skip *spec.Skip
	// NotSelected is set when the run mode left the storyboard out.
	NotSelected *spec.Skip
	Steps       []StepResult
	DurationMS  float64
	// Generated are the values the run minted ($generate:uuid_v4#alias,
	// context_outputs generate), by alias: recorded so a re-judging of the
	// run resolves the same requests and comparands.
	Generated map[string]string
}

// runner is one storyboard's run.
type runner struct {
	sb    *spec.Storyboard
	env   *Env
	d     Dispatcher
	vars  *expr.Vars
	kit   map[string]any
	prior []*spec.Observation
	// contributions: flag → "phase.step"
	contributions map[string]string
	// passed: step id → passed (for contributes_if)
	passed map[string]bool
	steps  []StepResult
	// tripped: phase id → the step that tripped its cascade
	tripped map[string]string
	// declared: context name → the step that declares it as an output
	// but did not pass (so did not capture it)
	declared map[string]string
	// convention are the $context names captured by convention
	// (convention.go).
	convention []string
	// cur is the step being run: its context and request (a
	// task_completion capture polls with them).
	cur struct {
		ctx context.Context
		req Request
	}
	// hooks are the run's webhook receiver keys (nil without a receiver).
	hooks *hookState
}

// Run runs one storyboard against the agent through d. It never panics on
// any reply; a call that proves nothing makes its step an error.
func Run(ctx context.Context, sb *spec.Storyboard, env *Env, d Dispatcher) StoryboardResult {
	start := env.now()
	res := StoryboardResult{Storyboard: sb}
	if skip := Gate(sb, env); skip != nil {
		res.Skip, res.Outcome = skip, Skipped
		return res
	}
	if ns := runMode(sb, env); ns != nil {
		res.NotSelected, res.Outcome = ns, Skipped
		return res
	}
	r := &runner{sb: sb, env: env, d: d, contributions: map[string]string{}, passed: map[string]bool{}, tripped: map[string]string{}, declared: map[string]string{}}
	r.kit = testKitFor(sb, env)
	r.convention = conventionNames(sb)
	r.vars = &expr.Vars{Context: map[string]any{}, Generated: map[string]string{}, TestKit: r.kit, AgentURL: env.AgentURL,
		Prior: map[string]any{}, NewUUID: env.NewUUID}
	for k, v := range env.Generated[sb.ID] {
		r.vars.Generated[k] = v
	}
	for k, v := range sb.Context {
		r.vars.Context[k] = spec.Normalize(v)
	}
	overrideAgentURLs(sb, env, r.vars.Context)
	r.initWebhooks()
	from := 0
	if seeds(sb) {
		if skip := r.unreachable(); skip != nil {
			res.Skip, res.Outcome = skip, Skipped
			res.DurationMS = float64(env.now().Sub(start).Microseconds()) / 1000
			return res
		}
		skip, ok := r.seed(ctx)
		if skip != nil {
			res.Skip, res.Outcome, res.Steps = skip, Skipped, r.steps
			res.DurationMS = float64(env.now().Sub(start).Microseconds()) / 1000
			return res
		}
		if !ok {
			r.skipRest(0, &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: "controller_seeding: the storyboard's fixtures were not all seeded (" + seedingPhase + ")"})
			from = len(sb.Phases)
		}
	}
	for i := from; i < len(sb.Phases); i++ {
		if ctx.Err() != nil {
			r.skipRest(i, &spec.Skip{Reason: spec.RequirementUnmet, Detail: "the run's deadline passed before this phase"})
			break
		}
		r.phase(ctx, i)
	}
	r.settleBranchSets()
	gradeInvariants(sb, r.steps)
	res.Steps = r.steps
	res.Generated = r.vars.Generated
	res.Outcome = outcomeOf(r.steps)
	res.DurationMS = float64(env.now().Sub(start).Microseconds()) / 1000
	return res
}

// outcomeOf folds step results: failed if a required step failed, else
// error if one errored, else passed if one of the storyboard's own steps
// passed, else skipped. Seeding (seedingPhase) sets the stage and grades
// nothing the storyboard asks: a storyboard whose every authored step was
// skipped is skipped, however many fixtures were seeded.
func outcomeOf(steps []StepResult) Outcome {
	var errored, passed bool
	for _, s := range steps {
		switch {
		case s.Skip != nil:
		case s.Error != "":
			errored = errored || !s.Optional
		case !s.Passed:
			if !s.Optional {
				return Failed
			}
		case s.PhaseID != seedingPhase:
			passed = true
		}
	}
	switch {
	case errored:
		return Errored
	case passed:
		return Passed
	}
	return Skipped
}

// unreachable returns a missing_tool skip when the storyboard calls agent
// tools and the agent has none of them: its fixtures are then not seeded,
// since no step could read them and a sandbox shares its catalogue across
// storyboards (3.2.0-beta.5's ctv_experience_validate_input, a
// validate_input storyboard, seeds products whose format options break
// the canonical schemas on purpose; seeded into a seller without
// validate_input they only surface in every later get_products).
func (r *runner) unreachable() *spec.Skip {
	var tasks []string
	for _, ph := range r.sb.Phases {
		for _, st := range ph.Steps {
			if _, ok := runnerTasks[st.Task]; ok || st.Task == controllerTool || st.Task == "" {
				continue
			}
			if r.env.has(st.Task) {
				return nil
			}
			if !slices.Contains(tasks, st.Task) {
				tasks = append(tasks, st.Task)
			}
		}
	}
	if len(tasks) == 0 {
		return nil
	}
	return &spec.Skip{Reason: spec.MissingTool, Detail: fmt.Sprintf("the agent exposes none of the storyboard's tasks [%s] (it lists %s); its fixtures were not seeded",
		strings.Join(tasks, ", "), strings.Join(r.env.Tools, ", "))}
}

func (r *runner) skipRest(from int, skip *spec.Skip) {
	for _, ph := range r.sb.Phases[from:] {
		for _, st := range ph.Steps {
			r.steps = append(r.steps, StepResult{PhaseID: ph.ID, StepID: st.ID, Title: st.Title, Task: st.Task, Optional: ph.Optional, Skip: skip})
		}
	}
}

// phase runs phase i: its gates, its cascade, then its steps in order.
func (r *runner) phase(ctx context.Context, i int) {
	ph := &r.sb.Phases[i]
	first := len(r.steps)
	skipAll := func(s *spec.Skip) {
		for _, st := range ph.Steps {
			r.steps = append(r.steps, StepResult{PhaseID: ph.ID, StepID: st.ID, Title: st.Title, Task: st.Task, Optional: ph.Optional, Skip: s})
		}
	}
	if ph.RequiresCapability != nil {
		if ok, detail := expr.EvalCapability(ph.RequiresCapability, r.env.Capabilities); !ok {
			skipAll(&spec.Skip{Reason: spec.NotApplicable, Detail: detail})
			return
		}
	}
	if ph.SkipIf != "" {
		skip, err := expr.EvalSkipIf(ph.SkipIf, r.vars)
		if err != nil {
			skipAll(&spec.Skip{Reason: spec.RequirementUnmet, Detail: fmt.Sprintf("skip_if %q cannot be evaluated: %v", ph.SkipIf, err)})
			return
		}
		if skip {
			skipAll(&spec.Skip{Reason: spec.NotApplicable, Detail: fmt.Sprintf("skip_if %q is true", ph.SkipIf)})
			return
		}
	}
	upstream := r.upstreamTrip(i)
	gap := "" // a stateful controller step whose scenario the agent lacks
	for j := range ph.Steps {
		st := &ph.Steps[j]
		if upstream != "" && st.Stateful {
			r.steps = append(r.steps, StepResult{PhaseID: ph.ID, StepID: st.ID, Title: st.Title, Task: st.Task, Optional: ph.Optional,
				Skip: &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: "prerequisite " + upstream + " did not pass"}})
			continue
		}
		if gap != "" && st.Stateful {
			r.steps = append(r.steps, StepResult{PhaseID: ph.ID, StepID: st.ID, Title: st.Title, Task: st.Task, Optional: ph.Optional,
				Skip: &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: "prerequisite " + gap + " drives a controller scenario the agent does not implement"}})
			continue
		}
		res := r.step(ctx, ph, st)
		if st.Stateful && res.Skip != nil && strings.HasPrefix(res.Skip.Detail, controllerGap) {
			gap = ph.ID + "." + st.ID
		}
		r.steps = append(r.steps, res)
	}
	r.substitutePeers(ph, r.steps[first:])
	r.trip(ph, r.steps[first:])
}

// upstreamTrip returns the step that tripped a phase phase i depends on
// ("" when none): every prior phase by default, the listed ones with
// depends_on, none with depends_on: []; never an any_of branch-set peer.
func (r *runner) upstreamTrip(i int) string {
	ph := r.sb.Phases[i]
	for _, prev := range r.sb.Phases[:i] {
		if ph.DependsOn != nil && !slices.Contains(ph.DependsOn, prev.ID) {
			continue
		}
		if ph.BranchSet != nil && prev.BranchSet != nil && ph.BranchSet.ID == prev.BranchSet.ID && ph.BranchSet.Semantics == "any_of" {
			continue
		}
		if t := r.tripped[prev.ID]; t != "" {
			return t
		}
	}
	return ""
}

// trip records whether the phase's results trip the cascade
// (runner-output-contract.yaml cascade_rules.default_cascade and the sole
// stateful step exemption).
func (r *runner) trip(ph *spec.Phase, results []StepResult) {
	stateful := 0
	for _, st := range ph.Steps {
		if st.Stateful {
			stateful++
		}
	}
	for k, res := range results {
		st := ph.Steps[k]
		if !st.Stateful {
			continue
		}
		at := ph.ID + "." + st.ID
		switch {
		case res.Skip == nil && res.Error != "":
			r.tripped[ph.ID] = at
		case res.Skip == nil && !res.Passed:
			r.tripped[ph.ID] = at
		case res.Skip != nil:
			switch res.Skip.Reason {
			case spec.PrerequisiteFailed, spec.UnsatisfiedContract, spec.PeerBranchTaken:
				r.tripped[ph.ID] = at
			case spec.NotApplicable, spec.MissingTool, spec.MissingTestController:
				// A controller scenario the agent lacks (UNKNOWN_SCENARIO, a
				// coverage gap) trips the cascade even as the phase's sole
				// stateful step, unlike the contract's
				// sole_stateful_step_exemption: what follows it reads the
				// state it would have forced, and grading that would fail
				// the agent for a scenario it may leave out.
				if stateful > 1 || hasSubstitute(ph, st.ID) || strings.HasPrefix(res.Skip.Detail, controllerGap) {
					r.tripped[ph.ID] = at
				}
			}
		}
		if r.tripped[ph.ID] != "" {
			return
		}
	}
}

func hasSubstitute(ph *spec.Phase, id string) bool {
	for _, st := range ph.Steps {
		if slices.Contains(st.ProvidesStateFor, id) {
			return true
		}
	}
	return false
}

// substitutePeers regrades a missing_tool or missing_test_controller step
// peer_substituted when a same-phase step that provides its state passed.
func (r *runner) substitutePeers(ph *spec.Phase, results []StepResult) {
	for k := range results {
		res := &results[k]
		if res.Skip == nil || (res.Skip.Reason != spec.MissingTool && res.Skip.Reason != spec.MissingTestController) {
			continue
		}
		for m, st := range ph.Steps {
			if slices.Contains(st.ProvidesStateFor, res.StepID) && results[m].Skip == nil && results[m].Passed {
				res.Skip = &spec.Skip{Reason: spec.PeerSubstituted, Detail: fmt.Sprintf("%s.%s passed and provides the state of %s", ph.ID, st.ID, res.StepID)}
				break
			}
		}
	}
}

// settleBranchSets regrades the failing steps of any_of branch-set peers
// that did not contribute, once a peer contributed the set's flag
// (storyboard-schema.yaml "Branch sets", runner grading).
func (r *runner) settleBranchSets() {
	for k := range r.steps {
		res := &r.steps[k]
		ph := r.phaseByID(res.PhaseID)
		if ph == nil || ph.BranchSet == nil {
			continue
		}
		by, ok := r.contributions[ph.BranchSet.ID]
		if !ok || strings.HasPrefix(by, ph.ID+".") {
			continue
		}
		if res.Failed() || res.Error != "" {
			res.Skip = &spec.Skip{Reason: spec.PeerBranchTaken, Detail: fmt.Sprintf("%s contributed by %s — %s is moot", ph.BranchSet.ID, by, ph.ID)}
			res.Error = ""
		}
	}
}

func (r *runner) phaseByID(id string) *spec.Phase {
	for i := range r.sb.Phases {
		if r.sb.Phases[i].ID == id {
			return &r.sb.Phases[i]
		}
	}
	return nil
}

// gradeInvariants grades the storyboard's declared invariants over its
// steps once they have all run (Invariants), adding one validation to
// each step an invariant applies to; a failed one fails its step (never
// the cascade: the steps after it have already run on what the agent
// said). A step that did not run, or whose call proves nothing, is not
// read.
func gradeInvariants(sb *spec.Storyboard, steps []StepResult) {
	if len(sb.Invariants) == 0 {
		return
	}
	var ran []check.Ran
	var at []int
	for i, s := range steps {
		if s.Skip != nil || s.Error != "" || s.Obs == nil {
			continue
		}
		r := check.Ran{ID: s.PhaseID + "." + s.StepID, Task: s.Task, Obs: s.Obs}
		if st := stepOf(sb, s.PhaseID, s.StepID); st != nil {
			r.ExpectError = st.ExpectError
		}
		ran, at = append(ran, r), append(at, i)
	}
	for k, results := range check.Invariants(sb.Invariants, ran) {
		s := &steps[at[k]]
		for _, r := range results {
			s.Validations = append(s.Validations, r)
			if !r.Passed {
				s.Passed = false
			}
		}
	}
}

// stepOf finds a step of the storyboard by phase and step id.
func stepOf(sb *spec.Storyboard, phase, step string) *spec.Step {
	for i := range sb.Phases {
		if sb.Phases[i].ID != phase {
			continue
		}
		for j := range sb.Phases[i].Steps {
			if sb.Phases[i].Steps[j].ID == step {
				return &sb.Phases[i].Steps[j]
			}
		}
	}
	return nil
}
