package report

import (
	"fmt"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// maxStoryboardLines bounds the failing storyboard steps the terminal
// summary lists, and maxCategoryLines the categories, so the summary stays
// one screen.
const (
	maxStoryboardLines = 8
	maxCategoryLines   = 12
)

// storyboardOrder is the order storyboard outcomes are counted in.
var storyboardOrder = []Outcome{Passed, Failed, Skipped, Error, Disabled}

// sbCategory is one storyboard category: its storyboards in the runner's
// order and their count per outcome.
type sbCategory struct {
	Name        string
	Storyboards []StoryboardResult
	Counts      Counts
}

// Of returns the count for the outcome named o (for templates).
func (c sbCategory) Of(o string) int { return c.Counts[Outcome(o)] }

// storyboardCategories groups the run's storyboards by category, in the
// order categories first appear.
func storyboardCategories(r *Run) []sbCategory {
	var out []sbCategory
	index := map[string]int{}
	for _, sb := range r.Storyboards {
		i, ok := index[sb.Category]
		if !ok {
			i = len(out)
			index[sb.Category] = i
			out = append(out, sbCategory{Name: sb.Category, Counts: Counts{}})
		}
		out[i].Storyboards = append(out[i].Storyboards, sb)
		out[i].Counts[sb.Outcome]++
	}
	return out
}

// countLine writes counts as "1 passed · 2 failed", leaving out zeros.
func countLine(c Counts, order []Outcome) string {
	var parts []string
	for _, o := range order {
		if n := c[o]; n > 0 {
			label := string(o)
			if o == Disabled {
				label = "not selected"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, label))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " · ")
}

// storyboardSteps are the steps of the run's storyboards, in order (the
// steps of the rules' probes left out).
func (r *Run) storyboardSteps() []Step {
	ids := map[string]bool{}
	for _, sb := range r.Storyboards {
		ids[sb.ID] = true
	}
	var out []Step
	for _, st := range r.Steps {
		if ids[st.StoryboardID] {
			out = append(out, st)
		}
	}
	return out
}

// storyboardStepTally counts the storyboards' steps per outcome, the
// failed advisory validations and those graded not applicable.
func storyboardStepTally(r *Run) (steps Counts, advisory, notApplicable int) {
	steps = Counts{}
	for _, st := range r.storyboardSteps() {
		steps[st.Outcome()]++
		for _, v := range st.Validations {
			if !v.Passed && v.Severity == Advisory {
				advisory++
			}
			if v.NotApplicable {
				notApplicable++
			}
		}
	}
	return steps, advisory, notApplicable
}

// sbAttention is one storyboard step (or a storyboard's baseline entry)
// to look at.
type sbAttention struct {
	Label      string // FAILED, ERROR, EXPECTED, STALE
	Storyboard string
	Where      string // phase/step, "" for the storyboard as a whole
	What       string
	// Faces name the faces the step needs a look on: the transport its
	// storyboard ran over ("MCP"), as the run's Face names it ("A2A 0.3").
	Faces []string
	// split is set once What names each face's message apart.
	split bool
}

// FaceList is the faces on one line (for the template).
func (a sbAttention) FaceList() string { return strings.Join(a.Faces, ", ") }

// storyboardAttention lists what needs a look, what fails the run first:
// failed steps, harness errors (of steps, or of storyboards that ran
// none), stale baseline entries, expected failures (each with the
// baseline's reason; a step listed step by step once, even when it only
// fails an advisory check); each with the face it ran on.
func storyboardAttention(r *Run) []sbAttention {
	var failed, errs, stale, expected []sbAttention
	face := storyboardFace(r)
	for _, sb := range r.Storyboards {
		if sb.Skip != nil || sb.NotSelected != nil {
			// Skipped whole: no step of its own (a release's domains/
			// mirror shares its id, and so its steps, with the copy that
			// ran), and no mark but unjudged.
			continue
		}
		mark := sb.Baseline
		whole := mark != nil && len(mark.Steps) == 0
		if whole && mark.Status == Stale {
			stale = append(stale, sbAttention{Label: "STALE", Storyboard: sb.ID, What: "passes now: remove " + sb.BaselineKey() + " from the baseline", Faces: []string{face}})
		}
		if mark != nil {
			for _, sm := range mark.Steps {
				switch sm.Status {
				case Stale:
					stale = append(stale, sbAttention{Label: "STALE", Storyboard: sb.ID, Where: sm.Step, Faces: []string{face},
						What: "passes now: remove its entry (" + sb.BaselineKey() + ", step " + sm.Step + ") from the baseline"})
				case ExpectedFailure:
					expected = append(expected, sbAttention{Label: "EXPECTED", Storyboard: sb.ID, Where: sm.Step, What: sm.Reason, Faces: []string{face}})
				}
			}
		}
		steps := r.StoryboardSteps(sb.ID)
		if len(steps) == 0 && sb.Outcome == Error {
			errs = append(errs, sbAttention{Label: "ERROR", Storyboard: sb.ID, What: sb.Error, Faces: []string{face}})
		}
		for _, st := range steps {
			if st.Optional && sb.Outcome != Failed && sb.Outcome != Error {
				continue // an optional phase's failure fails nothing on its own
			}
			a := sbAttention{Storyboard: sb.ID, Where: st.PhaseID + "/" + st.StepID, Faces: []string{stepFace(r, st, face)}}
			sm := sb.StepMark(st.PhaseID, st.StepID)
			switch st.Outcome() {
			case Failed:
				switch {
				case whole && mark.Status == ExpectedFailure:
					a.Label, a.What = "EXPECTED", mark.Reason
					expected = append(expected, a)
				case sm != nil && sm.Status == ExpectedFailure: // listed above
				default:
					a.Label, a.What = "FAILED", failureLine(st)
					if sm != nil && sm.Status == Unexpected {
						a.What += " (the baseline expects " + strings.Join(sm.Checks, ",") + ", not " + strings.Join(sm.Failed, ",") + ")"
					}
					failed = append(failed, a)
				}
			case Error:
				a.Label, a.What = "ERROR", st.Error
				errs = append(errs, a)
			}
		}
	}
	return append(append(append(failed, errs...), stale...), expected...)
}

// storyboardLines merges the storyboard steps to look at across faces:
// one line per storyboard step, naming every face it needs a look on. A
// step that says different things on two faces keeps each face's
// message, face by face.
func storyboardLines(faces []Face) []sbAttention {
	var out []sbAttention
	index := map[[3]string]int{}
	for _, f := range faces {
		if f.Run == nil {
			continue
		}
		for _, a := range storyboardAttention(f.Run) {
			k := [3]string{a.Label, a.Storyboard, a.Where}
			i, ok := index[k]
			if !ok {
				index[k] = len(out)
				out = append(out, a)
				continue
			}
			m := &out[i]
			if a.What != m.What && (!m.split || !strings.HasSuffix(m.What, ": "+a.What)) {
				if !m.split {
					m.What, m.split = m.FaceList()+": "+m.What, true
				}
				m.What += " · " + a.FaceList() + ": " + a.What
			}
			m.Faces = appendNew(m.Faces, a.Faces...)
		}
	}
	return out
}

// storyboardFace names the face a run's storyboards ran over: the
// transport of their calls (the engine takes MCP when the run has an MCP
// target), as the run's Face names it.
func storyboardFace(r *Run) string {
	for _, st := range r.Steps {
		if st.StoryboardID == StoryboardID {
			continue
		}
		if ts := stepTransports(st); len(ts) > 0 {
			return faceName(r, ts[0])
		}
	}
	if r.Tested("mcp") {
		return faceName(r, "mcp")
	}
	return faceName(r, "a2a")
}

// stepFace names the face one storyboard step was sent over, or def when
// its record names no MCP or A2A transport (a document fetched over plain
// HTTP).
func stepFace(r *Run, st Step, def string) string {
	if ts := stepTransports(st); len(ts) > 0 {
		return faceName(r, ts[0])
	}
	return def
}

// stepTransports are the MCP or A2A transports a step's request and
// response name.
func stepTransports(st Step) []string {
	var out []string
	for _, t := range []string{requestTransport(st), responseTransport(st)} {
		if t == "mcp" || t == "a2a" {
			out = append(out, t)
		}
	}
	return out
}

func requestTransport(st Step) string {
	if st.Request == nil {
		return ""
	}
	return st.Request.Transport
}

func responseTransport(st Step) string {
	if st.Response == nil {
		return ""
	}
	return st.Response.Transport
}

// faceName names a transport as the run's Face does ("a2a" is "A2A 0.3"
// in a report whose Face is "A2A 0.3"), else upper-cased ("MCP").
func faceName(r *Run, transport string) string {
	up := strings.ToUpper(wire.Sanitize(transport, 20))
	for _, part := range strings.Split(r.Face, " + ") {
		if part == up || strings.HasPrefix(part, up+" ") {
			return wire.Sanitize(part, 40)
		}
	}
	return up
}

// writeStoryboardFailures lists the storyboard steps that need a look with
// the faces they need it on and their first failed validation, capped,
// then where the details are (each face's report.html); then the expected
// failures with the baseline's reason, one line each.
func writeStoryboardFailures(b *strings.Builder, all []sbAttention, htmls ...string) {
	if len(all) == 0 {
		return
	}
	var anchors []string
	for _, h := range htmls {
		anchors = append(anchors, h+"#storyboards")
	}
	html := strings.Join(anchors, " · ")
	where := func(a sbAttention) string {
		w := a.Storyboard
		if a.Where != "" {
			w += "/" + a.Where
		}
		return "[" + a.FaceList() + "] " + w
	}
	// Merged across faces, an expected failure of one face may come before
	// another face's failure: split by label, in order.
	var bad, expected []sbAttention
	for _, a := range all {
		if a.Label == "EXPECTED" {
			expected = append(expected, a)
		} else {
			bad = append(bad, a)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(b, "\nstoryboard failures first (%d)\n", len(bad))
	}
	for i, a := range bad {
		if i == maxStoryboardLines {
			fmt.Fprintf(b, "  … and %d more: %s\n", len(bad)-i, html)
			break
		}
		fmt.Fprintf(b, "  %-8s %s\n", a.Label, termLine(where(a), maxLine))
		fmt.Fprintf(b, "  %-8s %s\n", "", termLine(a.What, maxLine))
		if i == len(bad)-1 {
			fmt.Fprintf(b, "  %-8s details: %s\n", "", html)
		}
	}
	if len(expected) == 0 {
		return
	}
	fmt.Fprintf(b, "\nexpected failures (%d, as the baseline lists them: they do not fail the run)\n", len(expected))
	for i, a := range expected {
		if i == maxExpectedLines {
			fmt.Fprintf(b, "  … and %d more: %s\n", len(expected)-i, html)
			break
		}
		fmt.Fprintf(b, "  %s — %s\n", termLine(where(a), maxLine), termLine(a.What, 2*maxLine))
	}
}

// maxExpectedLines bounds the expected failures the terminal summary
// lists, one line each.
const maxExpectedLines = 40

// writeStoryboards writes one line per storyboard category with its
// storyboards' counts, the storyboard steps' counts (failed advisory
// validations beside the failed steps, as the runner output contract
// asks), and the skipped storyboards by reason.
func writeStoryboards(b *strings.Builder, r *Run) {
	cats := storyboardCategories(r)
	if len(cats) == 0 {
		return
	}
	total := Counts{}
	reasons := map[string]int{}
	var reasonOrder []string
	notSel, notSelDetail := map[string]int{}, map[string]string{}
	var notSelOrder []string
	for _, sb := range r.Storyboards {
		total[sb.Outcome]++
		if sb.Skip != nil {
			if reasons[sb.Skip.Reason] == 0 {
				reasonOrder = append(reasonOrder, sb.Skip.Reason)
			}
			reasons[sb.Skip.Reason]++
		}
		if sb.NotSelected != nil {
			if notSel[sb.NotSelected.Reason] == 0 {
				notSelOrder = append(notSelOrder, sb.NotSelected.Reason)
				notSelDetail[sb.NotSelected.Reason] = sb.NotSelected.Detail
			}
			notSel[sb.NotSelected.Reason]++
		}
	}
	w := 0
	for _, c := range cats {
		w = max(w, len(wire.Sanitize(c.Name, 40)))
	}
	fmt.Fprintf(b, "\nstoryboards by category (%d: %s)\n", len(r.Storyboards), countLine(total, storyboardOrder))
	// A category where nothing ran (every storyboard skipped or left out:
	// a protocol or specialism the agent does not claim) is counted, not
	// listed: the screen goes to the categories that ran.
	idle, idleN := 0, 0
	var active []sbCategory
	for _, c := range cats {
		if c.Counts[Passed]+c.Counts[Failed]+c.Counts[Error] == 0 {
			idle++
			idleN += len(c.Storyboards)
			continue
		}
		active = append(active, c)
	}
	for i, c := range active {
		if i == maxCategoryLines {
			fmt.Fprintf(b, "  … and %d more categories: report.html#storyboards\n", len(active)-i)
			break
		}
		fmt.Fprintf(b, "  %-*s  %s\n", w, wire.Sanitize(c.Name, 40), countLine(c.Counts, storyboardOrder))
	}
	if idle > 0 {
		fmt.Fprintf(b, "  %d more categories ran nothing (%d storyboards skipped or not selected)\n", idle, idleN)
	}
	steps, advisory, na := storyboardStepTally(r)
	line := fmt.Sprintf("%d passed · %d failed · %d advisory failed · %d skipped · %d error",
		steps[Passed], steps[Failed], advisory, steps[Skipped], steps[Error])
	if na > 0 {
		line += fmt.Sprintf(" · %d validations not applicable", na)
	}
	fmt.Fprintf(b, "  steps: %s\n", line)
	if len(reasonOrder) > 0 {
		var parts []string
		for _, reason := range reasonOrder {
			parts = append(parts, fmt.Sprintf("%s %d", wire.Sanitize(reason, 40), reasons[reason]))
		}
		fmt.Fprintf(b, "  skipped storyboards by reason: %s\n", strings.Join(parts, " · "))
	}
	for _, reason := range notSelOrder {
		fmt.Fprintf(b, "  not selected: %d %s (%s)\n", notSel[reason], wire.Sanitize(reason, 40), termLine(notSelDetail[reason], maxLine-40))
	}
}

// writeStoryboardTable writes every storyboard, one line each (the -v
// table).
func writeStoryboardTable(b *strings.Builder, r *Run) {
	if len(r.Storyboards) == 0 {
		return
	}
	b.WriteString("\nevery storyboard\n")
	for _, sb := range r.Storyboards {
		l := strings.ToUpper(string(sb.Outcome))
		what := "steps: " + countLine(sb.Counts, storyboardOrder)
		if sb.Skip != nil {
			what = sb.Skip.Reason + ": " + sb.Skip.Detail
		} else if sb.Error != "" {
			what = sb.Error
		}
		if m := sb.Baseline; m != nil {
			what += " [baseline: " + m.Status + "]"
		}
		fmt.Fprintf(b, "  %-8s %-30s %s\n", l, termLine(sb.Category+"/"+sb.ID, 60), termLine(what, maxLine))
	}
}
