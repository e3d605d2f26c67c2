package plan

import (
	"context"
	"encoding/json"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// The MCP Tasks probes (TASK-01…05), on two sessions of their own: the
// owner, which creates and polls the tasks, and the intruder, which asks for
// the owner's task (TASK-04). Probe IDs:
//
//	mcp/task/get_products/create        task-augmented get_products (KindTask)
//	mcp/task/get_products/get/NN        tasks/get polling (KindTask)
//	mcp/task/get_products/result        tasks/result (KindToolCall, PurposeTaskResult)
//	mcp/task/get_products_error/…       the same with a wrong-typed brief (an error task)
//	mcp/task/isolation/{get,result,cancel,list}  the intruder's requests
//	mcp/task/isolation/owner_get        the owner's tasks/get afterwards
//	mcp/task/cancel/create              a task-augmented get_products asking for asynchronous work (KindTask)
//	mcp/task/cancel/cancel              the owner's tasks/cancel of it, sent at once (KindTask)
//	mcp/task/cancel/get                 the owner's tasks/get of the cancelled task (KindTask)
//	mcp/task/ttl/create                 a task-augmented call asking for a ten-year TTL
//
// tasks/result replies are recorded as tool calls of get_products, so the
// envelope, error and schema rules judge them as they judge a direct
// result; the error task's result also carries PurposeErrorWrongType, so
// the error rules treat it as the error probe it is.

// Probe IDs of the task probes, after "mcp/".
const (
	TaskProbe      = "task/get_products"
	TaskErrorProbe = "task/get_products_error"
	TaskIsolation  = "task/isolation"
	TaskTTLProbe   = "task/ttl/create"
	// TaskCancelProbe is the task the harness cancels itself (TASK-03).
	TaskCancelProbe = "task/cancel"
)

// TaskTTL is the TTL (ms) the task probes ask for; HugeTaskTTL is the
// ten-year TTL of the TTL-clamp probe.
const (
	TaskTTL     = 60_000
	HugeTaskTTL = 10 * 365 * 24 * 3600 * 1000
)

// NotDeclaredTasks is the skip reason when the server does not declare the
// tasks capability.
const NotDeclaredTasks = "the server does not declare the MCP tasks capability"

func init() { registerMCP(taskProbes) }

// taskProbes runs the MCP Tasks probes on sellers declaring the tasks
// capability with task-augmented tools/call, and a get_products whose
// execution.taskSupport is "optional"; otherwise it records the probes as
// not run, with the reason.
func taskProbes(ctx context.Context, env Env) {
	if !contains(env.Listed, "get_products") {
		return
	}
	ids := []struct {
		id string
		p  evidence.Purpose
	}{{TaskProbe + "/create", evidence.PurposeTask}, {TaskIsolation + "/get", evidence.PurposeTaskIsolation}, {TaskTTLProbe, evidence.PurposeTaskTTL}}
	notRun := func(reason string, harness bool) {
		for _, x := range ids {
			c := evidence.Call{ProbeID: "mcp/" + x.id, Transport: evidence.MCP, Kind: evidence.KindTask, Tool: "get_products", Purposes: []evidence.Purpose{x.p}}
			if harness {
				c.HarnessError = reason
			} else {
				c.NotRun = reason
			}
			env.Add(c)
		}
	}
	if reason := tasksUndeclared(env.Shared.Initialize.Result); reason != "" {
		notRun(reason, false)
		return
	}
	owner, init, err := mcp.Dial(ctx, env.Config.MCP, "mcp/task#initialize")
	if err != nil {
		notRun(init.ProbeID+": "+err.Error(), true)
		return
	}
	defer owner.Close()
	if support := taskSupportOf(owner.ListTools(ctx, "mcp/task#tools/list").Result, "get_products"); support != "optional" && support != "required" {
		notRun("get_products does not declare execution.taskSupport \"optional\" (it declares "+quoted(support)+")", false)
		return
	}
	cfg := env.Config
	args := cfg.Inputs.base("get_products")
	merge(args, argsOf("get_products"))
	handle, ok := runTask(ctx, env, owner, TaskProbe, args, nil)

	errArgs := with(args, "brief", 42)
	runTask(ctx, env, owner, TaskErrorProbe, errArgs, []evidence.Purpose{evidence.PurposeErrorWrongType})

	isolation(ctx, env, owner, handle, ok)

	cancelTask(ctx, env, owner, args)

	ttl := owner.CallToolTask(ctx, "mcp/"+TaskTTLProbe, "get_products", args, map[string]any{"ttl": HugeTaskTTL}, evidence.PurposeTaskTTL)
	ttl.Arguments, ttl.Context = redactedArgs(args)
	ttl.Credential = "configured"
	env.Add(ttl)
}

// runTask makes a task-augmented get_products call on the owner's session,
// polls it to a terminal status and fetches its result; it returns the task
// handle when the seller gave one.
func runTask(ctx context.Context, env Env, owner *mcp.Session, prefix string, args map[string]any, resultPurposes []evidence.Purpose) (mcp.Task, bool) {
	create := owner.CallToolTask(ctx, "mcp/"+prefix+"/create", "get_products", args, map[string]any{"ttl": TaskTTL}, evidence.PurposeTask)
	create.Arguments, create.Context = redactedArgs(args)
	create.Credential = "configured"
	env.Add(create)
	result := evidence.Call{ProbeID: "mcp/" + prefix + "/result", Transport: evidence.MCP, Kind: evidence.KindToolCall, Method: mcp.MethodTasksResult,
		Tool: "get_products", Purposes: append([]evidence.Purpose{evidence.PurposeTaskResult}, resultPurposes...)}
	handle, ok := mcp.ParseCreateTask(create.Result)
	if !ok {
		if create.Answered() {
			result.NotRun = "the task-augmented call returned no task handle"
		} else {
			result.NotRun = "the task-augmented call was not answered"
		}
		env.Add(result)
		return handle, false
	}
	polls, status := owner.PollTask(ctx, "mcp/"+prefix+"/get", handle, mcp.PollOptions{Wait: env.Config.TaskWait, Purposes: []evidence.Purpose{evidence.PurposeTask}})
	for _, c := range polls {
		c.Tool = "get_products"
		env.Add(c)
	}
	if !mcp.TerminalTaskStatus(status) {
		result.NotRun = "the task did not reach a terminal status within the wait"
		env.Add(result)
		return handle, true
	}
	r := owner.TaskMethod(ctx, result.ProbeID, mcp.MethodTasksResult, handle.TaskID, result.Purposes...)
	r.Kind, r.Tool = evidence.KindToolCall, "get_products"
	r.Arguments, r.Context = redactedArgs(args)
	r.Credential = "configured"
	env.Add(r)
	return handle, true
}

// isolation asks, from a second session, for the owner's task: tasks/get,
// tasks/result, tasks/cancel and tasks/list; then the owner reads its task
// again, to see whether the cancel took.
func isolation(ctx context.Context, env Env, owner *mcp.Session, handle mcp.Task, ok bool) {
	methods := []struct{ name, method string }{{"get", mcp.MethodTasksGet}, {"result", mcp.MethodTasksResult}, {"cancel", mcp.MethodTasksCancel}, {"list", mcp.MethodTasksList}}
	base := "mcp/" + TaskIsolation + "/"
	if !ok {
		for _, m := range methods {
			env.Add(evidence.Call{ProbeID: base + m.name, Transport: evidence.MCP, Kind: evidence.KindTask, Method: m.method,
				Purposes: []evidence.Purpose{evidence.PurposeTaskIsolation}, NotRun: "the first session got no task handle"})
		}
		return
	}
	intruder, init, err := mcp.Dial(ctx, env.Config.MCP, base+"intruder#initialize")
	if err != nil {
		env.Add(evidence.Call{ProbeID: base + "get", Transport: evidence.MCP, Kind: evidence.KindTask, Method: mcp.MethodTasksGet,
			Purposes: []evidence.Purpose{evidence.PurposeTaskIsolation}, Exchanges: init.Exchanges, HarnessError: err.Error()})
		return
	}
	defer intruder.Close()
	for _, m := range methods {
		id := handle.TaskID
		if m.method == mcp.MethodTasksList {
			id = ""
		}
		c := intruder.TaskMethod(ctx, base+m.name, m.method, id, evidence.PurposeTaskIsolation)
		c.Arguments, _ = json.Marshal(map[string]string{"taskId": handle.TaskID})
		env.Add(c)
	}
	env.Add(owner.TaskMethod(ctx, base+"owner_get", mcp.MethodTasksGet, handle.TaskID, evidence.PurposeTaskIsolation))
}

// cancelTask creates a task asking for asynchronous work (the webhook
// probes' brief: curation a seller may take a while over), cancels it at
// once and reads it back: TASK-03 judges the status a cancelled task
// reports ("cancelled", never the AdCP spelling "canceled"). A seller that
// finished the task before the cancel arrived refuses the cancel; the
// probe then shows nothing about cancellation, and the judge says so.
func cancelTask(ctx context.Context, env Env, owner *mcp.Session, args map[string]any) {
	base := "mcp/" + TaskCancelProbe + "/"
	cargs := with(args, "brief", AsyncBrief)
	create := owner.CallToolTask(ctx, base+"create", "get_products", cargs, map[string]any{"ttl": TaskTTL}, evidence.PurposeTask)
	create.Arguments, create.Context = redactedArgs(cargs)
	create.Credential = "configured"
	env.Add(create)
	handle, ok := mcp.ParseCreateTask(create.Result)
	if !ok {
		reason := "the task-augmented call returned no task handle"
		if !create.Answered() {
			reason = "the task-augmented call was not answered"
		}
		for _, m := range []struct{ name, method string }{{"cancel", mcp.MethodTasksCancel}, {"get", mcp.MethodTasksGet}} {
			env.Add(evidence.Call{ProbeID: base + m.name, Transport: evidence.MCP, Kind: evidence.KindTask, Method: m.method, Tool: "get_products",
				Purposes: []evidence.Purpose{evidence.PurposeTask}, NotRun: reason})
		}
		return
	}
	for _, m := range []struct{ name, method string }{{"cancel", mcp.MethodTasksCancel}, {"get", mcp.MethodTasksGet}} {
		c := owner.TaskMethod(ctx, base+m.name, m.method, handle.TaskID, evidence.PurposeTask)
		c.Tool = "get_products"
		env.Add(c)
	}
}

// tasksUndeclared returns why the task probes cannot run on a server with
// this initialize result, or "".
func tasksUndeclared(initResult json.RawMessage) string {
	var r struct {
		Capabilities struct {
			Tasks *struct {
				Requests *struct {
					Tools *struct {
						Call *json.RawMessage `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
		} `json:"capabilities"`
	}
	if rawjson.Decode(initResult, &r) != nil || r.Capabilities.Tasks == nil {
		return NotDeclaredTasks
	}
	if t := r.Capabilities.Tasks; t.Requests == nil || t.Requests.Tools == nil || t.Requests.Tools.Call == nil {
		return "the server's tasks capability does not declare requests.tools.call"
	}
	return ""
}

// taskSupportOf returns the execution.taskSupport a tools/list result gives
// the tool ("" when absent).
func taskSupportOf(listResult json.RawMessage, tool string) string {
	var r struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution struct {
				TaskSupport any `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if rawjson.Decode(listResult, &r) != nil {
		return ""
	}
	for _, t := range r.Tools {
		if t.Name == tool {
			s, _ := t.Execution.TaskSupport.(string)
			return s
		}
	}
	return ""
}

func quoted(s string) string {
	if s == "" {
		return "nothing"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
