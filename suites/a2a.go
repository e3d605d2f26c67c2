package suites

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The task states of each A2A version (a2a-response-extraction.mdx, Wire-Format
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
		// Rule: A2A-01 · Spec: a2a-response-extraction.mdx (Single-artifact invariant); §4.33 · Since: 0.1.0 ·
		// Description: a task in a final state MUST carry exactly one artifact; a stream is
		// judged as the task its events build (see judgeA2A01).
		{ID: "A2A-01", Transport: on, Text: "carries exactly one artifact on a final task", Judge: judgeA2A01},
		// Rule: A2A-02 · Spec: a2a-response-extraction.mdx; §4.32 · Since: 0.1.0 ·
		// Description: that artifact MUST hold at least one DataPart whose data is a
		// non-null object; the last DataPart is the AdCP response. Judged on completed
		// tasks, streams as the task they build.
		{ID: "A2A-02", Transport: on, Text: "puts the AdCP response in a DataPart of the artifact", Judge: judgeA2A02},
		// Rule: A2A-03 · Spec: a2a-response-extraction.mdx (Wrapper rejection); §4.34 · Since: 0.1.0 ·
		// Description: no DataPart's data MUST be the single-key wrapper {"response":{…}}.
		{ID: "A2A-03", Transport: on, Text: "never wraps a DataPart's data in a response key", Judge: judgeA2A03},
		// Rule: A2A-04 · Spec: a2a-response-extraction.mdx (Wire-Format Compatibility) · Since: 0.1.0 ·
		// Description: status.state MUST be a known token of the advertised A2A version:
		// lowercase for 0.3, TASK_STATE_* for 1.0, never a mix; each occurrence of a repeated
		// state key.
		{ID: "A2A-04", Transport: on, Text: "uses the task states of its advertised A2A version", Judge: judgeA2A04},
		// Rule: A2A-05 · Spec: a2a-response-extraction.mdx · Since: 0.1.0 ·
		// Description: (A2A 1.0) every Part MUST be a strict oneof: exactly one of text,
		// raw, url, data; a parts item that is no object (null, a bare string) is no Part.
		{ID: "A2A-05", Transport: on, Text: "sends every A2A 1.0 part as a strict oneof", Judge: judgeA2A05},
		// Rule: A2A-06 · Spec: L0/a2a-profile-extension (Response mapping); §4.35 · Since: 0.1.0 ·
		// Description: (A2A 1.0, profile v3) a non-streaming SendMessage response MUST be
		// the {"task":{…}} branch, not a bare Task.
		{ID: "A2A-06", Transport: on, Text: "answers SendMessage with the task branch", Judge: judgeA2A06},
		// Rule: A2A-07 · Spec: L0/a2a-profile-extension (Submitted AdCP work); §4.37 · Since: 0.1.0 ·
		// Description: AdCP submitted work MUST be a completed A2A task whose DataPart carries
		// status "submitted" and task_id (a non-empty string, each occurrence), never
		// duplicated in artifact metadata.
		{ID: "A2A-07", Transport: on, Text: "returns submitted AdCP work in a completed A2A task", Judge: judgeA2A07},
		// Rule: A2A-08 · Spec: a2a-response-extraction.mdx (Status-Based Extraction); §4.36 · Since: 0.1.0 ·
		// Description: interim states MUST carry their data in status.message.parts[].
		// Judged on the events of streaming calls: an interim task or status update whose
		// artifact holds an interim AdCP body while status.message holds no DataPart fails.
		{ID: "A2A-08", Transport: on, Text: "carries interim data in the status message", Judge: judgeA2A08},
		// Rule: A2A-09 · Spec: §4.39; L0/a2a-profile-extension (Runtime discovery) · Since: 0.1.0 ·
		// Description: the agent card MUST be served at /.well-known/agent-card.json, name an
		// interface URL, and list AdCP tasks as skills whose id is the task name, including
		// get_adcp_capabilities; card keys are matched exactly.
		{ID: "A2A-09", Transport: on, Text: "serves an agent card listing AdCP tasks as skills", Judge: judgeA2A09},
		// Rule: A2A-10 · Spec: §4.39–4.40; L0/a2a-profile-extension (Advertisement) · Since: 0.1.0 ·
		// Description: the card SHOULD declare the AdCP extension under
		// capabilities.extensions[], with no params.
		{ID: "A2A-10", Transport: on, Text: "declares the AdCP profile extension in its card", Judge: judgeA2A10},
		// Rule: A2A-11 · Spec: a2a-response-extraction.mdx (Streaming envelope) · Since: 0.1.0 ·
		// Description: a stream MUST NOT end a task without a final status, and its events
		// MUST be single-key task/message/statusUpdate/artifactUpdate envelopes (1.0; in 0.3,
		// objects of a known kind), never nested.
		{ID: "A2A-11", Transport: on, Text: "ends every stream with a final status in well-formed envelopes", Judge: judgeA2A11},
	}
}

// cardVersion returns the A2A version the recorded card advertises for the
// interface the harness drove, when the harness knows its wire format; ""
// otherwise (no card, an unreadable one, an unknown protocolVersion).
func cardVersion(s *evidence.Store) string {
	card, ok := recordedCard(s)
	if !ok {
		return ""
	}
	return card.KnownVersion()
}

// cardDialect returns the wire format the harness spoke to the interface
// (V03 or V10), "" without a readable card.
func cardDialect(s *evidence.Store) string {
	card, ok := recordedCard(s)
	if !ok {
		return ""
	}
	return card.Version
}

func recordedCard(s *evidence.Store) (a2a.Card, bool) {
	c, ok := s.Call(probe(s, "card"))
	if !ok || c.Body == nil {
		return a2a.Card{}, false
	}
	card, err := a2a.ParseCard(c.Body, c.URL)
	return card, err == nil
}

// versionSkip is the skip reason of a rule that needs the card's A2A
// version.
func versionSkip(s *evidence.Store) string {
	if card, ok := recordedCard(s); ok && card.Advertised != "" {
		return "the agent card advertises A2A " + quote(card.Advertised) + ", a version whose wire format the harness does not judge"
	}
	return "the agent card gave no A2A version"
}

// builtTasks judges the task every A2A reply builds (a send's Task; a
// stream's events folded into one task, see a2aBuild) with examine.
func builtTasks(id string, s *evidence.Store, none string, examine func(t *a2aBuild) (bool, []finding)) Verdict {
	return eachReply(id, toolCalls(s), nil, none, func(r *reply) (bool, []finding) {
		t := r.builtTask()
		if t == nil {
			return false, nil
		}
		return examine(t)
	})
}

// A2A-01 policy. The single-artifact invariant (a2a-response-extraction.mdx) is judged on the
// task a reply builds, so a stream that sends its artifact in
// artifact-update events and ends with a final status update carrying no
// artifacts holds one artifact. More than one artifact fails on every final
// task. No artifact fails on a completed task (a2a-response-format: the
// full response is "delivered on a Task object with the DataPart in
// .artifacts[0].parts[]"); a failed, rejected or canceled task may carry
// none (a2a-guide: with "only a free-text fatal message ... it MAY fall
// back to status.message.parts[]"; a2a-response-extraction.mdx: canceled tasks "typically"
// carry none), and where such a task puts an adcp_error is ERR-07's. A
// Task's artifacts[] is counted as sent: two entries sharing an artifactId
// are two artifacts (only a stream's artifact updates merge by id), an
// entry that is not an object fails, and "artifacts": null is no artifacts
// (an unset optional member as serializers write it).
func judgeA2A01(s *evidence.Store, _ Options) Verdict {
	return builtTasks("A2A-01", s, "no final task observed", func(t *a2aBuild) (bool, []finding) {
		if !finalStates[t.norm] {
			return false, nil
		}
		return true, artifactCount(t)
	})
}

// artifactCount is A2A-01 on one built task.
func artifactCount(t *a2aBuild) []finding {
	if t.artsBad.ptr != "" {
		return []finding{t.artsBad}
	}
	n := len(t.artifacts)
	switch {
	case n == 1:
		return nil
	case n > 1 && t.artsPtr != "":
		return []finding{{t.artsPtr, "holds " + strconv.Itoa(n) + " artifacts on a final task, not exactly one"}}
	case n > 1:
		return []finding{{t.artifacts[1].ptr, "is a second artifact of a final task (" + strconv.Itoa(n) + " in all); a final task carries exactly one"}}
	}
	if t.norm != "completed" {
		return nil
	}
	where := t.artsPtr
	if where == "" {
		where = t.statusPtr + "/state"
	}
	return []finding{{where, "the completed task carries no artifact; its response belongs in artifacts[0]"}}
}

// A2A-02 policy: judged on completed tasks that carry an artifact (one
// without is A2A-01's): artifacts[0] holds a DataPart whose data is an
// object. A failed, rejected or canceled task may carry no structured
// payload (see A2A-01); the adcp_error a failure carries is ERR-07's.
func judgeA2A02(s *evidence.Store, _ Options) Verdict {
	return builtTasks("A2A-02", s, "no completed task with an artifact observed", func(t *a2aBuild) (bool, []finding) {
		if t.norm != "completed" || len(t.artifacts) == 0 {
			return false, nil
		}
		return true, responseDataPart(t)
	})
}

// responseDataPart is A2A-02 on one built task.
func responseDataPart(t *a2aBuild) []finding {
	a := t.artifacts[0]
	for _, p := range a.parts {
		if d, ok := p.obj.Get("data"); ok && rawjson.KindOf(d) == rawjson.KindObject {
			return nil
		}
	}
	return []finding{{a.ptr + "/parts", "holds no DataPart with an object"}}
}

func judgeA2A03(s *evidence.Store, _ Options) Verdict {
	return eachReply("A2A-03", toolCalls(s), nil, "no DataPart observed", func(r *reply) (bool, []finding) {
		seen := false
		var fs []finding
		for _, ev := range r.events() {
			ev.dataParts(func(p string, _ *rawjson.Object, d json.RawMessage) {
				seen = true
				if o, err := rawjson.ParseObject(d); err == nil && o.Len() == 1 {
					if w := child(o, "response"); w != nil {
						fs = append(fs, finding{p + "/data", "is the wrapper {\"response\":{…}}"})
					}
				}
			})
		}
		return seen, fs
	})
}

// A2A-04 policy: every Task and status update (by envelope, kind or shape)
// carries status.state as a string that is a token of the A2A version the
// card advertises for the interface driven (supportedInterfaces[] entry's
// protocolVersion, else the card's shape). A state that is not a string, a
// missing one, and a token of the other version all fail; artifact updates
// and messages carry no state.
func judgeA2A04(s *evidence.Store, _ Options) Verdict {
	version := cardVersion(s)
	if version == "" {
		return Verdict{Outcome: Skip, Message: versionSkip(s)}
	}
	known := statesV03
	if version == a2a.V10 {
		known = statesV10
	}
	return eachReply("A2A-04", toolCalls(s), nil, "no task state observed", func(r *reply) (bool, []finding) {
		seen := false
		var fs []finding
		for _, ev := range r.events() {
			if w := ev.what(); w != objTask && w != objStatusUpdate {
				continue
			}
			seen = true
			if f, bad := stateFinding(ev, known, version); bad {
				fs = append(fs, f)
			}
		}
		return seen, fs
	})
}

// stateFinding is A2A-04 on one Task or status update.
func stateFinding(ev *a2aReply, known []string, version string) (finding, bool) {
	sp := ev.taskPtr + "/status"
	v, ok := ev.task.Get("status")
	switch {
	case !ok:
		return finding{sp, "is absent"}, true
	case rawjson.KindOf(v) != rawjson.KindObject:
		return finding{sp, "is " + kindName(v) + ", not an object"}, true
	case ev.stateRaw == nil:
		return finding{sp + "/state", "is absent"}, true
	case rawjson.KindOf(ev.stateRaw) != rawjson.KindString:
		return finding{sp + "/state", "is " + kindName(ev.stateRaw) + ", not a string"}, true
	case !slices.Contains(known, ev.state):
		return finding{sp + "/state", quote(ev.state) + " is not an A2A " + version + " task state"}, true
	}
	// Each occurrence of a repeated state is a token of the version.
	for _, v := range values(child(ev.task, "status"), "state") {
		if st, ok := rawjson.StringValue(v); !ok || !slices.Contains(known, st) {
			return finding{sp + "/state", wireText(v) + " (a repeated state) is not an A2A " + version + " task state"}, true
		}
	}
	return finding{}, false
}

func judgeA2A05(s *evidence.Store, _ Options) Verdict {
	if v := cardVersion(s); v != a2a.V10 {
		return Verdict{Outcome: Skip, Message: "the rule applies to A2A 1.0; the card advertises " + orUnknown(s, v)}
	}
	return eachReply("A2A-05", toolCalls(s), nil, "no part observed", func(r *reply) (bool, []finding) {
		seen := false
		var fs []finding
		for _, ev := range r.events() {
			ev.parts(func(p string, part *rawjson.Object) {
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
			ev.nonObjectParts(func(p, kind string) {
				seen = true
				fs = append(fs, finding{p, "is " + kind + ", not a Part with one of text, raw, url, data"})
			})
		}
		return seen, fs
	})
}

func judgeA2A06(s *evidence.Store, _ Options) Verdict {
	if v := cardVersion(s); v != a2a.V10 {
		return Verdict{Outcome: Skip, Message: "the rule applies to A2A 1.0; the card advertises " + orUnknown(s, v)}
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
	return builtTasks("A2A-07", s, "no submitted AdCP result observed", submittedMapping)
}

// submittedMapping is A2A-07 on one built task: every DataPart whose AdCP
// body says status "submitted", in an artifact or the status message, must
// sit in a completed A2A task with a task_id, never duplicated in artifact
// metadata (a2a-profile-extension, "Submitted AdCP work"; vectors
// submitted-native-a2a-state-invalid, duplicated-adcp-task-id-invalid).
// seen reports whether the task carried such a body.
func submittedMapping(t *a2aBuild) (seen bool, fs []finding) {
	t.dataParts(func(p string, d json.RawMessage) {
		body, err := rawjson.ParseObject(d)
		if st, _ := str(body, "status"); err != nil || st != "submitted" {
			return
		}
		seen = true
		if t.norm != "completed" {
			fs = append(fs, finding{t.statusPtr + "/state", quote(t.state) + " carries AdCP submitted work; the A2A task must be completed"})
		}
		ids := values(body, "task_id")
		if len(ids) == 0 {
			fs = append(fs, finding{p + "/data/task_id", "is absent from a submitted result"})
		}
		for _, v := range ids {
			if id, ok := rawjson.StringValue(v); !ok || id == "" {
				fs = append(fs, finding{p + "/data/task_id", "is " + kindName(v) + ", not a task id, in a submitted result"})
			}
		}
	})
	if !seen {
		return false, nil
	}
	for _, a := range t.artifacts {
		for _, m := range a.metadata {
			if _, dup := m.obj.Get("adcp_task_id"); dup {
				fs = append(fs, finding{m.ptr + "/adcp_task_id", "duplicates the AdCP task_id"})
			}
		}
	}
	return true, fs
}

// adcpInterim are the AdCP body statuses of interim work.
var adcpInterim = map[string]bool{"working": true, "input-required": true, "auth-required": true}

// A2A-08 policy: judged on the interim Tasks and status updates of
// streams. An interim event may carry artifacts (they accumulate during the
// task, a2a-response-format: "Artifacts accumulate during the task
// lifecycle"), so an artifact's DataPart is not by itself misplaced interim
// data; the event fails when an artifact DataPart is an interim AdCP body
// (status working, input-required or auth-required) while status.message
// carries no DataPart: the interim data sits where clients do not read it.
func judgeA2A08(s *evidence.Store, _ Options) Verdict {
	return eachReply("A2A-08", toolCalls(s, evidence.WithPurpose(evidence.PurposeStream)), nil,
		"no interim state observed in a stream", func(r *reply) (bool, []finding) {
			seen := false
			var fs []finding
			for _, ev := range r.events() {
				if w := ev.what(); (w != objTask && w != objStatusUpdate) || !interimStates[ev.norm] {
					continue
				}
				seen = true
				inMessage, misplaced := false, ""
				ev.dataParts(func(p string, _ *rawjson.Object, d json.RawMessage) {
					switch {
					case strings.HasPrefix(p, ev.taskPtr+"/status/message/"):
						inMessage = true
					case misplaced == "" && strings.HasPrefix(p, ev.taskPtr+"/artifacts/"):
						body, _ := rawjson.ParseObject(d)
						if st, _ := str(body, "status"); adcpInterim[st] {
							misplaced = p + "/data"
						}
					}
				})
				if misplaced != "" && !inMessage {
					fs = append(fs, finding{misplaced, "carries the data of interim state " + quote(ev.state) + " in an artifact, not in status.message.parts"})
				}
			}
			return seen, fs
		})
}

// A2A-09 policy: the card is fetched at /.well-known/agent-card.json and
// read with exact keys (a card spelling "URL", "Skills" or "ID" names no
// url, skills or id). It names an interface URL (a card whose interfaces
// are all on other bindings than JSON-RPC names one: the harness cannot
// drive it, the card is not wrong); every skill has a string id that is an
// AdCP task name; get_adcp_capabilities is listed; and a card declaring
// the AdCP profile lists get_task_status once the seller returned AdCP
// submitted work (a2a-profile-extension, "Runtime discovery"). A skill
// missing from the card fails here, not CAP-01.
func judgeA2A09(s *evidence.Store, _ Options) Verdict {
	t := newTally("A2A-09")
	c, ok := s.Call(probe(s, "card"))
	if !ok {
		return t.verdict("the agent card was not fetched")
	}
	if !t.account(c) {
		return t.verdict("")
	}
	t.judged(c, cardFindings(c.HTTPStatus, c.Body, c.URL, submittedSeen(s)))
	return t.verdict("")
}

// submittedSeen reports whether any A2A reply carried an AdCP submitted
// body.
func submittedSeen(s *evidence.Store) bool {
	for _, c := range toolCalls(s) {
		if c.Message == nil || c.NotRun != "" || c.HarnessError != "" {
			continue
		}
		if t := parseReply(c).builtTask(); t != nil {
			if seen, _ := submittedMapping(t); seen {
				return true
			}
		}
	}
	return false
}

// cardFindings is A2A-09 on one fetched card.
func cardFindings(status int, body []byte, url string, submitted bool) []finding {
	if status != 200 {
		return []finding{{"", "the card answers HTTP " + itoa(status)}}
	}
	root, err := rawjson.ParseObject(body)
	if err != nil {
		return []finding{{"", "the card is not a JSON object"}}
	}
	card, err := a2a.ParseCard(body, url)
	var fs []finding
	if err != nil && !errors.Is(err, a2a.ErrNoJSONRPC) {
		fs = append(fs, finding{"", wire.Sanitize(err.Error(), 200)})
	}
	v, ok := root.Get("skills")
	if !ok || rawjson.KindOf(v) != rawjson.KindArray {
		return append(fs, finding{"/skills", "is absent or not a list; the card lists no get_adcp_capabilities skill"})
	}
	var items []json.RawMessage
	_ = json.Unmarshal(v, &items)
	var ids []string
	for i, it := range items {
		p := "/skills/" + strconv.Itoa(i)
		o, err := rawjson.ParseObject(it)
		if err != nil {
			fs = append(fs, finding{p, "is not an object"})
			continue
		}
		// A skill id that is no AdCP task name is CAP-02's (tool names and
		// skill ids are AdCP task names): one defect, one rule.
		id, ok := str(o, "id")
		if !ok {
			fs = append(fs, finding{p + "/id", "is absent or not a string"})
		}
		ids = append(ids, id)
	}
	if !slices.Contains(ids, "get_adcp_capabilities") {
		fs = append(fs, finding{"/skills", "has no skill with id get_adcp_capabilities"})
	}
	if submitted && card.Extension && !slices.Contains(ids, "get_task_status") {
		fs = append(fs, finding{"/skills", "has no skill with id get_task_status, though the seller returns AdCP submitted work"})
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
	if _, err := rawjson.ParseObject(c.Body); c.HTTPStatus != 200 || err != nil {
		return t.verdict("the agent card could not be read (A2A-09)")
	}
	t.judged(c, extensionFindings(c.Body))
	return t.verdict("")
}

// extensionFindings is A2A-10 on one card: the AdCP extension declared under
// capabilities.extensions[] with params omitted or empty.
func extensionFindings(body []byte) []finding {
	card, err := rawjson.ParseObject(body)
	if err != nil {
		return []finding{{"", "the card is not a JSON object"}}
	}
	for _, e := range objectsAt(child(card, "capabilities"), "extensions", "/capabilities/extensions") {
		if uri, _ := str(e.obj, "uri"); uri != a2a.ExtensionURI {
			continue
		}
		if p, ok := e.obj.Get("params"); ok && !emptyParams(p) {
			return []finding{{e.ptr + "/params", "must be omitted or empty"}}
		}
		return nil
	}
	return []finding{{"/capabilities/extensions", "does not declare " + a2a.ExtensionURI}}
}

// emptyParams reports whether an extension's params is empty: null, {} or
// [].
func emptyParams(raw []byte) bool {
	switch rawjson.KindOf(raw) {
	case rawjson.KindNull:
		return true
	case rawjson.KindObject:
		o, err := rawjson.ParseObject(raw)
		return err == nil && o.Len() == 0
	case rawjson.KindArray:
		var items []json.RawMessage
		return json.Unmarshal(raw, &items) == nil && len(items) == 0
	}
	return false
}

func judgeA2A11(s *evidence.Store, _ Options) Verdict {
	version := cardDialect(s)
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

// streamEnds are the states a stream may end a task in: the final ones,
// and the interrupted ones, after which A2A closes the stream until the
// client answers (A2A 0.3 marks that event final: true).
var streamEnds = map[string]bool{"completed": true, "canceled": true, "failed": true, "rejected": true,
	"input-required": true, "auth-required": true}

// streamFindings is A2A-11 on the JSON-RPC responses of one stream: every
// event a single-key envelope (1.0) or an object of a stream kind (0.3),
// never nested; the last status the stream carries a final (or
// interrupted) one, or a direct message answer, or a JSON-RPC error.
func streamFindings(events []json.RawMessage, version string) []finding {
	if len(events) == 0 {
		return []finding{{"", "the stream carried no event"}}
	}
	var fs []finding
	ended := false
	for i, ev := range events {
		p := "/events/" + strconv.Itoa(i) + "/result"
		result, rpcErr, _, err := splitResponse(ev)
		if err != nil || (result == nil && rpcErr == nil) {
			fs = append(fs, finding{"/events/" + strconv.Itoa(i), "is not a JSON-RPC response"})
			continue
		}
		if rpcErr != nil {
			ended = true // an error ends the stream
			continue
		}
		o, err := rawjson.ParseObject(result)
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
			if k := nestedEnvelope(inner); k != "" {
				fs = append(fs, finding{p + "/" + what + "/" + k, "nests another envelope"})
				continue
			}
		} else {
			kind, _ := str(o, "kind")
			if !slices.Contains(streamKinds, kind) {
				fs = append(fs, finding{p + "/kind", quote(kind) + " is not a stream result kind"})
			}
			what = kind
		}
		switch what {
		case "message":
			ended = true // a direct message answer ends the exchange
		case "task", "statusUpdate", "status-update":
			st, _ := str(child(inner, "status"), "state")
			ended = streamEnds[extract.NormalizeState(st)]
		}
	}
	if !ended {
		fs = append(fs, finding{"/events/" + strconv.Itoa(len(events)-1), "the stream ends without a final task status"})
	}
	return fs
}

// nestedEnvelope returns the key of an envelope nested in an unwrapped
// event: a2a-response-extraction.mdx, "An envelope whose inner value's top-level keys include
// any of task / message / statusUpdate / artifactUpdate MUST be rejected".
func nestedEnvelope(inner *rawjson.Object) string {
	for _, m := range inner.Members() {
		if slices.Contains(streamEnvelopes, m.Key) {
			return m.Key
		}
	}
	return ""
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

func orUnknown(s *evidence.Store, v string) string {
	if v != "" {
		return "A2A " + v
	}
	if card, ok := recordedCard(s); ok && card.Advertised != "" {
		return "A2A " + quote(card.Advertised)
	}
	return "no known version"
}

// ERR-07 policy (transport-errors.mdx, A2A Binding: "Use status: \"failed\" with the
// AdCP error in an artifact DataPart"; a2a-profile-extension: a fatal
// failure "may use an A2A failed or rejected Task with a structured
// adcp_error DataPart"): judged on the error probes' replies whose task
// (a send's Task, or the task a stream builds) carries a truthy adcp_error
// in any DataPart, in artifacts or the status message, where transport-errors.mdx's
// detection order looks. That task is failed or rejected, and the last
// DataPart of artifacts[0] is the {"adcp_error":{…}} body (the general
// extraction of a2a-response-extraction.mdx reads that part): an adcp_error only in the status
// message, in a later artifact, or followed by another DataPart fails —
// except the payload's sibling DataPart of error-handling.mdx's two-layer
// example ({"errors":[…]} after the adcp_error part, carrying no
// adcp_error). A failed or rejected task whose structured payload (a
// DataPart holding an object, errors[] say) carries no adcp_error fails
// too: clients detect no AdCP error, and transport-errors.mdx calls a fatal
// task surfacing its errors only in the payload "a conformance gap" (over
// MCP the same reply fails ERR-02); one with no DataPart at all (a2a-guide:
// a free-text fatal message "MAY fall back to status.message.parts[]") is
// not judged, nor is one carrying a business rejection body (status
// "rejected": ERR-08's). A JSON-RPC error (a routing failure before the handler ran)
// is not a task; the adcp_error's own shape is the EOBJ rules'.
func judgeERR07A2A(s *evidence.Store) Verdict {
	return eachReply("ERR-07", toolCalls(s, errorProbe), nil, "no failed A2A task and no A2A task carrying adcp_error observed", func(r *reply) (bool, []finding) {
		t := r.builtTask()
		if t == nil {
			return false, nil
		}
		return fatalFailureA2A(t)
	})
}

// errorBody reports whether a DataPart's data carries a truthy adcp_error.
func errorBody(d json.RawMessage) bool {
	o, err := rawjson.ParseObject(d)
	if err != nil {
		return false
	}
	v, ok := o.Get("adcp_error")
	return ok && rawjson.TruthyValue(v)
}

// payloadSibling reports whether a DataPart's data is the payload part of
// error-handling.mdx's A2A example: an object with errors, no adcp_error.
func payloadSibling(d json.RawMessage) bool {
	o, err := rawjson.ParseObject(d)
	if err != nil || errorBody(d) {
		return false
	}
	_, ok := o.Get("errors")
	return ok
}

// fatalFailureA2A is ERR-07 on one built task; seen reports whether it is
// judged: it carries an adcp_error, or it is failed or rejected with a
// structured payload.
func fatalFailureA2A(t *a2aBuild) (seen bool, fs []finding) {
	payload, rejection := "", false
	t.dataParts(func(p string, d json.RawMessage) {
		switch {
		case errorBody(d):
			seen = true
		case rawjson.KindOf(d) == rawjson.KindObject:
			if payload == "" {
				payload = p + "/data"
			}
			body, _ := rawjson.ParseObject(d)
			if st, _ := str(body, "status"); st == "rejected" {
				rejection = true
			}
		}
	})
	if !seen {
		// A business rejection body on a failed or rejected task is
		// ERR-08's (a rejection is a completed invocation).
		if a2aFailure[t.norm] && payload != "" && !rejection {
			return true, []finding{{payload, "the " + quote(t.state) + " task's structured payload carries no adcp_error: clients detect no AdCP error"}}
		}
		return false, nil
	}
	if !a2aFailure[t.norm] {
		fs = append(fs, finding{t.statusPtr + "/state", quote(t.state) + " carries adcp_error; a fatal failure is failed or rejected"})
	}
	if len(t.artifacts) == 0 {
		return true, append(fs, finding{t.taskPtr + "/artifacts/0", "is absent; the adcp_error DataPart belongs in artifacts[0]"})
	}
	a := t.artifacts[0]
	last, errAt := "", -1
	var data []json.RawMessage
	for _, p := range a.parts {
		if d, ok := p.obj.Get("data"); ok && rawjson.KindOf(d) == rawjson.KindObject {
			if errorBody(d) {
				errAt = len(data)
			}
			last = p.ptr + "/data"
			data = append(data, d)
		}
	}
	switch {
	case last == "":
		fs = append(fs, finding{a.ptr, "does not end with the adcp_error DataPart"})
	case errAt < 0:
		fs = append(fs, finding{last, "the last DataPart of artifacts[0] is not {\"adcp_error\":{…}}"})
	default:
		for _, d := range data[errAt+1:] {
			if !payloadSibling(d) {
				fs = append(fs, finding{last, "the last DataPart of artifacts[0] is not {\"adcp_error\":{…}}"})
				break
			}
		}
	}
	return true, fs
}
