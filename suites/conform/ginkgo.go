package conform

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
	"github.com/adcp-conform/adcp-conform/suites/runner"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Describe declares AdCP conformance into the caller's own Ginkgo suite,
// the way the Kubernetes e2e framework declares its tests into a
// provider's suite: an Ordered container ("AdCP conformance") whose
// BeforeAll runs the probe phase once — the probes, the release the seller
// chooses, the compliance storyboards — and then one spec per rule and
// transport, labelled as the command line labels them (rule:CTX-01,
// transport:mcp, level:must, family:ctx), and one spec per storyboard
// step, labelled storyboard:<id>, category:<group> and kind:<kind>. Select
// among them with the suite's own --label-filter; Ginkgo's reporters see
// them as the caller's specs. A failing spec does not stop the others
// (ContinueOnFailure). Call it at the top level of a test file (var _ =
// conform.Describe(&cfg)).
//
// Ginkgo cannot start a suite inside a running one, so Run cannot be
// called from a Ginkgo suite: Describe is its Ginkgo face.
//
// cfg is read twice. When Describe is called, as Ginkgo builds the tree,
// for the storyboards: a Storyboards folder (or the URL of a bundle) is
// loaded then and each of its steps gets a spec; without one the release
// the seller chooses decides after the probes, and one spec stands for
// every storyboard. And in the BeforeAll, for the rest: the seller's
// endpoints and credentials may be filled in by then (by a BeforeSuite
// that starts the seller, say). LabelFilter and StoryboardIDs choose what
// the probe phase runs; Out, when set, receives the reports once the
// container's specs have run, each rule as its spec judged it (a rule the
// suite's filter left out is reported disabled).
func Describe(cfg *Config) bool {
	sbs, sbErr := declaredStoryboards(*cfg)
	var (
		s *session
		p *probed
		// probes are the probes' calls, which the rules judge (the
		// storyboards' are theirs).
		probes *evidence.Store
		sbr    *report.Run // the storyboards' results, the baseline applied
		// interrupted is what interrupted the probe phase ("" if nothing).
		interrupted string
		mu          sync.Mutex
		vs          = map[string]suites.Verdict{}
	)
	get := func(t catalogue.Transport) (*evidence.Store, suites.Options, string) {
		switch {
		case p == nil:
			return nil, suites.Options{}, "the probe phase did not run"
		case !s.transported(t):
			return nil, suites.Options{}, fmt.Sprintf("no %s target given", strings.ToUpper(string(t)))
		}
		return probes, s.sel.Options, ""
	}
	record := func(v suites.Verdict) {
		mu.Lock()
		defer mu.Unlock()
		vs[string(v.Transport)+"/"+v.Rule] = v
	}
	return ginkgo.Describe("AdCP conformance", ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
		ginkgo.BeforeAll(func(ctx ginkgo.SpecContext) {
			ginkgo.GinkgoHelper()
			if sbErr != nil {
				ginkgo.Fail(sbErr.Error())
			}
			if bugs := catalogue.Bugs(); len(bugs) > 0 { // Describe twice in one suite, say
				ginkgo.Fail(fmt.Sprintf("adcp-conform: suite bugs: %v", errors.Join(bugs...)))
			}
			c := *cfg
			if c.Log == nil {
				c.Log = ginkgo.GinkgoWriter
			}
			if sbs != nil {
				c.shared = sbs.Shared(false)
			}
			var err error
			if s, err = open(c, time.Now()); err != nil {
				ginkgo.Fail(err.Error())
			}
			if p, err = s.probe(ctx); err != nil {
				p = nil
				ginkgo.Fail(err.Error())
			}
			p.storyboards() // the storyboards' specs read their results
			probes = p.store.Probes()
			interrupted = p.interrupted
			s.intr.stop() // the spec context ends with this node
			sbr = &report.Run{StoryboardsRelease: p.release(s), Sandbox: c.Sandbox}
			runner.AddStoryboards(sbr, p.sb, s.rp.Storyboards.Unavailable)
			Finish{Baseline: c.Baseline}.settle(sbr, s.sel)
			if why := s.meta(p, runner.Diagnose(p.store), interrupted).HarnessError; why != "" {
				ginkgo.Fail("adcp-conform: harness error: " + why)
			}
		})
		ginkgo.AfterAll(func() {
			defer suites.Release()
			if s == nil {
				return
			}
			defer s.close()
			if p == nil || s.cfg.Out == "" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if _, err := s.reportVerdicts(p, vs, interrupted); err != nil {
				ginkgo.Fail("adcp-conform: writing the reports: " + err.Error())
			}
		})
		suites.RegisterLazy([]catalogue.Transport{catalogue.MCP, catalogue.A2A}, get, record)
		describeStoryboards(sbs, func() *report.Run { return sbr })
	})
}

// transported reports whether the run gave the transport t a target.
func (s *session) transported(t catalogue.Transport) bool {
	return (t == catalogue.MCP && s.cfg.MCP != "") || (t == catalogue.A2A && s.cfg.A2A != "")
}

// declaredStoryboards are the storyboards cfg names before any probe: a
// folder's, or a bundle's; nil when the seller's release decides.
func declaredStoryboards(cfg Config) (*material.Storyboards, error) {
	if cfg.Storyboards == "" || cfg.Storyboards == material.Off {
		return nil, nil
	}
	sb, err := material.LoadStoryboards(cfg.Storyboards)
	if err != nil {
		return nil, configErr(err)
	}
	if sb.Release == nil {
		return nil, nil // unavailable: the probe phase says why
	}
	return sb, nil
}

// describeStoryboards declares a spec per step of each storyboard of sbs,
// or, when the release is yet to be chosen, one spec for them all; each
// reads the results of the probe phase (results) when it runs.
func describeStoryboards(sbs *material.Storyboards, results func() *report.Run) {
	if sbs == nil {
		ginkgo.It("runs the compliance storyboards of the release it grades the seller on", func() {
			run := results()
			switch {
			case run == nil:
				ginkgo.Skip("the probe phase did not run")
			case len(run.Storyboards) == 0:
				ginkgo.Skip(strings.Join(append([]string{"no storyboards"}, run.Notes...), "; "))
			}
			if lines := failures(run); lines != "" {
				ginkgo.Fail("the storyboards of release " + run.StoryboardsRelease + " fail:\n" + lines)
			}
		})
		return
	}
	ginkgo.Describe("storyboards", func() {
		for _, sb := range sbs.Release.Storyboards {
			ginkgo.Describe(sb.ID, ginkgo.Label(material.StoryboardLabels(sb)...), func() {
				for _, ph := range sb.Phases {
					for _, st := range ph.Steps {
						ginkgo.It(ph.ID+"/"+st.ID+": "+st.Title, func() { stepOutcome(results(), sb, ph.ID, st.ID) })
					}
				}
			})
		}
	})
}

// stepOutcome settles a storyboard step's spec from the probe phase's
// results.
func stepOutcome(run *report.Run, sb *spec.Storyboard, phase, step string) {
	ginkgo.GinkgoHelper()
	if run == nil {
		ginkgo.Skip("the probe phase did not run")
	}
	var res *report.StoryboardResult
	for i := range run.Storyboards {
		if run.Storyboards[i].ID == sb.ID {
			res = &run.Storyboards[i]
		}
	}
	switch {
	case res == nil:
		ginkgo.Skip("the storyboard was not run")
	case res.NotSelected != nil:
		ginkgo.Skip("not selected: " + res.NotSelected.Reason)
	case res.Skip != nil:
		ginkgo.Skip(strings.TrimSpace(res.Skip.Reason + ": " + res.Skip.Detail))
	}
	for _, st := range run.StoryboardSteps(sb.ID) {
		if st.PhaseID != phase || st.StepID != step {
			continue
		}
		if o := st.Outcome(); o == report.Failed || o == report.Error {
			if m := res.StepMark(phase, step); m != nil && m.Status == report.ExpectedFailure {
				ginkgo.Skip("an expected failure (the baseline): " + m.Reason)
			}
			if b := res.Baseline; b != nil && len(b.Steps) == 0 && b.Status == report.ExpectedFailure {
				ginkgo.Skip("an expected failure (the baseline): " + b.Reason)
			}
		}
		switch st.Outcome() {
		case report.Passed:
			return
		case report.Skipped:
			ginkgo.Skip(strings.TrimSpace(st.Skip.Reason + ": " + st.Skip.Detail))
		case report.Error:
			ginkgo.Fail(sb.ID + "/" + phase + "/" + step + ": harness error: " + wire.Sanitize(st.Error, 500))
		}
		v := st.FirstFailure()
		why := wire.Sanitize(st.Error, 500)
		if v != nil {
			why = wire.Sanitize(v.Check+": "+v.Message, 500)
		}
		ginkgo.Fail(sb.ID + "/" + phase + "/" + step + ": " + why)
	}
	ginkgo.Skip("the step did not run (a branch not taken, or the storyboard stopped before it)")
}

// reportVerdicts builds the report of a caller's suite from the verdicts
// its specs reached and writes it into Out.
func (s *session) reportVerdicts(p *probed, vs map[string]suites.Verdict, interrupted string) (*report.Run, error) {
	sel := s.sel
	sel.Selected, sel.Excluded = nil, append([]suites.Check(nil), s.sel.Excluded...)
	var results []runner.Result
	for _, c := range s.sel.Selected {
		v, ok := vs[string(c.Transport)+"/"+c.ID]
		if !ok { // the suite's filter left it out
			sel.Excluded = append(sel.Excluded, c)
			continue
		}
		sel.Selected = append(sel.Selected, c)
		results = append(results, runner.Result{Check: c, Outcome: outcomeOf(v), Message: v.Message, Verdict: v})
	}
	diag := runner.Diagnose(p.store)
	return s.report(p, s.meta(p, diag, interrupted), diag, sel, results, Finish{Certify: s.cfg.Certify, Baseline: s.cfg.Baseline, SignKey: s.cfg.SignKey})
}

// outcomeOf is a verdict's outcome as the report records a spec's.
func outcomeOf(v suites.Verdict) report.Outcome {
	switch v.Outcome {
	case suites.Pass:
		return report.Passed
	case suites.Fail:
		return report.Failed
	case suites.Skip:
		return report.Skipped
	}
	return report.Error
}
