// Package cli is the adcp-conform command line: it parses flags (and their
// ADCP_CONFORM_* environment variables), dispatches to a command, and maps
// every outcome to a typed exit code.
//
//	code := cli.Main([]string{"version"}, cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// Stdio are the streams a command reads and writes, and the environment it
// sees. Tests give their own.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// LookupEnv, when set, reads the environment telling a variable set
	// empty from an unset one, and must agree with Getenv; nil means
	// os.LookupEnv when Getenv is nil too, else Getenv with "" read as
	// unset.
	LookupEnv func(string) (string, bool)
	// network, when set, is the network of the runs' guard: tests resolve
	// names and record every connection the harness attempts through it.
	network fetch.Network
	// guard redacts Out and Err once a command names its secrets
	// (redact.go); Main installs it.
	guard *terminalGuard
}

func (s Stdio) getenv(name string) string {
	if s.Getenv != nil {
		return s.Getenv(name)
	}
	return os.Getenv(name)
}

// lookupenv reads the environment variable name and whether it is set.
func (s Stdio) lookupenv(name string) (string, bool) {
	switch {
	case s.LookupEnv != nil:
		return s.LookupEnv(name)
	case s.Getenv != nil:
		v := s.Getenv(name)
		return v, v != ""
	}
	return os.LookupEnv(name)
}

type command struct {
	summary string
	run     func(args []string, io Stdio) error
}

var commands = map[string]command{
	"diff":    {"compare two results.json files: regressions, fixes, unchanged failures", runDiff},
	"extract": {"extract AdCP data or an AdCP error from one captured reply", runExtract},
	"fuzz":    {"fuzz a seller with schema-valid requests from the release's schemas; each failure shrunk to a reproduction", runFuzz}, // fuzz.go
	"judge":   {"judge a recorded report folder again, offline, into --out, and say whether the verdicts agree", runJudge},
	"keygen":  {"write an Ed25519 key pair for signing results (PREFIX.key, PREFIX.pub)", runKeygen},
	"merge":   {"build the index (index.html, index.json) across report folders written anywhere", runMerge},
	"run":     {"test a seller agent (default: the bundled reference seller) and write reports", runRun},
	"rules":   {"list the rule catalogue: IDs, levels, transports, statements", runRules},
	"verify":  {"check a report folder's signature and evidence hashes", runVerify},
	"version": {"print the tool version and the protocol versions it tests", runVersion},

	"diagnose": {"walk a seller's OAuth handshake and brand.json → JWKS chain, and name why its token is refused", runDiagnose}, // diagnose_auth.go
}

// Main runs the command line and returns the exit code.
func Main(args []string, stdio Stdio) ExitCode {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printHelp(stdio.Out)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stdio.Err, "adcp-conform: unknown command %q: the commands are %s; see `adcp-conform --help`\n",
			wire.Sanitize(args[0], 40), strings.Join(commandNames(), ", "))
		return ExitUsage
	}
	stdio, flush := stdio.guarded() // redact.go
	defer flush()
	err := cmd.run(args[1:], stdio)
	if err != nil && err.Error() != "" {
		fmt.Fprintf(stdio.Err, "adcp-conform %s: %s\n", args[0], oneLine(err.Error()))
	}
	return exitCodeOf(err)
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "adcp-conform: conformance tests for AdCP seller agents")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, name := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'adcp-conform COMMAND --help' for a command's flags.")
	fmt.Fprintln(w, "exit codes: 0 conformant / ok, 1 non-conformant, 2 usage or configuration error, 3 harness error")
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// oneLine keeps a message on one line for terminals and logs, with no
// control characters (no ANSI escapes from a seller or a file).
func oneLine(s string) string {
	return wire.Sanitize(strings.Join(strings.Fields(s), " "), 0)
}
