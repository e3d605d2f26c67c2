package suites

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// envelopeFieldNames are the protocol fields every tool accepts (mcp-guide.mdx,
// MCP-specific considerations).
var envelopeFieldNames = []string{"idempotency_key", "context_id", "context", "push_notification_config", "governance_context", "adcp_version", "ext"}

func tolChecks() []Check {
	return []Check{
		// Rule: TOL-01 · Spec: mcp-guide.mdx (MCP-Specific Considerations); §4.60 · Since: 0.1.0 ·
		// Description: every listed tool MUST accept the envelope fields without rejecting
		// the call because of them (building/by-layer/L0/mcp-guide.mdx: "they MUST NOT
		// reject a call because an envelope field is present").
		// Policy: any rejection counts — an AdCP error or isError result, an A2A task
		// failed or rejected, a JSON-RPC error, an HTTP 4xx or 5xx, a reply that is not
		// JSON-RPC — when it names an envelope field, or when the same call without the
		// fields (the tool's valid probe) succeeded; otherwise it is not the fields' doing
		// and is left unjudged, saying why. Two rejections are allowed: a well-formed AdCP
		// error (string code and message) naming push_notification_config
		// (building/by-layer/L3/webhooks.mdx: sync-only operations "MAY reject that field as
		// a well-formed runtime error"; async-operations.mdx: a webhook channel the server
		// cannot honour is rejected "with a structured error"; which operation modes are
		// sync-only cannot be told from outside, so it is allowed on every tool), and
		// request_signature_required from a signing seller refusing the unsigned
		// push_notification_config.authentication (building/by-layer/L1/security.mdx, Webhook
		// callbacks; in an AdCP error, a JSON-RPC error or WWW-Authenticate: Signature
		// error="request_signature_required" on a 401).
		// The probe pins a release the seller advertises; VERSION_UNSUPPORTED for a pin it
		// does not advertise is left unjudged. A tool result that is no error is acceptance,
		// whatever its body (ENV-01's).
		{ID: "TOL-01", Transport: catalogue.MCP, Text: "accepts the envelope fields on every tool", Judge: judgeTOL01},
		// Rule: TOL-02 · Spec: §4.60–4.61 · Since: 0.1.0 ·
		// Description: a tool's inputSchema SHOULD NOT declare additionalProperties: false
		// while omitting the envelope fields from its properties.
		{ID: "TOL-02", Transport: catalogue.MCP, Text: "declares the envelope fields in any closed input schema", Judge: judgeTOL02},
	}
}

func judgeTOL01(s *evidence.Store, _ Options) Verdict {
	t := newTally("TOL-01")
	advertised := capabilityReleases(s)
	var unjudged []string
	for _, c := range toolCalls(s, evidence.WithPurpose(evidence.PurposeEnvelopeFields)) {
		if !t.account(c) {
			continue
		}
		fs, why := envelopeTolerance(s, c, advertised)
		if why != "" {
			unjudged = append(unjudged, c.ProbeID+": "+why)
			continue
		}
		t.judged(c, fs)
	}
	none := "no call with the envelope fields was made"
	if len(unjudged) > 0 {
		none = strings.Join(unjudged, "; ")
	}
	return t.verdict(none)
}

// envelopeTolerance judges one call carrying the envelope fields: its
// findings, or why it cannot be judged.
func envelopeTolerance(s *evidence.Store, c evidence.Call, advertised []string) ([]finding, string) {
	where, how := "", ""
	var r *reply
	switch {
	case c.Message == nil && c.HTTPStatus >= 400:
		how = "HTTP " + itoa(c.HTTPStatus)
		if c.HTTPStatus == 401 && signatureRequired(c) {
			return nil, "" // the allowed refusal of an unsigned authentication block
		}
	case c.Message == nil:
		how = "a reply that is not JSON-RPC (HTTP " + itoa(c.HTTPStatus) + ")"
	default:
		r = parseReply(c)
		if r.result != nil && !r.errorSignal() {
			// Answered, not refused: the fields were accepted (whether the
			// body is a good one is ENV-01's and the schema's).
			return nil, ""
		}
		where, how = rejection(r)
		if code := errorCode(r); strings.EqualFold(code, "request_signature_required") || rpcMentions(r, "request_signature_required") || signatureRequired(c) {
			return nil, ""
		}
		if errorCode(r) == "VERSION_UNSUPPORTED" {
			pin, _ := str(argumentsOf(c), "adcp_version")
			if !slices.Contains(advertised, pin) {
				return nil, "answered VERSION_UNSUPPORTED to the pin " + quote(pin) + ", which the seller does not advertise"
			}
		}
		if wellFormedNaming(r, "push_notification_config") {
			return nil, "" // the allowed refusal of a webhook a sync-only operation cannot honour
		}
		if name := namedField(r); name != "" {
			return []finding{{where, "the call is rejected (" + how + ") naming the envelope field " + quote(name)}}, ""
		}
	}
	valid, ok := s.Call(probe(s, c.Tool+"/valid"))
	if !ok || !valid.Answered() {
		return nil, "rejected (" + how + "), and the call without the fields was not answered: the rejection cannot be laid on the fields"
	}
	if v := parseReply(valid); v.result == nil || v.errorSignal() {
		return nil, "rejected (" + how + "), as is the call without the fields: the rejection is not the fields' doing"
	}
	return []finding{{where, "the call is rejected (" + how + ") with the envelope fields, yet succeeds without them"}}, ""
}

// rejection locates and names how a reply rejects its call.
func rejection(r *reply) (where, how string) {
	if cs := r.candidates(); len(cs) > 0 {
		code := errorCode(r)
		if code == "" {
			code = "an AdCP error"
		}
		return cs[0].ptr, quote(code)
	}
	if r.rpcErr != nil {
		n, _ := r.rpcCode()
		return "/error", "JSON-RPC error " + strconv.FormatInt(n, 10)
	}
	if r.a2a != nil && r.isError {
		return r.a2a.taskPtr + "/status/state", "task " + quote(r.a2a.state)
	}
	if r.isError {
		return "/result/isError", "an isError result"
	}
	return "/result", "a reply without a result"
}

// wellFormedNaming reports whether a reply carries a well-formed AdCP error
// (string code and message) that names field: in its field member, or in
// any of its strings.
func wellFormedNaming(r *reply, field string) bool {
	for _, c := range r.candidates() {
		code, okc := str(c.obj, "code")
		_, okm := str(c.obj, "message")
		if !okc || code == "" || !okm {
			continue
		}
		named := false
		walkStrings("", c.raw, func(_, _, v string) { named = named || containsWord(v, field) })
		if named {
			return true
		}
	}
	return false
}

// rpcMentions reports whether a JSON-RPC error's message or data holds s.
func rpcMentions(r *reply, s string) bool {
	if r.rpcErr == nil {
		return false
	}
	found := false
	walkStrings("", r.rpcErr.Raw(), func(_, _, v string) { found = found || strings.Contains(v, s) })
	return found
}

// signatureRequired reports whether a 401 of the call challenges with
// WWW-Authenticate: Signature error="request_signature_required".
func signatureRequired(c evidence.Call) bool {
	for _, x := range c.Exchanges {
		if x.Status != 401 {
			continue
		}
		for _, h := range x.ResponseHeaders.Values("WWW-Authenticate") {
			if strings.Contains(h, "request_signature_required") {
				return true
			}
		}
	}
	return false
}

// argumentsOf returns the arguments a call sent, as an object (nil when
// none were recorded).
func argumentsOf(c evidence.Call) *rawjson.Object {
	o, err := rawjson.ParseObject(c.Arguments)
	if err != nil {
		return nil
	}
	return o
}

// capabilityReleases returns adcp.supported_versions as the seller
// advertises it: in the version probes' capabilities reply, else in the
// capabilities probe's.
func capabilityReleases(s *evidence.Store) []string {
	if v := advertisedReleases(s); v != nil {
		return v
	}
	_, r, ok := capabilities(s)
	if !ok {
		return nil
	}
	v, found := child(r.data, "adcp").Get("supported_versions")
	var out []string
	if !found || json.Unmarshal(v, &out) != nil {
		return nil
	}
	return out
}

// namesField reports whether an error reply names field in its error text.
func namesField(r *reply, field string) bool {
	for _, t := range errorTexts(r) {
		if containsWord(t, field) {
			return true
		}
	}
	return false
}

// errorTexts are the strings of a reply's errors: every string of its
// adcp_error objects, the JSON-RPC error message, its prose text items.
func errorTexts(r *reply) []string {
	var texts []string
	for _, c := range r.candidates() {
		walkStrings("", c.raw, func(_, _, v string) { texts = append(texts, v) })
	}
	if r.rpcErr != nil {
		if m, ok := str(r.rpcErr, "message"); ok {
			texts = append(texts, m)
		}
	}
	for _, t := range r.texts {
		if t.obj == nil {
			texts = append(texts, t.text) // prose; a JSON body echoes field names legitimately
		}
	}
	return texts
}

// namedField returns the envelope field an error reply names, or "".
func namedField(r *reply) string {
	texts := errorTexts(r)
	for _, name := range envelopeFieldNames {
		if name == "context" || name == "ext" {
			continue // too common as words to attribute a rejection to
		}
		for _, t := range texts {
			if containsWord(t, name) {
				return name
			}
		}
	}
	return ""
}

// containsWord reports whether name occurs in s as a whole identifier.
func containsWord(s, name string) bool {
	for i := 0; i+len(name) <= len(s); i++ {
		if s[i:i+len(name)] != name {
			continue
		}
		before := i == 0 || !identByte(s[i-1])
		after := i+len(name) == len(s) || !identByte(s[i+len(name)])
		if before && after {
			return true
		}
	}
	return false
}

func identByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// listedTool is one tool of a tools/list reply.
type listedTool struct {
	name string
	ptr  string
	obj  *rawjson.Object // nil for an item that is no object
	// notObject names the JSON kind of an item that is no object.
	notObject string
}

// toolsList returns the recorded tool listing and its tools: the tools/list
// call over MCP, the agent card's skills over A2A (pointers into the card).
func toolsList(s *evidence.Store) (evidence.Call, []listedTool, bool) {
	if s.Scope() == evidence.A2A {
		return cardSkills(s)
	}
	calls := s.Calls(func(c evidence.Call) bool { return c.Transport == evidence.MCP && c.Kind == evidence.KindToolsList })
	if len(calls) == 0 {
		return evidence.Call{}, nil, false
	}
	c := calls[0]
	res, err := rawjson.ParseObject(c.Result)
	if err != nil {
		return c, nil, false
	}
	tools, ok := listOfObjects(res, "tools", "/result/tools", "name")
	return c, tools, ok
}

// cardSkills returns the agent card call and its skills.
func cardSkills(s *evidence.Store) (evidence.Call, []listedTool, bool) {
	c, found := s.Call(probe(s, "card"))
	if !found {
		return evidence.Call{}, nil, false
	}
	card, err := rawjson.ParseObject(c.Body)
	if err != nil {
		return c, nil, false
	}
	skills, ok := listOfObjects(card, "skills", "/skills", "id")
	return c, skills, ok
}

// listOfObjects reads o[key] as a list of objects named by their nameKey.
func listOfObjects(o *rawjson.Object, key, base, nameKey string) ([]listedTool, bool) {
	v, ok := o.Get(key)
	var items []json.RawMessage
	if !ok || rawjson.KindOf(v) != rawjson.KindArray || json.Unmarshal(v, &items) != nil {
		return nil, false
	}
	var out []listedTool
	for i, it := range items {
		p := base + "/" + strconv.Itoa(i)
		item, err := rawjson.ParseObject(it)
		if err != nil {
			// An item that is no object is no tool (CAP-02 fails it; over
			// A2A a skill that is no object is A2A-09's).
			out = append(out, listedTool{ptr: p, notObject: kindName(it)})
			continue
		}
		name, _ := str(item, nameKey)
		out = append(out, listedTool{name: name, ptr: p, obj: item})
	}
	return out, true
}

// judgeList judges the tool listing (tools/list, or the agent card's
// skills) with examine.
func judgeList(id string, s *evidence.Store, examine func(tools []listedTool) []finding) Verdict {
	t := newTally(id)
	call, tools, ok := toolsList(s)
	what, where := "tools/list", "/result/tools"
	if s.Scope() == evidence.A2A {
		what, where = "the agent card", "/skills"
	}
	switch {
	case call.ProbeID == "":
		return t.verdict(what + " was not fetched")
	case !t.account(call):
		return t.verdict("")
	case call.RPCError != nil:
		t.judged(call, []finding{{"/error", what + " is answered with a JSON-RPC error"}})
	case !ok:
		t.judged(call, []finding{{where, "is not a list of tools"}})
	default:
		t.judged(call, examine(tools))
	}
	return t.verdict("")
}

func judgeTOL02(s *evidence.Store, _ Options) Verdict {
	return judgeList("TOL-02", s, func(tools []listedTool) []finding {
		var fs []finding
		for _, tool := range tools {
			schema := child(tool.obj, "inputSchema")
			if schema == nil {
				continue
			}
			ap, ok := schema.Get("additionalProperties")
			if !ok || string(trim(ap)) != "false" {
				continue
			}
			props := child(schema, "properties")
			for _, f := range envelopeFieldNames {
				declared := false
				if props != nil {
					_, declared = props.Get(f)
				}
				if !declared {
					fs = append(fs, finding{tool.ptr + "/inputSchema/properties", "closes the schema without declaring " + quote(f)})
					break
				}
			}
		}
		return fs
	})
}
