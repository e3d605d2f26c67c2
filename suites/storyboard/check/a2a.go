package check

import (
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// a2aTask decodes the raw JSON-RPC result of an A2A send into the Task
// object: the result itself (A2A 0.3, kind "task") or its "task" member
// (A2A 1.0 SendMessageResponse). ok is false when the result is no Task
// (a Message, a non-object).
func a2aTask(f Facts) (task map[string]any, what string, ok bool) {
	doc, err := spec.DecodeJSON(f.Obs.A2AResult)
	if err != nil {
		return nil, "a JSON-RPC result that is not JSON", false
	}
	obj, isObj := doc.(map[string]any)
	if !isObj {
		return nil, "a JSON-RPC result that is not an object: " + spec.Shown(doc), false
	}
	if t, has := obj["task"].(map[string]any); has {
		return t, "", true
	}
	if m, has := obj["message"].(map[string]any); has && obj["id"] == nil {
		return m, "a Message, not a Task", false
	}
	if k, _ := obj["kind"].(string); k == "message" {
		return obj, "a Message, not a Task", false
	}
	return obj, "", true
}

// a2aState normalises an A2A task state: the 0.3 wire value
// ("completed", "input-required") or the 1.0 enum ("TASK_STATE_COMPLETED").
func a2aState(s string) string {
	s = strings.ToLower(s)
	s = strings.TrimPrefix(s, "task_state_")
	return strings.ReplaceAll(s, "_", "-")
}

// lastDataPart returns the data of the last non-null, object-typed
// DataPart across the Task's artifacts, in order, and its pointer.
// A DataPart is a part with kind "data" (A2A 0.3) or, without kind, a
// "data" member (A2A 1.0).
func lastDataPart(task map[string]any) (data map[string]any, pointer string) {
	arts, _ := task["artifacts"].([]any)
	for i, a := range arts {
		am, _ := a.(map[string]any)
		parts, _ := am["parts"].([]any)
		for j, p := range parts {
			pm, _ := p.(map[string]any)
			if pm == nil {
				continue
			}
			if k, has := pm["kind"]; has && k != "data" {
				continue
			}
			d, isObj := pm["data"].(map[string]any)
			if !isObj {
				continue
			}
			data, pointer = d, "/artifacts/"+strconv.Itoa(i)+"/parts/"+strconv.Itoa(j)+"/data"
		}
	}
	return data, pointer
}

// checkA2ASubmittedArtifact asserts the A2A envelope of an AdCP submitted
// arm (universal/storyboard-schema.yaml "A2A wire-shape"): Task.id and
// Task.contextId non-empty, the Task state completed, and the last
// object-typed DataPart's data.status "submitted". Not applicable over
// other transports.
func checkA2ASubmittedArtifact(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	if f.Obs == nil || f.Obs.Transport != "a2a" {
		return r.NA("a2a_submitted_artifact applies to A2A replies only")
	}
	if out, done := noObservation(r, f); done {
		return out
	}
	if len(f.Obs.A2AResult) == 0 {
		return r.Fail(ptr("/result"), "an A2A Task", nil, "the A2A reply carried no JSON-RPC result (an error or nothing): no submitted-arm Task")
	}
	task, what, ok := a2aTask(f)
	if !ok {
		return r.Fail(ptr("/result"), "an A2A Task", nil, "the A2A result is %s", what)
	}
	for _, k := range []string{"id", "contextId"} {
		if s, _ := task[k].(string); s == "" {
			return r.Fail(ptr("/result/"+k), "a non-empty string", task[k], "Task.%s is absent or empty", k)
		}
	}
	status, _ := task["status"].(map[string]any)
	state, _ := status["state"].(string)
	if a2aState(state) != "completed" {
		return r.Fail(ptr("/result/status/state"), "completed", status["state"],
			"Task state is %s; the submitted arm rides a completed Task", spec.Shown(status["state"]))
	}
	data, pointer := lastDataPart(task)
	if data == nil {
		return r.Fail(ptr("/result/artifacts"), map[string]any{"status": "submitted"}, nil,
			"the Task carries no object-typed DataPart with the AdCP response")
	}
	if s, _ := data["status"].(string); s != "submitted" {
		return r.Fail(ptr("/result"+pointer+"/status"), "submitted", data["status"],
			"the last DataPart's status is %s, not \"submitted\"", spec.Shown(data["status"]))
	}
	return r.Pass()
}

// checkA2AContextContinuity asserts that a follow-up A2A send that named a
// contextId got a Task carrying the same contextId.
//
// The spec lists a2a_context_continuity in runner-output-contract.yaml
// authored_check_kinds (3.1.19 and 3.2.0-beta.5) but
// storyboard-schema.yaml gives it no semantics. Decision: the rule
// graded is A2A's: a send that binds to an existing context
// (params.message.contextId) is answered within that context, so the
// Task's contextId echoes it. Everything else grades not_applicable: no
// contextId sent (the first A2A step, MCP), a reply that is no Task (a
// JSON-RPC error), or a Message reply without a contextId (optional on a
// Message).
func checkA2AContextContinuity(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	if f.Obs == nil || f.Obs.Transport != "a2a" {
		return r.NA("a2a_context_continuity applies to A2A replies only")
	}
	if out, done := noObservation(r, f); done {
		return out
	}
	if f.A2AContextSent == "" {
		return r.NA("no_prior_a2a_context_id: the runner sent no contextId on this step, so there is no continuity to check")
	}
	if len(f.Obs.A2AResult) == 0 {
		return r.NA("a2a_jsonrpc_error_envelope: the reply carried no Task to read a contextId from")
	}
	task, what, ok := a2aTask(f)
	if task == nil {
		return r.Fail(ptr("/result"), f.A2AContextSent, nil, "the A2A result is %s", what)
	}
	got, has := task["contextId"]
	if !ok && (!has || got == nil) {
		return r.NA("the reply is %s without a contextId (optional on a Message)", what)
	}
	if s, _ := got.(string); s == "" {
		return r.Fail(ptr("/result/contextId"), f.A2AContextSent, got,
			"contextId is absent or empty on a follow-up send that named %q", f.A2AContextSent)
	} else if s != f.A2AContextSent {
		return r.Fail(ptr("/result/contextId"), f.A2AContextSent, s,
			"contextId %s does not match the forwarded contextId %q", spec.Shown(s), f.A2AContextSent)
	}
	return r.Pass()
}
