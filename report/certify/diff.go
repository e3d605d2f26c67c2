package certify

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
)

// Change is one rule's outcome in two runs, or one storyboard's (Rule is
// then "storyboard:<id>"). Old is "" for a new rule and New is "" for a
// removed one.
type Change struct {
	Rule    string
	Old     report.Outcome
	New     report.Outcome
	Message string // the new run's message (the old one's for a removed rule)
}

// RunDiff compares two runs rule by rule.
type RunDiff struct {
	// Regressions are rules that did not fail before and fail now, new
	// rules that fail included.
	Regressions []Change
	// Fixes are rules that failed before and pass now.
	Fixes []Change
	// UnchangedFailures are rules that failed in both runs.
	UnchangedFailures []Change
	// Other are the remaining changes of outcome (a failure now skipped, a
	// pass now an error, …).
	Other []Change
	// Added and Removed are rules only the new or only the old run has.
	Added, Removed []Change
}

// item is a rule or a storyboard as the diff compares them.
type item struct {
	ID      string
	Outcome report.Outcome
	Message string
}

// items are the run's rules, then its storyboards as "storyboard:<id>",
// each with its message (a storyboard's: its skip, its error or its first
// failing step).
func items(r *report.Run) []item {
	var out []item
	for _, rule := range r.Rules {
		out = append(out, item{rule.ID, rule.Outcome, rule.Message})
	}
	for _, sb := range r.Storyboards {
		it := item{ID: sb.BaselineKey(), Outcome: sb.Outcome, Message: sb.Error}
		if sb.Skip != nil {
			it.Message = sb.Skip.Reason + ": " + sb.Skip.Detail
		}
		for _, st := range r.StoryboardSteps(sb.ID) {
			if it.Message == "" && st.Outcome() == report.Failed {
				it.Message = st.PhaseID + "/" + st.StepID + ": " + st.FailureSummary()
			}
		}
		out = append(out, it)
	}
	return out
}

// Diff compares the rules and storyboards of two runs. A baseline mark is
// ignored: an expected failure is still a failure here.
func Diff(old, cur *report.Run) RunDiff {
	var d RunDiff
	before := map[string]item{}
	for _, r := range items(old) {
		before[r.ID] = r
	}
	now := map[string]bool{}
	for _, r := range items(cur) {
		now[r.ID] = true
		o, had := before[r.ID]
		c := Change{Rule: r.ID, Old: o.Outcome, New: r.Outcome, Message: r.Message}
		if !had {
			d.Added = append(d.Added, c)
			if r.Outcome == report.Failed {
				d.Regressions = append(d.Regressions, c)
			}
			continue
		}
		switch {
		case r.Outcome == report.Failed && o.Outcome == report.Failed:
			d.UnchangedFailures = append(d.UnchangedFailures, c)
		case r.Outcome == report.Failed:
			d.Regressions = append(d.Regressions, c)
		case o.Outcome == report.Failed && r.Outcome == report.Passed:
			d.Fixes = append(d.Fixes, c)
		case o.Outcome != r.Outcome:
			d.Other = append(d.Other, c)
		}
	}
	for _, r := range items(old) {
		if !now[r.ID] {
			d.Removed = append(d.Removed, Change{Rule: r.ID, Old: r.Outcome, Message: r.Message})
		}
	}
	for _, l := range [][]Change{d.Regressions, d.Fixes, d.UnchangedFailures, d.Other, d.Added, d.Removed} {
		sort.Slice(l, func(i, j int) bool { return l[i].Rule < l[j].Rule })
	}
	return d
}

// Regressed reports whether the new run has a failure the old one did not.
func (d RunDiff) Regressed() bool { return len(d.Regressions) > 0 }

// maxDiffMessage bounds a seller-influenced message on a diff line.
const maxDiffMessage = 160

// WriteDiff writes the diff as text: one section per kind of change, one
// line per rule, then a summary line. Seller strings are sanitized.
func WriteDiff(w io.Writer, old, cur *report.Run, d RunDiff) error {
	var b strings.Builder
	fmt.Fprintf(&b, "old: %s %s, %s, started %s\n", wire.Sanitize(old.Tool, 40), wire.Sanitize(old.Version, 40),
		wire.Sanitize(string(old.Verdict), 40), old.StartedAt.UTC().Format("2006-01-02T15:04:05Z"))
	fmt.Fprintf(&b, "new: %s %s, %s, started %s\n", wire.Sanitize(cur.Tool, 40), wire.Sanitize(cur.Version, 40),
		wire.Sanitize(string(cur.Verdict), 40), cur.StartedAt.UTC().Format("2006-01-02T15:04:05Z"))
	if old.Target != cur.Target {
		fmt.Fprintf(&b, "note: the targets differ: %s, %s\n", wire.Sanitize(old.Target, 200), wire.Sanitize(cur.Target, 200))
	}
	section := func(title string, l []Change) {
		fmt.Fprintf(&b, "\n%s (%d)\n", title, len(l))
		for _, c := range l {
			from, to := string(c.Old), string(c.New)
			if from == "" {
				from = "(new)"
			}
			if to == "" {
				to = "(removed)"
			}
			line := fmt.Sprintf("  %-9s %-8s -> %-9s %s", wire.Sanitize(c.Rule, 80), from, to, wire.Sanitize(c.Message, maxDiffMessage))
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	section("regressions", d.Regressions)
	section("fixes", d.Fixes)
	section("unchanged failures", d.UnchangedFailures)
	section("other changes", d.Other)
	section("new rules", d.Added)
	section("removed rules", d.Removed)
	fmt.Fprintf(&b, "\n%d regressions, %d fixes, %d unchanged failures, %d other changes, %d new rules, %d removed rules\n",
		len(d.Regressions), len(d.Fixes), len(d.UnchangedFailures), len(d.Other), len(d.Added), len(d.Removed))
	_, err := io.WriteString(w, b.String())
	return err
}
