package conform_test

import (
	"context"
	"fmt"
	"os"

	"github.com/onsi/gomega"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

// A seller written in Go runs conformance from its own tests: start the
// seller in-process, Run against it, assert with BeConformant. Here the
// seller is the bundled reference seller; the run judges the context
// rules over MCP and A2A, without storyboards, and writes its reports into
// a folder.
func Example() {
	ctx := context.Background()
	ep, stop, err := seller.StartAll(ctx, seller.Options{BearerToken: "example-token-0123456789"})
	if err != nil {
		panic(err)
	}
	defer stop()
	out, _ := os.MkdirTemp("", "conform-example-")
	defer os.RemoveAll(out)

	run, err := conform.Run(ctx, conform.Config{
		MCP:         ep.MCP,
		A2A:         ep.A2A10,
		BearerToken: "example-token-0123456789",
		LabelFilter: "family:ctx",
		Storyboards: "off",
		Out:         out,
	})
	g := gomega.NewGomega(func(message string, _ ...int) { fmt.Println(message) })
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(run).To(conform.BeConformant())
	fmt.Println(run.Verdict, run.ExitCode())
	// Output: conformant 0
}

// A seller's known defect is caught, and nothing else breaks: the
// reference seller with a fault that drops the caller's context fails
// CTX-01 and only CTX-01; BeConformant says which rule and why.
func ExampleFailExactly() {
	ctx := context.Background()
	ep, stop, err := seller.StartAll(ctx, seller.Options{BearerToken: "example-token-0123456789", Faults: []seller.Fault{"CTX-01/context-dropped"}})
	if err != nil {
		panic(err)
	}
	defer stop()
	run, err := conform.Run(ctx, conform.Config{MCP: ep.MCP, BearerToken: "example-token-0123456789", LabelFilter: "rule:CTX-01", Storyboards: "off"})
	g := gomega.NewGomega(func(message string, _ ...int) { fmt.Println(message) })
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(run).To(conform.FailExactly("CTX-01"))
	ok, _ := conform.BeConformant().Match(run)
	fmt.Println(ok, run.ExitCode())
	// Output: false 1
}
