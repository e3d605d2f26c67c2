package storyboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/check"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/expr"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/oauth"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// runnerTasks are the tasks the runner performs itself rather than send to
// the agent as an AdCP task, and what each needs. A task not here and not
// advertised by the agent is missing_tool.
var runnerTasks = map[string]string{
	"assert_contribution":              "",
	"protected_resource_metadata":      "",
	"oauth_auth_server_metadata":       "",
	"expect_webhook":                   "webhook_receiver",
	"expect_no_webhook":                "webhook_receiver",
	"expect_webhook_retry_keys_stable": "webhook_receiver",
	"expect_webhook_signature_valid":   "webhook_receiver",
	"fetch_brand_jwks":                 "webhook_receiver",
	"assert_jwks_purpose":              "webhook_receiver",
	"replay_webhook_vector":            "webhook_receiver",
	"expect_substitution_safe":         "substitution_observer_runner",
	"expect_rate_limit_not_replayed":   "",
}

// runnerContracts are the test-kit contracts (requires_contract) the
// engine satisfies.
var runnerContracts = []string{"parallel_dispatch_runner", "rate_limit_trip_runner", substitutionContract}

// controllerTool is the sandbox test controller.
const controllerTool = "comply_test_controller"

// controllerGap opens the skip detail of a controller step whose scenario
// the agent's controller does not implement.
const controllerGap = "UNKNOWN_SCENARIO: the agent's comply_test_controller does not implement "

// controllerLacks says a controller reply is UNKNOWN_SCENARIO.
func controllerLacks(o *spec.Observation) bool {
	body, _ := o.Payload.(map[string]any)
	return body["error"] == "UNKNOWN_SCENARIO" || o.ErrorCode == "UNKNOWN_SCENARIO"
}

// step runs one step: resolves its task, applies the step gates, builds
// the request, dispatches it, grades the validations, captures context.
func (r *runner) step(ctx context.Context, ph *spec.Phase, st *spec.Step) (res StepResult) {
	res = StepResult{PhaseID: ph.ID, StepID: st.ID, Title: st.Title, Task: st.Task, Optional: ph.Optional}
	start := r.env.now()
	r.markStarted(st.ID)
	defer func() {
		res.DurationMS = float64(r.env.now().Sub(start).Microseconds()) / 1000
		if !res.Passed {
			for _, o := range st.ContextOutputs {
				if _, have := r.vars.Context[o.Variable()]; !have {
					r.declared[o.Variable()] = ph.ID + "." + st.ID
				}
			}
		}
	}()
	task, err := expr.ResolveTask(st.Task, st.TaskDefault, r.kit)
	if err == nil && task == "" {
		err = errors.New("the step names no task")
	}
	if err != nil {
		res.Skip = &spec.Skip{Reason: spec.RequirementUnmet, Detail: err.Error()}
		return res
	}
	res.Task = task
	agent, routed := route(r.sb, st, r.env)
	if !routed {
		// The run names no agent of the step's key: the call has nowhere
		// to go (unrouted_step), which proves nothing about the agent.
		res.Error = fmt.Sprintf("unrouted_step: the step routes to agent %s, which the run does not name (--agent %s=URL)", st.Agent, st.Agent)
		return res
	}
	res.Agent = agent
	if skip := r.stepGate(st, task, agent); skip != nil {
		res.Skip = skip
		return res
	}
	facts := check.Facts{Context: r.vars.Context, Prior: r.prior, Contributions: r.contributions, Schemas: r.env.Schemas,
		SchemaRef: st.ResponseSchemaRef, AgentURL: r.env.AgentURL, ExpectError: st.ExpectError, Step: st}
	probeID := "storyboard/" + r.sb.ID + "/" + ph.ID + "/" + st.ID
	switch task {
	case "assert_contribution":
		// A runner-owned assertion over the branch-set flags: nothing is sent.
	case taskExpectWebhook, taskExpectNoWebhook, taskRetryKeysStable, taskSignatureValid:
		// Judged from the deliveries the run's receiver recorded (webhook.go).
		var skip *spec.Skip
		facts.Obs, res.Validations, skip = r.webhookStep(ctx, st, task, probeID)
		if skip != nil {
			res.Skip = skip
			return res
		}
	case taskFetchBrandJWKS:
		// Two recorded fetches, graded here (jwks.go).
		facts.Obs, res.Validations = r.fetchBrandJWKS(ctx, probeID)
	case taskAssertJWKSPurpose:
		// Reads what the fetch_brand_jwks step fetched: nothing is sent,
		// and that observation is not recorded a second time.
		obs, vs, skip := r.assertJWKSPurpose()
		if skip != nil {
			res.Skip = skip
			return res
		}
		res.Obs, res.Validations = obs, vs
		return r.settle(st, ph, res, facts)
	case taskSubstitutionSafe:
		// Judged from the previous step's reply (observer.go): nothing is
		// sent, so a replay grades it from the same recorded reply.
		var skip *spec.Skip
		res.Validations, skip = r.substitutionStep(ctx, st, probeID)
		if skip != nil {
			res.Skip = skip
			return res
		}
	case "protected_resource_metadata", "oauth_auth_server_metadata":
		path, err := r.metadataPath(task)
		if err != nil {
			// Nothing was fetched: the check's expected is where the
			// document should be named, and the message what was seen
			// instead (no HTTP status to compare).
			res.Passed = false
			res.Validations = []spec.Result{{Check: "http_status", Passed: false, Description: "the metadata document can be located",
				Expected: "an http(s) URL at authorization_servers[0] of the protected-resource metadata", Message: err.Error()}}
			return r.settle(st, ph, res, facts)
		}
		facts.Obs = r.d.Get(ctx, probeID, path)
		facts.Obs.Task = task // a fetch names no task: the step's pseudo-task is what the checks and later steps ask for
		if pf, ok := r.d.(spec.PublicFetcher); ok && task == "protected_resource_metadata" && slices.ContainsFunc(st.Validations, func(v spec.Validation) bool {
			return v.Check == "oauth_metadata_graph"
		}) {
			facts.OAuthGraph = oauth.Walk(ctx, pf, probeID, r.env.AgentURL, oauth.Graph{Local: r.env.LocalFetch})
		}
	default:
		req, unresolved := r.request(st)
		if by := r.uncaptured(unresolved); by != "" {
			// The value's capturing step did not pass: this step depends on
			// it, so it is skipped citing that step (storyboard-schema.yaml,
			// context_outputs runner behaviour), not failed a second time.
			res.Skip = &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: fmt.Sprintf("%s is captured by %s, which did not pass", unresolved, by)}
			return res
		}
		if name := contextName(unresolved); slices.Contains(r.convention, name) {
			// No step declares the capture (convention.go): no reply so
			// far carried the field. Not the agent's failure to grade here.
			res.Skip = &spec.Skip{Reason: spec.PrerequisiteFailed, Detail: fmt.Sprintf("%s: no step of the storyboard captures it, and no earlier passing reply carried %s at its top level (captured by convention)", unresolved, name)}
			return res
		}
		if unresolved != "" {
			res.Validations = []spec.Result{{Check: "unresolved_substitution", Passed: false, Expected: unresolved,
				Description: fmt.Sprintf("the request's substitution %s resolves before anything is sent", unresolved),
				Message:     "unresolved substitution " + unresolved + ": its capturing step did not pass or did not run"}}
			return r.settle(st, ph, res, facts)
		}
		res.Request = req
		call := Request{ProbeID: probeID, Storyboard: r.sb.ID, Task: task, Args: req, Auth: st.Auth, TestKit: r.kit, Agent: agent, Live: r.liveKit(st)}
		switch {
		case task == "expect_rate_limit_not_replayed":
			var skip *spec.Skip
			facts.Obs, facts.Dispatches, skip = r.tripRateLimit(ctx, st, call)
			if skip != nil {
				res.Skip = skip
				return res
			}
		case st.ParallelDispatch != nil:
			facts.Obs, facts.Dispatches = r.parallel(ctx, st, call)
		default:
			facts.Obs = r.call(ctx, st, call)
			if st.ExpectError {
				// The expected error may come when the task the seller
				// accepted asynchronously fails: the step is graded on the
				// task's end, polled as a buyer would.
				facts.Obs = r.finish(ctx, call, facts.Obs)
			}
		}
		r.cur.ctx, r.cur.req = ctx, call
	}
	res.Obs = facts.Obs
	if facts.Obs != nil {
		if facts.Obs.Failure != "" {
			res.Error = facts.Obs.Failure
			r.prior = append(r.prior, facts.Obs)
			return res
		}
		r.prior = append(r.prior, facts.Obs)
		r.vars.Prior[st.ID] = facts.Obs.Payload
		if task == controllerTool && !st.ExpectError && controllerLacks(facts.Obs) {
			// "Scenario not supported — returned by list_scenarios or
			// UNKNOWN_SCENARIO error. Reported as a coverage gap, not a
			// failure" (comply-test-controller.mdx, deterministic mode);
			// what the scenario would have set up is missing, so the
			// phases after it are skipped too (trip).
			scenario, _ := res.Request["scenario"].(string)
			res.Skip = &spec.Skip{Reason: spec.NotApplicable, Detail: controllerGap + spec.Clip(scenario, 80)}
			return res
		}
	}
	for _, v := range st.Validations {
		v, unresolved := r.resolveValidation(v)
		if unresolved != "" {
			res.Validations = append(res.Validations, spec.Result{ID: v.ID, Check: "unresolved_substitution", Passed: false, Expected: unresolved,
				Description: fmt.Sprintf("%s: the comparand %s resolves", v.Check, unresolved),
				Message:     "unresolved substitution " + unresolved + " in a " + v.Check + " validation"})
			continue
		}
		res.Validations = append(res.Validations, check.Grade(v, facts, r.env.RunnerVersion))
	}
	return r.settle(st, ph, res, facts)
}

// resolveValidation substitutes the $context and $generate tokens of a
// validation's comparands (value, allowed_values): field_value resolves
// its comparand "at YAML authoring time via $context.<name> substitution"
// (storyboard-schema.yaml, "Cross-step comparison").
func (r *runner) resolveValidation(v spec.Validation) (spec.Validation, string) {
	if v.Value != nil {
		x, err := expr.Substitute(spec.Normalize(v.Value), r.vars)
		var ue *expr.UnresolvedError
		if errors.As(err, &ue) {
			return v, ue.Token
		}
		if err == nil {
			v.Value = x
		}
	}
	if len(v.AllowedValues) > 0 {
		x, err := expr.Substitute(spec.Normalize(v.AllowedValues), r.vars)
		var ue *expr.UnresolvedError
		if errors.As(err, &ue) {
			return v, ue.Token
		}
		if l, ok := x.([]any); ok && err == nil {
			v.AllowedValues = l
		}
	}
	return v, ""
}

// rateLimitTries bounds the attempts of a step the seller answers with a
// rate limit; rateLimitWait bounds one wait.
const (
	rateLimitTries = 3
	rateLimitWait  = 12 * time.Second
)

// call dispatches a step's request. A rate limit (RATE_LIMITED, HTTP 429)
// proves nothing about how the seller answers the step: the call is made
// again after the retry_after the seller asked for, as a buyer would, at
// most rateLimitTries times, each attempt recorded; a step still limited
// is a harness error. A step that expects RATE_LIMITED gets its answer.
func (r *runner) call(ctx context.Context, st *spec.Step, req Request) *spec.Observation {
	base := req.ProbeID
	var o *spec.Observation
	for try := 1; ; try++ {
		if try > 1 {
			req.ProbeID = fmt.Sprintf("%s#retry%d", base, try-1)
		}
		o = r.d.Call(ctx, req)
		wait, limited := rateLimited(o)
		if !limited || expectsRateLimit(st) {
			return o
		}
		if try == rateLimitTries {
			o.Failure = fmt.Sprintf("the seller rate-limited the call %d times (RATE_LIMITED); the step proves nothing", try)
			return o
		}
		t := time.NewTimer(min(wait, rateLimitWait))
		select {
		case <-ctx.Done():
			t.Stop()
			o.Failure = "the run's deadline passed while the seller rate-limited the call"
			return o
		case <-t.C:
		}
	}
}

// maxParallel bounds a parallel_dispatch's count.
const maxParallel = 16

// parallel fires a parallel_dispatch step's requests at once (the
// parallel_dispatch_runner contract): the same request count times, with
// one idempotency_key when same_idempotency_key, else a fresh one each. A
// reply IDEMPOTENCY_IN_FLIGHT is sent again after its retry_after (the
// contract's resolved responses). The first resolved reply is the step's.
func (r *runner) parallel(ctx context.Context, st *spec.Step, req Request) (*spec.Observation, []*spec.Observation) {
	n := min(max(st.ParallelDispatch.Count, 2), maxParallel)
	out := make([]*spec.Observation, n)
	var wg sync.WaitGroup
	for i := range n {
		one := req
		one.ProbeID = fmt.Sprintf("%s#dispatch%d", req.ProbeID, i+1)
		one.Args = cloneMap(req.Args)
		if !st.ParallelDispatch.SameIdempotencyKey {
			if _, ok := one.Args["idempotency_key"]; ok {
				one.Args["idempotency_key"] = r.vars.UUID()
			}
		}
		wg.Go(func() {
			base := one.ProbeID
			for try := 1; ; try++ {
				o := r.d.Call(ctx, one)
				out[i] = o
				wait, inFlight := retryAfter(o, "IDEMPOTENCY_IN_FLIGHT")
				if !inFlight || try == rateLimitTries || ctx.Err() != nil {
					return
				}
				sleep(ctx, min(wait, rateLimitWait))
				one.ProbeID = fmt.Sprintf("%s#retry%d", base, try)
			}
		})
	}
	wg.Wait()
	return out[0], out
}

// tripRateLimit runs expect_rate_limit_not_replayed (the
// rate_limit_trip_runner contract): a sequential burst of the trip target
// with a fresh idempotency_key each, until a RATE_LIMITED reply or
// max_attempts; then, after the reply's retry_after (at most
// replay_max_wait_seconds), the same key again. Without a RATE_LIMITED
// the step is skipped not_applicable, rate_limit_not_triggered.
// tripAttempts is how many calls a rate-limit trip makes at most: its
// max_attempts, at least one, at most 500.
func tripAttempts(rt *spec.RateLimitTrip) int { return min(max(rt.MaxAttempts, 1), 500) }

func (r *runner) tripRateLimit(ctx context.Context, st *spec.Step, req Request) (*spec.Observation, []*spec.Observation, *spec.Skip) {
	rt := st.RateLimitTrip
	attempts := tripAttempts(rt)
	maxWait := 30 * time.Second
	if rt.ReplayMaxWaitSeconds > 0 {
		maxWait = time.Duration(rt.ReplayMaxWaitSeconds) * time.Second
	}
	sample, err := expr.Substitute(spec.Normalize(rt.TripTargetSampleRequest), r.vars)
	body, ok := sample.(map[string]any)
	if err != nil || !ok {
		body = map[string]any{}
	}
	var out []*spec.Observation
	for i := range attempts {
		if ctx.Err() != nil {
			break
		}
		one := req
		one.Task, one.ProbeID, one.Args = rt.TripTargetTask, fmt.Sprintf("%s#burst%d", req.ProbeID, i+1), cloneMap(body)
		one.Args["idempotency_key"] = r.vars.UUID()
		o := r.d.Call(ctx, one)
		out = append(out, o)
		if o.ErrorCode != "RATE_LIMITED" {
			continue
		}
		wait, _ := retryAfter(o, "RATE_LIMITED")
		if wait <= maxWait {
			sleep(ctx, wait)
			one.ProbeID = req.ProbeID + "#replay"
			replay := r.d.Call(ctx, one)
			out = append(out, replay)
			return replay, out, nil
		}
		return o, out, nil
	}
	return nil, nil, &spec.Skip{Reason: spec.NotApplicable, Detail: "rate_limit_not_triggered"}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func cloneMap(m map[string]any) map[string]any {
	c, _ := spec.Normalize(m).(map[string]any)
	if c == nil {
		c = map[string]any{}
	}
	return c
}

// retryAfter reports whether a reply carries the error code and how long
// it asks to wait.
func retryAfter(o *spec.Observation, code string) (time.Duration, bool) {
	if o == nil || o.ErrorCode != code {
		return 0, false
	}
	w, _ := rateLimitedWait(o)
	return w, true
}

// rateLimited reports whether a reply is a rate limit and how long the
// seller asked to wait (retry_after seconds, else Retry-After, else 1 s).
func rateLimited(o *spec.Observation) (time.Duration, bool) {
	if o == nil || (o.ErrorCode != "RATE_LIMITED" && o.Call.HTTPStatus != http.StatusTooManyRequests) {
		return 0, false
	}
	return rateLimitedWait(o)
}

// rateLimitedWait is the wait a reply asks for: retry_after seconds, else
// Retry-After, else 1 s.
func rateLimitedWait(o *spec.Observation) (time.Duration, bool) {
	wait := time.Second
	if ra, ok := o.Error["retry_after"].(float64); ok && ra >= 0 && ra < 3600 {
		wait = time.Duration(ra * float64(time.Second))
	} else if h := o.Header.Get("Retry-After"); h != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && n >= 0 && n < 3600 {
			wait = time.Duration(n) * time.Second
		}
	}
	return max(wait, 100*time.Millisecond), true
}

// expectsRateLimit reports whether a step's checks expect RATE_LIMITED.
func expectsRateLimit(st *spec.Step) bool {
	for _, v := range st.Validations {
		if v.Check != "error_code" {
			continue
		}
		if v.Value == "RATE_LIMITED" || slices.Contains(v.AllowedValues, any("RATE_LIMITED")) {
			return true
		}
	}
	return st.RateLimitTrip != nil
}

// uncaptured returns the step that declares the context output a token
// names but did not capture it ("" when no earlier step declares it).
func (r *runner) uncaptured(token string) string {
	return r.declared[contextName(token)]
}

// contextName is the context name a $context token reads ("" for any
// other token).
func contextName(token string) string {
	name, ok := strings.CutPrefix(token, "$context.")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(name, ".["); i >= 0 {
		name = name[:i]
	}
	return name
}

// completion returns the result a task_completion capture reads: the
// immediate payload when the reply is already terminal, else the result of
// the task polled to its end. A task that does not finish is a harness
// error (the note), never a capture failure blamed on the agent.
func (r *runner) completion(o *spec.Observation) (any, string) {
	if o == nil {
		return nil, "no reply to capture from"
	}
	if _, pending := pendingTask(o); !pending {
		return o.Payload, ""
	}
	done := r.finish(r.cur.ctx, r.cur.req, o)
	if done.Failure != "" {
		return nil, "task_completion capture: " + done.Failure
	}
	return done.Payload, ""
}

// The bounds of polling an asynchronous task.
const (
	taskPollFirst = 200 * time.Millisecond
	taskPollMax   = 2 * time.Second
	taskWait      = 30 * time.Second
)

// pendingTask returns the task id of a reply that is a task still running
// (status submitted or working, with a task_id).
func pendingTask(o *spec.Observation) (string, bool) {
	if o == nil || o.Refused {
		return "", false
	}
	status, _, _ := spec.Lookup(o.Payload, "status")
	id, _, _ := spec.Lookup(o.Payload, "task_id")
	tid, ok := id.(string)
	if !ok || tid == "" || (status != "submitted" && status != "working") {
		return "", false
	}
	return tid, true
}

// taskStatusTools are the AdCP task-status tasks, in order of preference.
var taskStatusTools = []string{"get_task_status", "tasks/get", "tasks_get"}

// finish polls a reply's running task to its end (the agent's task-status
// task, each poll recorded) and returns what the step is graded on: the
// task's result when it completed, its error when it failed or was
// rejected (a refusal, as if answered at once). A reply that is no running
// task is returned as it is. A task that does not end within taskWait, or
// an agent without a task-status task, makes the step an error.
func (r *runner) finish(ctx context.Context, req Request, o *spec.Observation) *spec.Observation {
	tid, pending := pendingTask(o)
	if !pending {
		return o
	}
	tool := ""
	for _, t := range taskStatusTools {
		if r.env.has(t) {
			tool = t
			break
		}
	}
	failed := func(why string) *spec.Observation {
		c := *o
		c.Failure = why
		return &c
	}
	if tool == "" {
		return failed("the agent answered with a running task and lists no task-status task to follow it")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	deadline := r.env.now().Add(taskWait)
	wait := taskPollFirst
	for n := 1; ; n++ {
		sleep(ctx, wait)
		if ctx.Err() != nil {
			return failed("the run's deadline passed while the task was running")
		}
		poll := req
		poll.Task, poll.ProbeID, poll.Args = tool, fmt.Sprintf("%s#poll%d", req.ProbeID, n), map[string]any{"task_id": tid, "include_result": true}
		p := r.d.Call(ctx, poll)
		if p.Failure != "" || p.Refused {
			return failed(fmt.Sprintf("polling task %s with %s did not answer its status", tid, tool))
		}
		status, _, _ := spec.Lookup(p.Payload, "status")
		switch status {
		case "completed":
			done := *p
			done.Task, done.Request = o.Task, o.Request
			result, _ := lookupObject(p.Payload, "result")
			done.Payload, done.PayloadRaw = withEnvelope(result, o.Payload), nil
			return &done
		case "failed", "rejected", "canceled":
			done := *p
			done.Task, done.Request, done.Refused = o.Task, o.Request, true
			done.Payload, done.PayloadRaw = withEnvelope(nil, o.Payload), nil
			if e, ok := lookupObject(p.Payload, "error"); ok {
				done.Error = e
				done.ErrorCode, _ = e["code"].(string)
			}
			return &done
		case "input-required", "auth-required":
			return failed(fmt.Sprintf("the task %s needs input (%v); the step proves nothing", tid, status))
		}
		if r.env.now().After(deadline) {
			return failed(fmt.Sprintf("the task %s did not finish within %s", tid, taskWait))
		}
		wait = min(wait*2, taskPollMax)
	}
}

// withEnvelope is the body a finished task is graded on: its result, with
// the context the seller echoed on its first reply (the task's result
// does not repeat the request's envelope).
func withEnvelope(result map[string]any, first any) map[string]any {
	out := map[string]any{}
	for k, v := range result {
		out[k] = v
	}
	if c, ok := lookupObject(first, "context"); ok {
		if _, has := out["context"]; !has {
			out["context"] = c
		}
	}
	return out
}

func lookupObject(v any, path string) (map[string]any, bool) {
	x, _, _ := spec.Lookup(v, path)
	m, ok := x.(map[string]any)
	return m, ok
}

// settle decides Passed from the required validations, then (on a pass)
// captures context outputs and records contributions.
func (r *runner) settle(st *spec.Step, ph *spec.Phase, res StepResult, facts check.Facts) StepResult {
	res.Passed = true
	for _, v := range res.Validations {
		if !v.Passed && v.Severity != "advisory" {
			res.Passed = false
		}
	}
	if res.Passed && len(st.ContextOutputs) > 0 {
		var payload any
		if facts.Obs != nil {
			payload = facts.Obs.Payload
		}
		cr := expr.Capture(st.ContextOutputs, payload, r.vars)
		for _, d := range cr.Deferred {
			// task_completion.<inner>: resolved against the completion
			// result, polled when the reply is a non-terminal task.
			inner, _ := expr.TaskCompletionInner(d.Path)
			done, note := r.completion(facts.Obs)
			if note != "" {
				res.Error = note
				break
			}
			v, _, ok := spec.Lookup(done, inner)
			if !ok || v == nil || v == "" {
				cr.Failures = append(cr.Failures, expr.CaptureFailure{Name: d.Variable(), Path: d.Path, Present: ok, Actual: v, Pointer: spec.Pointer(inner)})
				continue
			}
			if cr.Values == nil && len(cr.Failures) == 0 {
				cr.Values = map[string]any{}
			}
			if cr.Values != nil {
				cr.Values[d.Variable()] = v
			}
		}
		switch {
		case cr.Err != nil:
			res.Notes = append(res.Notes, "context_outputs: "+cr.Err.Error())
		case len(cr.Failures) > 0:
			res.Passed = false
			for _, f := range cr.Failures {
				res.Validations = append(res.Validations, f.Result())
			}
		}
		if len(cr.Failures) == 0 {
			for k, v := range cr.Values {
				r.vars.Context[k] = v
			}
		}
	}
	if res.Passed && facts.Obs != nil && len(r.convention) > 0 {
		res.Notes = append(res.Notes, r.captureByConvention(facts.Obs.Payload)...)
	}
	r.passed[st.ID] = res.Passed
	if res.Passed && facts.Obs != nil && facts.Obs.Refused && !st.ExpectError {
		// The storyboard's checks accept an error here (some steps allow
		// either, "Both are valid"); the step passes as authored, and says
		// so, so an error where success was meant is never a silent pass.
		code := facts.Obs.ErrorCode
		if code == "" {
			code = "an error without a code"
		}
		res.Notes = append(res.Notes, fmt.Sprintf("passed on an error reply (%s): the step's checks accept it; the step does not declare expect_error", code))
	}
	if res.Passed {
		if flag := contributionFlag(st, ph); flag != "" {
			ok := true
			if st.ContributesIf != "" {
				var err error
				ok, err = expr.EvalContributesIf(st.ContributesIf, func(id string) (bool, bool) { p, seen := r.passed[id]; return p, seen })
				if err != nil {
					ok = false
					res.Notes = append(res.Notes, fmt.Sprintf("contributes_if %q cannot be evaluated: %v", st.ContributesIf, err))
				}
			}
			if ok {
				if _, dup := r.contributions[flag]; !dup {
					r.contributions[flag] = ph.ID + "." + st.ID
				}
			}
		}
	}
	return res
}

func contributionFlag(st *spec.Step, ph *spec.Phase) string {
	if st.ContributesTo != "" {
		return st.ContributesTo
	}
	if st.Contributes && ph.BranchSet != nil {
		return ph.BranchSet.ID
	}
	return ""
}

// stepGate returns why a step cannot run, or nil.
func (r *runner) stepGate(st *spec.Step, task, agent string) *spec.Skip {
	if agent != "" {
		// Another logical agent's step: the run knows neither its tools
		// nor its capabilities, so only the run's own gates apply.
		if r.env.Mutating != nil && r.env.Mutating(task) && !r.env.AllowMutations {
			return &spec.Skip{Reason: spec.NotApplicable, Detail: "mutating probes not allowed (--allow-mutations): " + task}
		}
		return nil
	}
	if need, ok := runnerTasks[task]; ok {
		if need != "" && need != substitutionContract && (need != "webhook_receiver" || r.env.Webhooks == nil || !slices.Contains(webhookTasks, task) && !slices.Contains(keyTasks, task)) {
			return &spec.Skip{Reason: spec.RequirementUnmet, Detail: unmetRunnerTask(task, need, r.env.Webhooks != nil)}
		}
	} else {
		if task == controllerTool {
			if !r.env.has(controllerTool) {
				return &spec.Skip{Reason: spec.MissingTestController, Detail: "the agent does not advertise comply_test_controller"}
			}
			if !r.env.Sandbox {
				return &spec.Skip{Reason: spec.MissingTestController, Detail: "comply_test_controller is driven only on a sandbox (--sandbox)"}
			}
		} else if !r.env.has(task) {
			return &spec.Skip{Reason: spec.MissingTool, Detail: fmt.Sprintf("%s is not among the agent's tools (%s)", task, strings.Join(r.env.Tools, ", "))}
		}
		// The controller is the sandbox's (--sandbox, above), as RunMode
		// selects and the seeding drives it: skipping its steps in a
		// read-only sandbox run left the stateful steps after them to fail
		// on state nobody forced.
		if r.env.Mutating != nil && r.env.Mutating(task) && !r.env.AllowMutations && task != controllerTool {
			return &spec.Skip{Reason: spec.NotApplicable, Detail: "mutating probes not allowed (--allow-mutations): " + task}
		}
	}
	if r.liveKit(st) && !r.env.LiveCredential {
		// The test kit is a live-mode principal (acme-outdoor-live): the
		// step is about what the agent does for a live account, and the
		// run holds only its own credential, not that principal's (the
		// kit's demo key is never sent: the user gives a real one).
		return &spec.Skip{Reason: spec.RequirementUnmet, Detail: fmt.Sprintf("the step authenticates as the test kit's live-mode principal (%v, sandbox: false); the run has only its own credential: give a live-mode principal's with --live-bearer-env NAME", r.kit["id"])}
	}
	if st.RequiresTool != "" && !r.env.has(st.RequiresTool) {
		return &spec.Skip{Reason: spec.MissingTool, Detail: fmt.Sprintf("%s is not among the agent's tools", st.RequiresTool)}
	}
	if st.RequiresCapability != nil {
		if ok, detail := expr.EvalCapability(st.RequiresCapability, r.env.Capabilities); !ok {
			return &spec.Skip{Reason: spec.NotApplicable, Detail: detail}
		}
	}
	if st.RequiresContract != "" && !slices.Contains(runnerContracts, st.RequiresContract) &&
		(st.RequiresContract != webhookContract || r.env.Webhooks == nil) {
		return &spec.Skip{Reason: spec.UnsatisfiedContract, Detail: "the test-kit contract " + st.RequiresContract + " is not in scope for this run"}
	}
	if task == "expect_rate_limit_not_replayed" {
		switch rt := st.RateLimitTrip; {
		case rt == nil || rt.TripTargetTask == "":
			return &spec.Skip{Reason: spec.RequirementUnmet, Detail: "expect_rate_limit_not_replayed without a rate_limit_trip target"}
		case !r.env.has(rt.TripTargetTask):
			return &spec.Skip{Reason: spec.MissingTool, Detail: rt.TripTargetTask + " is not among the agent's tools"}
		case r.env.Mutating != nil && r.env.Mutating(rt.TripTargetTask) && !r.env.AllowMutations:
			return &spec.Skip{Reason: spec.NotApplicable, Detail: "mutating probes not allowed (--allow-mutations): " + rt.TripTargetTask}
		}
	}
	return nil
}

// liveKit reports whether the step authenticates as its test kit's
// live-mode principal (auth.from_test_kit on a kit with sandbox: false).
func (r *runner) liveKit(st *spec.Step) bool {
	return st.Auth != nil && st.Auth.FromTestKit == true && r.kit["sandbox"] == false
}

// request builds a step's request: the sample request with every
// substitution resolved, the context inputs injected, and what the spec
// says a caller adds (an idempotency_key on a mutating task). It returns
// the unresolved token when one remains.
func (r *runner) request(st *spec.Step) (map[string]any, string) {
	var req map[string]any
	if st.SampleRequest != nil {
		v, err := expr.Substitute(spec.Normalize(st.SampleRequest), r.vars)
		var ue *expr.UnresolvedError
		if errors.As(err, &ue) {
			return nil, ue.Token
		}
		if err != nil {
			return nil, err.Error()
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, "sample_request is not an object"
		}
		req = m
	} else {
		req = map[string]any{}
	}
	// A missing key is a no-op (storyboard-schema.yaml, context_inputs).
	_, _ = expr.InjectInputs(req, st.ContextInputs, r.vars.Context)
	if st.Task == controllerTool {
		// "The runner MUST set sandbox: true on every comply_test_controller
		// request" (comply-test-controller-request.json, account).
		acct, _ := req["account"].(map[string]any)
		if acct == nil {
			acct = map[string]any{}
		}
		acct["sandbox"] = true
		req["account"] = acct
	}
	if !st.OmitIdempotencyKey && r.env.Mutating != nil && r.env.Mutating(st.Task) {
		// Every mutating request carries an idempotency_key (3.x): a
		// caller mints one when the sample leaves it out.
		if _, ok := req["idempotency_key"]; !ok {
			req["idempotency_key"] = r.vars.UUID()
		}
	}
	return req, ""
}

// metadataPath is where the security storyboard's well-known documents
// are: RFC 9728 protected-resource metadata at the agent's origin with its
// path appended, and RFC 8414 metadata at the first authorization
// server's issuer.
func (r *runner) metadataPath(task string) (string, error) {
	if task == "protected_resource_metadata" {
		u := r.env.AgentURL
		i := strings.Index(u, "://")
		if i < 0 {
			return "", fmt.Errorf("agent URL %q has no scheme", u)
		}
		rest := u[i+3:]
		path := ""
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			path = rest[j:]
		}
		return "/.well-known/oauth-protected-resource" + strings.TrimSuffix(path, "/"), nil
	}
	for k := len(r.prior) - 1; k >= 0; k-- {
		o := r.prior[k]
		if o.Task != "protected_resource_metadata" {
			continue
		}
		if o.HTTPStatus != 0 && (o.HTTPStatus < 200 || o.HTTPStatus > 299) {
			return "", fmt.Errorf("nothing to fetch: the protected-resource metadata request answered HTTP %d, so no authorization server is named", o.HTTPStatus)
		}
		servers, _, found := spec.Lookup(o.Payload, "authorization_servers[0]")
		issuer, ok := servers.(string)
		switch {
		case !found:
			return "", errors.New("nothing to fetch: the protected-resource metadata has no authorization_servers[0]")
		case !ok:
			return "", fmt.Errorf("nothing to fetch: authorization_servers[0] of the protected-resource metadata is a %s, not an http(s) URL", rawjson.KindOfDecoded(servers).String())
		case !strings.HasPrefix(issuer, "https://") && !strings.HasPrefix(issuer, "http://"):
			return "", fmt.Errorf("nothing to fetch: authorization_servers[0] of the protected-resource metadata is %q, not an http(s) URL", spec.Clip(issuer, 120))
		}
		return strings.TrimSuffix(issuer, "/") + "/.well-known/oauth-authorization-server", nil
	}
	return "", errors.New("nothing to fetch: no protected-resource metadata was fetched before this step")
}
