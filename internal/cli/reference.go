package cli

import (
	"fmt"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

// ReferenceA2A03Dir is the folder, inside --out, of the reports on the
// reference seller's A2A 0.3 face.
const ReferenceA2A03Dir = conform.ReferenceA2A03Dir

// runReference tests the bundled reference seller on every face
// (conform.Reference) and prints one summary of both: the exit code is
// the worse of the two runs'.
func runReference(c *runConfig, stdio Stdio) error {
	cfg, err := c.config(stdio)
	if err != nil {
		return err
	}
	var (
		mu      sync.Mutex // the passes run side by side
		secrets []string
	)
	cfg.Redact = func(s []string, learnt *wire.SecretSet) {
		mu.Lock()
		defer mu.Unlock()
		secrets = append(secrets, s...)
		stdio.redact(s, learnt)
	}
	ctx, sig := onSignal() // signal.go
	defer sig.stop()
	faces, err := conform.Reference(ctx, cfg)
	if faces == nil {
		return runError(err)
	}
	err = runError(err)
	code := exitCodeOf(err)
	var runs []*report.Run
	for _, f := range faces {
		if f.Run != nil {
			code = worse(code, ExitCode(f.Run.ExitCode()))
			runs = append(runs, f.Run)
		}
	}
	code = worse(code, sig.exitCode())
	if err := report.WriteFacesText(stdio.Out, faces, report.TextOptions{Verbose: c.verbose}, int(code)); err != nil {
		return err
	}
	if err := appendStepSummary(stdio.getenv("GITHUB_STEP_SUMMARY"), wire.NewRedactor(secrets, nil), runs...); err != nil {
		fmt.Fprintf(stdio.Err, "adcp-conform: step summary: %s\n", wire.Sanitize(err.Error(), 200))
	}
	if exitCodeOf(err) == code {
		return err
	}
	return &codeError{code: code}
}

// worse returns the more serious exit code: a signal, then usage, then
// harness, then non-conformant, then success.
func worse(a, b ExitCode) ExitCode {
	rank := map[ExitCode]int{ExitTerminated: 6, ExitInterrupted: 5, ExitUsage: 4, ExitHarness: 3, ExitNonConformant: 2, ExitOK: 1}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
