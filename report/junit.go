package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit XML model: the common subset GitHub, GitLab and Jenkins render.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
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
// the report always shows the whole catalogue. With a baseline, the JUnit
// agrees with the exit code: an expected failure is a skipped testcase
// with the baseline's reason, and a stale entry is one <failure>.
func WriteJUnit(w io.Writer, r *Run) error {
	doc := junitSuites{Name: r.Tool + " " + r.Version, Time: seconds(r.DurationMS)}
	index := map[string]int{}
	var suiteMS []float64
	for _, rule := range r.Rules {
		i, ok := index[rule.Family]
		if !ok {
			i = len(doc.Suites)
			index[rule.Family] = i
			suiteMS = append(suiteMS, 0)
			doc.Suites = append(doc.Suites, junitSuite{Name: rule.Family, Timestamp: r.StartedAt.UTC().Format("2006-01-02T15:04:05"),
				Properties: []junitProperty{{"tool_version", r.Version}, {"adcp_release", r.AdcpRelease}, {"target", r.Target}}})
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
	for i, s := range doc.Suites {
		doc.Suites[i].Time = seconds(suiteMS[i])
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
