package evidence

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// packedKey names the wrapper that carries, in evidence.json, a raw value
// a report does not write as JSON: one encoding/json cannot embed (a reply
// nested deeper than its 10 000 levels: the harness reads it, so the
// evidence must keep it), one nested deeper than wire.MaxJSONDepth
// (indented, its depth would cost its square in bytes, and Python's json
// cannot load it), or one that is not UTF-8 (a file holding it is not
// text: Python's json cannot open it). The wrapper holds the exact bytes
// as a wire.Bytes: {"adcp_conform_json_text": "…"}.
const packedKey = "adcp_conform_json_text"

// rawMember is a raw JSON member of a call: its name in evidence.json and
// the field.
type rawMember struct {
	name string
	v    *json.RawMessage
}

// rawMembers are the raw JSON members of a call, in the order of Call's
// fields.
func rawMembers(c *Call) []rawMember {
	return []rawMember{{"arguments", &c.Arguments}, {"context", &c.Context}, {"message", &c.Message},
		{"result", &c.Result}, {"rpc_error", &c.RPCError}, {"body", &c.Body}}
}

// isPacked reports whether raw is a wrapper: an object whose only key is
// packedKey. An object whose first key is written without escapes and is
// another is not one, so a large reply is not parsed to find out.
func isPacked(raw []byte) bool {
	v := bytes.TrimLeft(raw, " \t\r\n")
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	v = bytes.TrimLeft(v[1:], " \t\r\n")
	if len(v) > 0 && v[0] == '"' {
		if end := bytes.IndexAny(v[1:], `"\`); end >= 0 && v[1+end] == '"' && string(v[1:1+end]) != packedKey {
			return false
		}
	}
	o, err := rawjson.ParseObject(raw)
	return err == nil && o.Len() == 1 && o.Members()[0].Key == packedKey
}

// verbatim reports whether raw can be written into evidence.json as it is:
// UTF-8, one JSON text no deeper than wire.MaxJSONDepth, and not shaped
// like a wrapper (so that unpacking gives every value back exactly).
func verbatim(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	depth, ok := rawjson.Depth(raw) // also validates, under the grammar encoding/json reads
	return ok && depth <= wire.MaxJSONDepth && !isPacked(raw)
}

// pack returns raw as evidence.json can hold it: itself when verbatim,
// else wrapped.
func pack(raw json.RawMessage) json.RawMessage {
	if raw == nil || verbatim(raw) {
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
		for _, m := range rawMembers(&c) {
			*m.v = pack(*m.v)
		}
		out[i] = c
	}
	return out
}

// unpacked undoes packed in place.
func unpacked(calls []Call) {
	for i := range calls {
		for _, m := range rawMembers(&calls[i]) {
			*m.v = unpack(*m.v)
		}
	}
}
