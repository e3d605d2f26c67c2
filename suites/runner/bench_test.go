package runner

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// findingsStore records a tools/list of n tools, each a finding of CAP-02
// (not an AdCP task name) and of TOL-02 (a closed input schema without the
// envelope fields): judging it yields about 2n findings in one reply.
func findingsStore(n int) *evidence.Store {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"x_tool_%d","inputSchema":{"type":"object","additionalProperties":false}}`, i)
	}
	b.WriteString(`]}`)
	result := json.RawMessage(b.String())
	msg := json.RawMessage(`{"jsonrpc":"2.0","id":2,"result":` + b.String() + `}`)
	s := evidence.NewStore(evidence.Target{MCP: "https://seller.example.com/mcp"})
	s.Add(evidence.Call{ProbeID: "mcp/tools/list", Transport: evidence.MCP, Kind: evidence.KindToolsList, Method: "tools/list",
		Purposes: []evidence.Purpose{evidence.PurposeDiscovery}, Message: msg, Result: result, HTTPStatus: 200})
	return s
}

// BenchmarkJudgeAndReport measures judging and building the report for
// 1 000, 10 000 and 100 000 findings in one reply: the time per finding
// stays flat (linear judging), where re-parsing the reply for every
// finding made it grow with the reply.
func BenchmarkJudgeAndReport(b *testing.B) {
	for _, n := range []int{500, 5_000, 50_000} {
		store := findingsStore(n)
		sel, err := Select("rule:CAP-02 || rule:TOL-02", suites.Options{Transports: []catalogue.Transport{catalogue.MCP}})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("findings=%d", 2*n), func(b *testing.B) {
			var findings int
			for b.Loop() {
				results, err := Judge(store, sel)
				if err != nil {
					b.Fatal(err)
				}
				run := Report(Meta{Tool: "adcp-conform"}, store, sel, results)
				run.Settle()
				findings = 0
				for _, st := range run.Steps {
					findings += len(st.Validations)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(findings), "ns/finding")
		})
	}
}

// A run told to stop (a signal, its deadline) judges no rule further: every
// rule not yet judged is a harness error saying why, never a pass.
func TestAStoppedRunJudgesNoFurtherRule(t *testing.T) {
	sel, err := Select("", suites.Options{Transports: []catalogue.Transport{catalogue.MCP},
		Stop: func() string { return "interrupted by SIGINT" }})
	if err != nil {
		t.Fatal(err)
	}
	results, err := Judge(findingsStore(3), sel)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range results {
		if r.Outcome != "error" || !strings.Contains(r.Message, "interrupted by SIGINT before this rule was judged") {
			t.Errorf("%s: %s %q", r.Check.ID, r.Outcome, r.Message)
		}
	}
}
