package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

// runJudge judges a recorded run again, offline: it reads the evidence and
// the run's settings (label filter, strict, judge options, certification,
// baseline) from a report folder, runs every judge over the evidence
// without contacting the seller, and writes the same reports into the
// folder (or --out). The exit code is the verdict's, as for run.
func runJudge(args []string, stdio Stdio) error {
	var out string
	fs := newFlagSet("judge", "judge [--out DIR] [--sign-key FILE] REPORT-DIR", stdio.Err)
	fs.StringVar(&out, "out", "", "folder for the new reports (default: REPORT-DIR itself)")
	var schemasDir string
	fs.StringVar(&schemasDir, "schemas", "", "the schemas folder of the run's release, when the run validated schemas")
	post := addPostFlags(fs, false)
	if err := parseFlags(fs, args, stdio.getenv); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &UsageError{Msg: "want one report folder", ShowUsage: true}
	}
	dir := fs.Arg(0)
	if out == "" {
		out = dir
	}
	prev, err := readRun(filepath.Join(dir, FileResults))
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, FileEvidence))
	if err != nil {
		return usagef("%v", err)
	}
	store := evidence.NewStore(evidence.Target{})
	if err := json.Unmarshal(b, store); err != nil {
		return usagef("%s: not an evidence store: %v", FileEvidence, err)
	}
	post.certify, post.expected = prev.Certify, prev.Baseline
	if err := post.prepare(prev.LabelFilter); err != nil {
		return err
	}
	opts := suites.Options{Strict: prev.Strict, AllowedDomains: prev.AllowedDomains}
	if prev.SchemasRelease != "" {
		if schemasDir == "" {
			return usagef("the run validated against the %s schemas: give them with --schemas DIR%s", prev.SchemasRelease, cachedHint(prev.SchemasRelease))
		}
		set, err := schemas.Load(schemasDir)
		if err != nil {
			return usagef("--schemas: %v", err)
		}
		if set.Release() != prev.SchemasRelease {
			return usagef("--schemas %s is release %s; the run used %s", schemasDir, set.Release(), prev.SchemasRelease)
		}
		opts.Schemas = set
	}
	if prev.SchemasRelease == "" {
		opts.SchemasUnavailable = recordedSchemasSkip(prev) // schemas.go
	}
	for _, t := range prev.Transports {
		opts.Transports = append(opts.Transports, catalogue.Transport(t))
	}
	sel, err := runner.Select(prev.LabelFilter, opts)
	if err != nil {
		var fe *runner.FilterError
		if errors.As(err, &fe) {
			return usagef("results.json: %s", fe.Msg)
		}
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return usagef("--out %s: %v", out, err)
	}
	results, err := runner.Judge(store, sel)
	if err != nil {
		return err
	}
	meta := runner.Meta{Tool: prev.Tool, Version: currentVersion().Version, AdcpRelease: AdcpRelease, MCPProtocolVersion: prev.MCPProtocolVersion,
		Target: prev.Target, StartedAt: prev.StartedAt, Duration: time.Duration(prev.DurationMS * float64(time.Millisecond)),
		Strict: prev.Strict, HarnessError: prev.HarnessError}
	if meta.Tool == "" {
		meta.Tool = "adcp-conform"
	}
	run := runner.Report(meta, store, sel, results)
	run.JudgedOffline = true
	if prev.AdcpRelease != AdcpRelease {
		run.Notes = append(run.Notes, fmt.Sprintf("recorded for AdCP %s, judged with the rules of AdCP %s",
			wire.Sanitize(prev.AdcpRelease, 40), AdcpRelease))
	}
	if err := post.finish(out, run, store, sel); err != nil {
		return err
	}
	if err := report.WriteText(stdio.Out, run, report.TextOptions{Dir: out}); err != nil {
		return err
	}
	if code := ExitCode(run.ExitCode()); code != ExitOK {
		return &codeError{code: code}
	}
	return nil
}
