package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// EnvPrefix is the prefix of the environment variables that set flags: the
// flag --label-filter is also read from ADCP_CONFORM_LABEL_FILTER.
const EnvPrefix = "ADCP_CONFORM_"

// envName returns the environment variable that sets the flag name.
func envName(name string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// newFlagSet returns a flag set that reports errors instead of exiting, and
// whose usage text names the environment variables.
func newFlagSet(name, synopsis string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: adcp-conform %s\n", synopsis)
		fs.VisitAll(func(f *flag.Flag) {
			kind, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(out, "  --%s", f.Name)
			if kind != "" {
				fmt.Fprintf(out, " %s", kind)
			}
			fmt.Fprintf(out, "\n        %s (env %s)", usage, envName(f.Name))
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" {
				fmt.Fprintf(out, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(out)
		})
	}
	return fs
}

// parseFlags parses args, then fills every flag not given on the command line
// from its ADCP_CONFORM_* environment variable. Precedence: flag, then
// environment, then default.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return &codeError{code: ExitOK, msg: ""}
		}
		return &UsageError{Msg: err.Error()}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || given[f.Name] {
			return
		}
		v := getenv(envName(f.Name))
		if v == "" {
			return
		}
		if isMulti(f) {
			for _, item := range splitMulti(v) {
				if e := f.Value.Set(item); e != nil {
					err = usagef("%s: %v", envName(f.Name), e)
					return
				}
			}
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = usagef("%s: %v", envName(f.Name), e)
		}
	})
	return err
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
