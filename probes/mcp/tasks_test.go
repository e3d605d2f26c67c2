package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
)

func TestTaskAugmentedCallPollAndResult(t *testing.T) {
	ctx := context.Background()
	url, stop, err := seller.Start(ctx, seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cfg := mcp.Config{Endpoint: url, Timeout: 5 * time.Second}
	owner, _, err := mcp.Dial(ctx, cfg, "owner#initialize")
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if !strings.Contains(string(owner.Initialize.Result), `"tasks":{`) {
		t.Fatalf("the reference seller declares no tasks capability: %s", owner.Initialize.Result)
	}

	create := owner.CallToolTask(ctx, "create", "get_products", map[string]any{"brief": "sports"}, map[string]any{"ttl": 60000}, evidence.PurposeTask)
	if create.Kind != evidence.KindTask || create.HarnessError != "" {
		t.Fatalf("create = %+v", create)
	}
	// The request bytes recorded are the ones sent: params.task included.
	if len(create.Exchanges) == 0 || !strings.Contains(string(create.Exchanges[0].RequestBody), `"task":{"ttl":60000}`) {
		t.Fatalf("params.task missing from the recorded request: %+v", create.Exchanges)
	}
	handle, ok := mcp.ParseCreateTask(create.Result)
	if !ok || handle.PollInterval == nil || handle.TTL == nil || *handle.TTL != 60000 {
		t.Fatalf("no task handle in %s", create.Result)
	}

	polls, status := owner.PollTask(ctx, "get", handle, mcp.PollOptions{Wait: 5 * time.Second})
	if status != mcp.TaskCompleted || len(polls) == 0 || polls[0].ProbeID != "get/01" || polls[0].Method != mcp.MethodTasksGet {
		t.Fatalf("polling ended %q after %d polls", status, len(polls))
	}
	// The first poll waited for the server's pollInterval.
	if wait := polls[0].Started.Sub(create.Started); wait < time.Duration(*handle.PollInterval)*time.Millisecond {
		t.Errorf("first poll after %v, pollInterval %vms", wait, *handle.PollInterval)
	}

	res := owner.TaskMethod(ctx, "result", mcp.MethodTasksResult, handle.TaskID)
	var r struct {
		StructuredContent map[string]any `json:"structuredContent"`
		Meta              map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(res.Result, &r); err != nil || r.StructuredContent["products"] == nil {
		t.Fatalf("tasks/result = %s", res.Message)
	}
	// The task's result carries the body a direct call returns.
	direct := owner.CallTool(ctx, "direct", "get_products", map[string]any{"brief": "sports"})
	var d struct {
		StructuredContent map[string]any `json:"structuredContent"`
	}
	_ = json.Unmarshal(direct.Result, &d)
	a, _ := json.Marshal(r.StructuredContent["products"])
	b, _ := json.Marshal(d.StructuredContent["products"])
	if string(a) != string(b) {
		t.Errorf("task result products differ from the direct call's")
	}

	// A second session sees nothing of the first's task.
	intruder, _, err := mcp.Dial(ctx, cfg, "intruder#initialize")
	if err != nil {
		t.Fatal(err)
	}
	defer intruder.Close()
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel} {
		c := intruder.TaskMethod(ctx, "x", m, handle.TaskID)
		if c.Result != nil || c.RPCError == nil {
			t.Errorf("%s from another session = %s", m, c.Message)
		}
	}
	list := intruder.TaskMethod(ctx, "list", mcp.MethodTasksList, "")
	if list.Result == nil || strings.Contains(string(list.Result), handle.TaskID) {
		t.Errorf("tasks/list from another session = %s", list.Message)
	}
	if own := owner.TaskMethod(ctx, "list", mcp.MethodTasksList, ""); !strings.Contains(string(own.Result), handle.TaskID) {
		t.Errorf("tasks/list of the owner lacks its task: %s", own.Message)
	}

	// A ten-year TTL is clamped.
	huge := owner.CallToolTask(ctx, "ttl", "get_products", map[string]any{}, map[string]any{"ttl": 315360000000})
	if h, ok := mcp.ParseCreateTask(huge.Result); !ok || h.TTL == nil || *h.TTL >= 315360000000 {
		t.Errorf("ten-year TTL answered %s", huge.Result)
	}
}

func TestParseTask(t *testing.T) {
	for _, tc := range []struct {
		in     string
		ok     bool
		status string
	}{
		{`{"taskId":"a","status":"working","ttl":null,"pollInterval":500}`, true, "working"},
		{`{"taskId":"","status":"working"}`, false, ""},
		{`{"taskId":7,"status":"working"}`, false, ""},
		{`[1]`, false, ""},
		{`{"taskId":"b","status":3}`, true, ""},
	} {
		got, ok := mcp.ParseTask(json.RawMessage(tc.in))
		if ok != tc.ok || got.Status != tc.status {
			t.Errorf("ParseTask(%s) = %+v, %v", tc.in, got, ok)
		}
	}
	if _, ok := mcp.ParseCreateTask(json.RawMessage(`{"content":[]}`)); ok {
		t.Error("a CallToolResult parsed as a task handle")
	}
	if h, ok := mcp.ParseCreateTask(json.RawMessage(`{"task":{"taskId":"x","status":"completed","ttl":1000}}`)); !ok || *h.TTL != 1000 || h.PollInterval != nil {
		t.Errorf("ParseCreateTask = %+v, %v", h, ok)
	}
}

// TestParseTaskIsExactCase: a task's keys match exactly, as a client reads
// them; encoding/json's struct decoding read "TaskId" as taskId.
func TestParseTaskIsExactCase(t *testing.T) {
	if _, ok := mcp.ParseTask(json.RawMessage(`{"TaskId":"t1","status":"working"}`)); ok {
		t.Error("ParseTask reads TaskId as taskId")
	}
	got, ok := mcp.ParseTask(json.RawMessage(`{"taskId":"t1","TaskId":"t2","status":"working","Status":"completed","ttl":60000}`))
	if !ok || got.TaskID != "t1" || got.Status != "working" || got.TTL == nil || *got.TTL != 60000 {
		t.Errorf("ParseTask = %+v, %v", got, ok)
	}
	if _, ok := mcp.ParseCreateTask(json.RawMessage(`{"Task":{"taskId":"t1"}}`)); ok {
		t.Error("ParseCreateTask reads Task as task")
	}
}
