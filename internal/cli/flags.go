package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// EnvPrefix is the prefix of the environment variables that set flags: the
// flag --label-filter is also read from ADCP_CONFORM_LABEL_FILTER.
const EnvPrefix = "ADCP_CONFORM_"

// envName returns the environment variable that sets the flag name.
func envName(name string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// ownEnv are the flags whose environment variable names the command too:
// ADCP_CONFORM_OUT is run's report folder, so judge's --out is read from
// ADCP_CONFORM_JUDGE_OUT and an exported ADCP_CONFORM_OUT never sends
// another command's files into run's folder.
var ownEnv = map[string]bool{"out": true}

// flagEnvName returns the environment variable that sets the flag name of
// the command cmd.
func flagEnvName(cmd, name string) string {
	if cmd != "run" && ownEnv[name] {
		return envName(cmd + "_" + name)
	}
	return envName(name)
}

// dashes spells a flag as the README does: -v for a one-letter flag,
// --name otherwise.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// newFlagSet returns a flag set that reports errors instead of exiting, and
// whose usage text names the environment variables.
func newFlagSet(name, synopsis string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package's own messages are replaced by parseFlags' one-line
	// errors; the usage is printed for --help only.
	fs.SetOutput(io.Discard)
	fs.Usage = func() { writeUsage(out, fs, synopsis) }
	return fs
}

// helpLayout is how a command's --help reads when it has many flags: the
// flags in groups, in the order a user needs them, then examples (as gh
// and kubectl print theirs). A command without one lists its flags
// alphabetically.
type helpLayout struct {
	groups   []flagGroup
	examples string
}

type flagGroup struct {
	title string
	names []string
}

// helpLayouts are the commands' help layouts, by command. A flag a layout
// does not place is printed under "Other flags" (a test keeps run's empty).
var helpLayouts = map[string]helpLayout{"run": runHelp}

// writeUsage prints a command's --help: the synopsis, then every flag with
// its environment variable and default, grouped where the command has a
// helpLayout.
func writeUsage(out io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprintf(out, "usage: adcp-conform %s\n", synopsis)
	layout, ok := helpLayouts[fs.Name()]
	if !ok {
		fs.VisitAll(func(f *flag.Flag) { writeFlag(out, fs.Name(), f) })
		return
	}
	placed := map[string]bool{}
	for _, g := range layout.groups {
		fmt.Fprintf(out, "\n%s:\n", g.title)
		for _, name := range g.names {
			if f := fs.Lookup(name); f != nil {
				writeFlag(out, fs.Name(), f)
				placed[name] = true
			}
		}
	}
	other := false
	fs.VisitAll(func(f *flag.Flag) {
		if placed[f.Name] {
			return
		}
		if !other {
			fmt.Fprintf(out, "\nOther flags:\n")
			other = true
		}
		writeFlag(out, fs.Name(), f)
	})
	if layout.examples != "" {
		fmt.Fprintf(out, "\nExamples:\n%s", layout.examples)
	}
}

// writeFlag prints one flag of the command cmd: its spelling and the
// kind of value, then its usage, environment variable and default.
func writeFlag(out io.Writer, cmd string, f *flag.Flag) {
	kind, usage := flag.UnquoteUsage(f)
	fmt.Fprintf(out, "  %s", dashes(f.Name))
	if kind != "" {
		fmt.Fprintf(out, " %s", kind)
	}
	fmt.Fprintf(out, "\n        %s (env %s)", usage, flagEnvName(cmd, f.Name))
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" {
		fmt.Fprintf(out, " (default %s)", f.DefValue)
	}
	fmt.Fprintln(out)
}

// parseFlags parses args, then fills every flag not given on the command line
// from its ADCP_CONFORM_* environment variable. Precedence: flag, then
// environment, then default. A variable set empty is read as unset, but
// for a flag naming a target (a targetValue), which refuses it.
func parseFlags(fs *flag.FlagSet, args []string, lookup func(string) (string, bool)) error {
	usage := fs.Usage
	fs.Usage = func() {} // the flag package calls it on every error
	err := fs.Parse(args)
	fs.Usage = usage
	if err != nil {
		if err == flag.ErrHelp {
			usage()
			return &codeError{code: ExitOK, msg: ""}
		}
		return &UsageError{Msg: flagError(fs, err)}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || given[f.Name] {
			return
		}
		env := flagEnvName(fs.Name(), f.Name)
		v, set := lookup(env)
		if _, target := f.Value.(*targetValue); v == "" && (!set || !target) {
			return
		}
		if isMulti(f) {
			for _, item := range splitMulti(v) {
				if e := f.Value.Set(item); e != nil {
					err = usagef("%s (%s): %v", env, dashes(f.Name), e)
					return
				}
			}
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = usagef("%s (%s): %s", env, dashes(f.Name), badValue(f, v))
		}
	})
	return err
}

// The flag package's error messages, which flagError rewrites.
var (
	unknownFlagRE = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	badValueRE    = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]+): `)
	needsArgRE    = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// flagError turns an error of fs.Parse into one line that names the flag
// and, for a bad value, the form the flag wants.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	help := fmt.Sprintf("see `adcp-conform %s --help`", fs.Name())
	if m := unknownFlagRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("unknown flag %s: %s", dashes(wire.Sanitize(m[1], 40)), help)
	}
	if m := needsArgRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s needs a value: %s", dashes(wire.Sanitize(m[1], 40)), help)
	}
	if m := badValueRE.FindStringSubmatch(msg); m != nil {
		if f := fs.Lookup(m[2]); f != nil {
			return dashes(f.Name) + ": " + badValue(f, m[1])
		}
	}
	return wire.Sanitize(msg, 200) + ": " + help
}

// badValue says what is wrong with the value v of the flag f: the form the
// flag wants. The value itself is not repeated (it may be a secret given
// to the wrong flag).
func badValue(f *flag.Flag, v string) string {
	if t, ok := f.Value.(*targetValue); ok {
		return t.refusal(f.Name)
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "invalid value"
	}
	switch g.Get().(type) {
	case time.Duration:
		return "want a duration such as 30s, 2m or 1h30m"
	case bool:
		return "want true or false"
	case int, int64:
		return "want a whole number"
	case uint, uint64:
		return "want a whole number, 0 or more"
	case float64:
		return "want a number"
	}
	return "invalid value"
}

// targetValue is a flag naming what a run tests (--mcp, --a2a,
// --targets). Given, it must name something: an empty or blank value — an
// unset CI variable expanded into --mcp "$SELLER_URL" — is a usage error,
// never read as "no target", which would test the bundled reference
// seller and report its verdict whatever the seller does.
type targetValue struct {
	s    *string
	what string // what the value names: "the seller's MCP endpoint"
}

func (t *targetValue) String() string {
	if t == nil || t.s == nil {
		return ""
	}
	return *t.s
}

func (t *targetValue) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errEmptyTarget
	}
	*t.s = v
	return nil
}

var errEmptyTarget = errors.New("empty")

// refusal says why an empty value of the flag name is refused.
func (t *targetValue) refusal(name string) string {
	return fmt.Sprintf("empty or blank: give %s (is a variable it expands unset?); with no %s at all a run tests the bundled reference seller, never the seller you meant",
		t.what, dashes(name))
}

// multiValue is a repeatable string flag (--header, --fault).
type multiValue []string

func (m *multiValue) String() string     { return strings.Join(*m, ", ") }
func (m *multiValue) Set(v string) error { *m = append(*m, v); return nil }

func isMulti(f *flag.Flag) bool {
	_, ok := f.Value.(*multiValue)
	return ok
}

// splitMulti splits an environment value for a repeatable flag: one item per
// line, so values may contain commas.
func splitMulti(v string) []string {
	var out []string
	for _, line := range strings.Split(v, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}
