package suites

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// reply is a strict view of one MCP tools/call response, read from the raw
// bytes of the call (never from an SDK's decoded view).
type reply struct {
	call evidence.Call
	// result is the JSON-RPC result member when it is an object.
	result *rawjson.Object
	// rpcErr is the JSON-RPC error member when it is an object.
	rpcErr *rawjson.Object
	// isError is result.isError under JavaScript truthiness, as clients read
	// it; isErrorRaw is the member as received (nil when absent).
	isError    bool
	isErrorRaw json.RawMessage
	// sc is result.structuredContent when it is an object; scRaw is the
	// member as received (nil when absent).
	sc    *rawjson.Object
	scRaw json.RawMessage
	// texts are the content[] items of type "text" with a string text.
	texts []textItem
	// data is what a client extracts on the success path (mcp-response-extraction.mdx), with
	// dataPtr locating it in the response; nil when none.
	data    *rawjson.Object
	dataPtr string
	// outcome is the full client detection order over the response.
	outcome extract.Outcome
	// a2a is set for an A2A reply: the task view (see a2aReply).
	a2a *a2aReply

	candOnce sync.Once
	cands    []candidate
	strOnce  sync.Once
	strs     []stringValue
}

// stringValue is one string of a reply: where, under which key, what.
type stringValue struct{ ptr, key, s string }

// textItem is one text content item.
type textItem struct {
	ptr  string // /result/content/<i>/text
	text string
	obj  *rawjson.Object // the text parsed as a JSON object, or nil
}

// root is an object a client may read as the AdCP-level body of a reply.
type root struct {
	ptr string
	obj *rawjson.Object
}

// replies memoizes parsed replies for the length of a judging run: every
// rule reads the same calls, and a hostile seller's megabyte replies must
// be parsed once, not once per rule. The key is the identity of the
// message bytes (views of a store share them); a cached reply keeps those
// bytes alive, so the identity cannot be reused while it is cached.
var replies sync.Map

type replyKey struct {
	p       *byte
	n       int
	probeID string
}

// forgetReplies empties the memo; Judge and Register call it first.
func forgetReplies() { replies.Clear() }

// Release drops what the judges memoized while judging; a runner calls it
// once the specs Register declared have run.
func Release() { forgetReplies() }

// parseReply returns the strict view of a call's reply, parsed once.
func parseReply(c evidence.Call) *reply {
	if len(c.Message) == 0 {
		return parseReplyOnce(c)
	}
	k := replyKey{&c.Message[0], len(c.Message), c.ProbeID}
	if v, ok := replies.Load(k); ok {
		return v.(*reply)
	}
	r := parseReplyOnce(c)
	replies.Store(k, r)
	return r
}

func parseReplyOnce(c evidence.Call) *reply {
	if c.Transport == evidence.A2A {
		return parseA2AReply(c)
	}
	r := &reply{call: c}
	if c.Result != nil {
		r.result, _ = rawjson.ParseObject(c.Result)
	}
	if c.RPCError != nil && rawjson.KindOf(c.RPCError) == rawjson.KindObject {
		r.rpcErr, _ = rawjson.ParseObject(c.RPCError)
	}
	if c.Message != nil {
		r.outcome, _ = extract.FromJSONRPCResponse(extract.TransportMCP, c.Message)
	}
	if r.result == nil {
		return r
	}
	if v, ok := r.result.Get("isError"); ok {
		r.isErrorRaw, r.isError = v, rawjson.TruthyValue(v)
	}
	if v, ok := r.result.Get("structuredContent"); ok {
		r.scRaw = v
		if rawjson.KindOf(v) == rawjson.KindObject {
			r.sc, _ = rawjson.ParseObject(v)
		}
	}
	if v, ok := r.result.Get("content"); ok {
		rawjson.EachElement(v, func(i int, it []byte) bool {
			o, err := rawjson.ParseObject(it)
			if err != nil {
				return true
			}
			if t, _ := str(o, "type"); t != "text" {
				return true
			}
			text, ok := str(o, "text")
			if !ok {
				return true
			}
			ti := textItem{ptr: "/result/content/" + strconv.Itoa(i) + "/text", text: text}
			if rawjson.KindOf([]byte(text)) == rawjson.KindObject {
				ti.obj, _ = rawjson.ParseObject([]byte(text))
			}
			r.texts = append(r.texts, ti)
			return true
		})
	}
	if x, err := extract.MCPSuccess(c.Result); err == nil && x.Data != nil {
		if o, err := rawjson.ParseObject(x.Data); err == nil {
			r.data, r.dataPtr = o, "/result"+x.Pointer
			if x.Path == extract.PathTextFallback {
				r.dataPtr += "#" // pointers below it reach into the parsed text
			}
		}
	}
	return r
}

// success reports whether the reply is a tool result not flagged as an
// error (MCP), or a task in a non-failure state (A2A).
func (r *reply) success() bool { return r.result != nil && !r.isError }

// roots returns every object a client may read as the AdCP body:
// structuredContent, then every text item that parses to an object (MCP);
// the body the A2A extraction selects (A2A).
func (r *reply) roots() []root {
	if r.a2a != nil {
		if r.data != nil {
			return []root{{r.dataPtr, r.data}}
		}
		return nil
	}
	var out []root
	if r.sc != nil {
		out = append(out, root{"/result/structuredContent", r.sc})
	}
	for _, t := range r.texts {
		if t.obj != nil {
			out = append(out, root{t.ptr + "#", t.obj})
		}
	}
	return out
}

// errorRoot returns the body an error reply carries its envelope in: the
// object holding the adcp_error a client extracts first (transport-errors.mdx's
// detection order: structuredContent, then the first text item, on MCP;
// every artifact's DataParts, then status.message's, on A2A), else the body
// carrying no adcp_error: structuredContent (MCP), the extracted body (A2A).
func (r *reply) errorRoot() (root, bool) {
	for _, c := range r.candidates() {
		if !c.jsonrpc {
			return c.root, true
		}
	}
	switch {
	case r.a2a != nil && r.data != nil:
		return root{r.dataPtr, r.data}, true
	case r.a2a == nil && r.sc != nil:
		return root{"/result/structuredContent", r.sc}, true
	}
	return root{}, false
}

// candidate is an adcp_error value found at a detection path, valid or not.
type candidate struct {
	ptr     string
	raw     json.RawMessage
	obj     *rawjson.Object // nil when the value is not an object
	jsonrpc bool            // found in error.data of a JSON-RPC error
	// root is the object holding the adcp_error member (its pointer ends
	// in "#" for a parsed text item).
	root root
}

// errorSignal reports whether the reply carries an error in any form:
// isError, adcp_error anywhere it is read, or a JSON-RPC error.
func (r *reply) errorSignal() bool {
	return r.isError || r.rpcErr != nil || len(r.candidates()) > 0
}

// candidates returns every truthy adcp_error of the reply, in transport-errors.mdx's
// detection order, a superset of what the client detection (extract) reads:
// a JSON-RPC error's data; on MCP structuredContent, then each text item
// that parses to an object (read whatever isError says: ERR-05 judges the
// ones a client would not read); on A2A the data of every DataPart of every
// artifact, then of status.message (what extract.A2AError scans, whatever
// the task state). Judges that read errors read them here, so a reply
// extract reads as an error is never left unread by them.
func (r *reply) candidates() []candidate {
	r.candOnce.Do(func() { r.cands = r.findCandidates() })
	return r.cands
}

func (r *reply) findCandidates() []candidate {
	var out []candidate
	add := func(rt root, jsonrpc bool) {
		if rt.obj == nil {
			return
		}
		v, ok := rt.obj.Get("adcp_error")
		if !ok || !rawjson.TruthyValue(v) {
			return
		}
		c := candidate{ptr: rt.ptr + "/adcp_error", raw: v, jsonrpc: jsonrpc, root: rt}
		if rawjson.KindOf(v) == rawjson.KindObject {
			c.obj, _ = rawjson.ParseObject(v)
		}
		out = append(out, c)
	}
	if r.rpcErr != nil {
		if d, ok := r.rpcErr.Get("data"); ok && rawjson.KindOf(d) == rawjson.KindObject {
			o, _ := rawjson.ParseObject(d)
			add(root{"/error/data", o}, true)
		}
	}
	if r.a2a != nil {
		r.a2a.dataParts(func(p string, _ *rawjson.Object, data json.RawMessage) {
			if rawjson.KindOf(data) == rawjson.KindObject {
				o, _ := rawjson.ParseObject(data)
				add(root{p + "/data", o}, false)
			}
		})
		return out
	}
	for _, rt := range r.roots() {
		add(rt, false)
	}
	return out
}

// rpcCode returns the JSON-RPC error code, when it is an integer: a JSON
// number whose value is whole (-32029.0 and -3.2029e4 are -32029, as
// JavaScript and JSON Schema read them).
func (r *reply) rpcCode() (int64, bool) {
	if r.rpcErr == nil {
		return 0, false
	}
	v, ok := r.rpcErr.Get("code")
	if !ok {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64); err == nil {
		return n, true
	}
	f, isNum := number(v)
	if !isNum || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// kindName names the JSON kind of a value for a finding ("a string",
// "null"), "not JSON" for bytes that start none.
func kindName(raw []byte) string {
	if k := rawjson.KindOf(raw); k != rawjson.KindInvalid {
		return k.Phrase()
	}
	return "not JSON"
}

// str returns o[key] when it is a JSON string.
func str(o *rawjson.Object, key string) (string, bool) {
	if o == nil {
		return "", false
	}
	v, ok := o.Get(key)
	if !ok || rawjson.KindOf(v) != rawjson.KindString {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// values returns every value of key in o, in source order: one for a key
// given once, each occurrence for a repeated key. A rule on a member's value
// judges each, since a parser keeping the first occurrence and one keeping
// the last (JSON.parse) read different values, and RFC 8259 §4 leaves which
// to the receiver.
func values(o *rawjson.Object, key string) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range o.Members() {
		if m.Key == key {
			out = append(out, m.Value)
		}
	}
	return out
}

// child returns o[key] when it is an object.
func child(o *rawjson.Object, key string) *rawjson.Object {
	if o == nil {
		return nil
	}
	v, ok := o.Get(key)
	if !ok || rawjson.KindOf(v) != rawjson.KindObject {
		return nil
	}
	c, _ := rawjson.ParseObject(v)
	return c
}

// number returns a JSON number's value; ok is false for any other kind.
// An overflowing literal returns ±Inf.
func number(raw []byte) (float64, bool) {
	if rawjson.KindOf(raw) != rawjson.KindNumber {
		return 0, false
	}
	f, _ := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	return f, true
}

// jsonEqual reports whether two JSON texts hold the same value (objects
// compared by key, numbers by value), at any depth of nesting: a client's
// JSON.parse reads 100 000 levels, so equal replies deeper than
// encoding/json's 10 000 are equal too.
func jsonEqual(a, b []byte) bool {
	x, okx := rawjson.Fingerprint(a)
	y, oky := rawjson.Fingerprint(b)
	return okx && oky && x == y
}

// ptr appends reference tokens to a JSON pointer, escaped per RFC 6901 and
// made safe for a terminal.
func ptr(base string, tokens ...string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(wire.Sanitize(rawjson.EscapeToken(t), 64))
	}
	return b.String()
}

// quote renders a seller-controlled string for a message: quoted, bounded,
// terminal-safe.
func quote(s string) string { return strconv.Quote(wire.Sanitize(s, 64)) }

// maxWalkPointer bounds the pointer walkStrings gives a string: deeper
// values keep the pointer's head and tail around "/…".
const maxWalkPointer = 1024

// walkStrings calls fn for every string value inside raw with its pointer
// relative to base and the key of the member holding it, in document order
// (so findings are stable). Every depth is walked: the walk reads the
// project's own JSON view, not encoding/json, which stops at 10 000 levels
// and would leave deeper strings unread by the URL and leak judges. A
// repeated key's every value is walked, since each is in the bytes a
// client receives.
func walkStrings(base string, raw []byte, fn func(ptr, key, s string)) {
	rawjson.Walk(base, raw, func(at *rawjson.Location, key string, v []byte) {
		if s, ok := rawjson.StringValue(v); ok {
			fn(walkPointer(at), key, s)
		}
	})
}

// walkPointer is a walked value's pointer, built by ptr (tokens escaped and
// made safe for a terminal); one longer than maxWalkPointer keeps its head
// and tail around "/…".
func walkPointer(at *rawjson.Location) string {
	n := len(at.Base())
	for _, t := range at.Tokens() {
		if n += 1 + len(t); n > maxWalkPointer {
			break
		}
	}
	if n <= maxWalkPointer {
		return ptr(at.Base(), at.Tokens()...)
	}
	return wire.Sanitize(at.Pointer(maxWalkPointer), maxWalkPointer+16)
}
