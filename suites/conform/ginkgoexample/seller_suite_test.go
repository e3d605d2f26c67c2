// Package ginkgoexample_test is how a seller whose own tests are a Ginkgo
// suite runs AdCP conformance in it: conform.Describe declares the rule
// specs and the storyboard steps into the suite's tree, the seller starts
// in a BeforeSuite, and the probe phase runs once, before them. Here the
// seller is the bundled reference seller, started in-process.
//
//	go test ./suites/conform/ginkgoexample/ -ginkgo.label-filter='family:ctx || storyboard:capability_discovery' -ginkgo.v
package ginkgoexample_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

const token = "ginkgo-example-token-0123456789"

// cfg is read twice: its storyboards now, as the tree is built; the
// seller's endpoints once BeforeSuite has started it.
var cfg = conform.Config{BearerToken: token, Storyboards: storyboards(), Schemas: "off", Baseline: ledger()}

func TestSeller(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Seller")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	ep, stop, err := seller.StartAll(context.WithoutCancel(ctx), seller.Options{BearerToken: token})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop)
	cfg.MCP, cfg.A2A = ep.MCP, ep.A2A10
})

// The seller's own specs sit beside conformance's.
var _ = Describe("the seller", func() {
	It("serves its MCP endpoint", func() { Expect(cfg.MCP).To(HaveSuffix("/mcp")) })
})

var _ = conform.Describe(&cfg)

// storyboards are the 3.1.19 compliance storyboards of the spec folder
// internal/shared finds, when there; else none (a run given no folder would fetch the published ones).
func storyboards() string {
	if root := shared.Root(); root != "" {
		return root + "/spec/compliance/3.1.19"
	}
	return "off"
}

// ledger is the reference seller's known storyboard failures: the
// baseline its step specs take as expected.
func ledger() []report.BaselineEntry {
	entries, err := certify.ParseBaseline(seller.Ledger(), nil)
	if err != nil {
		panic(err)
	}
	return entries
}
