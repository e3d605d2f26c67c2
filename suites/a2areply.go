package suites

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
)

// a2aReply is the task view of an A2A reply, read from the raw bytes.
type a2aReply struct {
	// task is the Task (or stream event) object, unwrapped from a
	// single-key envelope.
	task    *extract.Object
	taskPtr string
	// envelope is the key of a single-key result envelope (A2A 1.0:
	// task, message, statusUpdate, artifactUpdate), "" for a bare object.
	envelope string
	// state is the status.state as received; norm its normalized token.
	state, norm string
	// data is what the A2A extraction selects, as an object, or nil;
	// err is the extraction's *WrapperError, if any.
	wrapper bool
}

// a2aFailure are the task states that carry a failure.
var a2aFailure = map[string]bool{"failed": true, "rejected": true}

// parseA2AReply views an A2A JSON-RPC response: the extraction of seed 004
// gives the body (the last DataPart of artifacts[0] for final states, the
// first DataPart of status.message.parts for interim ones), and a task in
// state failed or rejected is the A2A form of an error result.
func parseA2AReply(c evidence.Call) *reply {
	r := &reply{call: c, a2a: &a2aReply{}}
	if c.RPCError != nil && kindOf(c.RPCError) == extract.KindObject {
		r.rpcErr, _ = extract.ParseObject(c.RPCError)
	}
	if c.Message != nil {
		r.outcome, _ = extract.FromJSONRPCResponse(extract.TransportA2A, c.Message)
	}
	if c.Result == nil {
		return r
	}
	res, err := extract.ParseObject(c.Result)
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
	if st := child(a.task, "status"); st != nil {
		a.state, _ = str(st, "state")
		a.norm = extract.NormalizeState(a.state)
	}
	x, xerr := extract.A2A(c.Result)
	if _, ok := xerr.(*extract.WrapperError); ok {
		a.wrapper = true
	}
	if x.Data != nil {
		if o, err := extract.ParseObject(x.Data); err == nil {
			r.data, r.dataPtr = o, "/result"+x.Pointer
		}
	}
	r.isError = a2aFailure[x.State]
	if r.isError {
		r.isErrorRaw = json.RawMessage(strconv.Quote(a.state))
	}
	return r
}

// dataParts calls fn for every DataPart of the task (a part with a data
// member): in every artifact and in status.message, with its pointer and
// its data value.
func (a *a2aReply) dataParts(fn func(ptr string, part *extract.Object, data json.RawMessage)) {
	a.parts(func(p string, part *extract.Object) {
		if d, ok := part.Get("data"); ok {
			fn(p, part, d)
		}
	})
}

// parts calls fn for every part object of the task: in every artifact, then
// in status.message.
func (a *a2aReply) parts(fn func(ptr string, part *extract.Object)) {
	if a.task == nil {
		return
	}
	each := func(base string, parts json.RawMessage) {
		var items []json.RawMessage
		if json.Unmarshal(parts, &items) != nil {
			return
		}
		for i, it := range items {
			if p, err := extract.ParseObject(it); err == nil {
				fn(base+"/"+strconv.Itoa(i), p)
			}
		}
	}
	if v, ok := a.task.Get("artifacts"); ok {
		var arts []json.RawMessage
		if json.Unmarshal(v, &arts) == nil {
			for i, art := range arts {
				if o, err := extract.ParseObject(art); err == nil {
					if parts, ok := o.Get("parts"); ok {
						each(a.taskPtr+"/artifacts/"+strconv.Itoa(i)+"/parts", parts)
					}
				}
			}
		}
	}
	if msg := child(child(a.task, "status"), "message"); msg != nil {
		if parts, ok := msg.Get("parts"); ok {
			each(a.taskPtr+"/status/message/parts", parts)
		}
	}
}
