package suites

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// A judge table is the fast, exhaustive test of one rule on one transport:
// crafted evidence (no network, no seller process) and the outcome the rule
// requires of it. Every judge has one with, at least, a conformant reply that
// passes, each distinct violation failing with its JSON pointer, each variant
// the spec allows (which must not fail) and the no-evidence case, skipped
// with its reason. Shapes come from the spec's pages and schemas, never from
// the reference seller's habits.
//
// Tables run each judge through Check.judge, the same path Judge and the
// Ginkgo specs take, so the mutation check (.ci/mutants) that makes a
// judge always pass or always fail is seen by them.

// judgeCase is one row of a judge table.
type judgeCase struct {
	name string
	// calls are the recorded calls of the store (any transport: the judge
	// reads its own transport's view).
	calls []evidence.Call
	// target is the store's target; the zero value means tableTarget.
	target *evidence.Target
	// opts are the judge options; Transports is set by the runner.
	opts Options
	want Outcome
	// ptr, for a failure, is the JSON pointer one finding must name
	// exactly (RFC 6901, "#" stepping into a parsed text item).
	ptr string
	// msg is a substring the verdict's message must hold (the skip reason,
	// the harness error, or the failure message).
	msg string
}

// tableTarget is the target of a table's store unless a case says
// otherwise: both faces over HTTPS, a credential configured.
var tableTarget = evidence.Target{MCP: "https://seller.example.com/mcp", A2A: "https://seller.example.com/a2a", Credential: true}

// tableCoverage records, per "RULE transport", the outcomes its table
// exercised; TestMain holds every judge to pass, fail and skip.
var tableCoverage = struct {
	sync.Mutex
	seen map[string]map[Outcome]bool
}{seen: map[string]map[Outcome]bool{}}

// runJudgeTable runs the judge of rule on transport over every case.
func runJudgeTable(t *testing.T, rule string, on catalogue.Transport, cases []judgeCase) {
	t.Helper()
	i := slices.IndexFunc(Checks(), func(c Check) bool { return c.ID == rule && c.Transport == on })
	if i < 0 {
		t.Fatalf("no judge for %s on %s", rule, on)
	}
	check := Checks()[i]
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := tableTarget
			if tc.target != nil {
				target = *tc.target
			}
			s := evidence.NewStore(target)
			for _, c := range tc.calls {
				s.Add(c)
			}
			opts := tc.opts
			opts.Transports = []catalogue.Transport{on}
			forgetReplies()
			v := check.judge(s, opts)
			forgetReplies()
			tableCoverage.Lock()
			k := rule + " " + string(on)
			if tableCoverage.seen[k] == nil {
				tableCoverage.seen[k] = map[Outcome]bool{}
			}
			tableCoverage.seen[k][tc.want] = true
			tableCoverage.Unlock()
			if v.Outcome != tc.want {
				t.Fatalf("%s %s: %s (%s), want %s\nfindings: %v", rule, on, v.Outcome, v.Message, tc.want, v.Findings)
			}
			if tc.msg != "" && !strings.Contains(v.Message, tc.msg) {
				t.Errorf("message %q does not hold %q", v.Message, tc.msg)
			}
			switch tc.want {
			case Fail:
				if len(v.Findings) == 0 {
					t.Fatalf("a failure without findings: %s", v.Message)
				}
				if tc.ptr != "" && !slices.ContainsFunc(v.Findings, func(f Finding) bool { return f.Pointer == tc.ptr }) {
					t.Errorf("no finding at %s; findings: %v", tc.ptr, v.Findings)
				}
				if !strings.HasPrefix(v.Message, rule+": ") {
					t.Errorf("message %q does not start with the rule", v.Message)
				}
			case Skip:
				if v.Message == "" {
					t.Error("a skip without a reason")
				}
			case Pass:
				if len(v.Examined) == 0 {
					t.Error("a pass that examined nothing")
				}
			}
		})
	}
}

// missingTables lists the judges whose tables leave out pass, fail or skip.
func missingTables() []string {
	tableCoverage.Lock()
	defer tableCoverage.Unlock()
	var out []string
	for _, c := range Checks() {
		k := c.ID + " " + string(c.Transport)
		var lack []string
		for _, o := range []Outcome{Pass, Fail, Skip} {
			if !tableCoverage.seen[k][o] {
				lack = append(lack, string(o))
			}
		}
		if len(lack) > 0 {
			out = append(out, fmt.Sprintf("%s: no %s case", k, strings.Join(lack, ", ")))
		}
	}
	sort.Strings(out)
	return out
}

// TestMain runs the package's tests, then, when the whole package ran (no
// -run filter), fails unless every judge's table covers pass, fail and skip.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if f := flag.Lookup("test.run"); code == 0 && (f == nil || f.Value.String() == "") {
		if miss := missingTables(); len(miss) > 0 {
			fmt.Fprintf(os.Stderr, "judge tables incomplete (every judge needs a pass, a fail and a skip case):\n  %s\n", strings.Join(miss, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// The builders below craft recorded calls from the JSON a seller would
// send. Every builder takes raw JSON text, so a table states the wire shape
// it tests.

// mcpResult records an MCP tools/call of tool answered with the JSON-RPC
// result member result.
func mcpResult(probeID, tool, result string, ps ...evidence.Purpose) evidence.Call {
	msg := `{"jsonrpc":"2.0","id":1,"result":` + result + `}`
	return evidence.Call{ProbeID: probeID, Transport: evidence.MCP, Kind: evidence.KindToolCall, Tool: tool, Purposes: ps,
		Message: json.RawMessage(msg), Result: json.RawMessage(result), HTTPStatus: 200, Credential: "configured"}
}

// mcpBody records an MCP tools/call answered with body as structuredContent
// and as its JSON text fallback (the shape mcp-response-extraction.mdx asks for); isError flags
// the result.
func mcpBody(probeID, tool, body string, isError bool, ps ...evidence.Purpose) evidence.Call {
	result := `{"content":[{"type":"text","text":` + quoteJSON(body) + `}],"structuredContent":` + body
	if isError {
		result += `,"isError":true`
	}
	return mcpResult(probeID, tool, result+`}`, ps...)
}

// mcpRPCError records an MCP tools/call answered with the JSON-RPC error
// member rpcErr.
func mcpRPCError(probeID, tool, rpcErr string, ps ...evidence.Purpose) evidence.Call {
	msg := `{"jsonrpc":"2.0","id":1,"error":` + rpcErr + `}`
	return evidence.Call{ProbeID: probeID, Transport: evidence.MCP, Kind: evidence.KindToolCall, Tool: tool, Purposes: ps,
		Message: json.RawMessage(msg), RPCError: json.RawMessage(rpcErr), HTTPStatus: 200, Credential: "configured"}
}

// a2aResult records an A2A message/send of skill answered with the
// JSON-RPC result member result (a Task, or A2A 1.0's {"task": …}).
func a2aResult(probeID, skill, result string, ps ...evidence.Purpose) evidence.Call {
	msg := `{"jsonrpc":"2.0","id":1,"result":` + result + `}`
	return evidence.Call{ProbeID: probeID, Transport: evidence.A2A, Kind: evidence.KindToolCall, Tool: skill, Purposes: ps,
		Message: json.RawMessage(msg), Result: json.RawMessage(result), HTTPStatus: 200, Credential: "configured"}
}

// a2aTask is an A2A 0.3 task in state with one artifact whose only part is
// the DataPart data.
func a2aTask(state, data string) string {
	return `{"kind":"task","id":"t1","contextId":"c1","status":{"state":"` + state + `"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"data","data":` + data + `}]}]}`
}

// httpGet records a plain HTTP GET of url answered with status and body.
func httpGet(probeID string, t evidence.Transport, url string, status int, body string, ps ...evidence.Purpose) evidence.Call {
	return evidence.Call{ProbeID: probeID, Transport: t, Kind: evidence.KindHTTPGet, Method: "GET", URL: url, Purposes: ps,
		HTTPStatus: status, Body: json.RawMessage(body),
		Exchanges: []wire.Exchange{{Method: "GET", URL: url, Status: status, ResponseBody: []byte(body)}}}
}

// notRun records a probe that could not run, for the reason given.
func notRun(probeID string, t evidence.Transport, kind evidence.Kind, reason string, ps ...evidence.Purpose) evidence.Call {
	return evidence.Call{ProbeID: probeID, Transport: t, Kind: kind, Purposes: ps, NotRun: reason}
}

// harnessFailed records a call the harness or the network failed.
func harnessFailed(probeID string, t evidence.Transport, kind evidence.Kind, why string, ps ...evidence.Purpose) evidence.Call {
	return evidence.Call{ProbeID: probeID, Transport: t, Kind: kind, Purposes: ps, HarnessError: why}
}
