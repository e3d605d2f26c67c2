package storyboard

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/expr"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// applies reports whether the storyboard is for this agent at all: every
// universal storyboard is; a protocol's storyboards when the agent's
// supported_protocols claims the protocol; a specialism's when its
// specialisms claim it. The domains/ folder of 3.1 mirrors protocols/
// and is never selected (its storyboards would run twice). When it does
// not apply, detail cites the declaration (skip_result not_applicable).
func applies(sb *spec.Storyboard, caps any) (ok bool, detail string) {
	parts := strings.Split(sb.Path, "/")
	switch sb.Kind {
	case spec.Universal:
		return true, ""
	case spec.Domains:
		return false, "domains/ mirrors protocols/ in this release; the protocols/ copy runs"
	case spec.Protocols:
		if len(parts) < 2 {
			return false, "not under a protocol folder"
		}
		want := strings.ReplaceAll(parts[1], "-", "_")
		declared := stringsAt(caps, "supported_protocols")
		if slices.ContainsFunc(declared, func(p string) bool { return strings.ReplaceAll(p, "-", "_") == want }) {
			return true, ""
		}
		return false, fmt.Sprintf("the agent does not declare protocol %s (supported_protocols: [%s])", want, strings.Join(declared, ", "))
	case spec.Specialisms:
		if len(parts) < 2 {
			return false, "not under a specialism folder"
		}
		want := parts[1]
		declared := stringsAt(caps, "specialisms")
		norm := func(s string) string { return strings.ReplaceAll(s, "_", "-") }
		if slices.ContainsFunc(declared, func(p string) bool { return norm(p) == want }) {
			return true, ""
		}
		return false, fmt.Sprintf("the agent does not declare specialism %s (specialisms: [%s])", want, strings.Join(declared, ", "))
	}
	return false, "not a storyboard folder"
}

// stringsAt reads a list of strings at a dotted path of the capabilities.
func stringsAt(caps any, p string) []string {
	v, _, _ := spec.Lookup(caps, p)
	arr, _ := v.([]any)
	var out []string
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// proseGates are capability gates a storyboard states in its narrative
// rather than in requires_capability. universal/signed-requests.yaml (3.1.19
// and 3.2.0-beta.5): "runs for any agent advertising
// request_signing.supported: true … Agents that do not advertise support
// are not tested against this storyboard — absence of advertisement is not
// a failure". Grading its first step's field checks instead would fail
// every agent that never claimed signed requests.
// universal/agent-notification-configs.yaml (3.2.0-beta.5), prerequisites:
// "The agent under test advertises `sync_agent_notification_configs` and
// `adcp.capability_changes.notifications.supported: true`"; its
// required_tools (get_adcp_capabilities, sync_agent_notification_configs)
// is the lenient any-of every agent meets, and protocol/required-tasks.mdx
// makes the task "Required when …notifications.supported is true" only.
var proseGates = map[string]spec.CapabilityPredicate{
	"signed_requests":            {Path: "request_signing.supported", Equals: true},
	"agent_notification_configs": {Path: "adcp.capability_changes.notifications.supported", Equals: true},
}

// knownRequires are the values of `requires:` the engine knows.
var knownRequires = []string{"controller", "seeded_state", "real_wire", "webhook_receiver", "multi_agent"}

// Gate applies a storyboard's load-time gates (storyboard-schema.yaml:
// requires, required_any_of_tools, required_tools, requires_capability,
// requires_all_capabilities, prerequisites.controller_seeding, webhook
// substitutions) and returns the skip, or nil when it may run.
func Gate(sb *spec.Storyboard, env *Env) *spec.Skip {
	if ok, detail := applies(sb, env.Capabilities); !ok {
		return &spec.Skip{Reason: spec.NotApplicable, Detail: detail}
	}
	if sb.Agent != nil && sb.Agent.InteractionModel == "webhook_receiver" {
		// universal/webhook-receiver-envelope.yaml grades a buyer's
		// receiver by POSTing the spec's vectors to "a buyer-provided
		// receiver URL": "not_applicable when the runner was not configured
		// with a buyer receiver URL. It is for buyer/orchestrator receiver
		// testing, not for seller endpoint grading." adcp-conform grades
		// sellers and is given none.
		return &spec.Skip{Reason: spec.NotApplicable, Detail: "the storyboard grades a buyer's webhook receiver (interaction_model webhook_receiver) through a receiver URL the buyer provides; a seller run has none, which the storyboard grades not_applicable"}
	}
	if len(sb.Phases) == 0 {
		return &spec.Skip{Reason: spec.NoPhases, Detail: fmt.Sprintf("%s %s has no phases", sb.ID, sb.Version)}
	}
	var unmet []string
	for _, req := range sb.Requires {
		switch {
		case !slices.Contains(knownRequires, req):
			unmet = append(unmet, "unrecognized requirement "+req)
		case req == "controller" && !env.has(controllerTool):
			unmet = append(unmet, "controller: the agent does not advertise comply_test_controller")
		case req == "seeded_state":
			unmet = append(unmet, "seeded_state: the run does not declare out-of-band seeded state")
		case req == "webhook_receiver" && env.Webhooks == nil:
			unmet = append(unmet, "webhook_receiver: webhook storyboards are not run by adcp-conform yet")
		case req == "multi_agent":
			if d := multiAgentUnmet(sb, env); d != "" {
				unmet = append(unmet, d)
			}
		}
	}
	for _, fam := range sb.RequiredAnyOfTools {
		if !slices.ContainsFunc(fam.Tools, env.has) {
			d := "missing_required_tool_family: needs " + strings.Join(fam.Tools, " or ")
			if fam.Rationale != "" {
				d += " (" + fam.Rationale + ")"
			}
			unmet = append(unmet, d)
		}
	}
	if len(unmet) > 0 {
		return &spec.Skip{Reason: spec.RequirementUnmet, Detail: strings.Join(unmet, "; ")}
	}
	if len(sb.RequiredTools) > 0 && !slices.ContainsFunc(sb.RequiredTools, env.has) {
		return &spec.Skip{Reason: spec.MissingTool, Detail: fmt.Sprintf("the agent exposes none of the storyboard's tools [%s] (it lists %s)",
			strings.Join(sb.RequiredTools, ", "), strings.Join(env.Tools, ", "))}
	}
	if g, ok := proseGates[sb.ID]; ok {
		if ok, detail := expr.EvalCapability(&g, env.Capabilities); !ok {
			return &spec.Skip{Reason: spec.NotApplicable, Detail: detail + " (the storyboard's narrative gates it on this capability)"}
		}
	}
	if ok, detail := expr.EvalCapabilities(sb.RequiresCapability, sb.RequiresAllCapabilities, env.Capabilities); !ok {
		return &spec.Skip{Reason: spec.NotApplicable, Detail: detail}
	}
	if sb.Prerequisites != nil && sb.Prerequisites.ControllerSeeding {
		// "Missing seed_* support on the agent grades the storyboard
		// not_applicable, not failed" (storyboard-schema.yaml,
		// prerequisites.controller_seeding). With the controller, the run
		// seeds (Run), on a sandbox only (runMode).
		if !env.has(controllerTool) {
			return &spec.Skip{Reason: spec.NotApplicable, Detail: "controller_seeding: the storyboard's fixtures are seeded through comply_test_controller, which the agent does not advertise"}
		}
	}
	// A webhook token the run can never resolve leaves the storyboard out
	// before any step ("Unresolved substitution behavior", preflight point
	// 1); malformed tokens are the steps' to grade.
	refs, _ := expr.StoryboardRefs(sb)
	plain := make([]expr.Ref, len(refs))
	for i, r := range refs {
		plain[i] = r.Ref
	}
	pv := &expr.Vars{AgentURL: env.AgentURL}
	if env.Webhooks != nil {
		pv.WebhookBase, pv.WebhookURL = env.Webhooks.Base(), func(string) (string, bool) { return "", true }
	}
	if ue := expr.Preflight(plain, pv); ue != nil {
		if strings.HasPrefix(ue.Token, "{{runner.") {
			return &spec.Skip{Reason: spec.RequirementUnmet, Detail: "webhook_receiver: the storyboard registers {{runner.webhook_url}} receivers, which adcp-conform does not provide to storyboards yet"}
		}
		return &spec.Skip{Reason: spec.RequirementUnmet, Detail: "unresolved_substitution: " + ue.Token + ": " + ue.Reason}
	}
	return nil
}

// runMode returns why the run's mode leaves a storyboard out (a
// selection_result, not a skip): mutating steps in a read-only run, a
// controller-driven storyboard outside a sandbox.
func runMode(sb *spec.Storyboard, env *Env) *spec.Skip {
	var mutating []string
	controller := slices.Contains(sb.Requires, "controller")
	kit := testKitFor(sb, env)
	for _, ph := range sb.Phases {
		for _, st := range ph.Steps {
			task := st.Task
			// A task the test kit names ($test_kit.operations.…: webhook
			// emission's primary_webhook_emitter is create_media_buy) is the
			// one the step sends.
			if t, err := expr.ResolveTask(st.Task, st.TaskDefault, kit); err == nil && t != "" {
				task = t
			}
			if task == controllerTool {
				controller = true
				continue
			}
			if env.Mutating != nil && env.Mutating(task) && !slices.Contains(mutating, task) {
				mutating = append(mutating, task)
			}
		}
	}
	if len(mutating) > 0 && !env.AllowMutations {
		return &spec.Skip{Reason: runModeExcluded, Detail: "read-only run: the storyboard's steps mutate (" + strings.Join(mutating, ", ") + "); run with --allow-mutations"}
	}
	if controller && slices.Contains(sb.Requires, "controller") && !env.Sandbox {
		return &spec.Skip{Reason: runModeExcluded, Detail: "the storyboard drives comply_test_controller, only on a sandbox (--sandbox)"}
	}
	if seeds(sb) && !env.Sandbox {
		return &spec.Skip{Reason: runModeExcluded, Detail: "the storyboard seeds its fixtures through comply_test_controller, only on a sandbox (--sandbox)"}
	}
	return nil
}

// seeds says the runner seeds the storyboard's fixtures before its phases.
func seeds(sb *spec.Storyboard) bool {
	return sb.Prerequisites != nil && sb.Prerequisites.ControllerSeeding && len(sb.Fixtures) > 0
}

// testKitFor returns the storyboard's test kit as the run sees it: the
// release's kit, with its static credential replaced by the run's. The
// kits ship demo keys for the spec's own test agent; sending those to a
// seller would test nothing, so auth.api_key is the run's credential when
// it has one (a marker, never the secret: the dispatcher sends the
// configured credential) and absent when it has none; auth.basic is
// dropped (the run has no Basic credential). auth.probe_task is the run's
// when given.
func testKitFor(sb *spec.Storyboard, env *Env) map[string]any {
	kit := map[string]any{}
	if sb.Prerequisites != nil && sb.Prerequisites.TestKit != "" {
		if k, ok := env.TestKits[path.Clean(sb.Prerequisites.TestKit)]; ok {
			if c, ok := spec.Normalize(k).(map[string]any); ok {
				kit = c
			}
		}
	}
	auth, _ := kit["auth"].(map[string]any)
	if auth == nil {
		auth = map[string]any{}
	}
	delete(auth, "basic")
	delete(auth, "api_key")
	if env.Credential {
		auth["api_key"] = "[configured credential]"
	}
	switch pt, _ := auth["probe_task"].(string); {
	case env.ProbeTask != "":
		auth["probe_task"] = env.ProbeTask
	case !env.has(pt):
		// The kit names the spec's demo agent's protected read; a seller
		// without it is probed on a protected read it does list (the
		// security storyboard's narrative: list_creatives,
		// get_media_buy_delivery, get_signals, …), never on a public one.
		for _, t := range protectedReads {
			if env.has(t) {
				auth["probe_task"] = t
				break
			}
		}
	}
	kit["auth"] = auth
	return kit
}

// protectedReads are tenant-scoped read tasks, in order of preference
// (universal/security.yaml narrative: "operations that return
// tenant-scoped data … require credentials").
var protectedReads = []string{"list_creatives", "get_media_buy_delivery", "get_media_buys", "list_accounts", "get_signals"}

// versionExcluded is the selection_result reason of storyboards of a
// release the agent does not speak.
const versionExcluded = "version_excluded"

// VersionGate leaves a release's storyboards out when the agent's
// adcp.supported_versions does not list the release (major.minor, a
// pre-release tag hanging off it: "3.2-beta" speaks 3.2.0-beta.5): a 3.1
// seller is not graded on what 3.2 added. An agent that lists no versions
// is graded (nothing says it does not speak the release).
func VersionGate(rel *spec.Release, caps any) *spec.Skip {
	release := rel.Version()
	want := majorMinor(release)
	listed := stringsAt(caps, "adcp.supported_versions")
	if want == "" || len(listed) == 0 {
		return nil
	}
	for _, v := range listed {
		if majorMinor(v) == want {
			return nil
		}
	}
	return &spec.Skip{Reason: versionExcluded, Detail: fmt.Sprintf("the storyboards are AdCP %s; the agent's adcp.supported_versions is [%s]", release, strings.Join(listed, ", "))}
}

// majorMinor is "3.2" of "3.2.0-beta.5", "3.2-beta" or "3.2"; "" when v
// is not a version.
func majorMinor(v string) string {
	v, _, _ = strings.Cut(v, "-")
	parts := strings.Split(v, ".")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return ""
	}
	for _, p := range parts[:2] {
		for _, c := range p {
			if c < '0' || c > '9' {
				return ""
			}
		}
	}
	return parts[0] + "." + parts[1]
}

// Waits says the storyboard waits on purpose, whatever the agent's speed:
// a webhook step (a delivery, or the settle after a terminal trigger) or a
// rate-limit trip (the agent's retry_after). A runner starts such
// storyboards first, so their waiting overlaps the others' work.
func Waits(sb *spec.Storyboard) bool {
	for _, ph := range sb.Phases {
		for _, st := range ph.Steps {
			if slices.Contains(webhookTasks, st.Task) || st.Task == "expect_rate_limit_not_replayed" || st.RateLimitTrip != nil {
				return true
			}
		}
	}
	return false
}

// Calls is how many calls the storyboard makes at most, as its steps say:
// one a step, a rate-limit trip's max_attempts and its replay. A runner
// starts the longest first, so the run does not end on one storyboard's
// sequential calls alone.
func Calls(sb *spec.Storyboard) int {
	n := 0
	for _, ph := range sb.Phases {
		for _, st := range ph.Steps {
			n++
			if st.RateLimitTrip != nil {
				n += tripAttempts(st.RateLimitTrip)
			}
		}
	}
	return n
}

// ShapesNextCall says the storyboard drives a controller scenario that
// shapes the next call of the caller's account (force_get_products_arm,
// force_create_media_buy_arm, force_get_signals_arm: "the next … call from
// the caller's authenticated sandbox account", comply-test-controller.mdx).
// Every storyboard of a run is the same account, so such a storyboard runs
// alone: another's call in between would consume the instruction.
func ShapesNextCall(sb *spec.Storyboard) bool {
	for _, ph := range sb.Phases {
		for _, st := range ph.Steps {
			if st.Task != controllerTool {
				continue
			}
			req, _ := spec.Normalize(st.SampleRequest).(map[string]any)
			if sc, _ := req["scenario"].(string); strings.HasPrefix(sc, "force_") && strings.HasSuffix(sc, "_arm") {
				return true
			}
		}
	}
	return false
}
