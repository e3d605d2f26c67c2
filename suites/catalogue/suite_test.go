package catalogue_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func TestRuleItInASpecTree(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "catalogue")
}

var _ = Describe("RuleIt", func() {
	// Rule: CTX-01 · Spec: mcp-guide.mdx · Since: 0.1.0 · Description: a judge
	// declared with RuleIt carries the labels its catalogue entry implies.
	catalogue.RuleIt("carries the rule's labels", catalogue.ID("CTX-01"), catalogue.On(catalogue.MCP), func() {
		Expect(CurrentSpecReport().Labels()).To(ConsistOf("rule:CTX-01", "transport:mcp", "level:must", "family:ctx"))
	})

	catalogue.RuleIt("carries the rule's labels on the other transport", catalogue.ID("CTX-01"), catalogue.On(catalogue.A2A), Label("extra"), func() {
		Expect(CurrentSpecReport().Labels()).To(ContainElements("transport:a2a", "extra"))
	})

	It("records no suite bug for well-formed judges", func() {
		Expect(catalogue.Bugs()).To(BeEmpty())
	})
})
