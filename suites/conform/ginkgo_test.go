package conform

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/extensions/globals"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// failT is the GinkgoTestingT of a suite run inside a test.
type failT struct{ failed bool }

func (t *failT) Fail() { t.failed = true }

// runSuite runs a Ginkgo suite holding Describe(cfg) and the caller's
// BeforeSuite, in this process, and returns its specs' reports.
func runSuite(t *testing.T, cfg *Config, beforeSuite func(), filter string) types.SpecReports {
	t.Helper()
	globals.Reset()
	catalogue.ResetBugs()
	defer globals.Reset()
	formatter.ColorableStdOut = io.Discard
	gomega.RegisterFailHandler(ginkgo.Fail)
	var specs types.SpecReports
	ginkgo.BeforeSuite(beforeSuite)
	Describe(cfg)
	ginkgo.ReportAfterSuite("test", func(r types.Report) { specs = r.SpecReports })
	suiteCfg, repCfg := ginkgo.GinkgoConfiguration()
	suiteCfg.LabelFilter, suiteCfg.RandomSeed = filter, 1
	repCfg.NoColor = true
	ginkgo.RunSpecs(&failT{}, "caller", suiteCfg, repCfg)
	return specs
}

// A seller's Ginkgo suite takes conformance's specs: the seller starts in
// its BeforeSuite, the probe phase runs once in the container's
// BeforeAll, the suite's label filter picks the rules, a fault fails its
// rule's specs and only those, and the reports reach Out with each rule
// as its spec judged it (those the filter left out disabled).
func TestDescribeRunsConformanceInTheCallersSuite(t *testing.T) {
	const token = "describe-test-token-0123456789"
	out := t.TempDir()
	cfg := Config{BearerToken: token, Storyboards: "off", Out: out, Log: io.Discard}
	var stop func()
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	specs := runSuite(t, &cfg, func() {
		ep, s, err := seller.StartAll(context.Background(), seller.Options{BearerToken: token, Faults: []seller.Fault{"CTX-01/context-dropped"}})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		stop, cfg.MCP = s, ep.MCP // no A2A target: the A2A specs skip
	}, "family:ctx")
	got := map[string]types.SpecState{}
	for _, sp := range specs {
		id, rule := catalogue.LabelValue(sp.Labels(), catalogue.LabelRule)
		tr, _ := catalogue.LabelValue(sp.Labels(), catalogue.LabelTransport)
		if sp.LeafNodeType == types.NodeTypeIt && rule {
			got["rule:"+id+" transport:"+tr] = sp.State
		}
	}
	want := map[string]types.SpecState{
		"rule:CTX-01 transport:mcp": types.SpecStateFailed, "rule:CTX-01 transport:a2a": types.SpecStateSkipped,
		"rule:CTX-02 transport:mcp": types.SpecStatePassed, "rule:ENV-01 transport:mcp": types.SpecStateSkipped,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s, want %s", k, got[k], w)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, FileResults))
	if err != nil {
		t.Fatal(err)
	}
	var run report.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	for _, r := range run.Rules {
		switch r.ID {
		case "CTX-01":
			if r.Outcome != report.Failed || len(r.Specs) != 1 {
				t.Errorf("CTX-01 in results.json: %s, %+v", r.Outcome, r.Specs)
			}
		case "ENV-01":
			if r.Outcome != report.Disabled {
				t.Errorf("ENV-01, left out by the suite's filter: %s", r.Outcome)
			}
		}
	}
	if run.Verdict != report.NonConformant || run.Target != cfg.MCP {
		t.Errorf("verdict %s, target %s", run.Verdict, run.Target)
	}
}

// A seller the probe phase cannot reach fails the container's BeforeAll
// with the reason, and no rule is judged.
func TestDescribeFailsTheProbePhaseOfAnUnreachableSeller(t *testing.T) {
	cfg := Config{MCP: "http://127.0.0.1:1/mcp", Storyboards: "off", Timeout: 2e9, Log: io.Discard}
	specs := runSuite(t, &cfg, func() {}, "rule:CTX-01")
	failed := 0
	for _, sp := range specs {
		if sp.LeafNodeType != types.NodeTypeIt {
			continue
		}
		if sp.State == types.SpecStatePassed {
			t.Errorf("%s passed", sp.FullText())
		}
		if sp.State == types.SpecStateFailed {
			failed++
			if !strings.Contains(sp.Failure.Message, "adcp-conform: harness error:") {
				t.Errorf("%s: %q", sp.FullText(), sp.Failure.Message)
			}
		}
	}
	if failed == 0 {
		t.Error("no spec failed")
	}
}
