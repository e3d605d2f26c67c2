// Package runner runs the judges of package suites as a Ginkgo suite inside
// the adcp-conform process, over an evidence store the probes recorded, and
// builds the report model from Ginkgo's own report.
//
//	sel, err := runner.Select(filter, opts) // validate the label filter first
//	results, err := runner.Judge(store, sel)
//	run := runner.Report(meta, store, sel, results)
//	runner.AddStoryboards(run, sbResults, "")
//	run.Settle() // once, when every part of the run is in
//
// Ginkgo's own console output is discarded: the command prints the report
// model. Ginkgo supports one suite run per process; Judge resets its globals
// before each run, so a process may judge many stores one after another
// (never concurrently).
package runner

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/extensions/globals"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// Selection is a validated choice of judges: the label filter and the
// judge options.
type Selection struct {
	Filter  string
	Options suites.Options
	// Selected are the checks the filter selects, in catalogue order.
	Selected []suites.Check
	// Excluded are the checks the transports cover but the filter leaves
	// out; they are reported as disabled.
	Excluded []suites.Check
}

// FilterError is an invalid label filter, or one that selects no judge.
type FilterError struct{ Msg string }

func (e *FilterError) Error() string { return e.Msg }

// Select validates a Ginkgo label filter (Ginkgo would exit the process on a
// bad one) and computes the judges it selects. A filter that selects no
// judge is an error: a run that judges nothing is a configuration mistake.
func Select(filter string, opts suites.Options) (Selection, error) {
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		return Selection{}, &FilterError{Msg: fmt.Sprintf("--label-filter %q: %v", filter, err)}
	}
	sel := Selection{Filter: filter, Options: opts}
	for _, c := range suites.Checks() {
		if !covers(opts, c) {
			continue
		}
		labels, err := catalogue.Labels(c.ID, c.Transport)
		if err != nil {
			return Selection{}, err // a suite bug, caught by the tests
		}
		if match(labels) {
			sel.Selected = append(sel.Selected, c)
		} else {
			sel.Excluded = append(sel.Excluded, c)
		}
	}
	if len(sel.Selected) == 0 {
		return Selection{}, &FilterError{Msg: fmt.Sprintf("--label-filter %q selects no rule", filter)}
	}
	return sel, nil
}

// covers reports whether the run judges c at all (selected or left out by
// the filter): its transport is the run's and its rule is the command's
// (a fuzz run's rules are only the FUZZ family's, a run's every other).
func covers(opts suites.Options, c suites.Check) bool {
	if catalogue.CommandOf(c.ID) != opts.Command() {
		return false
	}
	t := c.Transport
	if len(opts.Transports) == 0 {
		return t == catalogue.MCP
	}
	for _, x := range opts.Transports {
		if x == t {
			return true
		}
	}
	return false
}

// SelectNone is the selection of a run whose label filter names only
// storyboards: every judge the transports cover is left out (reported
// disabled), none runs.
func SelectNone(filter string, opts suites.Options) Selection {
	sel := Selection{Filter: filter, Options: opts}
	for _, c := range suites.Checks() {
		if covers(opts, c) {
			sel.Excluded = append(sel.Excluded, c)
		}
	}
	return sel
}

// Result is one judge's result: Ginkgo's outcome for the spec and the
// verdict behind it.
type Result struct {
	Check      suites.Check
	Outcome    report.Outcome
	Message    string
	Verdict    suites.Verdict
	DurationMS float64
}

// mu serializes Ginkgo runs: its globals allow one at a time.
var mu sync.Mutex

// t is the GinkgoTestingT of an in-process run.
type t struct{ failed bool }

func (t *t) Fail() { t.failed = true }

// Judge runs the selected judges over store as a Ginkgo suite and returns
// one result per selected judge, in catalogue order.
func Judge(store *evidence.Store, sel Selection) ([]Result, error) {
	if len(sel.Selected) == 0 {
		return nil, nil // SelectNone: the run judges storyboards only
	}
	mu.Lock()
	defer mu.Unlock()
	globals.Reset()
	catalogue.ResetBugs()
	formatter.ColorableStdOut = io.Discard
	gomega.RegisterFailHandler(ginkgo.Fail)

	var (
		vmu      sync.Mutex
		verdicts = map[string]suites.Verdict{}
		specs    types.SpecReports
	)
	suites.Register(store.Probes(), sel.Options, func(v suites.Verdict) {
		vmu.Lock()
		defer vmu.Unlock()
		verdicts[key(v.Rule, v.Transport)] = v
	})
	if bugs := catalogue.Bugs(); len(bugs) > 0 {
		return nil, fmt.Errorf("suite bugs: %w", errors.Join(bugs...))
	}
	ginkgo.ReportAfterSuite("adcp-conform", func(r types.Report) { specs = r.SpecReports })

	suiteCfg, repCfg := ginkgo.GinkgoConfiguration()
	suiteCfg.LabelFilter = sel.Filter
	suiteCfg.RandomSeed = 1
	suiteCfg.FailOnEmpty = true
	suiteCfg.Timeout = time.Hour
	repCfg.NoColor = true
	ginkgo.RunSpecs(&t{}, "AdCP conformance", suiteCfg, repCfg)
	suites.Release()

	byKey := map[string]types.SpecReport{}
	for _, sr := range specs {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		id, _ := catalogue.LabelValue(sr.Labels(), catalogue.LabelRule)
		tr, _ := catalogue.LabelValue(sr.Labels(), catalogue.LabelTransport)
		byKey[key(id, catalogue.Transport(tr))] = sr
	}
	var out []Result
	for _, c := range sel.Selected {
		k := key(c.ID, c.Transport)
		sr, ok := byKey[k]
		res := Result{Check: c, Verdict: verdicts[k]}
		if !ok {
			res.Outcome, res.Message = report.Error, c.ID+": harness error: the spec did not run"
		} else {
			res.Outcome, res.Message = outcome(sr)
			res.DurationMS = float64(sr.RunTime.Microseconds()) / 1000
		}
		out = append(out, res)
	}
	return out, nil
}

func key(id string, t catalogue.Transport) string { return id + "/" + string(t) }

// outcome maps a Ginkgo spec state to a report outcome. A failed spec
// carrying the harness_error entry is an error, never a seller failure.
func outcome(sr types.SpecReport) (report.Outcome, string) {
	msg := sr.Failure.Message
	switch sr.State {
	case types.SpecStatePassed:
		return report.Passed, ""
	case types.SpecStateSkipped:
		return report.Skipped, msg
	case types.SpecStateFailed:
		for _, e := range sr.ReportEntries {
			if e.Name == suites.EntryHarnessError {
				return report.Error, msg
			}
		}
		return report.Failed, msg
	case types.SpecStatePending:
		return report.Disabled, "pending"
	}
	if msg == "" {
		msg = sr.State.String()
	}
	return report.Error, "harness error: " + strings.TrimSpace(msg)
}
