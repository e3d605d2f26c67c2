package mcp

// MCP Tasks (protocol revision 2025-11-25, the revision mcp-guide.mdx's "Async
// Operations via MCP Tasks" describes) on a go-sdk v1.8.0 session, which
// has no Tasks API of its own.
//
// The route, for the record:
//
//   - tasks/get, tasks/result, tasks/cancel and tasks/list are sent through
//     the SDK session itself as custom methods (sdk.AddSendingCustomMethod,
//     registered by Dial, and sdk.CallCustomMethod). They travel over the
//     session's own HTTP client, with the Mcp-Session-Id and
//     Mcp-Protocol-Version the SDK negotiated, and through the capturing
//     transport, so each comes back as an evidence.Call with raw bytes just
//     like CallTool. The SDK's decoded result is discarded (rawResult).
//   - The task-augmented tools/call needs params.task, which
//     sdk.CallToolParams has no field for. A small RoundTripper (taskPatcher)
//     sits above the capturing transport and merges the `task` member into
//     the params of a tools/call whose context asks for it, so the recorded
//     request bytes are the ones sent. The SDK decodes the CreateTaskResult
//     ({"task": …}) as an empty CallToolResult without an error; the raw
//     capture is what counts.
//
// notifications/tasks/status is not listened for (the standalone SSE stream
// is off); polling tasks/get is the way this client learns a task's status.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// The task methods of MCP Tasks.
const (
	MethodTasksGet    = "tasks/get"
	MethodTasksResult = "tasks/result"
	MethodTasksCancel = "tasks/cancel"
	MethodTasksList   = "tasks/list"
)

// MCP task statuses (2025-11-25).
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskStatuses are every MCP task status.
var TaskStatuses = []string{TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled}

// TerminalTaskStatus reports whether an MCP task status is terminal.
func TerminalTaskStatus(s string) bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// taskParams are the params of the task methods: taskId for get, result and
// cancel, nothing (or a cursor) for list.
type taskParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// rawResult accepts any result: the evidence is the captured bytes, never
// the SDK's decoded view.
type rawResult struct{ sdk.ResultBase }

// UnmarshalJSON ignores the result.
func (*rawResult) UnmarshalJSON([]byte) error { return nil }

// registerTaskMethods lets the client send the task methods.
func registerTaskMethods(c *sdk.Client) {
	for _, m := range []string{MethodTasksGet, MethodTasksResult, MethodTasksCancel, MethodTasksList} {
		_ = sdk.AddSendingCustomMethod[*taskParams, *rawResult](c, m)
	}
}

// taskPatchKey carries, in a request's context, the `task` member to merge
// into the params of a tools/call.
type taskPatchKey struct{}

// taskPatcher merges the task member its request's context carries into a
// tools/call's params, before the capturing transport below records the
// request. Other requests pass untouched.
type taskPatcher struct{ next http.RoundTripper }

// maxPatchBody bounds a request body the patcher rewrites.
const maxPatchBody = 4 << 20

func (p taskPatcher) RoundTrip(req *http.Request) (*http.Response, error) {
	task, ok := req.Context().Value(taskPatchKey{}).(json.RawMessage)
	if !ok || req.Method != http.MethodPost || req.Body == nil {
		return p.next.RoundTrip(req)
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxPatchBody+1))
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	if patched, ok := patchTask(body, task); ok {
		body = patched
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return p.next.RoundTrip(out)
}

// patchTask sets params.task of a single tools/call message.
func patchTask(body, task json.RawMessage) ([]byte, bool) {
	var msg map[string]json.RawMessage
	if len(body) > maxPatchBody || json.Unmarshal(body, &msg) != nil || msg == nil {
		return nil, false
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil || method != "tools/call" {
		return nil, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		params = map[string]json.RawMessage{}
	}
	params["task"] = task
	var err error
	if msg["params"], err = json.Marshal(params); err != nil {
		return nil, false
	}
	out, err := json.Marshal(msg)
	return out, err == nil
}

// CallToolTask sends a task-augmented tools/call: params.task is task (for
// example {"ttl": 60000}). A conformant server answers with a
// CreateTaskResult, {"task": {…}}, in call.Result. The call's Kind is
// evidence.KindTask.
func (s *Session) CallToolTask(ctx context.Context, probeID, tool string, args, task any, purposes ...evidence.Purpose) evidence.Call {
	call := evidence.Call{ProbeID: probeID, Transport: evidence.MCP, Kind: evidence.KindTask, Method: "tools/call", Tool: tool, Purposes: purposes, Started: time.Now()}
	raw, err := json.Marshal(task)
	if err != nil {
		call.HarnessError = "task parameter: " + err.Error()
		return call
	}
	out := s.CallTool(context.WithValue(ctx, taskPatchKey{}, json.RawMessage(raw)), probeID, tool, args, purposes...)
	out.Kind = evidence.KindTask
	return out
}

// TaskMethod sends one of the task methods (MethodTasksGet, …Result,
// …Cancel with taskID; MethodTasksList without) through the session and
// returns the raw reply as a call of Kind evidence.KindTask. tasks/result
// blocks on the server until the task is terminal, within the call timeout.
func (s *Session) TaskMethod(ctx context.Context, probeID, method, taskID string, purposes ...evidence.Purpose) evidence.Call {
	tctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	cctx, capture := wire.WithCapture(tctx, probeID)
	started := time.Now()
	_, err := sdk.CallCustomMethod[*taskParams, *rawResult](cctx, s.cs, method, &taskParams{TaskID: taskID})
	call := record(tctx, s.cfg, capture, evidence.Call{ProbeID: probeID, Transport: evidence.MCP, Kind: evidence.KindTask,
		Method: method, Purposes: purposes}, started)
	if call.Message == nil && call.HTTPStatus == 0 && call.HarnessError == "" && err != nil {
		call.HarnessError = err.Error()
	}
	return call
}

// Task is the MCP Task object, read leniently from raw bytes (judges read
// the raw reply themselves).
type Task struct {
	TaskID        string   `json:"taskId"`
	Status        string   `json:"status"`
	StatusMessage string   `json:"statusMessage,omitempty"`
	CreatedAt     string   `json:"createdAt,omitempty"`
	LastUpdatedAt string   `json:"lastUpdatedAt,omitempty"`
	TTL           *float64 `json:"ttl,omitempty"`
	PollInterval  *float64 `json:"pollInterval,omitempty"`
}

// ParseCreateTask reads the task of a CreateTaskResult ({"task": {…}});
// ok is false when result holds no task with a taskId.
func ParseCreateTask(result json.RawMessage) (Task, bool) {
	var r struct {
		Task *json.RawMessage `json:"task"`
	}
	if rawjson.Decode(result, &r) != nil || r.Task == nil {
		return Task{}, false
	}
	return ParseTask(*r.Task)
}

// ParseTask reads a Task object (a tasks/get or tasks/cancel result, whose
// task fields sit at the root); ok is false without a string taskId. Keys
// match exactly, as a client reads them ("TaskId" is not taskId).
func ParseTask(raw json.RawMessage) (Task, bool) {
	var t struct {
		TaskID        any             `json:"taskId"`
		Status        any             `json:"status"`
		StatusMessage any             `json:"statusMessage"`
		CreatedAt     any             `json:"createdAt"`
		LastUpdatedAt any             `json:"lastUpdatedAt"`
		TTL           json.RawMessage `json:"ttl"`
		PollInterval  json.RawMessage `json:"pollInterval"`
	}
	if rawjson.Decode(raw, &t) != nil {
		return Task{}, false
	}
	id, ok := t.TaskID.(string)
	if !ok || id == "" {
		return Task{}, false
	}
	out := Task{TaskID: id}
	out.Status, _ = t.Status.(string)
	out.StatusMessage, _ = t.StatusMessage.(string)
	out.CreatedAt, _ = t.CreatedAt.(string)
	out.LastUpdatedAt, _ = t.LastUpdatedAt.(string)
	out.TTL, out.PollInterval = number(t.TTL), number(t.PollInterval)
	return out, true
}

func number(raw json.RawMessage) *float64 {
	var f float64
	if len(raw) == 0 || json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return &f
}

// Polling bounds.
const (
	// MinPollInterval is the shortest pause between two tasks/get, whatever
	// pollInterval the server asks for.
	MinPollInterval = 50 * time.Millisecond
	// DefaultPollInterval is the pause when the server gives none.
	DefaultPollInterval = time.Second
	// DefaultTaskWait bounds the polling of one task when PollOptions.Wait
	// is zero.
	DefaultTaskWait = 20 * time.Second
	// MaxPolls bounds the tasks/get of one task.
	MaxPolls = 60
)

// PollOptions bound PollTask.
type PollOptions struct {
	// Wait bounds the whole polling; 0 means DefaultTaskWait.
	Wait time.Duration
	// Purposes tag every tasks/get call.
	Purposes []evidence.Purpose
}

// PollTask polls tasks/get for the task until it reaches a terminal
// status, the wait or MaxPolls runs out, the server stops answering with a
// task, or ctx ends. Between two polls it pauses for the server's latest
// pollInterval (from handle, then from each reply), at least
// MinPollInterval and never past the wait. The i-th call's probe ID is
// probePrefix + "/01", "/02", …; every call is returned, in order, and the
// last task status seen ("" when none).
func (s *Session) PollTask(ctx context.Context, probePrefix string, handle Task, opts PollOptions) ([]evidence.Call, string) {
	wait := opts.Wait
	if wait <= 0 {
		wait = DefaultTaskWait
	}
	deadline := time.Now().Add(wait)
	interval := pollInterval(handle.PollInterval)
	status := handle.Status
	var calls []evidence.Call
	for i := 1; i <= MaxPolls; i++ {
		if i > 1 || !TerminalTaskStatus(status) {
			pause := min(interval, time.Until(deadline))
			if pause < 0 {
				break
			}
			select {
			case <-ctx.Done():
				return calls, status
			case <-time.After(pause):
			}
		}
		c := s.TaskMethod(ctx, probePrefix+"/"+twoDigits(i), MethodTasksGet, handle.TaskID, opts.Purposes...)
		calls = append(calls, c)
		t, ok := ParseTask(c.Result)
		if !ok {
			return calls, ""
		}
		status = t.Status
		if TerminalTaskStatus(status) || time.Now().After(deadline) {
			return calls, status
		}
		if t.PollInterval != nil {
			interval = pollInterval(t.PollInterval)
		}
	}
	return calls, status
}

func pollInterval(ms *float64) time.Duration {
	if ms == nil || *ms != *ms {
		return DefaultPollInterval
	}
	d := time.Duration(min(*ms, float64(time.Hour/time.Millisecond)) * float64(time.Millisecond))
	return max(d, MinPollInterval)
}

func twoDigits(i int) string {
	if i < 10 {
		return "0" + string(rune('0'+i))
	}
	b, _ := json.Marshal(i)
	return string(b)
}
