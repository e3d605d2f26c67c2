package suites

import (
	"encoding/json"
	"regexp"
	"slices"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// requiredSalesTools are the tasks a seller declaring media_buy must expose
// (protocol/required-tasks.mdx); one of accountTools is required too.
var (
	requiredSalesTools = []string{"get_adcp_capabilities", "get_products", "create_media_buy", "update_media_buy",
		"get_media_buys", "get_media_buy_delivery", "provide_performance_feedback"}
	accountTools = []string{"sync_accounts", "list_accounts"}
)

// taskSupport is mcp-guide.mdx's execution.taskSupport table.
var taskSupport = map[string]string{
	"get_products": "optional", "create_media_buy": "optional", "update_media_buy": "optional",
	"build_creative": "optional", "sync_creatives": "optional", "get_signals": "optional",
	"activate_signal": "optional", "sync_plans": "optional", "check_governance": "optional",
	"report_plan_outcome": "optional", "acquire_rights": "optional", "update_rights": "optional",
	"get_rights":            "optional",
	"get_adcp_capabilities": "forbidden", "list_creative_formats": "forbidden", "preview_creative": "forbidden",
	"list_creatives": "forbidden", "get_media_buys": "forbidden", "get_media_buy_delivery": "forbidden",
	"get_creative_delivery": "forbidden", "get_plan_audit_logs": "forbidden", "get_brand_identity": "forbidden",
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

const capabilitiesProbe = "get_adcp_capabilities/valid"

func capChecks() []Check {
	return []Check{
		// Rule: CAP-01 · Spec: protocol/get-adcp-capabilities-response.json; §4.77 · Since: 0.1.0 ·
		// Description: get_adcp_capabilities MUST exist and its response MUST have adcp (an
		// object) and supported_protocols (an array), each occurrence of a repeated key.
		// Policy: one defect, one rule. Over MCP a tools/list without the tool fails (it
		// cannot be called); over A2A a card without the skill is A2A-09's, and as the plan
		// invokes only listed skills, CAP-01 then skips.
		{ID: "CAP-01", Transport: catalogue.MCP, Text: "answers get_adcp_capabilities with adcp and supported_protocols", Judge: judgeCAP01},
		// Rule: CAP-02 · Spec: protocol/required-tasks.mdx; §4.78 · Since: 0.1.0 ·
		// Description: tool names (skill ids) MUST be AdCP task names, and a seller declaring
		// media_buy MUST expose the required sales tools.
		// Policy: the task names are the release's own list (tasknames.go: manifest.json's
		// tools, required-tasks.mdx, the 3.2 lifecycle's tasks) and the tasks of the run's
		// loaded schema set, never a hand-kept subset. A missing required tool is reported at
		// the list's pointer; a tools/list item that is no object is no tool and fails.
		{ID: "CAP-02", Transport: catalogue.MCP, Text: "names its tools after AdCP tasks and exposes the required sales tools", Judge: judgeCAP02},
		// Rule: CAP-03 · Spec: mcp-guide.mdx (taskSupport table) · Since: 0.1.0 ·
		// Description: when the server declares the MCP tasks capability, each tool's
		// execution.taskSupport MUST fit mcp-guide.mdx's table: "optional" for the listed
		// long-running tools, absent or "forbidden" for the instant ones; a value that is no
		// string (null included) fits neither, and each occurrence of a repeated key is judged.
		{ID: "CAP-03", Transport: catalogue.MCP, Text: "declares taskSupport as the AdCP table says", Judge: judgeCAP03},
		// Rule: CAP-04 · Spec: §4.79 · Since: 0.1.0 ·
		// Description: comply_test_controller MUST NOT be exposed unless the run targets a
		// sandbox (--sandbox).
		{ID: "CAP-04", Transport: catalogue.MCP, Text: "hides comply_test_controller outside a sandbox", Judge: judgeCAP04},
		// Rule: CAP-05 · Spec: mcp-guide.mdx (AdCP Extension via MCP Server Card) · Since: 0.1.0 ·
		// Description: a server card at /.well-known/mcp.json or /.well-known/server.json
		// SHOULD declare AdCP under _meta["adcontextprotocol.org"].
		{ID: "CAP-05", Transport: catalogue.MCP, Text: "declares AdCP in its MCP server card", Judge: judgeCAP05},
	}
}

// capabilities returns the success body of the capabilities probe.
func capabilities(s *evidence.Store) (evidence.Call, *reply, bool) {
	c, ok := s.Call(probe(s, capabilitiesProbe))
	if !ok || !c.Answered() {
		return c, nil, false
	}
	r := parseReply(c)
	return c, r, r.success() && r.data != nil
}

// capabilitiesAdcp returns the capabilities probe, its reply and the adcp
// object of its body; when there is none, adcp is nil and verdict is the
// one to return. A success body without an adcp object fails (VER-01,
// IDEM-01: the declaration the rule asks for is absent); a call not made, a
// harness error or a reply that is no success skips (CAP-01 judges whether
// the task answers at all).
func capabilitiesAdcp(s *evidence.Store, t *tally) (call evidence.Call, r *reply, adcp *rawjson.Object, verdict Verdict) {
	call, found := s.Call(probe(s, capabilitiesProbe))
	if !found {
		return call, nil, nil, t.verdict("get_adcp_capabilities was not called")
	}
	if !t.account(call) {
		return call, nil, nil, t.verdict("")
	}
	r = parseReply(call)
	if !r.success() || r.data == nil || r.errorSignal() {
		return call, r, nil, t.verdict("get_adcp_capabilities does not answer with a success payload (CAP-01)")
	}
	if adcp = child(r.data, "adcp"); adcp == nil {
		v, present := r.data.Get("adcp")
		what := "is absent"
		if present {
			what = "is " + kindName(v) + ", not an object"
		}
		t.judged(call, []finding{{ptr(r.dataPtr, "adcp"), what + ": the declaration is missing"}})
		return call, r, nil, t.verdict("")
	}
	return call, r, adcp, Verdict{}
}

func judgeCAP01(s *evidence.Store, _ Options) Verdict {
	t := newTally("CAP-01")
	list, tools, ok := toolsList(s)
	listed := slices.ContainsFunc(tools, func(lt listedTool) bool { return lt.name == "get_adcp_capabilities" })
	if ok && !listed && s.Scope() != evidence.A2A {
		// MCP: a tool tools/list does not list cannot be called.
		t.judged(list, []finding{{"/result/tools", "does not list get_adcp_capabilities"}})
		return t.verdict("")
	}
	call, found := s.Call(probe(s, capabilitiesProbe))
	switch {
	case !found && ok && !listed:
		// A2A: the card lacks the skill (A2A-09's), so the plan did not
		// invoke it; whether it can be called is unknown.
		return t.verdict("the agent card lists no get_adcp_capabilities skill (A2A-09), so it was not invoked")
	case !found:
		if list.ProbeID != "" && !t.account(list) {
			return t.verdict("")
		}
		return t.verdict("get_adcp_capabilities was not called")
	case !t.account(call):
		return t.verdict("")
	}
	if call.Message == nil {
		t.judged(call, []finding{{"", "get_adcp_capabilities is answered HTTP " + itoa(call.HTTPStatus) + " without a JSON-RPC reply"}})
		return t.verdict("")
	}
	r := parseReply(call)
	if !r.success() || r.data == nil {
		t.judged(call, []finding{{"/result", "get_adcp_capabilities does not answer with a success payload"}})
		return t.verdict("")
	}
	var fs []finding
	for _, m := range []struct {
		key  string
		kind rawjson.Kind
		what string
	}{{"adcp", rawjson.KindObject, "an object"}, {"supported_protocols", rawjson.KindArray, "an array"}} {
		vs := values(r.data, m.key)
		if len(vs) == 0 {
			fs = append(fs, finding{ptr(r.dataPtr, m.key), "is absent"})
		}
		for _, v := range vs { // each occurrence of a repeated key
			if rawjson.KindOf(v) != m.kind {
				fs = append(fs, finding{ptr(r.dataPtr, m.key), "is " + kindName(v) + ", not " + m.what})
			}
		}
	}
	t.judged(call, fs)
	return t.verdict("")
}

func judgeCAP02(s *evidence.Store, opts Options) Verdict {
	media := false
	if _, r, ok := capabilities(s); ok {
		if v, found := r.data.Get("supported_protocols"); found {
			var ps []json.RawMessage
			_ = json.Unmarshal(v, &ps)
			media = slices.ContainsFunc(ps, func(p json.RawMessage) bool { return string(trim(p)) == `"media_buy"` })
		}
	}
	where := "/result/tools"
	if s.Scope() == evidence.A2A {
		where = "/skills"
	}
	// Over A2A a skill without an exact "id", and get_adcp_capabilities
	// missing from the card, are A2A-09's (one defect, one rule: A2A-09
	// names both); CAP-02 judges the ids the card gives and the other
	// required sales tools.
	card := s.Scope() == evidence.A2A
	return judgeList("CAP-02", s, func(tools []listedTool) []finding {
		var fs []finding
		names := map[string]bool{}
		for _, lt := range tools {
			names[lt.name] = true
			switch {
			case card && lt.name == "":
				continue
			case lt.notObject != "":
				fs = append(fs, finding{lt.ptr, "is " + lt.notObject + ", not a tool"})
				continue
			}
			if !isTaskOf(opts.Schemas, lt.name) {
				fs = append(fs, finding{lt.ptr, quote(lt.name) + " is not an AdCP task name"})
			}
		}
		if media {
			for _, want := range requiredSalesTools {
				if !names[want] && !(card && want == "get_adcp_capabilities") {
					fs = append(fs, finding{where, "lacks the required sales tool " + want})
				}
			}
			if !names[accountTools[0]] && !names[accountTools[1]] {
				fs = append(fs, finding{where, "lacks sync_accounts and list_accounts (one is required)"})
			}
		}
		return fs
	})
}

func judgeCAP03(s *evidence.Store, _ Options) Verdict {
	init := s.Calls(func(c evidence.Call) bool { return c.ProbeID == "mcp/initialize" })
	if len(init) > 0 && init[0].HarnessError != "" {
		t := newTally("CAP-03")
		t.account(init[0])
		return t.verdict("")
	}
	if len(init) == 0 || !init[0].Answered() {
		return Verdict{Rule: "CAP-03", Outcome: Skip, Message: "initialize was not answered"}
	}
	res, err := rawjson.ParseObject(init[0].Result)
	if err != nil || child(child(res, "capabilities"), "tasks") == nil {
		return Verdict{Rule: "CAP-03", Outcome: Skip, Message: "the server does not declare the MCP tasks capability"}
	}
	return judgeList("CAP-03", s, func(tools []listedTool) []finding {
		var fs []finding
		for _, lt := range tools {
			want, inTable := taskSupport[lt.name]
			if !inTable {
				continue
			}
			p := lt.ptr + "/execution/taskSupport"
			vs := values(child(lt.obj, "execution"), "taskSupport")
			if len(vs) == 0 && want == "optional" {
				fs = append(fs, finding{p, lt.name + " declares no taskSupport, not \"optional\""})
			}
			for _, v := range vs { // each occurrence of a repeated key
				got, isStr := rawjson.StringValue(v)
				switch {
				case !isStr:
					fs = append(fs, finding{p, lt.name + " declares " + kindName(v) + ", not \"" + want + "\""})
				case got != want:
					fs = append(fs, finding{p, lt.name + " declares " + quote(got) + ", not \"" + want + "\""})
				}
			}
		}
		return fs
	})
}

func judgeCAP04(s *evidence.Store, _ Options) Verdict {
	if s.Target().Sandbox {
		return Verdict{Rule: "CAP-04", Outcome: Skip, Message: "the run targets a sandbox (--sandbox)"}
	}
	return judgeList("CAP-04", s, func(tools []listedTool) []finding {
		for _, lt := range tools {
			if lt.name == "comply_test_controller" {
				return []finding{{lt.ptr, "exposes comply_test_controller outside a sandbox"}}
			}
		}
		return nil
	})
}

func judgeCAP05(s *evidence.Store, _ Options) Verdict {
	t := newTally("CAP-05")
	cards := s.Calls(func(c evidence.Call) bool {
		return c.Kind == evidence.KindHTTPGet && c.Has(evidence.PurposeDiscovery) && c.Transport == evidence.MCP
	})
	if len(cards) == 0 {
		return t.verdict("the server card was not fetched")
	}
	var problems []finding
	for _, c := range cards {
		if !t.account(c) {
			continue
		}
		if c.HTTPStatus != 200 {
			problems = append(problems, finding{"", c.URL + " answers HTTP " + itoa(c.HTTPStatus)})
			continue
		}
		card, err := rawjson.ParseObject(c.Body)
		if err != nil {
			problems = append(problems, finding{"", c.URL + " is not a JSON object"})
			continue
		}
		if child(child(card, "_meta"), "adcontextprotocol.org") == nil {
			problems = append(problems, finding{"/_meta/adcontextprotocol.org", "is absent from " + c.URL})
			continue
		}
		t.judged(c, nil) // one card declaring AdCP meets the rule
		return t.verdict("")
	}
	if len(t.errored) > 0 {
		return t.verdict("")
	}
	t.judged(cards[0], problems)
	return t.verdict("")
}
