package suites

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// a2aReply is the task view of an A2A reply (or of one stream event), read
// from the raw bytes.
type a2aReply struct {
	// task is the Task (or stream event) object, unwrapped from a
	// single-key envelope.
	task    *rawjson.Object
	taskPtr string
	// envelope is the key of a single-key result envelope (A2A 1.0:
	// task, message, statusUpdate, artifactUpdate), "" for a bare object;
	// kind is the object's A2A 0.3 kind, "" when it has none.
	envelope, kind string
	// state is the status.state as received when it is a string; norm its
	// normalized token. stateRaw is the member as received (nil when
	// absent), so a state that is not a string is seen, not dropped.
	state, norm string
	stateRaw    json.RawMessage
	// wrapper is set when the A2A extraction met a {"response":{…}}
	// wrapper.
	wrapper bool

	// events and built are the stream's event views and the task they
	// build, computed once (see reply.events and reply.builtTask).
	eventsOnce sync.Once
	events     []*a2aReply
	builtOnce  sync.Once
	built      *a2aBuild
}

// a2aFailure are the task states that carry a failure.
var a2aFailure = map[string]bool{"failed": true, "rejected": true}

// parseA2AReply views an A2A JSON-RPC response: the extraction of a2a-response-extraction.mdx
// gives the body (the last DataPart of artifacts[0] for final states, the
// first DataPart of status.message.parts for interim ones), and a task in
// state failed or rejected is the A2A form of an error result.
func parseA2AReply(c evidence.Call) *reply {
	r := &reply{call: c, a2a: &a2aReply{}}
	if c.RPCError != nil && rawjson.KindOf(c.RPCError) == rawjson.KindObject {
		r.rpcErr, _ = rawjson.ParseObject(c.RPCError)
	}
	if c.Message != nil {
		r.outcome, _ = extract.FromJSONRPCResponse(extract.TransportA2A, c.Message)
	}
	if c.Result == nil {
		return r
	}
	res, err := rawjson.ParseObject(c.Result)
	if err != nil {
		return r
	}
	r.result = res
	a := r.a2a
	a.task, a.taskPtr = res, "/result"
	if res.Len() == 1 {
		key := res.Members()[0].Key
		if inner := child(res, key); inner != nil && slices.Contains(streamEnvelopes, key) {
			a.task, a.taskPtr, a.envelope = inner, "/result/"+key, key
		}
	}
	a.kind, _ = str(a.task, "kind")
	if st := child(a.task, "status"); st != nil {
		a.stateRaw, _ = st.Get("state")
		a.state, _ = str(st, "state")
		a.norm = extract.NormalizeState(a.state)
	}
	x, xerr := extract.A2A(c.Result)
	if _, ok := xerr.(*extract.WrapperError); ok {
		a.wrapper = true
	}
	if x.Data != nil {
		if o, err := rawjson.ParseObject(x.Data); err == nil {
			r.data, r.dataPtr = o, "/result"+x.Pointer
		}
	}
	r.isError = a2aFailure[x.State]
	if c.Has(evidence.PurposeStream) {
		// A stream is read as the task its events build: its last event
		// (often a final status update without artifacts) is not the
		// task's body.
		if t := r.builtTask(); t != nil {
			r.data, r.dataPtr, a.wrapper = t.extraction()
			r.isError = a2aFailure[t.norm]
			a.state = t.state
		}
	}
	if r.isError {
		r.isErrorRaw = json.RawMessage(strconv.Quote(a.state))
	}
	return r
}

// extraction is a2a-response-extraction.mdx's extraction over a built task: for a final
// state the last DataPart of artifacts[0] (none, with wrapper set, when it
// is a {"response":{…}} wrapper), else the first DataPart of the status
// message; for an interim state the first DataPart of the status message.
func (t *a2aBuild) extraction() (data *rawjson.Object, ptr string, wrapper bool) {
	first := func(parts []located) (*rawjson.Object, string) {
		for _, p := range parts {
			if d, ok := p.obj.Get("data"); ok && rawjson.KindOf(d) == rawjson.KindObject {
				o, _ := rawjson.ParseObject(d)
				return o, p.ptr + "/data"
			}
		}
		return nil, ""
	}
	switch {
	case finalStates[t.norm]:
		if len(t.artifacts) > 0 {
			var last *rawjson.Object
			for _, p := range t.artifacts[0].parts {
				if d, ok := p.obj.Get("data"); ok && rawjson.KindOf(d) == rawjson.KindObject {
					last, _ = rawjson.ParseObject(d)
					ptr = p.ptr + "/data"
				}
			}
			if last != nil {
				if last.Len() == 1 && child(last, "response") != nil {
					return nil, "", true
				}
				return last, ptr, false
			}
		}
		data, ptr = first(t.message)
	case interimStates[t.norm]:
		data, ptr = first(t.message)
	}
	return data, ptr, false
}

// The kinds of A2A object a reply or stream event carries.
const (
	objTask           = "task"
	objStatusUpdate   = "status-update"
	objArtifactUpdate = "artifact-update"
	objMessage        = "message"
)

// what says which kind of A2A object the view holds: by its 1.0 envelope,
// else by its 0.3 kind, else by its shape (an artifact member makes an
// artifact update, a status with an id or artifacts a Task, a status alone
// a status update); "" for none of them.
func (a *a2aReply) what() string {
	switch a.envelope {
	case "task":
		return objTask
	case "statusUpdate":
		return objStatusUpdate
	case "artifactUpdate":
		return objArtifactUpdate
	case "message":
		return objMessage
	}
	switch a.kind {
	case objTask, objStatusUpdate, objArtifactUpdate, objMessage:
		return a.kind
	}
	if a.task == nil {
		return ""
	}
	_, hasArtifact := a.task.Get("artifact")
	_, hasStatus := a.task.Get("status")
	_, hasID := a.task.Get("id")
	_, hasArtifacts := a.task.Get("artifacts")
	_, hasParts := a.task.Get("parts")
	switch {
	case hasArtifact && !hasStatus:
		return objArtifactUpdate
	case hasStatus && (hasID || hasArtifacts):
		return objTask
	case hasStatus:
		return objStatusUpdate
	case hasParts:
		return objMessage
	}
	return ""
}

// dataParts calls fn for every DataPart of the view (a part with a data
// member): in every artifact, in an artifact update's artifact, in
// status.message and in a message's own parts, with its pointer and its
// data value.
func (a *a2aReply) dataParts(fn func(ptr string, part *rawjson.Object, data json.RawMessage)) {
	a.parts(func(p string, part *rawjson.Object) {
		if d, ok := part.Get("data"); ok {
			fn(p, part, d)
		}
	})
}

// parts calls fn for every part object of the view: in every artifact, in
// an artifact update's artifact, then in status.message, then in a
// message's own parts.
func (a *a2aReply) parts(fn func(ptr string, part *rawjson.Object)) {
	if a.task == nil {
		return
	}
	for _, art := range objectsAt(a.task, "artifacts", a.taskPtr+"/artifacts") {
		eachPart(art.obj, art.ptr, fn)
	}
	if art := child(a.task, "artifact"); art != nil {
		eachPart(art, a.taskPtr+"/artifact", fn)
	}
	if msg := child(child(a.task, "status"), "message"); msg != nil {
		eachPart(msg, a.taskPtr+"/status/message", fn)
	}
	eachPart(a.task, a.taskPtr, fn)
}

// nonObjectParts calls fn for every item of a parts array of the view that
// is no object (parts walks objects only), with its pointer and kind.
func (a *a2aReply) nonObjectParts(fn func(ptr, kind string)) {
	if a.task == nil {
		return
	}
	each := func(o *rawjson.Object, base string) {
		v, ok := o.Get("parts")
		if !ok {
			return
		}
		rawjson.EachElement(v, func(i int, it []byte) bool {
			if rawjson.KindOf(it) != rawjson.KindObject {
				fn(base+"/parts/"+strconv.Itoa(i), kindName(it))
			}
			return true
		})
	}
	for _, art := range objectsAt(a.task, "artifacts", a.taskPtr+"/artifacts") {
		each(art.obj, art.ptr)
	}
	if art := child(a.task, "artifact"); art != nil {
		each(art, a.taskPtr+"/artifact")
	}
	if msg := child(child(a.task, "status"), "message"); msg != nil {
		each(msg, a.taskPtr+"/status/message")
	}
	each(a.task, a.taskPtr)
}

// eachPart calls fn for every object in o.parts, with its pointer.
func eachPart(o *rawjson.Object, base string, fn func(ptr string, part *rawjson.Object)) {
	for _, p := range objectsAt(o, "parts", base+"/parts") {
		fn(p.ptr, p.obj)
	}
}

// located is an object and where it is in the response.
type located struct {
	ptr string
	obj *rawjson.Object
}

// objectsAt returns the object items of the array o[key], with their
// pointers under base; nil when the member is absent or not an array.
func objectsAt(o *rawjson.Object, key, base string) []located {
	v, ok := o.Get(key)
	if !ok || rawjson.KindOf(v) != rawjson.KindArray {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		return nil
	}
	var out []located
	for i, it := range items {
		if p, err := rawjson.ParseObject(it); err == nil {
			out = append(out, located{base + "/" + strconv.Itoa(i), p})
		}
	}
	return out
}

// events returns the views of a reply: every JSON-RPC response of a
// stream, in order, each with pointers under /events/<i>; or the reply's
// own view.
func (r *reply) events() []*a2aReply {
	if r.a2a == nil {
		return nil
	}
	if !r.call.Has(evidence.PurposeStream) {
		return []*a2aReply{r.a2a}
	}
	r.a2a.eventsOnce.Do(func() {
		for i, ev := range a2a.Events(r.call) {
			c := r.call
			c.Purposes, c.Exchanges = nil, nil // one event, not the stream
			c.Message = ev
			c.Result, c.RPCError, _, _ = splitResponse(ev)
			v := parseA2AReply(c).a2a
			v.taskPtr = "/events/" + strconv.Itoa(i) + v.taskPtr
			r.a2a.events = append(r.a2a.events, v)
		}
	})
	return r.a2a.events
}

// a2aBuild is the A2A task a reply builds: a send's Task, or the task a
// stream's events build, as A2A 0.3 and 1.0 clients accumulate it (A2A
// guide, "Envelope semantics"): a Task snapshot sets the status and, when
// it carries artifacts, replaces them; an artifact update adds its
// artifact, or with append: true concatenates its parts onto the artifact
// of the same artifactId; a status update sets the status. A snapshot
// without an artifacts member keeps what was streamed: AdCP clients
// "accumulate these into the target artifact, then apply the extraction
// algorithm when the {task} frame arrives with a terminal state".
type a2aBuild struct {
	// seen is set once a Task or a status update was seen.
	seen bool
	// state is status.state as received (a string), norm normalized;
	// statusPtr locates the status that set them, taskPtr the Task or
	// status update holding it.
	state, norm        string
	statusPtr, taskPtr string
	// artifacts in the order they first appeared; artsPtr locates the
	// artifacts member they all came from when one Task carried them all,
	// "" when a stream built them.
	artifacts []*a2aArtifact
	artsPtr   string
	// artsBad is what is wrong with the artifacts member of the Task that
	// set them: not an array, or an item that is not an artifact object.
	artsBad finding
	// message are the parts of the current status.message.
	message []located
}

// a2aArtifact is one artifact of a built task.
type a2aArtifact struct {
	id string
	// ptr locates the artifact object that introduced it.
	ptr string
	// parts are the artifact's parts, each where it was received.
	parts []located
	// metadata are the metadata objects its chunks carried.
	metadata []located
}

// builtTask returns the task the reply builds; nil when the reply carries
// no Task and no status update.
func (r *reply) builtTask() *a2aBuild {
	if r.a2a == nil {
		return nil
	}
	r.a2a.builtOnce.Do(func() {
		t := &a2aBuild{}
		for _, ev := range r.events() {
			t.apply(ev)
		}
		if t.seen {
			r.a2a.built = t
		}
	})
	return r.a2a.built
}

// apply folds one event (or a send's result) into the task.
func (t *a2aBuild) apply(ev *a2aReply) {
	if ev.task == nil {
		return
	}
	switch ev.what() {
	case objTask:
		t.seen = true
		t.setStatus(ev)
		// A null artifacts member is an absent one, as serializers write
		// an unset optional field.
		if v, ok := ev.task.Get("artifacts"); ok && rawjson.KindOf(v) != rawjson.KindNull {
			p := ev.taskPtr + "/artifacts"
			t.artifacts, t.artsPtr, t.artsBad = nil, p, finding{}
			if rawjson.KindOf(v) != rawjson.KindArray {
				t.artsBad = finding{p, "is " + kindName(v) + ", not a list"}
			}
			rawjson.EachElement(v, func(i int, it []byte) bool {
				if rawjson.KindOf(it) != rawjson.KindObject && t.artsBad.ptr == "" {
					t.artsBad = finding{p + "/" + strconv.Itoa(i), "is " + kindName(it) + ", not an artifact object"}
				}
				return true
			})
			// A Task's artifacts are each an artifact, whatever their
			// artifactId: merging by id is how a stream's artifact
			// updates build one (A2A 0.3 §7.2.2, 1.0 TaskArtifactUpdateEvent),
			// not how a Task lists them.
			for _, art := range objectsAt(ev.task, "artifacts", p) {
				t.artifacts = append(t.artifacts, newArtifact(art))
			}
		}
	case objStatusUpdate:
		t.seen = true
		t.setStatus(ev)
	case objArtifactUpdate:
		if art := child(ev.task, "artifact"); art != nil {
			appendTo := string(trim(mustGet(ev.task, "append"))) == "true"
			t.add(located{ev.taskPtr + "/artifact", art}, appendTo)
			t.artsPtr = ""
		}
	}
}

// setStatus takes the status of a Task or a status update.
func (t *a2aBuild) setStatus(ev *a2aReply) {
	t.state, t.norm, t.statusPtr, t.taskPtr = ev.state, ev.norm, ev.taskPtr+"/status", ev.taskPtr
	t.message = nil
	if msg := child(child(ev.task, "status"), "message"); msg != nil {
		t.message = objectsAt(msg, "parts", ev.taskPtr+"/status/message/parts")
	}
}

// add adds an artifact, or with appendTo concatenates its parts onto the
// artifact of the same artifactId; without append, an artifact of an
// artifactId already seen replaces it. An artifactId that is absent or not
// a string reads as "".
func (t *a2aBuild) add(art located, appendTo bool) {
	a := newArtifact(art)
	for _, have := range t.artifacts {
		if have.id != a.id { // an artifact without artifactId matches another without, as JS clients compare them
			continue
		}
		if appendTo {
			have.parts = append(have.parts, a.parts...)
			have.metadata = append(have.metadata, a.metadata...)
		} else {
			*have = *a
		}
		return
	}
	t.artifacts = append(t.artifacts, a)
}

// newArtifact reads one artifact object.
func newArtifact(art located) *a2aArtifact {
	id, _ := str(art.obj, "artifactId")
	a := &a2aArtifact{id: id, ptr: art.ptr, parts: objectsAt(art.obj, "parts", art.ptr+"/parts")}
	if m := child(art.obj, "metadata"); m != nil {
		a.metadata = []located{{art.ptr + "/metadata", m}}
	}
	return a
}

// dataParts calls fn for every DataPart of the built task: in its
// artifacts, then in its status message.
func (t *a2aBuild) dataParts(fn func(ptr string, data json.RawMessage)) {
	each := func(parts []located) {
		for _, p := range parts {
			if d, ok := p.obj.Get("data"); ok {
				fn(p.ptr, d)
			}
		}
	}
	for _, a := range t.artifacts {
		each(a.parts)
	}
	each(t.message)
}

// mustGet returns o[key], nil when absent.
func mustGet(o *rawjson.Object, key string) json.RawMessage {
	v, _ := o.Get(key)
	return v
}
