package suites

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The task probes' IDs (probes/plan/tasks.go), after "mcp/".
const (
	taskFlow      = "task/get_products"
	taskErrorFlow = "task/get_products_error"
	taskIsolation = "task/isolation"
	taskTTLProbe  = "task/ttl/create"
	taskCancel    = "task/cancel"
	// hugeTTL is the ten-year TTL (ms) the TTL probe asks for.
	hugeTTL = 10 * 365 * 24 * 3600 * 1000
)

// mcpTaskStatuses are the MCP task statuses (2025-11-25).
var mcpTaskStatuses = map[string]bool{"working": true, "input_required": true, "completed": true, "failed": true, "cancelled": true}

// adcpToMCPStatus is mcp-guide.mdx's AdCP Status Mapping.
var adcpToMCPStatus = map[string]string{
	"working": "working", "submitted": "working", "input-required": "input_required", "completed": "completed",
	"failed": "failed", "rejected": "failed", "canceled": "cancelled", "auth-required": "input_required",
}

func taskChecks() []Check {
	return []Check{
		// Rule: TASK-01 · Spec: mcp-guide.mdx (Async Operations via MCP Tasks); MCP 2025-11-25 Tasks · Since: 0.1.0 ·
		// Description: when the server declares the tasks capability, a task-augmented
		// tools/call (params.task {ttl}) to get_products (taskSupport "optional") MUST return a
		// task handle, result.task with taskId (a non-empty string), status (an MCP task
		// status), createdAt (an RFC 3339 date-time) and ttl (a number, or null for
		// unlimited), instead of the tool result; pollInterval, when present, is a
		// non-negative number. Each occurrence of a repeated member is judged.
		// Policy: the catalogue's member list names pollInterval, but MCP 2025-11-25's
		// schema makes it optional (Task.pollInterval?: "Suggested polling interval"),
		// so a handle without it is the schema's and is never failed.
		{ID: "TASK-01", Transport: catalogue.MCP, Text: "answers a task-augmented call with a task handle", Judge: judgeTASK01},
		// Rule: TASK-02 · Spec: mcp-guide.mdx (Async Operations via MCP Tasks) · Since: 0.1.0 ·
		// Description: tasks/get MUST answer the owner's task (same taskId, an MCP status) and
		// reach a terminal status (completed, failed, cancelled) within the harness's wait
		// and the task's TTL, the harness honouring pollInterval; tasks/result MUST then
		// return the CallToolResult (content an array). The tasks/result replies are
		// recorded as tool calls, so the ENV, ERR and SCHEMA rules judge them as well.
		// Policy: a failed task's tasks/result may be a JSON-RPC error (a request that
		// failed before producing a tool result); a cancelled task's is not judged.
		{ID: "TASK-02", Transport: catalogue.MCP, Text: "reaches a terminal task status and returns the tool result from tasks/result", Judge: judgeTASK02},
		// Rule: TASK-03 · Spec: mcp-guide.mdx (AdCP Status Mapping) · Since: 0.1.0 ·
		// Description: MCP task statuses MUST map from the AdCP status as the table says
		// (submitted→working, input-required/auth-required→input_required,
		// rejected→failed, canceled→cancelled, the others unchanged). Judged on every
		// tasks/get status (an AdCP spelling is not an MCP status), on the terminal
		// status beside the AdCP body tasks/result returns (an isError result maps to
		// failed), and on a task the harness cancels itself (AdCP canceled): once
		// tasks/cancel is accepted (answered with a task, not an error), the cancel
		// reply and the next tasks/get say "cancelled" (MCP 2025-11-25: a cancelled
		// task stays cancelled). A refused cancel (the task was already terminal) is
		// not judged: it shows nothing about cancellation.
		{ID: "TASK-03", Transport: catalogue.MCP, Text: "maps AdCP statuses to MCP task statuses", Judge: judgeTASK03},
		// Rule: TASK-04 · Spec: mcp-guide.mdx (Production task isolation) · Since: 0.1.0 ·
		// Description: tasks MUST be scoped to their session: a second session's tasks/get,
		// tasks/result and tasks/cancel of the first session's taskId MUST be refused (a
		// JSON-RPC error), tasks/list MUST NOT show it (a task whose taskId is exactly
		// the first's), and the first session's task MUST NOT end up cancelled.
		// Policy: a result that reveals nothing of the task is a refusal in another
		// form, not a leak: a tasks/get or tasks/cancel result without taskId and
		// status, a tasks/result isError result (the probed task succeeded).
		// A 2xx reply no client can read (ENV-10's) shows neither a refusal nor a leak and is
		// not judged.
		// Limit: on a seller whose task is already terminal, a leaked cancel is refused
		// for that reason, so it is caught only when it answers with a task.
		{ID: "TASK-04", Transport: catalogue.MCP, Text: "keeps a session's tasks invisible to other sessions", Judge: judgeTASK04},
		// Rule: TASK-05 · Spec: mcp-guide.mdx (clamp client-provided TTL) · Since: 0.1.0 ·
		// Description: a client-provided TTL above the server's maximum SHOULD be clamped: a
		// task-augmented call asking for ten years gets a handle whose ttl is a number below
		// it (null, unlimited, honours it too). Refusing the call is not honouring it. A
		// handle without a ttl that is a number or null (TASK-01's defect) skips: it shows
		// nothing of the clamp.
		{ID: "TASK-05", Transport: catalogue.MCP, Text: "clamps a client-provided task TTL above its maximum", Judge: judgeTASK05},
	}
}

// taskHandle is the task object of a CreateTaskResult.
func taskHandle(c evidence.Call) *rawjson.Object {
	res, err := rawjson.ParseObject(c.Result)
	if err != nil {
		return nil
	}
	return child(res, "task")
}

// notHandle says what a reply that holds no task handle is instead.
func notHandle(c evidence.Call) finding {
	switch {
	case c.Message == nil:
		return finding{"", "the task-augmented call got no JSON-RPC reply (HTTP " + itoa(c.HTTPStatus) + ")"}
	case c.RPCError != nil:
		return finding{"/error", "a JSON-RPC error answers the task-augmented call instead of a task handle"}
	}
	if res, err := rawjson.ParseObject(c.Result); err == nil && res != nil {
		if _, ok := res.Get("content"); ok {
			return finding{"/result", "the tool result itself answers the task-augmented call, not a task handle"}
		}
	}
	return finding{"/result/task", "is absent or not an object"}
}

func judgeTASK01(s *evidence.Store, _ Options) Verdict {
	t := newTally("TASK-01")
	c, found := s.Call(probe(s, taskFlow+"/create"))
	if !found {
		return t.verdict("no task-augmented call was made (get_products not listed)")
	}
	if !t.account(c) {
		return t.verdict("")
	}
	task := taskHandle(c)
	if task == nil {
		t.judged(c, []finding{notHandle(c)})
		return t.verdict("")
	}
	base := "/result/task"
	var fs []finding
	for _, m := range handleMembers {
		vs := values(task, m.key)
		if len(vs) == 0 && !m.optional {
			fs = append(fs, finding{base + "/" + m.key, "is absent"})
		}
		for _, v := range vs { // each occurrence of a repeated key
			if what := m.check(v); what != "" {
				fs = append(fs, finding{base + "/" + m.key, what})
			}
		}
	}
	t.judged(c, fs)
	return t.verdict("")
}

// handleMembers are the members of a task handle TASK-01 reads, each with
// what is wrong with a value ("" when nothing); an optional one may be
// absent (MCP 2025-11-25 schema, Task).
var handleMembers = []struct {
	key      string
	check    func(v []byte) string
	optional bool
}{
	{"taskId", func(v []byte) string {
		if id, ok := rawjson.StringValue(v); !ok || id == "" {
			return "is " + kindName(v) + ", not a non-empty string"
		}
		return ""
	}, false},
	{"status", stringCheck(func(st string) string {
		if !mcpTaskStatuses[st] {
			return quote(st) + " is not an MCP task status"
		}
		return ""
	}), false},
	{"createdAt", stringCheck(func(at string) string {
		if !isRFC3339(at) {
			return quote(at) + " is not an RFC 3339 date-time"
		}
		return ""
	}), false},
	{"ttl", func(v []byte) string {
		if k := rawjson.KindOf(v); k != rawjson.KindNumber && k != rawjson.KindNull {
			return "is " + kindName(v) + ", not a number or null"
		}
		return ""
	}, false},
	{"pollInterval", func(v []byte) string {
		if n, isNum := number(v); !isNum || n < 0 {
			return "is " + kindName(v) + ", not a non-negative number"
		}
		return ""
	}, true},
}

// stringCheck is a handle member's check: a string about which bad says
// nothing.
func stringCheck(bad func(string) string) func(v []byte) string {
	return func(v []byte) string {
		s, ok := rawjson.StringValue(v)
		if !ok {
			return "is " + kindName(v) + ", not a string"
		}
		return bad(s)
	}
}

// taskRun is one task's calls: the create, the polls and the result.
type taskRun struct {
	create evidence.Call
	polls  []evidence.Call
	result evidence.Call
	found  bool // the result call was recorded
}

func taskRunOf(s *evidence.Store, flow string) (taskRun, bool) {
	var r taskRun
	c, ok := s.Call(probe(s, flow+"/create"))
	if !ok {
		return r, false
	}
	r.create = c
	r.polls = s.Calls(func(c evidence.Call) bool { return strings.HasPrefix(c.ProbeID, probe(s, flow+"/get/")) })
	r.result, r.found = s.Call(probe(s, flow+"/result"))
	return r, true
}

// lastStatus is the status of the last tasks/get answered with a task.
func (r taskRun) lastStatus() (string, evidence.Call, bool) {
	for i := len(r.polls) - 1; i >= 0; i-- {
		res, err := rawjson.ParseObject(r.polls[i].Result)
		if err != nil {
			continue
		}
		if st, ok := str(res, "status"); ok {
			return st, r.polls[i], true
		}
	}
	return "", evidence.Call{}, false
}

func judgeTASK02(s *evidence.Store, _ Options) Verdict {
	t := newTally("TASK-02")
	none := "no task-augmented call was made (get_products not listed)"
	for _, flow := range []string{taskFlow, taskErrorFlow} {
		run, ok := taskRunOf(s, flow)
		if !ok || !t.account(run.create) {
			continue
		}
		handle := taskHandle(run.create)
		if handle == nil {
			none = "the task-augmented call returned no task handle (TASK-01)"
			continue
		}
		id, _ := str(handle, "taskId")
		for _, p := range run.polls {
			if !t.account(p) {
				continue
			}
			res, err := rawjson.ParseObject(p.Result)
			switch {
			case p.RPCError != nil:
				t.judged(p, []finding{{"/error", "tasks/get of the session's own task answers a JSON-RPC error"}})
			case err != nil || res == nil:
				t.judged(p, []finding{{"/result", "tasks/get answers no task object"}})
			default:
				var fs []finding
				if got, _ := str(res, "taskId"); got != id {
					fs = append(fs, finding{"/result/taskId", quote(got) + " is not the task asked for, " + quote(id)})
				}
				if _, ok := str(res, "status"); !ok {
					fs = append(fs, finding{"/result/status", "is absent or not a string"})
				}
				t.judged(p, fs)
			}
		}
		status, last, ok := run.lastStatus()
		if !ok {
			if len(run.polls) == 0 {
				t.judged(run.create, []finding{{"", "no tasks/get answered"}})
			}
			continue
		}
		if !terminalStatus(status) {
			wait := last.Started.Add(time.Duration(last.DurationMS * float64(time.Millisecond))).Sub(run.create.Started).Round(100 * time.Millisecond)
			t.judged(last, []finding{{"/result/status", "is still " + quote(status) + " after " + itoa(len(run.polls)) + " polls over " + wait.String()}})
			continue
		}
		if ttl, isNum := number(rawOf(handle, "ttl")); isNum {
			end := last.Started.Add(time.Duration(last.DurationMS * float64(time.Millisecond)))
			if took := end.Sub(run.create.Started); float64(took.Milliseconds()) > ttl+1000 {
				t.judged(last, []finding{{"/result/status", "became terminal after " + took.Round(time.Millisecond).String() + ", past the task's ttl"}})
			}
		}
		if !run.found || status == "cancelled" || !t.account(run.result) {
			continue
		}
		rc := run.result
		switch {
		case rc.Message == nil:
			t.judged(rc, []finding{{"", "tasks/result got no JSON-RPC reply (HTTP " + itoa(rc.HTTPStatus) + ")"}})
		case rc.RPCError != nil:
			if status == "failed" {
				t.judged(rc, nil)
			} else {
				t.judged(rc, []finding{{"/error", "tasks/result of a " + quote(status) + " task answers a JSON-RPC error, not the tool result"}})
			}
		default:
			res, err := rawjson.ParseObject(rc.Result)
			if err != nil || res == nil {
				t.judged(rc, []finding{{"/result", "is not an object"}})
				break
			}
			if v, ok := res.Get("content"); !ok || rawjson.KindOf(v) != rawjson.KindArray {
				t.judged(rc, []finding{{"/result/content", "is absent or not an array: tasks/result does not return a CallToolResult"}})
				break
			}
			t.judged(rc, nil)
		}
	}
	return t.verdict(none)
}

func terminalStatus(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

func rawOf(o *rawjson.Object, key string) []byte {
	if o == nil {
		return nil
	}
	v, _ := o.Get(key)
	return v
}

func judgeTASK03(s *evidence.Store, _ Options) Verdict {
	t := newTally("TASK-03")
	for _, flow := range []string{taskFlow, taskErrorFlow} {
		run, ok := taskRunOf(s, flow)
		if !ok || !t.account(run.create) {
			continue
		}
		check := taskStatusFindings
		if h := taskHandle(run.create); h != nil {
			if st, ok := str(h, "status"); ok {
				t.judged(run.create, check("/result/task/status", st))
			}
		}
		for _, p := range run.polls {
			if p.NotRun != "" || p.HarnessError != "" {
				continue
			}
			res, err := rawjson.ParseObject(p.Result)
			if err != nil {
				continue
			}
			if st, ok := str(res, "status"); ok {
				t.judged(p, check("/result/status", st))
			}
		}
		status, _, ok := run.lastStatus()
		if !ok || !terminalStatus(status) || !run.found || !run.result.Answered() || run.result.Result == nil {
			continue
		}
		r := parseReply(run.result)
		want, body := "", ""
		switch {
		case r.isError:
			want, body = "failed", "an isError result"
		case r.data != nil:
			if st, ok := str(r.data, "status"); ok {
				if m, known := adcpToMCPStatus[st]; known {
					want, body = m, "the AdCP status "+quote(st)
				}
			}
		}
		if want == "" {
			continue
		}
		var fs []finding
		if status != want {
			fs = append(fs, finding{"/result", "the task ended " + quote(status) + " beside " + body + ", which maps to " + quote(want)})
		}
		t.judged(run.result, fs)
	}
	cancelStatuses(s, t)
	return t.verdict("no task-augmented call was made (get_products not listed)")
}

// taskStatusFindings judges one MCP task status at p: an MCP status, not
// an AdCP spelling.
func taskStatusFindings(p, st string) []finding {
	if mcpTaskStatuses[st] {
		return nil
	}
	if want, adcp := adcpToMCPStatus[st]; adcp {
		return []finding{{p, quote(st) + " is the AdCP status; MCP Tasks say " + quote(want)}}
	}
	return []finding{{p, quote(st) + " is not an MCP task status"}}
}

// cancelStatuses judges, for TASK-03, the task the harness cancelled: its
// handle's status, the accepted cancel's and the next tasks/get's, which
// must both say "cancelled".
func cancelStatuses(s *evidence.Store, t *tally) {
	create, found := s.Call(probe(s, taskCancel+"/create"))
	if !found || !t.account(create) {
		return
	}
	if h := taskHandle(create); h != nil {
		if st, ok := str(h, "status"); ok {
			t.judged(create, taskStatusFindings("/result/task/status", st))
		}
	}
	accepted := false
	for _, step := range []string{"cancel", "get"} {
		c, ok := s.Call(probe(s, taskCancel+"/"+step))
		if !ok || !t.account(c) || c.RPCError != nil {
			continue // a refused cancel: the task was terminal already
		}
		res, err := rawjson.ParseObject(c.Result)
		if err != nil || res == nil {
			continue
		}
		st, ok := str(res, "status")
		if !ok {
			accepted = accepted || step == "cancel"
			continue
		}
		fs := taskStatusFindings("/result/status", st)
		if step == "cancel" {
			accepted = true
		}
		if len(fs) == 0 && accepted && st != "cancelled" {
			fs = []finding{{"/result/status", quote(st) + " for a task whose tasks/cancel was accepted; a cancelled task says \"cancelled\""}}
		}
		t.judged(c, fs)
	}
}

func judgeTASK04(s *evidence.Store, _ Options) Verdict {
	t := newTally("TASK-04")
	run, _ := taskRunOf(s, taskFlow)
	id := ""
	if h := taskHandle(run.create); h != nil {
		id, _ = str(h, "taskId")
	}
	calls := s.Calls(func(c evidence.Call) bool { return strings.HasPrefix(c.ProbeID, probe(s, taskIsolation+"/")) })
	for _, c := range calls {
		if !t.account(c) {
			continue
		}
		name := strings.TrimPrefix(c.ProbeID, probe(s, taskIsolation+"/"))
		switch {
		case name == "owner_get":
			res, err := rawjson.ParseObject(c.Result)
			if err != nil {
				continue
			}
			if st, _ := str(res, "status"); st == "cancelled" {
				t.judged(c, []finding{{"/result/status", "the first session's task is cancelled after the second session asked to cancel it"}})
			} else {
				t.judged(c, nil)
			}
		case c.RPCError != nil || (c.Message == nil && c.HTTPStatus >= 400):
			t.judged(c, nil) // refused: a JSON-RPC error, or an HTTP error without one
		case c.Result == nil:
			continue // no readable reply (ENV-10's): nothing shows a leak or a refusal
		case name == "list":
			if i := listedAt(c.Result, id); i >= 0 {
				t.judged(c, []finding{{"/result/tasks/" + itoa(i), "tasks/list of a second session shows the first session's task " + quote(id)}})
			} else {
				t.judged(c, nil)
			}
		case !answersFor(name, c.Result):
			t.judged(c, nil) // a result that reveals and touches nothing of the task
		default:
			t.judged(c, []finding{{"/result", c.Method + " from a second session answers for the first session's task " + quote(id)}})
		}
	}
	return t.verdict("the session-isolation probes were not made (get_products not listed)")
}

// answersFor reports whether a second session's tasks/get or tasks/cancel
// result is a task (it carries taskId or status), or its tasks/result
// result is not an isError result (the probed task succeeded, so an error
// result is a refusal, not its result).
func answersFor(name string, result []byte) bool {
	res, err := rawjson.ParseObject(result)
	if err != nil || res == nil {
		return true // not an object: still an answer where a refusal was due
	}
	if name == "result" {
		v, _ := res.Get("isError")
		return !rawjson.TruthyValue(v)
	}
	_, hasID := res.Get("taskId")
	_, hasStatus := res.Get("status")
	return hasID || hasStatus
}

// listedAt returns the index in a tasks/list result's tasks of the task
// whose taskId is exactly id, or -1 (an id that merely contains it is
// another task).
func listedAt(result []byte, id string) int {
	res, err := rawjson.ParseObject(result)
	if err != nil || id == "" {
		return -1
	}
	v, ok := res.Get("tasks")
	var tasks []json.RawMessage
	if !ok || json.Unmarshal(v, &tasks) != nil {
		return -1
	}
	for i, raw := range tasks {
		if o, err := rawjson.ParseObject(raw); err == nil {
			if got, _ := str(o, "taskId"); got == id {
				return i
			}
		}
	}
	return -1
}

func judgeTASK05(s *evidence.Store, _ Options) Verdict {
	t := newTally("TASK-05")
	c, found := s.Call(probe(s, taskTTLProbe))
	if !found {
		return t.verdict("no task-augmented call was made (get_products not listed)")
	}
	if !t.account(c) {
		return t.verdict("")
	}
	if c.RPCError != nil {
		t.judged(c, nil) // refused: not honoured
		return t.verdict("")
	}
	task := taskHandle(c)
	if task == nil {
		return t.verdict("the call asking for a ten-year TTL returned no task handle (TASK-01)")
	}
	// An absent ttl, or one neither a number nor null, tells nothing of
	// the clamp: TASK-01's. Each occurrence of a repeated key is judged.
	var fs []finding
	seen := false
	for _, v := range values(task, "ttl") {
		n, isNum := number(v)
		switch {
		case rawjson.KindOf(v) == rawjson.KindNull:
			fs = append(fs, finding{"/result/task/ttl", "is null (unlimited) for a requested ten-year TTL"})
		case !isNum:
			continue
		case n >= hugeTTL:
			fs = append(fs, finding{"/result/task/ttl", wireText(v) + " honours the requested ten-year TTL instead of clamping it"})
		}
		seen = true
	}
	if !seen {
		return t.verdict("the handle gives no ttl that is a number or null (TASK-01)")
	}
	t.judged(c, fs)
	return t.verdict("")
}
