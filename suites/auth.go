package suites

import (
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// rpcAuthMissing is the reserved JSON-RPC code for a missing credential.
const rpcAuthMissing = -32028

const noCredential = "no credential was given (--bearer-env): the run cannot tell protected operations"

func authChecks() []Check {
	return []Check{
		// Rule: AUTH-01 · Spec: §4.72; transport-errors.mdx · Since: 0.1.0 ·
		// Description: a protected operation without credentials MUST be refused with HTTP
		// 401 carrying WWW-Authenticate, HTTP 403, or JSON-RPC -32028 before dispatch, and
		// never succeed. The probe calls get_products without the credential (and without
		// the run's extra headers, which may carry it); a refusal at initialize counts.
		{ID: "AUTH-01", Transport: catalogue.MCP, Text: "refuses a protected operation without credentials", Judge: judgeAUTH01},
		// Rule: AUTH-02 · Spec: §4.72 · Since: 0.1.0 ·
		// Description: get_adcp_capabilities MUST answer without credentials. Any tool result
		// that is no error is an answer, not a refusal: whether its body is the capabilities
		// is CAP-01's (and A2A-02's), one defect, one rule.
		{ID: "AUTH-02", Transport: catalogue.MCP, Text: "answers get_adcp_capabilities without credentials", Judge: judgeAUTH02},
		// Rule: AUTH-03 · Spec: §4.72–4.73 · Since: 0.1.0 ·
		// Description: a random invalid credential MUST be refused with HTTP 400, 401 or 403.
		{ID: "AUTH-03", Transport: catalogue.MCP, Text: "refuses a random invalid credential", Judge: judgeAUTH03},
	}
}

// refusal describes how a call was refused: its HTTP status, whether a 401
// carried WWW-Authenticate, and its JSON-RPC error code (0 when none).
type refusal struct {
	status    int
	challenge bool
	rpcCode   int64
	success   bool // a tool result came back, not flagged an error
}

func refusalOf(c evidence.Call) refusal {
	rf := refusal{status: c.HTTPStatus}
	for _, x := range c.Exchanges {
		if x.Status == c.HTTPStatus && x.ResponseHeaders.Get("WWW-Authenticate") != "" {
			rf.challenge = true
		}
	}
	if c.Message != nil {
		r := parseReply(c)
		rf.rpcCode, _ = r.rpcCode()
		rf.success = c.Kind == evidence.KindToolCall && r.success() && !r.errorSignal()
	}
	return rf
}

func judgeAUTH01(s *evidence.Store, _ Options) Verdict {
	t := newTally("AUTH-01")
	if !s.Target().Credential {
		return t.verdict(noCredential)
	}
	for _, c := range s.Calls(evidence.WithPurpose(evidence.PurposeAuthNone)) {
		if !t.account(c) {
			continue
		}
		rf := refusalOf(c)
		var fs []finding
		switch {
		case rf.status == 401 && !rf.challenge:
			fs = append(fs, finding{"", "HTTP 401 carries no WWW-Authenticate"})
		case rf.status == 401 || rf.status == 403 || rf.rpcCode == rpcAuthMissing:
		case rf.success:
			fs = append(fs, finding{"/result", callName(c) + " succeeds without credentials"})
		default:
			fs = append(fs, finding{"", "answered HTTP " + itoa(rf.status) + " without a 401/403 or -32028 refusal"})
		}
		t.judged(c, fs)
	}
	return t.verdict("the unauthenticated probe was not run")
}

func judgeAUTH02(s *evidence.Store, _ Options) Verdict {
	t := newTally("AUTH-02")
	calls := s.Calls(evidence.WithPurpose(evidence.PurposeAuthCapabilities))
	if !s.Target().Credential {
		// Every call of the run was unauthenticated.
		if c, ok := s.Call(probe(s, capabilitiesProbe)); ok {
			calls = []evidence.Call{c}
		}
	}
	for _, c := range calls {
		if !t.account(c) {
			continue
		}
		rf := refusalOf(c)
		r := parseReply(c)
		switch {
		case c.Kind == evidence.KindToolCall && r.success() && !r.errorSignal():
			t.judged(c, nil)
		case rf.status >= 400:
			t.judged(c, []finding{{"", callName(c) + " without credentials is refused with HTTP " + itoa(rf.status)}})
		case r.errorSignal():
			t.judged(c, []finding{{"", "get_adcp_capabilities without credentials answers an error"}})
		default:
			t.judged(c, []finding{{"", "get_adcp_capabilities without credentials gets no tool result"}})
		}
	}
	return t.verdict("get_adcp_capabilities was not called without credentials")
}

func judgeAUTH03(s *evidence.Store, _ Options) Verdict {
	t := newTally("AUTH-03")
	if !s.Target().Credential {
		return t.verdict(noCredential)
	}
	for _, c := range s.Calls(evidence.WithPurpose(evidence.PurposeAuthRandom)) {
		if !t.account(c) {
			continue
		}
		rf := refusalOf(c)
		switch {
		case rf.status == 400 || rf.status == 401 || rf.status == 403:
			t.judged(c, nil)
		case rf.success:
			t.judged(c, []finding{{"/result", callName(c) + " succeeds with a random credential"}})
		default:
			t.judged(c, []finding{{"", "a random credential is answered with HTTP " + itoa(rf.status) + ", not 400, 401 or 403"}})
		}
	}
	return t.verdict("the random-credential probe was not run")
}

// callName names a call in a message: its tool, else its method.
func callName(c evidence.Call) string {
	if c.Tool != "" {
		return c.Tool
	}
	if c.Method != "" {
		return c.Method
	}
	return "the call"
}
