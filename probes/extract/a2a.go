package extract

import (
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"strconv"
	"strings"
)

// The A2A task states of a2a-response-extraction.mdx, in normalized form.
var (
	finalStates   = []string{"completed", "failed", "canceled", "rejected"}
	interimStates = []string{"working", "submitted", "input-required", "auth-required"}
	envelopeKeys  = []string{"task", "message", "statusUpdate", "artifactUpdate"}
)

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// NormalizeState applies a2a-response-extraction.mdx's state normalization: strip one leading
// "TASK_STATE_" (case-sensitive), lowercase ASCII letters only, and replace
// every "_" with "-". It does not trim, collapse separators or fold Unicode
// (so a KELVIN SIGN never becomes "k").
func NormalizeState(s string) string {
	s = strings.TrimPrefix(s, "TASK_STATE_")
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c + ('a' - 'A')
		case c == '_':
			b[i] = '-'
		}
	}
	return string(b)
}

// A2A implements a2a-response-extraction.mdx (extractAdcpResponseFromA2A) over a bare A2A Task,
// TaskStatusUpdateEvent or A2A 1.0 StreamResponse envelope:
//
//  1. Unwrap one envelope: an object whose only key is task, message,
//     statusUpdate or artifactUpdate holding an object. Never recursive: an
//     inner object with any of those four top-level keys is a nested envelope
//     and yields no data.
//  2. status.state must be a string; it is normalized (NormalizeState) and
//     must then equal a known token exactly, otherwise no data.
//  3. Final states (completed, failed, canceled, rejected): the last DataPart
//     of artifacts[0].parts; a DataPart whose data has the single key
//     "response" holding an object returns a *WrapperError. Without a
//     DataPart there, the first DataPart of status.message.parts (no wrapper
//     check on that fallback).
//  4. Interim states (working, submitted, input-required, auth-required): the
//     first DataPart of status.message.parts.
//
// A DataPart is a part whose data member is a non-null, non-array object,
// with or without kind. It returns an *InputError when the input is not a
// JSON object.
func A2A(taskOrEvent []byte) (Extraction, error) {
	o, an, err := root(taskOrEvent)
	if err != nil {
		return Extraction{Path: PathNone}, err
	}
	x, werr := a2aSuccess(o, "")
	x.Anomalies = append(an, x.Anomalies...)
	if werr != nil {
		return x, werr
	}
	return x, nil
}

// unwrap applies step 1 and returns the task-like object and its pointer.
func unwrap(o *rawjson.Object, base string, an *[]Anomaly) (*rawjson.Object, string, bool) {
	if o.Len() != 1 {
		return o, base, true
	}
	key := o.Members()[0].Key
	if !contains(envelopeKeys, key) {
		return o, base, true
	}
	v, _ := o.Get(key)
	ptr := rawjson.Pointer(base, key)
	inner, ok := objectAt(v, an, ptr)
	if !ok {
		// JS passes a primitive through unchanged and unwraps an array; either
		// way there is no status.state, so there is no data.
		return nil, "", false
	}
	for _, m := range inner.Members() {
		if contains(envelopeKeys, m.Key) {
			*an = append(*an, Anomaly{Kind: AnomalyNestedEnvelope, Pointer: rawjson.Pointer(ptr, m.Key)})
			return nil, "", false
		}
	}
	return inner, ptr, true
}

func a2aSuccess(o *rawjson.Object, base string) (Extraction, error) {
	x := Extraction{Path: PathNone}
	task, tp, ok := unwrap(o, base, &x.Anomalies)
	if !ok {
		return x, nil
	}
	state, ok := taskState(task, tp, &x.Anomalies)
	if !ok {
		return x, nil
	}
	x.State = state
	switch {
	case contains(finalStates, state):
		if data, ptr, found := lastArtifactDataPart(task, tp, &x.Anomalies); found {
			x.Path, x.Pointer = PathArtifact, ptr
			if isWrapper(data) {
				return x, &WrapperError{Pointer: ptr}
			}
			x.Data = data
			return x, nil
		}
		x.Path, x.Data, x.Pointer = firstMessageDataPart(task, tp, &x.Anomalies)
	case contains(interimStates, state):
		x.Path, x.Data, x.Pointer = firstMessageDataPart(task, tp, &x.Anomalies)
	default:
		x.Anomalies = append(x.Anomalies, Anomaly{Kind: AnomalyUnknownState, Pointer: rawjson.Pointer(tp, "status", "state"), Detail: state})
	}
	return x, nil
}

// taskState reads and normalizes status.state; false means "no data".
func taskState(task *rawjson.Object, tp string, an *[]Anomaly) (string, bool) {
	sv, ok := task.Get("status")
	if !ok {
		return "", false
	}
	status, ok := objectAt(sv, an, rawjson.Pointer(tp, "status"))
	if !ok {
		return "", false
	}
	raw, ok := status.Get("state")
	if !ok {
		return "", false
	}
	s, ok := rawjson.StringValue(raw)
	if !ok {
		*an = append(*an, Anomaly{Kind: AnomalyNonStringState, Pointer: rawjson.Pointer(tp, "status", "state"), Detail: rawjson.KindOf(raw).Phrase()})
		return "", false
	}
	state := NormalizeState(s)
	return state, state != ""
}

// isWrapper: data's only key is "response" and its value is an object. The
// reference code tests typeof === 'object', which also matches null and
// arrays; the prose ("{response: {...}}", "containing an object") is
// followed, so {"response": null} is returned as data.
func isWrapper(data []byte) bool {
	key, only := rawjson.SoleKey(data)
	if !only || key != "response" {
		return false
	}
	o := rawjson.ObjectOf(data)
	v, _ := o.Get("response")
	return rawjson.KindOf(v) == rawjson.KindObject
}

// dataPart returns the part's data when the part is a DataPart.
func dataPart(part []byte, ptr string, an *[]Anomaly) ([]byte, bool) {
	po, ok := objectAt(part, an, ptr)
	if !ok {
		if rawjson.KindOf(part) != rawjson.KindNull {
			*an = append(*an, Anomaly{Kind: AnomalyNonObjectItem, Pointer: ptr, Detail: rawjson.KindOf(part).Phrase()})
		}
		return nil, false
	}
	d, ok := po.Get("data")
	return d, ok && rawjson.KindOf(d) == rawjson.KindObject
}

// partsOf returns the parts array of an object, noting a non-array.
func partsOf(o *rawjson.Object, ptr string, an *[]Anomaly) ([]byte, bool) {
	parts, ok := o.Get("parts")
	if !ok {
		return nil, false
	}
	if rawjson.KindOf(parts) != rawjson.KindArray {
		if rawjson.TruthyValue(parts) {
			*an = append(*an, Anomaly{Kind: AnomalyNotArray, Pointer: rawjson.Pointer(ptr, "parts")})
		}
		return nil, false
	}
	return parts, true
}

func lastArtifactDataPart(task *rawjson.Object, tp string, an *[]Anomaly) ([]byte, string, bool) {
	arts, ok := task.Get("artifacts")
	if !ok {
		return nil, "", false
	}
	ap := rawjson.Pointer(tp, "artifacts")
	if rawjson.KindOf(arts) != rawjson.KindArray {
		if rawjson.TruthyValue(arts) {
			*an = append(*an, Anomaly{Kind: AnomalyNotArray, Pointer: ap})
		}
		return nil, "", false
	}
	var first []byte
	rawjson.Elements(arts, func(_ int, v []byte) bool { first = v; return false })
	if first == nil {
		return nil, "", false
	}
	a0p := rawjson.Pointer(ap, "0")
	a0, ok := objectAt(first, an, a0p)
	if !ok {
		return nil, "", false
	}
	parts, ok := partsOf(a0, a0p, an)
	if !ok {
		return nil, "", false
	}
	var data []byte
	var ptr string
	rawjson.Elements(parts, func(i int, part []byte) bool {
		pp := rawjson.Pointer(a0p, "parts", strconv.Itoa(i))
		if d, ok := dataPart(part, pp, an); ok {
			data, ptr = d, rawjson.Pointer(pp, "data")
		}
		return true
	})
	return data, ptr, data != nil
}

func firstMessageDataPart(task *rawjson.Object, tp string, an *[]Anomaly) (Path, []byte, string) {
	parts, pp, ok := messageParts(task, tp, an)
	if !ok {
		return PathNone, nil, ""
	}
	var data []byte
	var ptr string
	rawjson.Elements(parts, func(i int, part []byte) bool {
		p := rawjson.Pointer(pp, strconv.Itoa(i))
		if d, ok := dataPart(part, p, an); ok {
			data, ptr = d, rawjson.Pointer(p, "data")
			return false
		}
		return true
	})
	if data == nil {
		return PathNone, nil, ""
	}
	return PathStatusMessage, data, ptr
}

// messageParts returns status.message.parts when it is an array.
func messageParts(task *rawjson.Object, tp string, an *[]Anomaly) ([]byte, string, bool) {
	sv, ok := task.Get("status")
	if !ok {
		return nil, "", false
	}
	sp := rawjson.Pointer(tp, "status")
	status, ok := objectAt(sv, an, sp)
	if !ok {
		return nil, "", false
	}
	mv, ok := status.Get("message")
	if !ok {
		return nil, "", false
	}
	mp := rawjson.Pointer(sp, "message")
	msg, ok := objectAt(mv, an, mp)
	if !ok {
		return nil, "", false
	}
	parts, ok := partsOf(msg, mp, an)
	return parts, rawjson.Pointer(mp, "parts"), ok
}

// A2AError implements the A2A part of transport-errors.mdx's client detection order over
// a bare Task or event (after the same single stream-envelope unwrap as A2A):
//
//  1. artifacts[].parts[].data.adcp_error, every artifact and part in order;
//  2. status.message.parts[].data.adcp_error.
//
// The first truthy adcp_error found is validated and ends the search, as in
// the MCP detection code: a candidate that fails validation gives "no
// structured error" with Rejected set. The task state is not consulted.
func A2AError(taskOrEvent []byte) (ErrorExtraction, error) {
	o, an, err := root(taskOrEvent)
	if err != nil {
		return ErrorExtraction{Path: PathNone}, err
	}
	x := a2aError(o, "")
	x.Anomalies = append(an, x.Anomalies...)
	return x, nil
}

func a2aError(o *rawjson.Object, base string) ErrorExtraction {
	x := ErrorExtraction{Path: PathNone}
	task, tp, ok := unwrap(o, base, &x.Anomalies)
	if !ok {
		return x
	}
	found := false
	scan := func(parts []byte, pp string, path Path) {
		rawjson.Elements(parts, func(i int, part []byte) bool {
			p := rawjson.Pointer(pp, strconv.Itoa(i))
			d, ok := dataPart(part, p, &x.Anomalies)
			if !ok {
				return true
			}
			do := rawjson.ObjectOf(d)
			ae, ok := do.Get("adcp_error")
			if !ok || !rawjson.TruthyValue(ae) {
				return true
			}
			x.settle(ae, rawjson.Pointer(p, "data", "adcp_error"), path)
			found = true
			return false
		})
	}
	if arts, ok := task.Get("artifacts"); ok && rawjson.KindOf(arts) == rawjson.KindArray {
		ap := rawjson.Pointer(tp, "artifacts")
		rawjson.Elements(arts, func(i int, art []byte) bool {
			p := rawjson.Pointer(ap, strconv.Itoa(i))
			ao, ok := objectAt(art, &x.Anomalies, p)
			if !ok {
				return true
			}
			if parts, ok := partsOf(ao, p, &x.Anomalies); ok {
				scan(parts, rawjson.Pointer(p, "parts"), PathArtifact)
			}
			return !found
		})
	}
	if found {
		return x
	}
	if parts, pp, ok := messageParts(task, tp, &x.Anomalies); ok {
		scan(parts, pp, PathStatusMessage)
	}
	return x
}
