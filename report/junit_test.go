package report

import (
	"net/http"

	"github.com/adcp-conform/adcp-conform/probes/wire"

	"bytes"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

func syntheticRun() *Run {
	r := &Run{Tool: "adcp-conform", Version: "0.1.0", AdcpRelease: "3.1.19", Target: "http://127.0.0.1:8931/mcp",
		StartedAt: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), DurationMS: 1234.5,
		Rules: []RuleResult{
			rule("ENV-01", Must, spec(Passed, "")),
			rule("ENV-02", Must, spec(Failed, "ENV-02: mcp/get_products/valid: /payload nests body fields\n<script>alert(1)</script>\x1b[31m\x00")),
			rule("CTX-03", Must, spec(Skipped, "no call without context")),
			rule("AUTH-01", Must, spec(Error, "mcp/get_products/auth_none: no response within the call timeout")),
			rule("TLS-01", Must),
		}}
	r.Rules[1].Findings = []Finding{{Transport: "mcp", ProbeID: "mcp/get_products/valid", JSONPointer: "/result/structuredContent/payload", Message: "nests body fields"}}
	r.Rules[1].Evidence = []Evidence{{Transport: "mcp", ProbeID: "mcp/get_products/valid", Exchanges: []wire.Exchange{{
		Method: "POST", URL: "http://127.0.0.1:8931/mcp", RequestBody: wire.Bytes(`{"jsonrpc":"2.0","id":2,"method":"tools/call"}`),
		Status: 200, ResponseHeaders: http.Header{"Content-Type": {"application/json"}, "X-Secret-Breadcrumb": {"x"}},
		ResponseBody: wire.Bytes(`{"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"payload":{"note":"<img src=x onerror=alert(5)>"}}}}`),
		DurationMS:   1.5,
	}}}}
	// The catalogue gives ENV-02 both transports; only MCP was probed.
	r.Rules[1].Transports = []string{"mcp", "a2a"}
	r.MCPProtocolVersion = "2025-06-18"
	r.Notes = []string{"mcp/sync_creatives/valid: the seller refused the probe's arguments <b>bold</b>"}
	pointer := "/result/structuredContent/payload"
	r.Steps = []Step{{StoryboardID: "adcp_conform", PhaseID: "mcp_get_products", StepID: "mcp/get_products/valid", Task: "get_products",
		DurationMS: 1.5, Extraction: Extraction{Path: "structured_content"},
		Validations: []Validation{
			{Check: "rule", Rule: "ENV-01", Passed: true, Description: "answers with a JSON object"},
			{Check: "rule", Rule: "ENV-02", Description: "keeps envelope and body fields flat at the root", JSONPointer: &pointer,
				Expected: "keeps envelope and body fields flat at the root", Actual: []byte(`{"note":"<img src=x onerror=alert(5)>","n":[1,true,null]}`),
				Message: "nests body fields"},
		}}}
	r.Settle()
	return r
}

// The structures below are written independently of the writer's, in the
// shape of the common JUnit schema, to re-parse what the writer produced.
type parsedSuites struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Tests int    `xml:"tests,attr"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Error   *struct{} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitReparsesWithTheRightCounts(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJUnit(&out, syntheticRun()); err != nil {
		t.Fatal(err)
	}
	var doc parsedSuites
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit does not parse: %v\n%s", err, out.String())
	}
	if doc.Tests != 5 || doc.Failures != 1 || doc.Errors != 1 || doc.Skipped != 2 {
		t.Fatalf("counts tests=%d failures=%d errors=%d skipped=%d", doc.Tests, doc.Failures, doc.Errors, doc.Skipped)
	}
	var names []string
	for _, s := range doc.Suites {
		names = append(names, s.Name)
		for _, c := range s.Cases {
			if c.Failure != nil {
				if strings.ContainsAny(c.Failure.Message, "\n\r") {
					t.Errorf("failure message spans lines: %q", c.Failure.Message)
				}
				if !strings.HasPrefix(c.Name, "ENV-02 · ") || !strings.HasSuffix(c.Name, "[mcp]") {
					t.Errorf("testcase name %q", c.Name)
				}
				if !strings.Contains(c.Failure.Body, "<script>") {
					t.Errorf("the failure body lost the message text: %q", c.Failure.Body)
				}
			}
		}
	}
	if strings.Join(names, ",") != "ENV,CTX,AUTH,TLS" {
		t.Errorf("suites %v, want one per family in catalogue order", names)
	}
	if bytes.Contains(out.Bytes(), []byte("<script>")) || bytes.ContainsAny(out.Bytes(), "\x1b\x00") {
		t.Error("the XML holds unescaped markup or control characters")
	}
}

func TestJUnitMatchesItsGoldenFile(t *testing.T) {
	var got bytes.Buffer
	if err := WriteJUnit(&got, syntheticRun()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "junit.golden.xml"), got.Bytes())
}

func TestJUnitWithABaselineAgreesWithTheExitCode(t *testing.T) {
	r := summaryRun() // CTX-05 fails as its baseline expects; CTX-04 passes although listed
	var out bytes.Buffer
	if err := WriteJUnit(&out, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "junit_baseline.golden.xml"), out.Bytes())
	var doc parsedSuites
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			switch {
			case strings.HasPrefix(c.Name, "CTX-05 "):
				if c.Failure != nil || c.Skipped == nil || !strings.Contains(c.Skipped.Message, "expected failure (baseline: tracked as SELL-12): CTX-05: drops the context") {
					t.Errorf("expected failure: %+v", c)
				}
			case strings.HasPrefix(c.Name, "CTX-04 "):
				if c.Failure == nil || !strings.Contains(c.Failure.Message, "CTX-04: stale baseline entry") {
					t.Errorf("stale entry: %+v", c)
				}
			}
		}
	}
	// One failure (ENV-02) of the synthetic run, one stale entry.
	if doc.Failures != 2 {
		t.Errorf("%d failures, want 2", doc.Failures)
	}
}

func TestJUnitWritesAStoryboardSuiteWithATestcasePerStep(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJUnit(&out, storyboardRun()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "junit_storyboards.golden.xml"), out.Bytes())
	var doc parsedSuites
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit does not parse: %v", err)
	}
	// The synthetic run's 5 rule cases (1 failure, 1 error, 2 skipped),
	// then: capability_discovery 1 passed; media_buy_seller 1 passed,
	// 1 failed, 1 skipped, 1 error; idempotency 1 error; three storyboards
	// skipped as a whole.
	if doc.Tests != 14 || doc.Failures != 2 || doc.Errors != 3 || doc.Skipped != 6 {
		t.Fatalf("counts tests=%d failures=%d errors=%d skipped=%d", doc.Tests, doc.Failures, doc.Errors, doc.Skipped)
	}
	cases := map[string]string{}
	for _, s := range doc.Suites {
		if !strings.HasPrefix(s.Name, "storyboard: ") {
			continue
		}
		for _, c := range s.Cases {
			key := s.Name + " " + c.Name
			switch {
			case c.Failure != nil:
				cases[key] = "failure: " + c.Failure.Message
			case c.Skipped != nil:
				cases[key] = "skipped: " + c.Skipped.Message
			case c.Error != nil:
				cases[key] = "error"
			default:
				cases[key] = "passed"
			}
		}
	}
	for key, want := range map[string]string{
		"storyboard: capability_discovery protocol_discovery/get_capabilities": "passed",
		"storyboard: media_buy_seller discovery/get_products":                  "passed",
		"storyboard: media_buy_seller create/create_media_buy": `failure: field_value /status: expected "pending_activation", ` +
			`got "<img src=x onerror=alert(2)>\u001b[31m" (+1 more)`,
		"storyboard: media_buy_seller create/get_media_buy":            "skipped: prerequisite_failed: create/create_media_buy did not pass",
		"storyboard: media_buy_seller delivery/get_media_buy_delivery": "error",
		"storyboard: idempotency replay/create_twice":                  "error",
		"storyboard: signal_marketplace signal_marketplace":            "skipped: not_applicable: the agent does not declare the signals protocol (supported_protocols: [media_buy]) <i>x</i>",
		"storyboard: webhook_emission webhook_emission":                "skipped: requirement_unmet: controller",
	} {
		if cases[key] != want {
			t.Errorf("%s: %q, want %q", key, cases[key], want)
		}
	}
	if bytes.Contains(out.Bytes(), []byte("<img")) || bytes.Contains(out.Bytes(), []byte("<script>")) {
		t.Error("the XML holds unescaped markup")
	}
}

// TestJUnitStoryboardBaselineAgreesWithTheExitCode: a storyboard's entry,
// whole or naming a step, makes the failing step a skipped testcase with
// the entry's reason, and a listed storyboard or step that passes a failed
// one.
func TestJUnitStoryboardBaselineAgreesWithTheExitCode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		baseline []BaselineEntry
		stale    string
	}{
		{"whole", []BaselineEntry{{Rule: "storyboard:media_buy_seller", Reason: "tracked as SELL-9"},
			{Rule: "storyboard:capability_discovery", Reason: "fixed in 2.2"}}, "storyboard:capability_discovery: stale baseline entry"},
		{"step", []BaselineEntry{{Rule: "storyboard:media_buy_seller", Step: "create/create_media_buy", Reason: "tracked as SELL-9"},
			{Rule: "storyboard:capability_discovery", Step: "protocol_discovery/get_capabilities", Reason: "fixed in 2.2"}},
			"storyboard:capability_discovery step protocol_discovery/get_capabilities: stale baseline entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := storyboardRun()
			r.Baseline = tc.baseline
			r.Settle()
			var out bytes.Buffer
			if err := WriteJUnit(&out, r); err != nil {
				t.Fatal(err)
			}
			var doc parsedSuites
			if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, s := range doc.Suites {
				for _, c := range s.Cases {
					switch s.Name + " " + c.Name {
					case "storyboard: media_buy_seller create/create_media_buy":
						seen++
						if c.Failure != nil || c.Skipped == nil || !strings.HasPrefix(c.Skipped.Message, "expected failure (baseline: tracked as SELL-9): field_value /status") {
							t.Errorf("expected failure: %+v", c)
						}
					case "storyboard: capability_discovery protocol_discovery/get_capabilities":
						seen++
						if c.Failure == nil || !strings.Contains(c.Failure.Message, tc.stale) {
							t.Errorf("stale entry: %+v", c)
						}
					}
				}
			}
			if seen != 2 || doc.Failures != 2 { // ENV-02 and the stale entry
				t.Errorf("%d cases seen, %d failures; want 2, 2", seen, doc.Failures)
			}
		})
	}
}

// A run that hit its deadline after a rule failed exits 1 (the failure is
// the seller's, found before the deadline), and junit.xml agrees: the
// failed testcase, and the run's harness error and verdict as properties
// of every suite (issue 21).
func TestJUnitOfADeadlineRunWithAFailureAgreesWithTheExitCode(t *testing.T) {
	r := syntheticRun() // ENV-02 fails, AUTH-01 errors
	r.HarnessError = "the run deadline (30s) was hit"
	r.Settle()
	if r.Verdict != NonConformant || r.ExitCode() != 1 {
		t.Fatalf("verdict %s, exit %d; want non_conformant, 1", r.Verdict, r.ExitCode())
	}
	var out bytes.Buffer
	if err := WriteJUnit(&out, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Properties []junitProperty `xml:"properties>property"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Failures == 0 {
		t.Error("no failed testcase")
	}
	for _, s := range doc.Suites {
		props := map[string]string{}
		for _, p := range s.Properties {
			props[p.Name] = p.Value
		}
		if props["harness_error"] != r.HarnessError || props["verdict"] != string(NonConformant) {
			t.Errorf("suite properties %v", props)
		}
	}
}
