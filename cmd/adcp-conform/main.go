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

	"github.com/adcp-conform/adcp-conform/internal/cli"
)

func main() {
	cli.SetGC() // GOGC 60 unless the environment sets one
	os.Exit(int(cli.Main(os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})))
}
