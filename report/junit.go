package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit XML model: the common subset GitHub, GitLab and Jenkins render.
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Name    string   `xml:"name,attr"`
	junitCounts
	Suites []junitSuite `xml:"testsuite"`
}

// junitCounts are the attributes testsuites and each testsuite share,
// after their name.
type junitCounts struct {
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
}

type junitSuite struct {
	Name string `xml:"name,attr"`
	junitCounts
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// maxStatement bounds the rule statement in a testcase name.
const maxStatement = 80

// WriteJUnit writes the run as JUnit XML: one testsuite per family, one
// testcase per spec named "ID · statement [transport]", with the failure
// message short and stable. A rule with no spec is one skipped testcase, so
// the report always shows the whole catalogue. Each storyboard is one more
// testsuite, "storyboard: <id>", one testcase per step (see
// storyboardSuite). With a baseline, the JUnit agrees with the exit code:
// an expected failure is a skipped testcase with the baseline's reason,
// and a stale entry is one <failure>.
func WriteJUnit(w io.Writer, r *Run) error {
	doc := junitSuites{Name: r.Tool + " " + r.Version, junitCounts: junitCounts{Time: seconds(r.DurationMS)}}
	if r.Reference() {
		doc.Name += " (" + ReferenceLabel + ")"
	}
	index := map[string]int{}
	var suiteMS []float64
	for _, rule := range r.Rules {
		i, ok := index[rule.Family]
		if !ok {
			i = len(doc.Suites)
			index[rule.Family] = i
			suiteMS = append(suiteMS, 0)
			doc.Suites = append(doc.Suites, junitSuite{Name: rule.Family, Timestamp: r.StartedAt.UTC().Format("2006-01-02T15:04:05"),
				Properties: suiteProperties(r)})
		}
		suite := &doc.Suites[i]
		specs := rule.Specs
		if len(specs) == 0 {
			specs = []SpecResult{{Name: rule.Statement, Transport: strings.Join(rule.Transports, ","), Outcome: rule.Outcome, Message: rule.Message}}
		}
		for k, s := range specs {
			c := junitCase{Name: caseName(rule, s), Classname: rule.Family, Time: seconds(s.DurationMS)}
			text := s.Message
			for _, f := range rule.Findings {
				if f.Transport == s.Transport {
					text += "\n" + f.ProbeID + ": " + f.JSONPointer + " " + f.Message
				}
			}
			msg := &junitMessage{Message: oneLine(s.Message), Type: string(rule.Level), Text: text}
			if s.Outcome == Failed || s.Outcome == Error {
				c.SystemOut = evidenceText(rule, s.Transport)
			}
			mark := rule.Baseline
			switch {
			case mark != nil && mark.Status == ExpectedFailure && s.Outcome == Failed:
				// The baseline expects it: it does not fail the run, so
				// it is no <failure>; the reason and the evidence stay.
				c.Skipped = &junitMessage{Message: oneLine("expected failure (baseline: " + mark.Reason + "): " + s.Message)}
				suite.Skipped++
			case mark != nil && mark.Status == Stale && k == 0:
				// A stale entry fails the run: one <failure> on the rule.
				c.Failure = &junitMessage{Message: oneLine(rule.ID + ": stale baseline entry: the rule passes; remove it from the baseline (reason given: " + mark.Reason + ")"),
					Type: string(rule.Level)}
				suite.Failures++
			case s.Outcome == Failed:
				c.Failure = msg
				suite.Failures++
			case s.Outcome == Error:
				c.Error = msg
				suite.Errors++
			case s.Outcome == Skipped || s.Outcome == Disabled:
				c.Skipped = &junitMessage{Message: oneLine(s.Message)}
				suite.Skipped++
			}
			suite.Tests++
			suite.Cases = append(suite.Cases, c)
			suiteMS[i] += s.DurationMS
		}
	}
	for i := range suiteMS {
		doc.Suites[i].Time = seconds(suiteMS[i])
	}
	for _, sb := range r.Storyboards {
		doc.Suites = append(doc.Suites, storyboardSuite(r, sb))
	}
	for i := range doc.Suites {
		if r.HarnessError != "" {
			// The run's own error (its deadline hit, a signal) stands beside
			// the verdict: a failure found before it still fails the run
			// (exit 1), as the README's exit codes say.
			doc.Suites[i].Properties = append(doc.Suites[i].Properties, junitProperty{"harness_error", clean(r.HarnessError)},
				junitProperty{"verdict", string(r.Verdict)})
		}
	}
	for _, s := range doc.Suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// maxSystemOut bounds the evidence written into one testcase.
const maxSystemOut = 64 << 10

// evidenceText renders the redacted exchanges behind a rule's failure on a
// transport, for the testcase's system-out, bounded.
func evidenceText(rule RuleResult, transport string) string {
	var b strings.Builder
	for _, e := range rule.Evidence {
		if e.Transport != transport {
			continue
		}
		for _, x := range e.Exchanges {
			fmt.Fprintf(&b, "--- %s (redacted; seller-controlled content)\n%s\n", e.ProbeID, exchangeText(x))
		}
	}
	if b.Len() > maxSystemOut {
		return b.String()[:maxSystemOut] + "… (cut)"
	}
	return b.String()
}

func caseName(rule RuleResult, s SpecResult) string {
	statement := []rune(oneLine(rule.Statement))
	if len(statement) > maxStatement {
		statement = append(statement[:maxStatement-1], '…')
	}
	return fmt.Sprintf("%s · %s [%s]", rule.ID, string(statement), s.Transport)
}

// oneLine folds whitespace (CR and LF included) so a message fits an
// attribute on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func seconds(ms float64) string { return fmt.Sprintf("%.3f", ms/1000) }

// suiteProperties are the properties every testsuite carries: the tool,
// the release and the target, with what the target is (target_kind: a CI
// view of a run against the bundled reference seller says so) and the
// face the report covers, when it names one.
func suiteProperties(r *Run) []junitProperty {
	p := []junitProperty{{"tool_version", r.Version}, {"adcp_release", r.AdcpRelease}, {"target", r.Target}}
	if r.TargetKind != "" {
		p = append(p, junitProperty{"target_kind", string(r.TargetKind)})
	}
	if r.Face != "" {
		p = append(p, junitProperty{"face", r.Face})
	}
	return p
}

// storyboardSuite is one storyboard's testsuite: a testcase per step named
// "<phase_id>/<step_id>", its classname the storyboard's id. A failed step
// is a <failure> whose message is its first failed required validation
// (check, pointer, expected and actual, short) and whose text lists every
// failed validation, advisory ones marked [ADVISORY]; a harness error is
// an <error>; a skipped step is <skipped> with its reason and detail. The
// request and response payloads go to system-out. A storyboard skipped as
// a whole (or stopped before any step) is one testcase named by its id.
func storyboardSuite(r *Run, sb StoryboardResult) junitSuite {
	suite := junitSuite{Name: "storyboard: " + sb.ID, junitCounts: junitCounts{Time: seconds(sb.DurationMS)}, Timestamp: r.StartedAt.UTC().Format("2006-01-02T15:04:05"),
		Properties: append(suiteProperties(r), junitProperty{"category", sb.Category})}
	if sb.Path != "" {
		suite.Properties = append(suite.Properties, junitProperty{"path", sb.Path})
	}
	mark := sb.Baseline
	expected := mark != nil && mark.Status == ExpectedFailure && len(mark.Steps) == 0
	steps := r.StoryboardSteps(sb.ID)
	if sb.Skip != nil || len(steps) == 0 {
		c := junitCase{Name: sb.ID, Classname: sb.ID, Time: seconds(sb.DurationMS)}
		switch {
		case sb.Skip != nil:
			c.Skipped = &junitMessage{Message: oneLine(sb.Skip.Reason + ": " + sb.Skip.Detail)}
			suite.Skipped++
		case sb.Outcome == Error || sb.Error != "":
			c.Error = &junitMessage{Message: oneLine(sb.Error)}
			suite.Errors++
		default:
			c.Skipped = &junitMessage{Message: "no step was run"}
			suite.Skipped++
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
		return suite
	}
	for k, st := range steps {
		c := junitCase{Name: st.PhaseID + "/" + st.StepID, Classname: sb.ID, Time: seconds(st.DurationMS)}
		o := st.Outcome()
		if o == Failed || o == Error {
			c.SystemOut = stepPayloads(st)
		}
		sm := sb.StepMark(st.PhaseID, st.StepID)
		switch {
		case mark != nil && mark.Status == Stale && len(mark.Steps) == 0 && k == 0:
			c.Failure = &junitMessage{Message: oneLine(sb.BaselineKey() + ": stale baseline entry: the storyboard passes; remove it from the baseline (reason given: " + mark.Reason + ")"),
				Type: "must"}
			suite.Failures++
		case sm != nil && sm.Status == Stale:
			c.Failure = &junitMessage{Message: oneLine(sb.BaselineKey() + " step " + sm.Step + ": stale baseline entry: the step passes; remove it from the baseline (reason given: " + sm.Reason + ")"),
				Type: "must"}
			suite.Failures++
		case o == Failed && expected:
			c.Skipped = &junitMessage{Message: oneLine("expected failure (baseline: " + mark.Reason + "): " + failureLine(st))}
			suite.Skipped++
		case o == Failed && sm != nil && sm.Status == ExpectedFailure:
			c.Skipped = &junitMessage{Message: oneLine("expected failure (baseline: " + sm.Reason + "): " + failureLine(st))}
			suite.Skipped++
		case o == Failed:
			c.Failure = &junitMessage{Message: failureLine(st), Type: "must", Text: validationsText(st)}
			suite.Failures++
		case o == Error:
			c.Error = &junitMessage{Message: oneLine(st.Error), Text: st.Error}
			suite.Errors++
		case o == Skipped:
			c.Skipped = &junitMessage{Message: oneLine(st.Skip.Reason + ": " + st.Skip.Detail)}
			suite.Skipped++
		default:
			if t := validationsText(st); t != "" {
				c.SystemOut = t // advisory failures of a passed step
			}
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	return suite
}

// FailureSummary is the step's first failed required validation on one
// line (check, pointer, expected and actual, short), or its error.
func (s Step) FailureSummary() string { return failureLine(s) }

// maxValueLine bounds an expected or actual value in a one-line message.
const maxValueLine = 80

// failureLine is a failed step's first failed required validation on one
// line: `field_value /status: expected "a", got "b" (+1 more)`.
func failureLine(st Step) string {
	v := st.FirstFailure()
	if v == nil {
		return oneLine(st.Error)
	}
	line := validationLine(*v)
	n := 0
	for _, x := range st.Validations {
		if x.FailsStep() {
			n++
		}
	}
	if n > 1 {
		line += fmt.Sprintf(" (+%d more)", n-1)
	}
	return oneLine(line)
}

// validationLine is a failed validation, short: its check, its pointer,
// and what was expected against what was seen. The runner output contract
// writes a failed validation's actual as null when nothing was observed
// there (the field is absent, no status was read): then the validation's
// own message says what was seen, never "got null"; a validation that
// records neither value is its message.
func validationLine(v Validation) string {
	line := v.Check
	if v.JSONPointer != nil && *v.JSONPointer != "" {
		line += " " + *v.JSONPointer
	}
	exp, act := jsonValue(v.Expected), rawValue(v.Actual)
	if act == "null" {
		act = ""
	}
	msg := v.Message
	if msg == v.Check+" failed" { // the runner's stand-in: says nothing
		msg = ""
	}
	switch {
	case exp == "" && act == "":
		if msg != "" {
			return line + ": " + shorten(msg, 2*maxValueLine)
		}
		return line + ": " + shorten(v.Description, 2*maxValueLine)
	case act == "" && msg != "":
		return line + ": expected " + shorten(exp, maxValueLine) + "; " + shorten(msg, maxValueLine)
	case act == "":
		return line + ": expected " + shorten(exp, maxValueLine) + ", got null"
	case exp == "" && msg != "":
		return line + ": " + shorten(msg, maxValueLine) + " (got " + shorten(act, maxValueLine) + ")"
	case exp == "":
		return line + ": got " + shorten(act, maxValueLine)
	}
	return line + ": expected " + shorten(exp, maxValueLine) + ", got " + shorten(act, maxValueLine)
}

// validationsText lists a step's failed validations, required ones first,
// advisory ones marked [ADVISORY], each with its description, expected,
// actual and message.
func validationsText(st Step) string {
	var b strings.Builder
	for _, advisory := range []bool{false, true} {
		for _, v := range st.Validations {
			if v.Passed || (v.Severity == Advisory) != advisory {
				continue
			}
			if advisory {
				b.WriteString("[ADVISORY] ")
			}
			b.WriteString(v.Check)
			if v.JSONPointer != nil && *v.JSONPointer != "" {
				b.WriteString(" at " + *v.JSONPointer)
			}
			if v.ID != "" {
				b.WriteString(" (" + v.ID + ")")
			}
			b.WriteString("\n")
			fmt.Fprintf(&b, "  description (storyboard text): %s\n", oneLine(v.Description))
			if e := jsonValue(v.Expected); e != "" {
				fmt.Fprintf(&b, "  expected: %s\n", shorten(e, maxValueText))
			}
			switch a := rawValue(v.Actual); a {
			case "":
			case "null": // the contract's null: the message says what was seen
				b.WriteString("  actual: nothing observed (null)\n")
			default:
				fmt.Fprintf(&b, "  actual (seller-controlled): %s\n", shorten(a, maxValueText))
			}
			if v.Message != "" {
				fmt.Fprintf(&b, "  message: %s\n", oneLine(v.Message))
			}
		}
	}
	return b.String()
}

// stepPayloads renders a step's request and response payloads, redacted as
// recorded, for the testcase's system-out, bounded.
func stepPayloads(st Step) string {
	var b strings.Builder
	if q := st.Request; q != nil {
		fmt.Fprintf(&b, "--- request (%s %s; redacted)\n%s\n", q.Transport, q.Operation, indentBounded(q.Payload))
	}
	if p := st.Response; p != nil {
		status := ""
		if p.Status != 0 {
			status = fmt.Sprintf(", HTTP %d", p.Status)
		}
		fmt.Fprintf(&b, "--- response (%s%s; redacted; seller-controlled content)\n%s\n", p.Transport, status, indentBounded(p.Payload))
	}
	if b.Len() > maxSystemOut {
		return b.String()[:maxSystemOut] + "… (cut)"
	}
	return b.String()
}

// jsonValue is v as compact JSON ("" for nil).
func jsonValue(v any) string {
	if v == nil {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return tooDeep(b.Bytes()) + strings.TrimSuffix(b.String(), "\n")
}

// rawValue is raw JSON compacted ("" when empty).
func rawValue(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if note := tooDeep(raw); note != "" {
		return note + string(raw)
	}
	var out bytes.Buffer
	if json.Compact(&out, raw) == nil {
		return out.String()
	}
	return string(raw)
}

// shorten folds s onto one line and cuts it to max runes.
func shorten(s string, max int) string {
	r := []rune(oneLine(s))
	if len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return string(r)
}
