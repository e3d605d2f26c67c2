package runner

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func TestSelectRejectsABadOrEmptyFilter(t *testing.T) {
	for _, f := range []string{"rule:ENV-02 &&", "rule:NOPE-99", "transport:a2a"} {
		_, err := Select(f, suites.Options{})
		var fe *FilterError
		if !errors.As(err, &fe) {
			t.Errorf("Select(%q) = %v, want a *FilterError", f, err)
		}
	}
}

func TestSelectKeepsWhatTheFilterMatches(t *testing.T) {
	sel, err := Select("rule:ENV-02 || family:ctx", suites.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range sel.Selected {
		got = append(got, c.ID)
	}
	if want := "ENV-02 CTX-01 CTX-02 CTX-03"; strings.Join(got, " ") != want {
		t.Errorf("selected %s, want %s", strings.Join(got, " "), want)
	}
	mcp := 0
	for _, c := range suites.Checks() {
		if c.Transport == catalogue.MCP && catalogue.CommandOf(c.ID) == "" {
			mcp++
		}
	}
	if len(sel.Selected)+len(sel.Excluded) != mcp {
		t.Errorf("selected and excluded do not add up to every MCP judge of run")
	}
}

// TestGinkgoAgreesWithThePureJudges runs the judges through Ginkgo and
// directly over the same store: the outcomes must be the same, one code
// path, never two.
func TestGinkgoAgreesWithThePureJudges(t *testing.T) {
	s := evidence.NewStore(evidence.Target{MCP: "https://seller.example.com/mcp", Credential: true})
	ok := json.RawMessage(`{"content":[{"type":"text","text":"{\"status\":\"completed\",\"payload\":{}}"}],"structuredContent":{"status":"completed","payload":{},"_bridge":1}}`)
	s.Add(evidence.Call{ProbeID: "mcp/get_products/valid", Transport: evidence.MCP, Kind: evidence.KindToolCall, Tool: "get_products",
		Purposes: []evidence.Purpose{evidence.PurposeValid, evidence.PurposeNoContext}, Result: ok,
		Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":` + string(ok) + `}`), HTTPStatus: 200})
	s.Add(evidence.Call{ProbeID: "mcp/get_products/error_version", Transport: evidence.MCP, Kind: evidence.KindToolCall, Tool: "get_products",
		Purposes: []evidence.Purpose{evidence.PurposeErrorVersion}, HarnessError: "no response within the call timeout"})
	sel, err := Select("", suites.Options{})
	if err != nil {
		t.Fatal(err)
	}
	results, err := Judge(s, sel)
	if err != nil {
		t.Fatal(err)
	}
	direct := map[string]suites.Verdict{}
	for _, v := range suites.Judge(s, suites.Options{}) {
		direct[v.Rule] = v
	}
	seen := map[report.Outcome]bool{}
	for _, r := range results {
		want := direct[r.Check.ID]
		if string(r.Outcome) != string(want.Outcome) {
			t.Errorf("%s: Ginkgo says %s (%s), the judge %s (%s)", r.Check.ID, r.Outcome, r.Message, want.Outcome, want.Message)
		}
		if r.Outcome != report.Passed && r.Message != want.Message {
			t.Errorf("%s: message %q, want %q", r.Check.ID, r.Message, want.Message)
		}
		seen[r.Outcome] = true
	}
	for _, o := range []report.Outcome{report.Passed, report.Failed, report.Skipped, report.Error} {
		if !seen[o] {
			t.Errorf("the store reached no %s outcome; the test proves less than it claims", o)
		}
	}
	// A second run in the same process works (Ginkgo's globals are reset).
	if _, err := Judge(s, sel); err != nil {
		t.Fatal(err)
	}
}

func TestReportCoversTheWholeCatalogue(t *testing.T) {
	s := evidence.NewStore(evidence.Target{})
	sel, err := Select("rule:ENV-01", suites.Options{})
	if err != nil {
		t.Fatal(err)
	}
	results, err := Judge(s, sel)
	if err != nil {
		t.Fatal(err)
	}
	run := Report(Meta{Tool: "adcp-conform"}, s, sel, results)
	run.Settle()
	ofRun := 0
	for _, r := range catalogue.All() {
		if catalogue.CommandOf(r.ID) == "" {
			ofRun++
		}
	}
	if len(run.Rules) != ofRun {
		t.Fatalf("%d rules in the report, %d of run in the catalogue", len(run.Rules), ofRun)
	}
	for _, r := range run.Rules {
		switch {
		case r.ID == "ENV-01" && r.Outcome != report.Skipped:
			t.Errorf("ENV-01 with no evidence is %s, want skipped", r.Outcome)
		case r.ID == "ENV-02" && r.Outcome != report.Disabled:
			t.Errorf("ENV-02 outside the filter is %s, want disabled", r.Outcome)
		case r.ID == "A2A-01" && (r.Outcome != report.Skipped || r.Message != report.NotImplemented):
			t.Errorf("A2A-01 is %s %q, want skipped as not implemented", r.Outcome, r.Message)
		}
	}
	if run.Verdict != report.Incomplete || run.ExitCode() == 0 {
		t.Errorf("a run that judged nothing is %s (exit %d)", run.Verdict, run.ExitCode())
	}
}

func TestResolveFollowsPointersIntoTextItems(t *testing.T) {
	msg := []byte(`{"result":{"content":[{"type":"text","text":"{\"adcp_error\":{\"code\":\"X\"}}"}],"structuredContent":{"a~b":{"c/d":[1,2]}}}}`)
	for p, want := range map[string]string{
		"/result/structuredContent/a~0b/c~1d/1":     "2",
		"/result/content/0/text#/adcp_error/code":   `"X"`,
		"/result/structuredContent/missing":         "",
		"/result/content/0/text#/adcp_error/nope/x": "",
		"/result/content/9/text":                    "",
		"/result/content/x/text":                    "",
	} {
		got, _ := (&docIndex{}).resolve(evidence.Call{Message: msg}, p)
		if string(got) != want {
			t.Errorf("resolve(%s) = %s, want %s", p, got, want)
		}
	}
}
