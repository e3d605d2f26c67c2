package suites

import (
	"encoding/json"
	"strconv"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// envelopeFieldNames are the protocol fields every tool accepts (seeds 001,
// MCP-specific considerations).
var envelopeFieldNames = []string{"idempotency_key", "context_id", "context", "push_notification_config", "governance_context", "adcp_version", "ext"}

func tolChecks() []Check {
	return []Check{
		// Rule: TOL-01 · Spec: seeds 001 (MCP-Specific Considerations); §4.60 · Since: 0.1.0 ·
		// Description: every listed tool MUST accept the envelope fields without rejecting
		// the call because of them.
		// Policy: an error answering the call with the fields fails when it names one of
		// them, or when the same call without them succeeded; an error the harness cannot
		// attribute to the fields is recorded, not failed.
		{ID: "TOL-01", Transport: catalogue.MCP, Text: "accepts the envelope fields on every tool", Judge: judgeTOL01},
		// Rule: TOL-02 · Spec: §4.60–4.61 · Since: 0.1.0 ·
		// Description: a tool's inputSchema SHOULD NOT declare additionalProperties: false
		// while omitting the envelope fields from its properties.
		{ID: "TOL-02", Transport: catalogue.MCP, Text: "declares the envelope fields in any closed input schema", Judge: judgeTOL02},
	}
}

func judgeTOL01(s *evidence.Store, _ Options) Verdict {
	return eachReply("TOL-01", toolCalls(s, evidence.WithPurpose(evidence.PurposeEnvelopeFields)), nil,
		"no call with the envelope fields was answered", func(r *reply) (bool, []finding) {
			if !r.isError && r.rpcErr == nil {
				return r.result != nil, nil // answered: the fields were accepted
			}
			if name := namedField(r); name != "" {
				return true, []finding{{"", "the call is rejected naming the envelope field " + quote(name)}}
			}
			if valid, ok := s.Call(probe(s, r.call.Tool+"/valid")); ok && valid.Answered() {
				if v := parseReply(valid); v.success() && v.rpcErr == nil {
					return true, []finding{{"", "the call is rejected with the envelope fields, yet succeeds without them"}}
				}
			}
			return false, nil
		})
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
	obj  *extract.Object
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
	res, err := extract.ParseObject(c.Result)
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
	card, err := extract.ParseObject(c.Body)
	if err != nil {
		return c, nil, false
	}
	skills, ok := listOfObjects(card, "skills", "/skills", "id")
	return c, skills, ok
}

// listOfObjects reads o[key] as a list of objects named by their nameKey.
func listOfObjects(o *extract.Object, key, base, nameKey string) ([]listedTool, bool) {
	v, ok := o.Get(key)
	var items []json.RawMessage
	if !ok || kindOf(v) != extract.KindArray || json.Unmarshal(v, &items) != nil {
		return nil, false
	}
	var out []listedTool
	for i, it := range items {
		item, err := extract.ParseObject(it)
		if err != nil {
			continue
		}
		name, _ := str(item, nameKey)
		out = append(out, listedTool{name: name, ptr: base + "/" + strconv.Itoa(i), obj: item})
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
