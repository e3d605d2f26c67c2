package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
	"github.com/adcp-conform/adcp-conform/suites/conform"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

// runJudge judges a recorded run again, offline: it checks the folder's
// evidence against the hashes results.json embeds, reads the evidence and
// the run's settings (label filter, strict, judge options, certification,
// baseline), runs every judge over the evidence without contacting the
// seller, and writes the reports into --out (default: REPORT-DIR-judged),
// never into the folder it judges. It then compares its verdicts with the
// submitted ones: exit 1 when they disagree (or a hash does not match),
// else the verdict's exit code, as for run.
func runJudge(args []string, stdio Stdio) error {
	var out string
	fs := newFlagSet("judge", "judge [--out DIR] [--sign-key FILE] REPORT-DIR", stdio.Err)
	fs.StringVar(&out, "out", "", "`DIR`: the folder for the new reports, never REPORT-DIR itself (default: REPORT-DIR-judged)")
	var schemasDir, storyboardsDir string
	fs.StringVar(&schemasDir, "schemas", "", "the schemas folder of the run's release, when the run validated schemas")
	fs.StringVar(&storyboardsDir, "storyboards", "", "the compliance folder of the run's release, or the URL of its published bundle (…/protocol/<release>.tgz, fetched once into the user's cache), when the run ran storyboards")
	post := addPostFlags(fs, false)
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &UsageError{Msg: "want one report folder", ShowUsage: true}
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("%s is not a report folder", wire.Sanitize(dir, 200))
	}
	if out == "" {
		out = filepath.Clean(dir) + "-judged"
	}
	if sameDir(out, dir) {
		return usagef("--out %s is the folder being judged: judge never changes it; give another --out", wire.Sanitize(out, 200))
	}
	prev, err := readRun(filepath.Join(dir, FileResults))
	if err != nil {
		return err
	}
	// The evidence judged is the evidence the run sealed, or nothing is.
	if errs := certify.Check(dir, prev.Integrity); len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintf(stdio.Out, "FAIL %s\n", oneLine(e.Error()))
		}
		return &codeError{code: ExitNonConformant, msg: fmt.Sprintf("%s does not match the hashes its results.json embeds: the folder changed after the run; nothing was judged", wire.Sanitize(dir, 200))}
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
	opts := suites.Options{Strict: prev.Strict, AllowedDomains: prev.AllowedDomains, Fuzz: prev.Fuzz != nil} // a fuzz run's folder: the FUZZ rules
	if prev.SchemasRelease != "" {
		if schemasDir == "" {
			return usagef("the run validated against the %s schemas: give them with --schemas DIR%s", prev.SchemasRelease, material.CachedHint(material.SchemasCache, prev.SchemasRelease))
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
		opts.SchemasUnavailable = material.RecordedSchemasSkip(prev)
	}
	for _, t := range prev.Transports {
		opts.Transports = append(opts.Transports, catalogue.Transport(t))
	}
	sel, err := runner.Select(prev.LabelFilter, opts)
	switch {
	case err != nil && (len(prev.StoryboardIDs) > 0 || prev.StoryboardsRelease != ""):
		sel, err = runner.SelectNone(prev.LabelFilter, opts), nil // the run judged storyboards only
	case err == nil && len(prev.StoryboardIDs) > 0 && prev.LabelFilter == "":
		sel = runner.SelectNone("", opts) // as run does: --storyboard alone focuses on storyboards
	}
	if err != nil {
		var fe *runner.FilterError
		if errors.As(err, &fe) {
			return usagef("results.json: %s", fe.Msg)
		}
		return err
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
	// What the run tested is the submitted report's word, kept as it is
	// ("" in a report written before it was recorded: not guessed).
	run.TargetKind, run.Face = prev.TargetKind, prev.Face
	if err := material.Rejudge(run, prev, store, storyboardsDir, opts, stdio.Err, AdcpRelease); err != nil {
		return err
	}
	runner.BlameTheTarget(run, runner.Diagnose(store).Wrong) // as the run did
	run.JudgedOffline, run.Sandbox = true, prev.Sandbox
	run.Release = prev.Release // the release the recorded run chose, and why
	run.Fuzz = prev.Fuzz       // a fuzz run's account, as recorded
	if prev.AdcpRelease != AdcpRelease {
		run.Notes = append(run.Notes, fmt.Sprintf("recorded for AdCP %s, judged with the rules of AdCP %s",
			wire.Sanitize(prev.AdcpRelease, 40), AdcpRelease))
	}
	if err := conform.WritableOut(out); err != nil {
		return runError(err)
	}
	if err := conform.WriteReports(out, run, store, sel, post.finish()); err != nil {
		return err
	}
	if err := report.WriteText(stdio.Out, run, report.TextOptions{Dir: out}); err != nil {
		return err
	}
	if diffs := disagreements(prev, run); len(diffs) > 0 {
		for _, d := range diffs {
			fmt.Fprintf(stdio.Out, "DISAGREE %s\n", d)
		}
		what := "1 point"
		if len(diffs) > 1 {
			what = fmt.Sprintf("%d points", len(diffs))
		}
		return &codeError{code: ExitNonConformant, msg: "the verdicts judged again disagree with the submitted ones on " + what + " (see above)"}
	}
	fmt.Fprintf(stdio.Out, "agree: every verdict judged again is the submitted one (%s)\n", run.Verdict)
	return certifyOutcome(post.certify, run) // run.go
}

// sameDir reports whether a and b name the same folder.
func sameDir(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	if aa == ab {
		return true
	}
	sa, err1 := os.Stat(aa)
	sb, err2 := os.Stat(ab)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// disagreements lists, one terminal-safe line each, where a run judged
// again differs from the submitted one: the verdict, and each rule's
// outcome and baseline status.
func disagreements(prev, cur *report.Run) []string {
	var out []string
	if prev.Verdict != cur.Verdict {
		out = append(out, fmt.Sprintf("verdict: submitted %s, judged %s", wire.Sanitize(string(prev.Verdict), 40), cur.Verdict))
	}
	submitted := map[string]report.RuleResult{}
	for _, r := range prev.Rules {
		submitted[r.ID] = r
	}
	baseline := func(r report.RuleResult) string {
		if r.Baseline == nil {
			return ""
		}
		return r.Baseline.Status
	}
	for _, r := range cur.Rules {
		p, ok := submitted[r.ID]
		delete(submitted, r.ID)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: not in the submitted results, judged %s", r.ID, r.Outcome))
		case p.Outcome != r.Outcome:
			out = append(out, fmt.Sprintf("%s: submitted %s, judged %s", r.ID, wire.Sanitize(string(p.Outcome), 40), r.Outcome))
		case baseline(p) != baseline(r):
			out = append(out, fmt.Sprintf("%s: baseline submitted %q, judged %q", r.ID, wire.Sanitize(baseline(p), 40), baseline(r)))
		}
	}
	var gone []string
	for id := range submitted {
		gone = append(gone, wire.Sanitize(id, 40))
	}
	sort.Strings(gone)
	for _, id := range gone {
		out = append(out, fmt.Sprintf("%s: submitted %s, not judged again", id, wire.Sanitize(string(submitted[id].Outcome), 40)))
	}
	return append(out, storyboardDisagreements(prev, cur)...)
}

// storyboardDisagreements compares the storyboards' outcomes and their
// steps' verdicts ("storyboard:<id>" and "storyboard:<id>/<phase>/<step>").
func storyboardDisagreements(prev, cur *report.Run) []string {
	var out []string
	was := map[string]report.Outcome{}
	for _, sb := range prev.Storyboards {
		was["storyboard:"+sb.ID] = sb.Outcome
	}
	for _, st := range prev.Steps {
		if st.StoryboardID != report.StoryboardID {
			was["storyboard:"+st.StoryboardID+"/"+st.PhaseID+"/"+st.StepID] = st.Outcome()
		}
	}
	now := map[string]report.Outcome{}
	for _, sb := range cur.Storyboards {
		now["storyboard:"+sb.ID] = sb.Outcome
	}
	for _, st := range cur.Steps {
		if st.StoryboardID != report.StoryboardID {
			now["storyboard:"+st.StoryboardID+"/"+st.PhaseID+"/"+st.StepID] = st.Outcome()
		}
	}
	var keys []string
	for k := range was {
		keys = append(keys, k)
	}
	for k := range now {
		if _, ok := was[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, inPrev := was[k]
		c, inCur := now[k]
		switch {
		case !inPrev:
			out = append(out, fmt.Sprintf("%s: not in the submitted results, judged %s", wire.Sanitize(k, 200), c))
		case !inCur:
			out = append(out, fmt.Sprintf("%s: submitted %s, not judged again", wire.Sanitize(k, 200), wire.Sanitize(string(p), 40)))
		case p != c:
			out = append(out, fmt.Sprintf("%s: submitted %s, judged %s", wire.Sanitize(k, 200), wire.Sanitize(string(p), 40), c))
		}
	}
	return out
}
