// Command adcp-conform tests an AdCP seller agent against the protocol's
// normative rules and writes JUnit, HTML and JSON reports.
//
//	adcp-conform extract --transport mcp < reply.json
//	adcp-conform version
//
// main is thin: everything lives in internal/cli, and the exit code is typed.
package main

import (
	"os"
	"runtime/debug"

	"github.com/adcp-conform/adcp-conform/internal/cli"
)

// gcPercent is the binary's GOGC unless the environment sets one: a run
// keeps little alive (the release, the evidence), so collecting at 60 %
// growth rather than 100 % takes about a sixth off its peak RSS for about
// a tenth more CPU (docs/performance.md, storyboards at the seller's pace).
const gcPercent = 60

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(int(cli.Main(os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})))
}
