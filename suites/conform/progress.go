package conform

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

// familyProgress prints one line per rule family as its judges' results
// come in, in catalogue order: a family's line is printed when the first
// result of another family arrives, or on Flush.
//
//	p := newFamilyProgress(stdio.Err)
//	for _, res := range results { p.Add(res) }
//	p.Flush()
type familyProgress struct {
	w      io.Writer
	family string
	counts map[report.Outcome]int
	specs  int
}

func newFamilyProgress(w io.Writer) *familyProgress { return &familyProgress{w: w} }

// Add records one judge's result, printing the previous family's line when
// res starts a new family.
func (p *familyProgress) Add(res runner.Result) {
	fam := familyOf(res.Check.ID)
	if fam != p.family {
		p.Flush()
		p.family, p.counts, p.specs = fam, map[report.Outcome]int{}, 0
	}
	p.counts[res.Outcome]++
	p.specs++
}

// Flush prints the current family's line, if any.
func (p *familyProgress) Flush() {
	if p.specs == 0 {
		return
	}
	var parts []string
	for _, o := range []report.Outcome{report.Passed, report.Failed, report.Skipped, report.Error, report.Disabled} {
		if n := p.counts[o]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, o))
		}
	}
	mark := "ok"
	switch {
	case p.counts[report.Failed] > 0:
		mark = "FAIL"
	case p.counts[report.Error] > 0:
		mark = "ERROR"
	}
	title := catalogue.FamilyTitle(p.family)
	if title != "" {
		title = " " + title
	}
	fmt.Fprintf(p.w, "  %-5s %-8s%s: %s\n", mark, wire.Sanitize(p.family, 20), wire.Sanitize(title, 60), strings.Join(parts, ", "))
	p.specs = 0
}

// printProgress prints one progress line per rule family over the judges'
// results (in catalogue order, as runner.Judge returns them): the family,
// its title, and how many of its judges passed, failed, were skipped,
// errored or were disabled. Run calls it once judging is done (Config.Verbose),
// before the reports are written.
func printProgress(w io.Writer, results []runner.Result) {
	p := newFamilyProgress(w)
	for _, res := range results {
		p.Add(res)
	}
	p.Flush()
}

// familyOf returns the family of a rule ID: the catalogue's, or the ID's
// prefix before the dash.
func familyOf(id string) string {
	if r, ok := catalogue.Lookup(id); ok && r.Family != "" {
		return r.Family
	}
	fam, _, _ := strings.Cut(id, "-")
	return fam
}

// verbosePrinter prints one line per recorded call and its exchanges,
// terminal-safe.
func verbosePrinter(w io.Writer) func(evidence.Call) {
	var mu sync.Mutex
	return func(c evidence.Call) {
		mu.Lock()
		defer mu.Unlock()
		state := fmt.Sprintf("HTTP %d", c.HTTPStatus)
		switch {
		case c.NotRun != "":
			state = "not run: " + c.NotRun
		case c.HarnessError != "":
			state = "harness error: " + c.HarnessError
		}
		fmt.Fprintf(w, "  %-48s %s (%.1f ms)\n", wire.Sanitize(c.ProbeID, 80), wire.Sanitize(state, 200), c.DurationMS)
		for _, x := range c.Exchanges {
			fmt.Fprintf(w, "      %s\n", wire.Sanitize(x.String(), 400))
		}
	}
}
