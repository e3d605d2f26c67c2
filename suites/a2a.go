package suites

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The task states of each A2A version (seeds 004, Wire-Format
// Compatibility).
var (
	statesV03 = []string{"submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required", "unknown"}
	statesV10 = []string{"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED",
		"TASK_STATE_CANCELED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED", "TASK_STATE_UNSPECIFIED"}
	finalStates   = map[string]bool{"completed": true, "canceled": true, "failed": true, "rejected": true}
	interimStates = map[string]bool{"submitted": true, "working": true, "input-required": true, "auth-required": true}
	// partMembers are the oneof members of an A2A 1.0 Part.
	partMembers = []string{"text", "raw", "url", "data"}
	// streamEnvelopes are the members of an A2A 1.0 StreamResponse.
	streamEnvelopes = []string{"task", "message", "statusUpdate", "artifactUpdate"}
	// streamKinds are the v0.3 stream result kinds.
	streamKinds = []string{"task", "message", "status-update", "artifact-update"}
)

func a2aChecks() []Check {
	on := catalogue.A2A
	return []Check{
		// Rule: A2A-01 · Spec: seeds 004 (Single-artifact invariant); §4.33 · Since: 0.1.0 ·
		// Description: a task in a final state MUST carry exactly one artifact.
		{ID: "A2A-01", Transport: on, Text: "carries exactly one artifact on a final task", Judge: judgeA2A01},
		// Rule: A2A-02 · Spec: seeds 004; §4.32 · Since: 0.1.0 ·
		// Description: that artifact MUST hold at least one DataPart whose data is a
		// non-null object; the last DataPart is the AdCP response.
		{ID: "A2A-02", Transport: on, Text: "puts the AdCP response in a DataPart of the artifact", Judge: judgeA2A02},
		// Rule: A2A-03 · Spec: seeds 004 (Wrapper rejection); §4.34 · Since: 0.1.0 ·
		// Description: no DataPart's data MUST be the single-key wrapper {"response":{…}}.
		{ID: "A2A-03", Transport: on, Text: "never wraps a DataPart's data in a response key", Judge: judgeA2A03},
		// Rule: A2A-04 · Spec: seeds 004 (Wire-Format Compatibility) · Since: 0.1.0 ·
		// Description: status.state MUST be a known token of the advertised A2A version:
		// lowercase for 0.3, TASK_STATE_* for 1.0, never a mix.
		{ID: "A2A-04", Transport: on, Text: "uses the task states of its advertised A2A version", Judge: judgeA2A04},
		// Rule: A2A-05 · Spec: seeds 004 · Since: 0.1.0 ·
		// Description: (A2A 1.0) every Part MUST be a strict oneof: exactly one of text,
		// raw, url, data.
		{ID: "A2A-05", Transport: on, Text: "sends every A2A 1.0 part as a strict oneof", Judge: judgeA2A05},
		// Rule: A2A-06 · Spec: L0/a2a-profile-extension (Response mapping); §4.35 · Since: 0.1.0 ·
		// Description: (A2A 1.0, profile v3) a non-streaming SendMessage response MUST be
		// the {"task":{…}} branch, not a bare Task.
		{ID: "A2A-06", Transport: on, Text: "answers SendMessage with the task branch", Judge: judgeA2A06},
		// Rule: A2A-07 · Spec: L0/a2a-profile-extension (Submitted AdCP work); §4.37 · Since: 0.1.0 ·
		// Description: AdCP submitted work MUST be a completed A2A task whose DataPart carries
		// status "submitted" and task_id, never duplicated in artifact metadata.
		{ID: "A2A-07", Transport: on, Text: "returns submitted AdCP work in a completed A2A task", Judge: judgeA2A07},
		// Rule: A2A-08 · Spec: seeds 004 (Status-Based Extraction); §4.36 · Since: 0.1.0 ·
		// Description: interim states MUST carry their data in status.message.parts[].
		// Judged on the events of streaming calls: an interim task or status update that
		// carries a DataPart in an artifact but none in status.message fails.
		{ID: "A2A-08", Transport: on, Text: "carries interim data in the status message", Judge: judgeA2A08},
		// Rule: A2A-09 · Spec: §4.39; L0/a2a-profile-extension (Runtime discovery) · Since: 0.1.0 ·
		// Description: the agent card MUST be served at /.well-known/agent-card.json, name an
		// interface URL, and list AdCP tasks as skills whose id is the task name, including
		// get_adcp_capabilities.
		{ID: "A2A-09", Transport: on, Text: "serves an agent card listing AdCP tasks as skills", Judge: judgeA2A09},
		// Rule: A2A-10 · Spec: §4.39–4.40; L0/a2a-profile-extension (Advertisement) · Since: 0.1.0 ·
		// Description: the card SHOULD declare the AdCP extension under
		// capabilities.extensions[], with no params.
		{ID: "A2A-10", Transport: on, Text: "declares the AdCP profile extension in its card", Judge: judgeA2A10},
		// Rule: A2A-11 · Spec: seeds 004 (Streaming envelope) · Since: 0.1.0 ·
		// Description: a stream MUST NOT end a task without a final status, and its events
		// MUST be single-key task/message/statusUpdate/artifactUpdate envelopes (1.0; in 0.3,
		// objects of a known kind), never nested.
		{ID: "A2A-11", Transport: on, Text: "ends every stream with a final status in well-formed envelopes", Judge: judgeA2A11},
	}
}

// cardVersion returns the A2A version of the recorded card, "" when unknown.
func cardVersion(s *evidence.Store) string {
	c, ok := s.Call(probe(s, "card"))
	if !ok || c.Body == nil {
		return ""
	}
	card, err := a2a.ParseCard(c.Body, c.URL)
	if err != nil {
		return ""
	}
	return card.Version
}

// finalReplies judges every A2A reply carrying a task (streams: the final
// event) with examine.
func finalReplies(id string, s *evidence.Store, none string, examine func(r *reply) (bool, []finding)) Verdict {
	return eachReply(id, toolCalls(s), nil, none, func(r *reply) (bool, []finding) {
		if r.a2a == nil || r.a2a.task == nil {
			return false, nil
		}
		return examine(r)
	})
}

func judgeA2A01(s *evidence.Store, _ Options) Verdict {
	return finalReplies("A2A-01", s, "no final task observed", func(r *reply) (bool, []finding) {
		if !finalStates[r.a2a.norm] {
			return false, nil
		}
		return true, artifactCount(r.a2a)
	})
}

// artifactCount is A2A-01 on one task view.
func artifactCount(a *a2aReply) []finding {
	v, ok := a.task.Get("artifacts")
	var arts []json.RawMessage
	if ok && json.Unmarshal(v, &arts) != nil {
		return []finding{{a.taskPtr + "/artifacts", "is not a list"}}
	}
	if len(arts) != 1 {
		return []finding{{a.taskPtr + "/artifacts", "holds " + strconv.Itoa(len(arts)) + " artifacts on a final task, not exactly one"}}
	}
	return nil
}

func judgeA2A02(s *evidence.Store, _ Options) Verdict {
	return finalReplies("A2A-02", s, "no final task observed", func(r *reply) (bool, []finding) {
		if !finalStates[r.a2a.norm] {
			return false, nil
		}
		return true, responseDataPart(r.a2a)
	})
}

// responseDataPart is A2A-02 on one task view: the first artifact holds a
// DataPart with a non-null object.
func responseDataPart(a *a2aReply) []finding {
	found := false
	a.dataParts(func(p string, _ *extract.Object, d json.RawMessage) {
		if strings.HasPrefix(p, a.taskPtr+"/artifacts/0/") && kindOf(d) == extract.KindObject {
			found = true
		}
	})
	if !found {
		return []finding{{a.taskPtr + "/artifacts/0/parts", "holds no DataPart with an object"}}
	}
	return nil
}

func judgeA2A03(s *evidence.Store, _ Options) Verdict {
	return eachReply("A2A-03", toolCalls(s), nil, "no DataPart observed", func(r *reply) (bool, []finding) {
		seen := false
		var fs []finding
		for _, ev := range replyEvents(r) {
			ev.dataParts(func(p string, _ *extract.Object, d json.RawMessage) {
				seen = true
				if o, err := extract.ParseObject(d); err == nil && o.Len() == 1 {
					if w := child(o, "response"); w != nil {
						fs = append(fs, finding{p + "/data", "is the wrapper {\"response\":{…}}"})
					}
				}
			})
		}
		return seen, fs
	})
}

// replyEvents returns the task views of a reply: every event of a stream,
// or the reply itself.
func replyEvents(r *reply) []*a2aReply {
	if r.a2a == nil {
		return nil
	}
	if !r.call.Has(evidence.PurposeStream) {
		return []*a2aReply{r.a2a}
	}
	var out []*a2aReply
	for i, ev := range a2a.Events(r.call) {
		c := r.call
		c.Message = ev
		c.Result, c.RPCError, _, _ = splitResponse(ev)
		v := parseA2AReply(c).a2a
		v.taskPtr = "/events/" + strconv.Itoa(i) + v.taskPtr
		out = append(out, v)
	}
	return out
}

func judgeA2A04(s *evidence.Store, _ Options) Verdict {
	version := cardVersion(s)
	if version == "" {
		return Verdict{Outcome: Skip, Message: "the agent card gave no A2A version"}
	}
	known := statesV03
	if version == a2a.V10 {
		known = statesV10
	}
	return eachReply("A2A-04", toolCalls(s), nil, "no task state observed", func(r *reply) (bool, []finding) {
		seen := false
		var fs []finding
		for _, ev := range replyEvents(r) {
			if ev.state == "" {
				continue
			}
			seen = true
			if !slices.Contains(known, ev.state) {
				fs = append(fs, finding{ev.taskPtr + "/status/state", quote(ev.state) + " is not an A2A " + version + " task state"})
			}
		}
		return seen, fs
	})
}

func judgeA2A05(s *evidence.Store, _ Options) Verdict {
	if v := cardVersion(s); v != a2a.V10 {
		return Verdict{Outcome: Skip, Message: "the rule applies to A2A 1.0; the card advertises " + orUnknown(v)}
	}
	return eachReply("A2A-05", toolCalls(s), nil, "no part observed", func(r *reply) (bool, []finding) {
		seen := false
		var fs []finding
		for _, ev := range replyEvents(r) {
			ev.parts(func(p string, part *extract.Object) {
				seen = true
				n := 0
				for _, m := range partMembers {
					if _, ok := part.Get(m); ok {
						n++
					}
				}
				if n != 1 {
					fs = append(fs, finding{p, "has " + strconv.Itoa(n) + " of text, raw, url, data; exactly one is allowed"})
				}
			})
		}
		return seen, fs
	})
}

func judgeA2A06(s *evidence.Store, _ Options) Verdict {
	if v := cardVersion(s); v != a2a.V10 {
		return Verdict{Outcome: Skip, Message: "the rule applies to A2A 1.0; the card advertises " + orUnknown(v)}
	}
	return eachReply("A2A-06", toolCalls(s, func(c evidence.Call) bool { return !c.Has(evidence.PurposeStream) }), nil,
		"no SendMessage reply observed", func(r *reply) (bool, []finding) {
			if r.result == nil {
				return false, nil
			}
			return true, taskBranch(r)
		})
}

// taskBranch is A2A-06 on one SendMessage result.
func taskBranch(r *reply) []finding {
	if r.a2a.envelope == "task" {
		return nil
	}
	if _, ok := r.result.Get("message"); ok && r.result.Len() == 1 {
		return []finding{{"/result", "is the message branch, not the task branch"}}
	}
	return []finding{{"/result", "is a bare Task, not the {\"task\":{…}} branch"}}
}

func judgeA2A07(s *evidence.Store, _ Options) Verdict {
	return finalReplies("A2A-07", s, "no submitted AdCP result observed", func(r *reply) (bool, []finding) {
		fs, seen := submittedMapping(r)
		return seen, fs
	})
}

// submittedMapping is A2A-07 on one reply: every DataPart whose AdCP body
// says status "submitted", wherever the task put it, must sit in a
// completed A2A task with a task_id, never duplicated in artifact metadata.
// seen reports whether the reply carried such a body.
func submittedMapping(r *reply) (fs []finding, seen bool) {
	r.a2a.dataParts(func(p string, _ *extract.Object, d json.RawMessage) {
		body, err := extract.ParseObject(d)
		if st, _ := str(body, "status"); err != nil || st != "submitted" {
			return
		}
		seen = true
		if r.a2a.norm != "completed" {
			fs = append(fs, finding{r.a2a.taskPtr + "/status/state", quote(r.a2a.state) + " carries AdCP submitted work; the A2A task must be completed"})
		}
		if id, ok := str(body, "task_id"); !ok || id == "" {
			fs = append(fs, finding{p + "/data/task_id", "is absent from a submitted result"})
		}
	})
	if !seen {
		return nil, false
	}
	if v, ok := r.a2a.task.Get("artifacts"); ok {
		var arts []json.RawMessage
		_ = json.Unmarshal(v, &arts)
		for i, art := range arts {
			if o, err := extract.ParseObject(art); err == nil {
				if _, dup := child(o, "metadata").Get("adcp_task_id"); dup {
					fs = append(fs, finding{r.a2a.taskPtr + "/artifacts/" + strconv.Itoa(i) + "/metadata/adcp_task_id", "duplicates the AdCP task_id"})
				}
			}
		}
	}
	return fs, true
}

func judgeA2A08(s *evidence.Store, _ Options) Verdict {
	return eachReply("A2A-08", toolCalls(s, evidence.WithPurpose(evidence.PurposeStream)), nil,
		"no interim state observed in a stream", func(r *reply) (bool, []finding) {
			seen := false
			var fs []finding
			for _, ev := range replyEvents(r) {
				if !interimStates[ev.norm] {
					continue
				}
				seen = true
				inMessage, inArtifact := false, false
				ev.dataParts(func(p string, _ *extract.Object, _ json.RawMessage) {
					if strings.Contains(p, "/status/message/") {
						inMessage = true
					} else {
						inArtifact = true
					}
				})
				if inArtifact && !inMessage {
					fs = append(fs, finding{ev.taskPtr + "/artifacts", "carries the data of interim state " + quote(ev.state) + " outside status.message.parts"})
				}
			}
			return seen, fs
		})
}

func judgeA2A09(s *evidence.Store, _ Options) Verdict {
	t := newTally("A2A-09")
	c, ok := s.Call(probe(s, "card"))
	if !ok {
		return t.verdict("the agent card was not fetched")
	}
	if !t.account(c) {
		return t.verdict("")
	}
	t.judged(c, cardFindings(c.HTTPStatus, c.Body, c.URL))
	return t.verdict("")
}

// cardFindings is A2A-09 on one fetched card.
func cardFindings(status int, body []byte, url string) []finding {
	if status != 200 {
		return []finding{{"", "the card answers HTTP " + itoa(status)}}
	}
	card, err := a2a.ParseCard(body, url)
	if err != nil {
		return []finding{{"", err.Error()}}
	}
	var fs []finding
	if !slices.Contains(card.Skills, "get_adcp_capabilities") {
		fs = append(fs, finding{"/skills", "has no skill with id get_adcp_capabilities"})
	}
	for i, id := range card.Skills {
		if !slices.Contains(TaskNames, id) {
			fs = append(fs, finding{"/skills/" + strconv.Itoa(i) + "/id", quote(id) + " is not an AdCP task name"})
		}
	}
	return fs
}

func judgeA2A10(s *evidence.Store, _ Options) Verdict {
	t := newTally("A2A-10")
	c, ok := s.Call(probe(s, "card"))
	if !ok {
		return t.verdict("the agent card was not fetched")
	}
	if !t.account(c) {
		return t.verdict("")
	}
	if c.HTTPStatus != 200 || c.Body == nil {
		return t.verdict("the agent card could not be read (A2A-09)")
	}
	t.judged(c, extensionFindings(c.Body))
	return t.verdict("")
}

// extensionFindings is A2A-10 on one card: the AdCP extension declared under
// capabilities.extensions[] with empty params.
func extensionFindings(body []byte) []finding {
	card, err := extract.ParseObject(body)
	if err != nil {
		return []finding{{"", "the card is not a JSON object"}}
	}
	v, _ := child(card, "capabilities").Get("extensions")
	var exts []json.RawMessage
	_ = json.Unmarshal(v, &exts)
	for i, e := range exts {
		o, err := extract.ParseObject(e)
		if err != nil {
			continue
		}
		if uri, _ := str(o, "uri"); uri != a2a.ExtensionURI {
			continue
		}
		if p := child(o, "params"); p != nil && p.Len() > 0 {
			return []finding{{"/capabilities/extensions/" + strconv.Itoa(i) + "/params", "must be omitted or empty"}}
		}
		return nil
	}
	return []finding{{"/capabilities/extensions", "does not declare " + a2a.ExtensionURI}}
}

func judgeA2A11(s *evidence.Store, _ Options) Verdict {
	version := cardVersion(s)
	t := newTally("A2A-11")
	for _, c := range toolCalls(s, evidence.WithPurpose(evidence.PurposeStream)) {
		if !t.account(c) {
			continue
		}
		var fs []finding
		for _, x := range c.Exchanges {
			if x.Truncated {
				fs = append(fs, finding{"", "the stream was cut at the harness's size limit (" + wire.Sanitize(x.Error, 120) + "), before a final status"})
			}
		}
		if len(fs) == 0 {
			fs = streamFindings(a2a.Events(c), version)
		}
		t.judged(c, fs)
	}
	return t.verdict("no streaming call was made (the card declares no streaming, or no read skill)")
}

// streamFindings is A2A-11 on the JSON-RPC responses of one stream.
func streamFindings(events []json.RawMessage, version string) []finding {
	if len(events) == 0 {
		return []finding{{"", "the stream carried no event"}}
	}
	var fs []finding
	final := false
	for i, ev := range events {
		p := "/events/" + strconv.Itoa(i) + "/result"
		result, rpcErr, _, err := splitResponse(ev)
		if err != nil || (result == nil && rpcErr == nil) {
			fs = append(fs, finding{"/events/" + strconv.Itoa(i), "is not a JSON-RPC response"})
			continue
		}
		if rpcErr != nil {
			final = true // an error ends the stream
			continue
		}
		o, err := extract.ParseObject(result)
		if err != nil {
			fs = append(fs, finding{p, "is not an object"})
			continue
		}
		inner, what := o, ""
		if version == a2a.V10 {
			if o.Len() != 1 || !slices.Contains(streamEnvelopes, o.Members()[0].Key) {
				fs = append(fs, finding{p, "is not a single-key task/message/statusUpdate/artifactUpdate envelope"})
				continue
			}
			what = o.Members()[0].Key
			inner = child(o, what)
			if inner == nil {
				fs = append(fs, finding{p + "/" + what, "is not an object"})
				continue
			}
			if inner.Len() == 1 && slices.Contains(streamEnvelopes, inner.Members()[0].Key) {
				fs = append(fs, finding{p + "/" + what, "nests another envelope"})
				continue
			}
		} else {
			kind, _ := str(o, "kind")
			if !slices.Contains(streamKinds, kind) {
				fs = append(fs, finding{p + "/kind", quote(kind) + " is not a stream result kind"})
			}
			what = kind
		}
		if what == "message" {
			final = true // a direct message answer ends the exchange
			continue
		}
		if st, _ := str(child(inner, "status"), "state"); finalStates[extract.NormalizeState(st)] {
			final = true
		}
	}
	if !final {
		fs = append(fs, finding{"/events/" + strconv.Itoa(len(events)-1), "the stream ends without a final task status"})
	}
	return fs
}

func splitResponse(b []byte) (result, rpcErr, id json.RawMessage, err error) {
	var m map[string]json.RawMessage
	if err = json.Unmarshal(b, &m); err != nil {
		return nil, nil, nil, err
	}
	if e, ok := m["error"]; ok && string(trim(e)) != "null" {
		rpcErr = e
	}
	return m["result"], rpcErr, m["id"], nil
}

func orUnknown(v string) string {
	if v == "" {
		return "no known version"
	}
	return "A2A " + v
}
