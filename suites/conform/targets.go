package conform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
)

// DefaultParallelTargets is how many targets Targets runs at once by
// default (--parallel-targets).
const DefaultParallelTargets = 4

// Target is one seller of a many-target run: a registry's entry.
type Target struct {
	// Name labels the target in the index; "": Dir.
	Name string
	// Dir is the target's report folder under TargetsOptions.Out: a plain
	// folder name ([A-Za-z0-9._-], not . or ..), unique among the targets.
	// It is the target's identity across runs: resuming and sharding go by
	// it.
	Dir string
	// MCP and A2A are the seller's endpoints (Config.MCP, Config.A2A).
	MCP, A2A string
	// BearerToken and OAuth are its credentials (Config.BearerToken,
	// Config.OAuth).
	BearerToken string
	OAuth       *OAuth
	// Prepare, when set, is called just before the target runs (never for
	// a target whose result is kept) with its run's Config: it may set the
	// credentials from a secret store, say, so that they are not all held
	// at once. Its error refuses this target's run (exit code 2 in the
	// index), not the others'. What it sets is not part of the settings a
	// kept result is matched on (see Targets): set only credentials here.
	Prepare func(cfg *Config) error
}

// TargetsOptions are the settings of a many-target run.
type TargetsOptions struct {
	// Out is the root folder: each target's reports go into Out/Dir, the
	// index into Out. "": the base Config's Out.
	Out string
	// Parallel is how many targets run at once (--parallel-targets; 0:
	// DefaultParallelTargets, at most MaxParallel).
	Parallel int
	// Shard, when its Count is set, runs only the targets of that shard
	// (--shard), and names the index after it.
	Shard Shard
	// Rerun says which targets are run again although their folder holds
	// a complete, verified result (--rerun; default RerunErrored).
	Rerun Rerun
	// Progress, when set, receives one line per target as it ends (or is
	// kept); Summary one line per target, in order, and the counts line,
	// once the index is written. Both are terminal-safe and redacted.
	Progress, Summary io.Writer
	// Secrets are values neither the index nor Progress nor Summary ever
	// show, besides the targets' own credentials.
	Secrets []string
}

// Shard is one of Count parts of a targets list (--shard Part/Count). A
// target belongs to part FNV-1a(Dir) mod Count, plus 1: each target's
// shard depends on its folder name alone, so adding, removing or
// reordering other targets in the list never moves it to another shard —
// where a resumed shard looks for its result — and every shard computes
// its part alone, without bookkeeping. The parts are even only on
// average: with few targets a shard may hold none.
type Shard struct {
	// Part counts from 1 to Count, as --shard 1/3 … 3/3 (and the shard
	// flags of Playwright, Jest and Vitest) do; Count is the number of
	// shards (0: the whole list).
	Part, Count int
}

// ParseShard reads "I/N": shard I of N, counted from 1 (1/3, 2/3, 3/3).
func ParseShard(s string) (Shard, error) {
	sh, err := parseShard(s, 1)
	if err == nil && sh.Part == 0 {
		return Shard{}, fmt.Errorf("%q: shards count from 1 (1/%d … %d/%d); a scheduler's index that counts from 0 (Kubernetes' JOB_COMPLETION_INDEX, GitHub Actions' strategy.job-index) goes to --shard-index", s, sh.Count, sh.Count, sh.Count)
	}
	return sh, err
}

// ParseShardIndex reads "I/N" with I counted from 0, as a scheduler
// numbers its workers (Kubernetes' JOB_COMPLETION_INDEX, GitHub Actions'
// strategy.job-index): the shard I+1 of N.
func ParseShardIndex(s string) (Shard, error) {
	sh, err := parseShard(s, 0)
	if err == nil && sh.Part == sh.Count+1 {
		return Shard{}, fmt.Errorf("%q: an index counts from 0 (0/%d … %d/%d); shard I of N counted from 1 goes to --shard", s, sh.Count, sh.Count-1, sh.Count)
	}
	return sh, err
}

// parseShard reads "I/N" with I counted from first (0 or 1). I may be 0
// or N either way: the one of them out of range (a Part of 0 or N+1) is
// returned for the caller to explain, as the other way of counting.
func parseShard(s string, first int) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("%q: want I/N, shard I of N (%d/3 … %d/3)", s, first, 2+first)
	case count < 1 || count > MaxTargets:
		return Shard{}, fmt.Errorf("%q: the number of shards must be between 1 and %d", s, MaxTargets)
	case idx < 0 || idx > count:
		return Shard{}, fmt.Errorf("%q: the shard must be between %d and %d", s, first, count-1+first)
	}
	return Shard{Part: idx + 1 - first, Count: count}, nil
}

func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Part, s.Count)
}

// Holds reports whether the target of folder dir belongs to the shard.
func (s Shard) Holds(dir string) bool {
	if s.Count == 0 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(dir))
	return h.Sum64()%uint64(s.Count) == uint64(s.Part-1)
}

var safeDir = regexp.MustCompile(`^[A-Za-z0-9._-]{1,255}$`)

// check refuses options and targets Targets cannot run; it returns the
// options with their defaults.
func (o TargetsOptions) check(base Config, targets []Target) (TargetsOptions, error) {
	if o.Out == "" {
		o.Out = base.Out
	}
	if o.Parallel == 0 {
		o.Parallel = DefaultParallelTargets
	}
	switch {
	case o.Out == "":
		return o, configf("--out: a many-target run needs a folder for its reports")
	case base.MCP != "" || base.A2A != "" || base.BearerToken != "" || base.OAuth != nil:
		return o, configf("--targets names each target's --mcp, --a2a and credential; the run's settings name none")
	case base.LiveBearerToken != "":
		return o, configf("--live-bearer-env is the live-mode credential of one seller: run that target on its own (--mcp or --a2a), not with --targets")
	case len(base.Agents) > 0:
		return o, configf("--agent names the other agents of one agent under test: give it with --mcp or --a2a, not --targets")
	case o.Parallel < 1 || o.Parallel > MaxParallel:
		return o, configf("--parallel-targets must be between 1 and %d", MaxParallel)
	case o.Shard.Count < 0 || o.Shard.Count > MaxTargets || (o.Shard.Count > 0 && (o.Shard.Part < 1 || o.Shard.Part > o.Shard.Count)):
		return o, configf("--shard %d/%d: want I/N with 1 ≤ I ≤ N", o.Shard.Part, o.Shard.Count)
	case o.Rerun < RerunErrored || o.Rerun > RerunAll:
		return o, configf("--rerun: unknown value %d", o.Rerun)
	case len(targets) == 0:
		return o, configf("--targets: no targets")
	case len(targets) > MaxTargets:
		return o, configf("--targets: %d targets, at most %d", len(targets), MaxTargets)
	}
	used := make(map[string]bool, len(targets))
	for i, t := range targets {
		if !safeDir.MatchString(t.Dir) || t.Dir == "." || t.Dir == ".." {
			return o, configf("--targets: target %d: its folder %q must be a plain folder name ([A-Za-z0-9._-], not . or ..)", i+1, wire.Sanitize(t.Dir, 80))
		}
		if used[t.Dir] {
			return o, configf("--targets: target %d: its folder %q is used twice", i+1, t.Dir)
		}
		used[t.Dir] = true
	}
	return o, nil
}

// Targets runs many sellers, each with base's settings and its own
// endpoints and credentials, into its own folder under opts.Out, at most
// opts.Parallel at a time, then writes the index across them (index.json,
// index.html; index.shard-I-of-N.* for a shard). Its summary's exit code
// is the worst across the targets.
//
// A target whose run cannot start, hangs or fails never stops the others:
// a refused configuration is its entry's exit code 2; a hanging seller
// holds its place for at most its run's Deadline (and the few seconds the
// reports take); a panic in the target's run is caught and is its harness
// error. Each folder holds the run's four reports, run.log (its console
// output, redacted) and, when the run ended uninterrupted, target.json.
//
// Targets resumes: a target whose folder already holds a complete,
// verified result (see below) of a run with the same settings is not run
// again; its entry is read from that result. A result is complete and
// verified when target.json names the same settings (base's, with the
// target's endpoints; credentials aside) and the SHA-256 of the
// results.json beside it, that results.json parses, its integrity section
// matches evidence.json, junit.xml, report.html and every recorded call,
// and, when base signs (SignKey), its signature verifies. opts.Rerun
// decides the rest: by default a result that is a harness error is run
// again; RerunAll runs every target again.
//
// Cancelling ctx interrupts the targets running (their reports are still
// written, without target.json, so the next call runs them again) and
// starts no other; those are listed as missing, "not run". The index is
// written either way. Memory does not grow with the number of targets:
// the reports are read one at a time and the index's entries are spooled
// to a file beside it, then streamed into it.
func Targets(ctx context.Context, base Config, targets []Target, opts TargetsOptions) (*IndexSummary, error) {
	started := time.Now()
	opts, err := opts.check(base, targets)
	if err != nil {
		return nil, err
	}
	if base.Log == nil {
		base.Log = io.Discard
	}
	// A published bundle is fetched once for every target.
	if base, err = base.Prefetch(); err != nil {
		return nil, err
	}
	if err := WritableOut(opts.Out); err != nil {
		return nil, err
	}
	var mine []int
	for i, t := range targets {
		if opts.Shard.Holds(t.Dir) {
			mine = append(mine, i)
		}
	}
	w, err := newIndexWriter(opts.Out, len(mine))
	if err != nil {
		return nil, err
	}
	defer w.close()
	// The index and the terminal never show a target's credential, nor
	// a credential header, whatever a seller put in its results.
	live := &wire.SecretSet{}
	live.Add(opts.Secrets...)
	live.Add(wire.Secrets("", base.Header)...)
	for _, t := range targets {
		live.Add(wire.Secrets(t.BearerToken, nil)...)
		if t.OAuth != nil {
			live.Add(t.OAuth.ClientSecret)
		}
	}
	red := wire.NewLiveRedactor(nil, live, nil)
	r := &registry{base: base, opts: opts, live: live, red: red, w: w, total: len(mine)}
	sum := &IndexSummary{}
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for k, i := range mine {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			why := "not run: " + (&interruption{ctx: ctx}).why() + " before its turn"
			for j, rest := range mine[k:] {
				t := targets[rest]
				e := IndexEntry{Name: nameOf(t), Dir: relDir(opts.Out, filepath.Join(opts.Out, t.Dir)), Verdict: VerdictMissing, ExitCode: exitHarness, Error: why}
				if err := w.add(k+j, e); err != nil {
					return nil, err
				}
			}
			sum.NotRun = len(mine) - k
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			r.target(ctx, k, targets[i])
		})
	}
	wg.Wait()
	if r.err != nil {
		return nil, r.err
	}
	head := indexHead{Tool: "adcp-conform", Version: base.withDefaults().Version, GeneratedAt: time.Now().UTC(),
		DurationMS: float64(time.Since(started).Microseconds()) / 1000}
	var text io.Writer
	if opts.Summary != nil {
		text = opts.Summary
		if opts.Shard.Count > 0 && len(mine) == 0 {
			fmt.Fprintf(text, "shard %s holds none of the %d targets\n", opts.Shard, len(targets))
		}
	}
	s, err := w.write(head, opts.Shard.String(), red, text)
	if err != nil {
		return nil, err
	}
	s.Ran, s.Kept, s.NotRun = r.ran, r.kept, sum.NotRun
	return s, nil
}

func nameOf(t Target) string {
	if t.Name != "" {
		return t.Name
	}
	return t.Dir
}

// registry is one Targets call under way.
type registry struct {
	base  Config
	opts  TargetsOptions
	live  *wire.SecretSet
	red   *wire.Redactor // over live
	w     *indexWriter
	total int

	mu        sync.Mutex
	done      int
	ran, kept int
	err       error // writing the index's spool failed
}

// target runs (or keeps) the k-th target of the shard and adds its entry.
func (r *registry) target(ctx context.Context, k int, t Target) {
	dir := filepath.Join(r.opts.Out, t.Dir)
	name := nameOf(t)
	cfg := r.base
	cfg.MCP, cfg.A2A, cfg.BearerToken, cfg.OAuth, cfg.Out = t.MCP, t.A2A, t.BearerToken, t.OAuth, dir
	fp, fpErr := settingsOf(cfg)
	var e IndexEntry
	var note string
	ran := true
	if fpErr == nil && r.opts.Rerun != RerunAll {
		var why string
		if e, why = kept(r.opts.Out, name, dir, fp, r.opts.Rerun, cfg.SignKey); why == "" {
			ran, note = false, "kept: a complete result of a run with the same settings"
		}
	}
	if ran {
		e = r.run(ctx, name, dir, fp, cfg, t.Prepare)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.w.add(k, e); err != nil && r.err == nil {
		r.err = err
	}
	r.done++
	if ran {
		r.ran++
	} else {
		r.kept++
	}
	if r.opts.Progress != nil {
		line := fmt.Sprintf("adcp-conform: [%d/%d] %s: %s (exit %d)", r.done, r.total, wire.Sanitize(name, 80), wire.Sanitize(e.Verdict, 20), e.ExitCode)
		if note != "" {
			line += " " + note
		}
		fmt.Fprintln(r.opts.Progress, r.red.String(line))
	}
}

// run runs one target into dir and returns its entry. Its console output
// goes to run.log, redacted by the run's credentials; a run that ended
// uninterrupted leaves target.json beside its reports.
func (r *registry) run(ctx context.Context, name, dir, fp string, cfg Config, prepare func(*Config) error) (e IndexEntry) {
	e = IndexEntry{Name: name, Dir: relDir(r.opts.Out, dir)}
	// The record of an older run goes first: this folder is being
	// rewritten.
	if err := os.Remove(filepath.Join(dir, FileTarget)); err != nil && !errors.Is(err, os.ErrNotExist) {
		e.Verdict, e.ExitCode, e.Error = VerdictMissing, exitHarness, wire.Sanitize(err.Error(), 300)
		return e
	}
	var log bytes.Buffer
	var secrets []string
	var learnt *wire.SecretSet
	cfg.Log = &log
	cfg.Redact = func(s []string, l *wire.SecretSet) {
		secrets, learnt = s, l
		r.live.Add(s...)
	}
	var run *report.Run
	var runErr error
	// interrupted is whether ctx was cancelled before the run returned:
	// then its report may hold less than an uninterrupted run's (the
	// rules not judged, the evidence cut short), and it is not complete.
	// A run cancelled only after it returned is complete; either way the
	// answer is fixed here, once.
	interrupted := true
	func() {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(&log, "adcp-conform: internal error: %v\n%s", p, debug.Stack())
				run, runErr = nil, fmt.Errorf("internal error: %v", p)
			}
		}()
		if prepare != nil {
			if err := prepare(&cfg); err != nil {
				runErr = &ConfigError{Msg: err.Error()}
				return
			}
		}
		run, runErr = Run(ctx, cfg)
		interrupted = ctx.Err() != nil
	}()
	switch {
	case runErr != nil:
		fmt.Fprintf(&log, "adcp-conform run: %s\n", wire.Sanitize(runErr.Error(), 1000))
		e.Verdict, e.ExitCode, e.Error = VerdictMissing, exitHarness, wire.Sanitize(runErr.Error(), 300)
		var ce *ConfigError
		if errors.As(runErr, &ce) {
			e.ExitCode = exitUsage
		}
	default:
		if run.HarnessError != "" {
			fmt.Fprintf(&log, "adcp-conform: harness error: %s\n", run.HarnessError)
		}
		_ = report.WriteText(&log, run, report.TextOptions{Verbose: cfg.Verbose, Dir: dir})
		e = entryOf(e, run)
	}
	if learnt != nil {
		r.live.Add(learnt.List()...)
	}
	if err := os.MkdirAll(dir, 0o755); err == nil {
		b := wire.NewLiveRedactor(secrets, learnt, nil).Bytes(log.Bytes())
		_ = os.WriteFile(filepath.Join(dir, FileRunLog), b, 0o644)
	}
	if runErr == nil && !interrupted && fp != "" {
		if err := writeCompletion(dir, name, fp, cfg.withDefaults().Version); err != nil {
			fmt.Fprintf(r.base.Log, "adcp-conform: %s: %s: %s\n", wire.Sanitize(name, 80), FileTarget, wire.Sanitize(err.Error(), 300))
		}
	}
	return e
}
