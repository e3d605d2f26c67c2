package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// Face is one report of a run that spans several — the bundled reference
// seller's MCP + A2A 1.0 pass and its A2A 0.3 pass: its name, its report
// folder, and its run (nil when the pass wrote no report).
type Face struct {
	Name string
	Dir  string
	Run  *Run
}

// verdictRank orders verdicts from the best to the worst, as their exit
// codes do (a harness error or nothing judged is worse than a failure:
// the run did not test what it was pointed at).
var verdictRank = map[Verdict]int{Conformant: 0, StaleBaseline: 1, NonConformant: 2, Incomplete: 3, HarnessError: 4}

// WriteFacesText writes the terminal summary of a run spanning several
// reports, on one screen: one verdict over every face (exit is the run's
// exit code) with a line per face; the rules and the storyboard steps to
// look at, each once, with the faces it needs a look on; the first face's
// counts as WriteText writes them; each further face condensed to its
// counts and skip reasons; the notes once; and where the reports are. With
// Verbose, each face's own summary follows in full instead, every table
// included.
func WriteFacesText(w io.Writer, faces []Face, opts TextOptions, exit int) error {
	var b strings.Builder
	worst, first := HarnessError, (*Run)(nil)
	for i, f := range faces {
		if f.Run == nil {
			continue
		}
		if first == nil {
			first, worst = f.Run, f.Run.Verdict
		}
		if i > 0 && verdictRank[f.Run.Verdict] > verdictRank[worst] {
			worst = f.Run.Verdict
		}
	}
	if first == nil {
		return nil
	}
	for _, f := range faces {
		if f.Run == nil { // a face with no report was not tested
			worst = HarnessError
		}
	}
	target := "the target"
	if first.Reference() {
		target = "the bundled reference seller"
	}
	fmt.Fprintf(&b, "%s %s — AdCP %s — %s, %d faces\n", first.Tool, first.Version, first.AdcpRelease, target, len(faces))
	verdict := string(worst)
	if first.Reference() {
		verdict += " (" + ReferenceLabel + ")"
	}
	why := "the same on every face"
	for _, f := range faces {
		if f.Run == nil || f.Run.Verdict != worst {
			why = "the worst of its faces"
		}
	}
	fmt.Fprintf(&b, "verdict: %s — %s (exit %d)\n", verdict, why, exit)
	// The release the storyboards and schemas were, once when every face
	// took the same (each face chooses its own).
	if rel := first.Release; rel != nil && sameRelease(faces, rel.Version) {
		v := rel.Version
		if v == "" {
			v = "none"
		}
		fmt.Fprintf(&b, "storyboards and schemas: AdCP %s — %s\n", v, wire.Sanitize(rel.Reason, 4*maxMessage))
	}
	nw := 0
	for _, f := range faces {
		nw = max(nw, len(wire.Sanitize(f.Name, 40)))
	}
	for _, f := range faces {
		if f.Run == nil {
			fmt.Fprintf(&b, "  %-*s  no report: the pass ended before writing one (see its error above)\n", nw, wire.Sanitize(f.Name, 40))
			continue
		}
		fmt.Fprintf(&b, "  %-*s  %s — %s\n", nw, wire.Sanitize(f.Name, 40), f.Run.Verdict, verdictWhy(f.Run))
		if f.Run.HarnessError != "" {
			fmt.Fprintf(&b, "  %-*s  harness error: %s\n", nw, "", wire.Sanitize(f.Run.HarnessError, maxMessage))
		}
	}
	if opts.Verbose {
		for _, f := range faces {
			if f.Run == nil {
				continue
			}
			fmt.Fprintf(&b, "\n=== %s\n", wire.Sanitize(f.Name, 40))
			if err := WriteText(&b, f.Run, TextOptions{Verbose: true, Dir: f.Dir}); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	writeFailures(&b, ruleLines(faces, ""), true)
	var htmls []string
	for _, f := range faces {
		if f.Run != nil {
			htmls = append(htmls, htmlPath(f.Dir))
		}
	}
	writeStoryboardFailures(&b, storyboardLines(faces), htmls...)
	var notes []string
	for _, f := range faces {
		if f.Run == nil {
			continue
		}
		fmt.Fprintf(&b, "\n%s — %s\n", wire.Sanitize(f.Name, 40), wire.Sanitize(f.Run.Target, maxMessage))
		if f.Run == first {
			writeFamilies(&b, f.Run, false)
			writeStoryboards(&b, f.Run)
			writeSkips(&b, f.Run)
		} else {
			writeFaceCounts(&b, f)
		}
		for _, n := range f.Run.Notes {
			notes = appendNew(notes, n)
		}
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "note: %s\n", wire.Sanitize(n, 300))
	}
	var dirs []string
	for _, f := range faces {
		if f.Dir != "" {
			dirs = append(dirs, fmt.Sprintf("%s (%s)", wire.Sanitize(f.Dir, 400), wire.Sanitize(f.Name, 40)))
		}
	}
	if len(dirs) > 0 {
		fmt.Fprintf(&b, "\nreports in %s; -v: every face in full\n", strings.Join(dirs, " and "))
		writeReportFiles(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFaceCounts writes a further face of a run, condensed: its rule
// counts, its storyboards' and their steps', and its skip reasons, one line
// each.
func writeFaceCounts(b *strings.Builder, f Face) {
	r := f.Run
	fmt.Fprintf(b, "  rules: %s (%d rules)\n", countLine(r.Counts, outcomeOrder), len(r.Rules))
	if len(r.Storyboards) > 0 {
		total := Counts{}
		for _, sb := range r.Storyboards {
			total[sb.Outcome]++
		}
		steps, _, _ := storyboardStepTally(r)
		fmt.Fprintf(b, "  storyboards: %s (%d); steps: %s\n", countLine(total, storyboardOrder), len(r.Storyboards), countLine(steps, outcomeOrder))
	}
	if groups := skipGroups(r); len(groups) > 0 {
		var parts []string
		for _, g := range groups {
			parts = append(parts, fmt.Sprintf("%d %s", len(g.ids), g.reason))
		}
		fmt.Fprintf(b, "  skipped: %s\n", termLine(strings.Join(parts, " · "), maxLine))
	}
}

// sameRelease reports whether every face with a report took release v.
func sameRelease(faces []Face, v string) bool {
	for _, f := range faces {
		if f.Run != nil && (f.Run.Release == nil || f.Run.Release.Version != v) {
			return false
		}
	}
	return true
}
