package conform

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/webhook"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
	"github.com/adcp-conform/adcp-conform/suites/runner"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
)

// The run's budget for writing its reports once it must stop.
const (
	// interruptWriteTime is how long after an interruption the evidence is
	// still written: probing and judging stop at once and the other
	// reports come first (each bounded, and small), and what is left of
	// the 2 s the README promises goes to sealing results.json and the
	// terminal's summary (it took 0.1 s after 150 calls of 1 MB replies).
	interruptWriteTime = 1500 * time.Millisecond
	// minEvidenceWrite is how long the evidence is written at least,
	// however late its turn comes (see interruptWriteTime,
	// deadlineWriteTime).
	minEvidenceWrite = 500 * time.Millisecond
	// deadlineWriteTime is how long past the deadline the evidence is
	// still written (judging stops before the deadline; the run ends
	// within it plus 5 s).
	deadlineWriteTime = 2 * time.Second
)

// Run runs conformance once against the seller cfg names: it probes the
// seller, runs the compliance storyboards of the release it grades it on,
// judges every selected rule over the evidence, and returns the report —
// written into cfg.Out too when it is set (WriteReports).
//
// The error is a *ConfigError for a configuration refused before any
// probe (a Storyboards folder whose storyboards do not load: once they
// have, beside the seller's discovery, before it is used), another error
// when the harness could not run (a token endpoint
// refusing the run's client, a report that could not be written). A seller
// that breaks rules, or that cannot be reached, is no error: the report
// says so (report.Run.Verdict, report.Run.ExitCode, report.Run.HarnessError).
//
// Cancelling ctx interrupts the run: probing and judging stop, the rules
// not judged are harness errors, and the reports are still written (within
// about 2 s). The report says why: context.Cause(ctx)'s text ("interrupted
// by SIGINT", given to a context.WithCancelCause's cancel).
func Run(ctx context.Context, cfg Config) (*report.Run, error) {
	// Deadline counts from here: loading the storyboards and compiling the
	// schemas are part of the run (a second or more on a busy machine).
	started := time.Now()
	s, err := open(cfg, started)
	if err != nil {
		return nil, err
	}
	defer s.close()
	p, err := s.probe(ctx)
	if err != nil {
		return nil, err
	}
	return s.judge(p)
}

// session is one run, its configuration checked and its material loaded.
type session struct {
	cfg     Config // with its defaults
	started time.Time
	pc      plan.Config
	sel     runner.Selection
	rp      *material.Plan
	rec     *webhook.Receiver
	// reserve is the part of the deadline kept for judging and writing.
	reserve time.Duration
	// intr watches the run's context from the first probe on.
	intr *interruption
}

// open checks cfg and prepares its run: its first OAuth token, its report
// folder, its webhook receiver, its rule selection and release material.
// What it loads it says on cfg.Log.
func open(cfg Config, started time.Time) (*session, error) {
	c := cfg.withDefaults()
	if err := c.check(); err != nil {
		return nil, err
	}
	s := &session{cfg: c, started: started, pc: c.probeConfig()}
	// One guard for every connection of the run, its further agents' too.
	s.pc = s.pc.WithGuard(agentURLs(c.Agents)...)
	if c.OAuth != nil {
		if err := c.OAuth.apply(c, &s.pc); err != nil { // the first token
			return nil, err
		}
	}
	// The other agents' credentials are the run's secrets too: every
	// client, the evidence store and every output redact them
	// (plan.Config.Secrets), the terminal from here on — an OAuth client's
	// tokens too, as it obtains them.
	s.pc.MCP.Limits.Secrets = append(slices.Clip(s.pc.MCP.Limits.Secrets), agentSecrets(c.Agents)...)
	s.pc.A2A.Limits.Secrets = append(slices.Clip(s.pc.A2A.Limits.Secrets), agentSecrets(c.Agents)...)
	if c.Redact != nil {
		c.Redact(s.pc.Secrets(), s.pc.MCP.Limits.LiveSecrets)
	}
	if c.Out != "" {
		if err := WritableOut(c.Out); err != nil { // before a single probe
			return nil, err
		}
	}
	if err := s.material(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// material starts the webhook receiver and selects the rules, the
// release, its storyboards and its schemas: what the configuration
// decides now; without a release named the seller's capabilities decide,
// after the probes.
func (s *session) material() error {
	c := s.cfg
	if c.WebhookURL != "" || loopbackTargets(s.pc) {
		rec, err := webhook.Listen(c.WebhookListen, c.WebhookURL)
		if err != nil {
			return configf("--webhook-listen %s: %v", c.WebhookListen, err)
		}
		s.rec = rec
		s.pc.Webhook, s.pc.WebhookWait = rec, c.WebhookWait
	}
	opts := suites.Options{Strict: c.Strict, AllowedDomains: c.AllowedDomains, Transports: c.transports()}
	sel, err := runner.Select(c.LabelFilter, opts)
	var fe *runner.FilterError
	if err != nil && !errors.As(err, &fe) {
		return err
	}
	if fe != nil {
		sel = runner.SelectNone(c.LabelFilter, opts) // unless the filter names no storyboard either (material.NewPlan)
	}
	s.rp, err = material.NewPlan(material.Inputs{Release: c.Release, Mirror: c.ReleaseMirror, Storyboards: c.Storyboards, Schemas: c.Schemas,
		IDs: c.StoryboardIDs, Filter: c.LabelFilter, Agents: c.Agents, Loaded: c.shared, LoadedSchemas: c.sharedSchemas}, &sel, fe, c.Log)
	if err != nil {
		return configErr(err)
	}
	s.sel = sel
	fmt.Fprint(c.Log, c.ledgerNotice)
	return nil
}

func (s *session) close() {
	if s.intr != nil {
		s.intr.stop()
	}
	if s.rec != nil {
		s.rec.Close()
	}
}

// transports are the transports the run judges: those given a target.
func (c Config) transports() []catalogue.Transport {
	var ts []catalogue.Transport
	if c.MCP != "" {
		ts = append(ts, catalogue.MCP)
	}
	if c.A2A != "" {
		ts = append(ts, catalogue.A2A)
	}
	return ts
}

// probed is what the probe phase leaves: the evidence, the storyboards'
// results, and why probing stopped short.
type probed struct {
	store *evidence.Store
	// perr is why the seller could not be probed at all.
	perr error
	// deadline is set when the probes ran out of the run's time.
	deadline bool
	sb       []storyboard.StoryboardResult
	// paused is how long the release the seller chose took to fetch: not
	// counted against the deadline.
	paused time.Duration
	// storyboards waits for the storyboards, which may still run when
	// the rule probes are done, and settles deadline and interrupted;
	// once they are done, sb and the store are complete.
	storyboards func()
	// interrupted is what interrupted the probing ("" when nothing did
	// before the last of the probes and storyboards was done).
	interrupted string
}

// ending is when a part of the probing ended, and what had interrupted
// the run by then.
type ending struct {
	at  time.Time
	why string
}

// probe runs the probe phase: discovery, the seller's choice of release
// when it makes it, the storyboards that must run alone
// (storyboard.ShapesNextCall), then the other storyboards beside the rest
// of the probes — the seller is kept busy by both, the probes' waits
// (webhooks that must not come, tasks being polled) overlap the
// storyboards' calls — and last the rate-limit burst, alone
// (plan.Config.ProbesDone). In flight at once: at most --parallel
// storyboards, each one call at a time, beside the probes' own bound. The
// deadline bounds it: the probes stop early enough to leave a fifth of it
// (at most 30 s) for judging and writing the reports. Fetching the release
// the seller chose, after discovery, is not counted against the
// storyboards (a fetch before the probes never was).
func (s *session) probe(ctx context.Context) (*probed, error) {
	c := s.cfg
	s.intr = watch(ctx)
	s.reserve = min(c.Deadline/5, 30*time.Second)
	probeEnd := s.started.Add(c.Deadline - s.reserve)
	pctx, cancel := context.WithDeadline(ctx, probeEnd)
	fmt.Fprintf(c.Log, "adcp-conform: probing %s\n", wire.Sanitize(strings.TrimSpace(s.pc.MCP.Endpoint+" "+s.pc.A2A.BaseURL), 400))
	if c.Verbose {
		s.pc.OnCall = verbosePrinter(c.Log)
	}
	s.pc.DiscoveryOnly = len(s.sel.Selected) == 0 // storyboards only: no rule reads the other probes
	p := &probed{}
	var (
		sbCtx     = pctx
		cancelSB  = cancel
		sbDone    = make(chan struct{})
		started   bool
		chooseErr error
		sbEnd     ending
	)
	pc := s.pc
	pc.Discovered = func(store *evidence.Store, perr error) {
		if chooseErr = s.rp.Ready(); chooseErr != nil {
			cancel() // the run stops: its storyboards do not load
			return
		}
		if s.rp.Deferred {
			if perr != nil || pctx.Err() != nil {
				s.rp.Unchosen(&s.sel)
			} else {
				at := time.Now()
				if chooseErr = s.rp.Choose(ctx, store, s.pc, &s.sel, c.Log); chooseErr != nil {
					cancel() // the run stops: its release cannot be had
					return
				}
				p.paused = time.Since(at)
				sbCtx, cancelSB = context.WithDeadline(ctx, probeEnd.Add(p.paused))
			}
		}
		if perr != nil || pctx.Err() != nil {
			return
		}
		started = true
		alone := make(chan struct{})
		go func() {
			defer close(sbDone)
			p.sb = runStoryboards(sbCtx, s.rp.Storyboards, s.pc, store, s.sel.Options.Schemas, func() { close(alone) })
			sbEnd = ending{time.Now(), s.intr.why()}
		}()
		<-alone // no probe lands between a controller arm and its next call
	}
	pc.ProbesDone = func() {
		if started && pc.RateBurst > 0 {
			<-sbDone // the burst overlaps no storyboard
		}
	}
	p.store, p.perr = plan.Execute(pctx, pc)
	if err := s.rp.Ready(); err != nil { // Discovered was not called
		chooseErr = err
	}
	end := ending{time.Now(), s.intr.why()}
	p.storyboards = sync.OnceFunc(func() {
		if started {
			<-sbDone
			if sbEnd.at.After(end.at) {
				end = sbEnd
			}
		}
		p.interrupted = end.why
		p.deadline = errors.Is(sbCtx.Err(), context.DeadlineExceeded) || errors.Is(pctx.Err(), context.DeadlineExceeded)
		cancelSB()
		cancel()
	})
	if chooseErr != nil {
		p.storyboards()
		return nil, configErr(chooseErr)
	}
	return p, nil
}

// judge judges the evidence, builds the report and writes it. The rules
// are judged as soon as their probes are done (they read no storyboard's
// call, evidence.Store.Probes): the storyboards may still run, and the
// end of a run is often one of them making its last calls one by one
// while the harness would otherwise idle.
func (s *session) judge(p *probed) (*report.Run, error) {
	defer p.storyboards()
	c, intr := s.cfg, s.intr
	deadlineHit := fmt.Sprintf("the run deadline (%s) was hit", c.Deadline)
	deadline := s.started.Add(c.Deadline - s.reserve/2 + p.paused)
	sel := s.sel
	sel.Options.Stop = func() string {
		if why := intr.why(); why != "" {
			return why
		}
		if time.Now().After(deadline) {
			return deadlineHit
		}
		return ""
	}
	// The evidence stops being written 2 s past the deadline, or 1.5 s
	// after an interruption, whatever it holds: Ctrl-C ends a run in 2 s,
	// and a run within its deadline + 5 s. But it always gets
	// minEvidenceWrite: on a loaded machine the reports before it can take
	// the whole budget, and a report that holds none of the calls recorded
	// is no report.
	var writing time.Time
	fin := Finish{Certify: c.Certify, Baseline: c.Baseline, SignKey: c.SignKey}
	fin.Stop = func() string {
		if writing.IsZero() {
			writing = time.Now()
		}
		if time.Since(writing) < minEvidenceWrite {
			return ""
		}
		if d, ok := intr.since(); ok && d > interruptWriteTime {
			return intr.why()
		}
		if time.Now().After(s.started.Add(c.Deadline + deadlineWriteTime)) {
			return deadlineHit
		}
		return ""
	}
	results, err := runner.Judge(p.store, sel)
	if err != nil {
		return nil, err
	}
	p.storyboards()
	diag := runner.Diagnose(p.store)
	meta := s.meta(p, diag, p.interrupted)
	if why := sel.Options.Stop(); meta.HarnessError == "" && why != "" {
		meta.HarnessError = why + " while judging"
	}
	if c.Verbose {
		printProgress(c.Log, results)
	}
	return s.report(p, meta, diag, sel, results, fin)
}

// meta is what the report says of the run besides the verdicts: the
// harness error of the probe phase, when it had one, first (interrupted
// names what interrupted it); it logs the diagnosis' notes.
func (s *session) meta(p *probed, diag runner.Diagnosis, interrupted string) runner.Meta {
	c := s.cfg
	meta := runner.Meta{Tool: "adcp-conform", Version: c.Version, AdcpRelease: AdcpRelease, MCPProtocolVersion: MCPProtocolVersion,
		Target: strings.TrimSpace(s.pc.MCP.Endpoint + " " + s.pc.A2A.BaseURL), StartedAt: s.started, Strict: c.Strict, TargetKind: report.TargetSeller}
	if c.face != nil {
		meta.TargetKind, meta.Face = report.TargetBundledReference, c.face.Name
	}
	switch {
	case interrupted != "":
		meta.HarnessError = interrupted + " while probing"
	case p.deadline:
		meta.HarnessError = fmt.Sprintf("the run deadline (%s) was hit", c.Deadline)
	case diag.WrongTarget() != "":
		// Before perr: "sending initialize: Not Implemented" says less.
		meta.HarnessError = diag.WrongTarget()
	case p.perr != nil:
		// The seller may have put the credential in its error (at
		// initialize, say): redacted before the terminal or a report.
		meta.HarnessError = wire.Sanitize(p.store.Redactor().String(p.perr.Error()), 500)
	case diag.Harness != "":
		meta.HarnessError = diag.Harness
	}
	for _, n := range diag.Notes {
		fmt.Fprintf(c.Log, "adcp-conform: %s\n", n)
	}
	return meta
}

// report builds the run's report from the judges' results and the
// storyboards', and writes it into Out (when set).
func (s *session) report(p *probed, meta runner.Meta, diag runner.Diagnosis, sel runner.Selection, results []runner.Result, fin Finish) (*report.Run, error) {
	c := s.cfg
	meta.Duration = time.Since(s.started)
	run := runner.Report(meta, p.store, sel, results)
	sb := s.rp.Storyboards
	runner.AddStoryboards(run, p.sb, sb.Unavailable)
	run.Sandbox = c.Sandbox // baseline entries may be scoped to sandbox runs
	if sb.Release != nil {
		run.StoryboardsRelease, run.StoryboardIDs = p.release(s), c.StoryboardIDs
	}
	run.Release = s.rp.Release()
	runner.BlameTheTarget(run, diag.Wrong)
	if c.Out == "" {
		fin.settle(run, sel)
		return run, nil
	}
	if err := WriteReports(c.Out, run, p.store, sel, fin); err != nil { // baseline, certification, hashes, signature
		return nil, err
	}
	return run, nil
}

// interruption watches a run's context: why it was cancelled, and when.
type interruption struct {
	ctx  context.Context
	at   atomic.Int64 // Unix nanoseconds; 0 while it runs
	stop func() bool
}

func watch(ctx context.Context) *interruption {
	i := &interruption{ctx: ctx}
	i.stop = context.AfterFunc(ctx, func() { i.at.Store(time.Now().UnixNano()) })
	return i
}

// why is what interrupted the run ("" while it runs): the text of the
// context's cause, "interrupted by SIGINT" say.
func (i *interruption) why() string {
	if i.ctx.Err() == nil {
		return ""
	}
	switch cause := context.Cause(i.ctx); {
	case errors.Is(cause, context.Canceled):
		return "interrupted (context canceled)"
	case errors.Is(cause, context.DeadlineExceeded):
		return "interrupted (the context's deadline passed)"
	default:
		return wire.Sanitize(cause.Error(), 200)
	}
}

// since is how long ago the run was interrupted; false while it runs.
func (i *interruption) since() (time.Duration, bool) {
	at := i.at.Load()
	if at == 0 {
		return 0, false
	}
	return time.Since(time.Unix(0, at)), true
}

// loopbackTargets reports whether every target is on this machine, so a
// receiver on a loopback port is reachable without a webhook URL.
func loopbackTargets(cfg plan.Config) bool {
	for _, u := range []string{cfg.MCP.Endpoint, cfg.A2A.BaseURL} {
		if u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil {
			return false
		}
		if ip := net.ParseIP(p.Hostname()); p.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return false
		}
	}
	return true
}

// release is the release of the storyboards the probe phase ran ("" for
// none): baseline entries may be scoped to it.
func (p *probed) release(s *session) string {
	if sb := s.rp.Storyboards; sb != nil && sb.Release != nil {
		return filepath.Base(filepath.Clean(sb.Release.Dir))
	}
	return ""
}
