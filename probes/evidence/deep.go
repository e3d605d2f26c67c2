package evidence

import (
	"encoding/json"

	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// packedKey names the wrapper that carries, in evidence.json, a raw value
// a report does not write as JSON: one encoding/json cannot embed (a reply
// nested deeper than its 10 000 levels: the harness reads it, so the
// evidence must keep it), or one nested deeper than wire.MaxJSONDepth
// (indented, its depth would cost its square in bytes, and Python's json
// cannot load it). The wrapper holds the exact bytes as a wire.Bytes:
// {"adcp_conform_json_text": "…"}.
const packedKey = "adcp_conform_json_text"

// rawFields are the raw JSON members of a call.
func rawFields(c *Call) []*json.RawMessage {
	return []*json.RawMessage{&c.Arguments, &c.Context, &c.Message, &c.Result, &c.RPCError, &c.Body}
}

// isPacked reports whether raw is a wrapper: an object whose only key is
// packedKey.
func isPacked(raw []byte) bool {
	o, err := extract.ParseObject(raw)
	return err == nil && o.Len() == 1 && o.Members()[0].Key == packedKey
}

// pack returns raw as evidence.json can hold it: itself, or wrapped when
// encoding/json cannot embed it, when it nests deeper than
// wire.MaxJSONDepth (or when it already looks like a wrapper,
// so that unpacking gives it back exactly).
func pack(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return raw
	}
	if depth, ok := extract.Depth(raw); ok && depth <= wire.MaxJSONDepth && json.Valid(raw) && !isPacked(raw) {
		return raw
	}
	b, err := json.Marshal(map[string]wire.Bytes{packedKey: wire.Bytes(raw)})
	if err != nil {
		return nil
	}
	return b
}

// unpack undoes pack.
func unpack(raw json.RawMessage) json.RawMessage {
	if raw == nil || !isPacked(raw) {
		return raw
	}
	var w map[string]wire.Bytes
	if json.Unmarshal(raw, &w) != nil {
		return raw
	}
	return json.RawMessage(w[packedKey])
}

// packed returns the calls with every raw member packed.
func packed(calls []Call) []Call {
	out := make([]Call, len(calls))
	for i, c := range calls {
		for _, f := range rawFields(&c) {
			*f = pack(*f)
		}
		out[i] = c
	}
	return out
}

// unpacked undoes packed in place.
func unpacked(calls []Call) {
	for i := range calls {
		for _, f := range rawFields(&calls[i]) {
			*f = unpack(*f)
		}
	}
}
