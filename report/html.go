package report

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

//go:embed report.html.tmpl
var htmlSource string

// page is the one template of report.html, parsed at init. html/template
// escapes every value for its context (text, attribute, URL), so seller
// strings can never become markup.
var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"clean":    clean,
	"outcomes": func() []Outcome { return outcomeOrder },
}).Parse(htmlSource))

// lowerOutcome is o in lower case, for class and data attributes.
func lowerOutcome(o Outcome) string { return strings.ToLower(string(o)) }

// attentionOutcome is the outcome a storyboard attention label stands for
// (for its badge's class).
func attentionOutcome(label string) Outcome {
	switch label {
	case "ERROR":
		return Error
	case "STALE":
		return Passed
	}
	return Failed
}

// filterScript is the page's one script: the outcome, family and transport
// filters. It is fixed text; the page's Content-Security-Policy allows it by
// its SHA-256 and nothing else, so no other script — inline, injected or
// remote — can run, and inline event handlers are refused. The controls
// start hidden, so a browser that does not run it shows every rule.
const filterScript = `(function () {
  "use strict";
  var state = { outcome: "notpassed", family: "all", transport: "all" };
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.rule"));
  var sections = Array.prototype.slice.call(document.querySelectorAll("section.family"));
  var buttons = Array.prototype.slice.call(document.querySelectorAll("button[data-filter-outcome]"));
  var shown = document.getElementById("shown");
  function keep(row) {
    var o = row.getAttribute("data-outcome");
    if (state.outcome === "notpassed" ? o === "passed" : state.outcome !== "all" && o !== state.outcome) return false;
    if (state.family !== "all" && row.getAttribute("data-family") !== state.family) return false;
    if (state.transport !== "all" && (" " + row.getAttribute("data-transports") + " ").indexOf(" " + state.transport + " ") < 0) return false;
    return true;
  }
  function apply() {
    var n = 0;
    rows.forEach(function (row) { var k = keep(row); row.hidden = !k; if (k) n++; });
    sections.forEach(function (s) { s.hidden = s.querySelector("tr.rule:not([hidden])") === null; });
    shown.textContent = n + " of " + rows.length + " rules shown";
  }
  buttons.forEach(function (b) {
    b.addEventListener("click", function () {
      state.outcome = b.getAttribute("data-filter-outcome");
      buttons.forEach(function (o) { o.setAttribute("aria-pressed", o === b ? "true" : "false"); });
      apply();
    });
  });
  ["family", "transport"].forEach(function (k) {
    var sel = document.getElementById("filter-" + k);
    sel.addEventListener("change", function () { state[k] = sel.value; apply(); });
  });
  document.getElementById("filters").hidden = false;
  apply();
  document.documentElement.setAttribute("data-filters", "ready");
})();
`

// contentSecurityPolicy is the page's policy: nothing loads, styles are
// inline, and the only script is filterScript, allowed by its hash.
var contentSecurityPolicy = func() string {
	sum := sha256.Sum256([]byte(filterScript))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
}()

// absentActual is the actual value the runner records where the pointer
// locates nothing.
const absentActual = `"(absent)"`

// maxExchangeText bounds each body an exchange shows in the page.
const maxExchangeText = 16 << 10

// maxValueText bounds an expected or actual value shown in the page.
const maxValueText = 4 << 10

// exchangeText renders one redacted exchange as plain text: the request
// line, the status, the allowlisted response headers and both bodies,
// bounded. (The JUnit report uses it.)
func exchangeText(x wire.Exchange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", x.Method, x.URL)
	if len(x.RequestBody) > 0 {
		b.WriteString(bounded(string(x.RequestBody)) + "\n")
	}
	fmt.Fprintf(&b, "\n→ HTTP %d (%.1f ms)\n", x.Status, x.DurationMS)
	h := wire.ReportResponseHeaders(x.ResponseHeaders)
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[name] {
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	if len(x.ResponseBody) > 0 {
		b.WriteString(bounded(string(x.ResponseBody)) + "\n")
	}
	if x.Error != "" {
		b.WriteString("error: " + x.Error + "\n")
	}
	return b.String()
}

func bounded(s string) string {
	if len(s) > maxExchangeText {
		return s[:maxExchangeText] + "… (cut)"
	}
	return s
}

// cut bounds s to max bytes at a rune boundary, saying so.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "\n… (cut)"
}

// clean drops what escaping leaves harmful in a page: control characters
// (but newlines and tabs) and the bidi controls that can make text read
// backwards. Each becomes U+FFFD.
func clean(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return cleanRunes(s)
		}
	}
	return s // printable ASCII (the common case): nothing to drop
}

func cleanRunes(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0),
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return '\uFFFD'
		}
		return r
	}, s)
}

// seg is one piece of highlighted text: C is its class ("k" key, "s"
// string, "n" number, "l" literal, "" plain), T its text, cleaned. The
// template escapes T like any other value.
type seg struct{ C, T string }

// codeBlock is highlighted text, the segments of a pre block; the page shows
// it through HTML.
type codeBlock []seg

// HTML renders the segments as the page shows them, each classed one in a
// span, with the bytes html/template would write for them (the escaping
// of text content, htmlEscape): a block thousands of segments long is one
// value for the template, not thousands of actions.
func (c codeBlock) HTML() template.HTML {
	n := 0
	for _, s := range c {
		n += len(s.T) + len(s.C) + len(`<span class=""></span>`)
	}
	b := make([]byte, 0, n+n/8)
	for _, s := range c {
		if s.C == "" {
			b = htmlEscape(b, s.T)
			continue
		}
		b = append(b, `<span class="`...)
		b = htmlEscape(b, s.C)
		b = append(b, `">`...)
		b = htmlEscape(b, s.T)
		b = append(b, `</span>`...)
	}
	return template.HTML(b)
}

// htmlEscape appends s to b escaped as html/template escapes a value in
// text content or in a quoted attribute (its htmlReplacementTable): NUL,
// quotes, "&", "+", "<" and ">"; every other byte, invalid UTF-8
// included, as it is.
func htmlEscape(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var repl string
		switch s[i] {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		default:
			continue
		}
		b = append(append(b, s[last:i]...), repl...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

// readable turns a body into highlighted text: pretty-printed JSON when it
// parses (and nests at most wire.MaxJSONDepth levels), the text as it is
// otherwise; bounded to max bytes.
func readable(b []byte, max int) codeBlock {
	if note := tooDeep(b); note != "" {
		return codeBlock{{T: clean(cut(note+string(b), max))}}
	}
	var out bytes.Buffer
	// json.Valid first: Indent writes its output up to the error, and
	// indents a deep invalid body (no end to its nesting) quadratically.
	if json.Valid(b) && json.Indent(&out, b, "", "  ") == nil {
		return highlight(cut(out.String(), max))
	}
	return codeBlock{{T: clean(cut(string(b), max))}}
}

// highlight splits pretty-printed JSON (possibly cut short) into classed
// segments; it never fails on malformed input, it only highlights less.
func highlight(s string) codeBlock {
	var segs codeBlock
	plain := func(t string) {
		if n := len(segs); n > 0 && segs[n-1].C == "" {
			segs[n-1].T += t
			return
		}
		segs = append(segs, seg{T: t})
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			class := "s"
			if k := strings.TrimLeft(s[j:], " "); strings.HasPrefix(k, ":") {
				class = "k"
			}
			segs = append(segs, seg{C: class, T: clean(s[i:j])})
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(s) && strings.IndexByte("0123456789.eE+-", s[j]) >= 0 {
				j++
			}
			segs = append(segs, seg{C: "n", T: s[i:j]})
			i = j
		case c >= 'a' && c <= 'z':
			j := i + 1
			for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
				j++
			}
			segs = append(segs, seg{C: "l", T: clean(s[i:j])})
			i = j
		default:
			j := i + 1
			for j < len(s) && strings.IndexByte(`"-0123456789abcdefghijklmnopqrstuvwxyz`, s[j]) < 0 {
				j++
			}
			plain(clean(s[i:j]))
			i = j
		}
	}
	return segs
}

// htmlView is what the template renders.
type htmlView struct {
	*Run
	CSP        string
	Script     template.JS
	Tally      []htmlTallyRow
	Families   []htmlFamily
	FamilyIDs  []string
	Transports []string
	// Attention are the rules a person should look at first: failures,
	// errors and stale baseline entries, those that fail the run first.
	Attention []htmlAttention
	// SBAttention are the storyboard steps to look at first, likewise.
	SBAttention []htmlSBAttention
	// SBCategories are the storyboards by category, the categories with a
	// failure or an error first.
	SBCategories []htmlSBCategory
	// SBCounts and SBSteps count the storyboards and their steps per
	// outcome; SBAdvisory the failed advisory validations, SBNotApplicable
	// the validations graded not applicable.
	SBCounts        Counts
	SBSteps         Counts
	SBAdvisory      int
	SBNotApplicable int
	// Fuzz is a fuzz run's account, nil for a run.
	Fuzz *htmlFuzz
}

// The view types below hold what the page prints, laid out in Go:
// seller and storyboard strings already cleaned, outcomes already lower
// case, tests already decided. Each call and each field of an embedded
// struct costs html/template a reflective look-up per row, and a large
// run's page has thousands of rows.

// htmlAttention is one line of the page's "failures first" list.
type htmlAttention struct {
	ID, Level, Label, Transports, Finding string
	// Class is the outcome in lower case.
	Class string
}

// htmlSBAttention is one line of the page's storyboard "failures first"
// list (an sbAttention, laid out).
type htmlSBAttention struct {
	Storyboard, Where, What string
	// Class is the outcome the label stands for, Label the label, both
	// lower case; Faces the faces on one line.
	Class, Label, Faces string
}

// htmlTallyRow is one family's row of the summary: its counts on each of
// the page's transports, nil where none of its rules applies.
type htmlTallyRow struct {
	Family string
	Cells  []Counts
}

// tallyMatrix folds the tally into one row per family with a cell per
// transport.
func tallyMatrix(rows []tallyRow, transports []string) []htmlTallyRow {
	var out []htmlTallyRow
	for _, row := range rows {
		if n := len(out); n == 0 || out[n-1].Family != row.Family {
			out = append(out, htmlTallyRow{Family: row.Family, Cells: make([]Counts, len(transports))})
		}
		if i := slices.Index(transports, row.Transport); i >= 0 {
			out[len(out)-1].Cells[i] = row.Counts
		}
	}
	return out
}

// htmlFamily is one family's section of the page.
type htmlFamily struct {
	ID    string
	Rules []htmlRule
}

// htmlRule is one rule's row.
type htmlRule struct {
	ID, Family string
	Level      Level
	Outcome    Outcome
	// Class is the outcome in lower case; NotPassed is set unless it
	// passed.
	Class     string
	NotPassed bool
	// Statement and Source are the catalogue's text, rendered.
	Statement, Source template.HTML
	Baseline          *BaselineMark
	// TransportList is the rule's transports, space-separated, for the
	// transport filter.
	TransportList string
	Findings      []htmlFinding
	Exchanges     []htmlExchange
	Links         []specLink
	// SpecLines are the judges' messages worth showing: all of them, but
	// a failure's when its findings say it better (Transport and Message
	// cleaned).
	SpecLines []SpecResult
	// Message is the rule's message (cleaned) when it has no spec to
	// show it.
	Message string
}

// htmlFinding is one finding — or several alike: the same message at the
// same pointer on several probes, collapsed — with the failed validation
// behind the first, if the run's steps recorded one.
type htmlFinding struct {
	// Where is the JSON pointer, "(whole reply)" without one.
	Where, Message, Transport string
	// Probes are the probes of the collapsed findings, the first's
	// included; Count is how many, Many set when more than one.
	Probes []string
	Count  int
	Many   bool
	// Values is set when the finding has a row of values.
	Values bool
	// Actual is nil when the value is absent at the pointer (Absent) or
	// the step recorded none.
	Expected codeBlock
	Actual   codeBlock
	Absent   bool
	// Sent is what the harness sent that the finding is about (the
	// request's context, for the CTX rules).
	Sent codeBlock
}

// htmlExchange is one redacted exchange, made readable (ProbeID cleaned).
type htmlExchange struct {
	ProbeID      string
	Transport    string
	RequestLine  string
	RequestBody  codeBlock
	StatusLine   string
	Headers      []string
	ResponseBody codeBlock
	Error        string
}

// WriteHTML writes report.html: one self-contained file that loads nothing,
// with the verdict and versions at the top, a summary by rule family and
// transport, filters by outcome, family and transport, and every rule
// grouped by family. A rule that did not pass shows its spec messages, each
// finding's JSON pointer with the expected and actual values its step
// recorded, and its redacted exchanges. A fuzz run's page adds its account:
// the budget, each tool's turns, and each failed turn's reproduction.
// Seller-controlled text is escaped and fenced as untrusted.
func WriteHTML(w io.Writer, r *Run) error {
	v := htmlView{Run: r, CSP: contentSecurityPolicy, Script: template.JS(filterScript)}
	storyboards := map[string]bool{}
	for _, sb := range r.Storyboards {
		storyboards[sb.ID] = true
	}
	// The rules' own steps: a storyboard's steps are shown with it.
	ruleSteps := slices.DeleteFunc(slices.Clone(r.Steps), func(st Step) bool { return storyboards[st.StoryboardID] })
	failedValidations := validationIndex(ruleSteps)
	requests := map[string]json.RawMessage{}
	for _, st := range ruleSteps {
		if st.Request != nil {
			requests[st.StepID] = st.Request.Payload
		}
	}
	for _, rule := range r.Rules {
		if n := len(v.Families); n == 0 || v.Families[n-1].ID != rule.Family {
			v.Families = append(v.Families, htmlFamily{ID: rule.Family})
			if !slices.Contains(v.FamilyIDs, rule.Family) {
				v.FamilyIDs = append(v.FamilyIDs, rule.Family)
			}
		}
		trs := ruleTransports(rule)
		for _, t := range trs {
			if !slices.Contains(v.Transports, t) {
				v.Transports = append(v.Transports, t)
			}
		}
		hr := htmlRule{ID: rule.ID, Family: rule.Family, Level: rule.Level, Outcome: rule.Outcome,
			Class: lowerOutcome(rule.Outcome), NotPassed: rule.Outcome != Passed,
			Statement: catalogueMarkdown(rule.Statement), Source: catalogueMarkdown(rule.Source), Baseline: rule.Baseline,
			TransportList: strings.Join(trs, " "), Links: specLinks(rule)}
		for _, sp := range rule.Specs {
			if sp.Outcome == Failed && len(rule.Findings) > 0 {
				continue
			}
			sp.Transport, sp.Message = clean(sp.Transport), clean(sp.Message)
			hr.SpecLines = append(hr.SpecLines, sp)
		}
		if len(rule.Specs) == 0 {
			hr.Message = clean(rule.Message)
		}
		same := map[[3]string]int{}
		for _, f := range rule.Findings {
			k := [3]string{f.Transport, f.JSONPointer, f.Message}
			if i, ok := same[k]; ok {
				hr.Findings[i].Count++
				hr.Findings[i].Many = true
				hr.Findings[i].Probes = append(hr.Findings[i].Probes, clean(f.ProbeID))
				continue
			}
			same[k] = len(hr.Findings)
			hf := htmlFinding{Where: "(whole reply)", Message: clean(f.Message), Transport: clean(f.Transport),
				Probes: []string{clean(f.ProbeID)}, Count: 1}
			if f.JSONPointer != "" {
				hf.Where = clean(f.JSONPointer)
			}
			if val, ok := failedValidations.find(rule.ID, f); ok {
				hf.Expected = expectedText(val.Expected)
				// The runner records an absent value as the string
				// "(absent)" (results.json's actual); the page marks it.
				if hf.Absent = string(val.Actual) == absentActual; !hf.Absent && len(val.Actual) > 0 {
					hf.Actual = readable(val.Actual, maxValueText)
				}
			}
			if rule.Family == "CTX" {
				hf.Sent = sentContext(requests[f.ProbeID])
			}
			hf.Values = len(hf.Expected) > 0 || len(hf.Actual) > 0 || hf.Absent || len(hf.Sent) > 0
			hr.Findings = append(hr.Findings, hf)
		}
		for _, e := range rule.Evidence {
			for _, x := range e.Exchanges {
				hr.Exchanges = append(hr.Exchanges, readableExchange(e, x))
			}
		}
		f := &v.Families[len(v.Families)-1]
		f.Rules = append(f.Rules, hr)
	}
	v.Transports = slices.DeleteFunc(v.Transports, func(t string) bool { return !r.Tested(t) })
	v.Tally = tallyMatrix(tally(r), v.Transports)
	v.Attention = attention(r)
	for _, a := range storyboardAttention(r) {
		v.SBAttention = append(v.SBAttention, htmlSBAttention{Storyboard: a.Storyboard, Where: clean(a.Where), What: clean(a.What),
			Class: lowerOutcome(attentionOutcome(a.Label)), Label: strings.ToLower(a.Label), Faces: a.FaceList()})
	}
	v.SBCategories = htmlStoryboards(r)
	v.SBCounts = Counts{}
	for _, sb := range r.Storyboards {
		v.SBCounts[sb.Outcome]++
	}
	v.SBSteps, v.SBAdvisory, v.SBNotApplicable = storyboardStepTally(r)
	v.Fuzz = htmlFuzzOf(r)
	// The template writes each action's bytes apart, some 20 000 writes
	// for a large run: the writer downstream (the redacting writer, the
	// file) sees 64 KB at a time instead.
	bw := bufio.NewWriterSize(w, 64<<10)
	err := page.Execute(bw, v)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// attention lists the rules to look at first, in the terminal summary's
// order.
func attention(r *Run) []htmlAttention {
	var out []htmlAttention
	for _, rule := range orderFailures(r) {
		l, mark := label(rule)
		what, _ := firstFinding(rule)
		if what == "" {
			what = mark
		}
		out = append(out, htmlAttention{ID: rule.ID, Level: string(rule.Level), Label: strings.ToLower(l),
			Transports: clean(failedTransports(rule)), Finding: clean(what), Class: lowerOutcome(rule.Outcome)})
	}
	return out
}

// sentContext is the context object of a request's arguments (what a CTX
// rule expects back), or the whole arguments when they carry none.
func sentContext(payload json.RawMessage) codeBlock {
	if len(payload) == 0 || string(payload) == "null" {
		return nil
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(payload, &args) == nil {
		if c, ok := args["context"]; ok {
			return readable(c, maxValueText)
		}
	}
	return readable(payload, maxValueText)
}

// expectedText renders a validation's expected value: a string as it is,
// anything else as pretty JSON.
func expectedText(v any) codeBlock {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return codeBlock{{T: clean(cut(x, maxValueText))}}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return codeBlock{{T: clean(cut(fmt.Sprint(v), maxValueText))}}
	}
	return readable(b, maxValueText)
}

// validations indexes the failed validations of the run's steps by rule
// and step.
type validations map[[2]string][]Validation

func validationIndex(steps []Step) validations {
	idx := validations{}
	for _, s := range steps {
		for _, v := range s.Validations {
			if !v.Passed {
				k := [2]string{v.Rule, s.StepID}
				idx[k] = append(idx[k], v)
			}
		}
	}
	return idx
}

// find returns the failed validation of rule behind finding f: the one on
// the finding's probe with the same JSON pointer, or, when the finding has
// no pointer, the probe's first failed validation of the rule.
func (idx validations) find(rule string, f Finding) (Validation, bool) {
	vs := idx[[2]string{rule, f.ProbeID}]
	for _, v := range vs {
		if v.JSONPointer != nil && *v.JSONPointer == f.JSONPointer {
			return v, true
		}
	}
	if f.JSONPointer == "" && len(vs) > 0 {
		return vs[0], true
	}
	return Validation{}, false
}

// readableExchange lays out one exchange for reading: bodies pretty-printed
// when they parse as JSON (each server-sent event's data likewise), only
// the allowlisted response headers, everything cleaned and bounded.
func readableExchange(e Evidence, x wire.Exchange) htmlExchange {
	hx := htmlExchange{ProbeID: clean(e.ProbeID), Transport: e.Transport,
		RequestLine: clean(cut(x.Method+" "+x.URL, 2048)), Error: clean(cut(x.Error, 2048))}
	if len(x.RequestBody) > 0 {
		hx.RequestBody = readable(x.RequestBody, maxExchangeText)
	}
	if x.Status != 0 {
		hx.StatusLine = fmt.Sprintf("HTTP %d (%.1f ms)", x.Status, x.DurationMS)
	} else {
		hx.StatusLine = fmt.Sprintf("no response (%.1f ms)", x.DurationMS)
	}
	h := wire.ReportResponseHeaders(x.ResponseHeaders)
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, val := range h[name] {
			hx.Headers = append(hx.Headers, clean(cut(name+": "+val, 1024)))
		}
	}
	switch {
	case len(x.Events) > 0:
		for i, ev := range x.Events {
			if i > 0 {
				hx.ResponseBody = append(hx.ResponseBody, seg{T: "\n"})
			}
			typ := ev.Type
			if typ == "" {
				typ = "message"
			}
			hx.ResponseBody = append(hx.ResponseBody, seg{T: clean(cut("event: "+typ, 256)) + "\n"})
			hx.ResponseBody = append(hx.ResponseBody, readable([]byte(ev.Data), maxExchangeText)...)
			hx.ResponseBody = append(hx.ResponseBody, seg{T: "\n"})
		}
	case len(x.ResponseBody) > 0:
		hx.ResponseBody = readable(x.ResponseBody, maxExchangeText)
	}
	return hx
}

// htmlSBCategory is one storyboard category's part of the page: the
// storyboards that ran, failing ones first, and those skipped as a whole,
// condensed by reason.
type htmlSBCategory struct {
	Name        string
	Counts      Counts
	Storyboards []htmlStoryboard
	Skipped     []htmlSkipGroup
}

// CountLine is the category's counts on one line.
func (c htmlSBCategory) CountLine() string { return countLine(c.Counts, storyboardOrder) }

// htmlSkipGroup is the storyboards of a category skipped for one reason.
type htmlSkipGroup struct {
	Reason      string
	Storyboards []htmlSkipped
}

// htmlSkipped is a storyboard skipped as a whole (Skip's Detail cleaned).
type htmlSkipped struct {
	ID       string
	Skip     *Skip
	Baseline *BaselineMark
}

// htmlStoryboard is one storyboard's row: its steps, open when it failed
// or errored.
type htmlStoryboard struct {
	ID       string
	Outcome  Outcome
	Class    string // the outcome in lower case
	Baseline *BaselineMark
	// Title, Path and Error are cleaned.
	Title, Path, Error string
	Open               bool
	Steps              []htmlStep
	// StepCount is how many steps, "1 step" or "3 steps"; StepLine
	// their counts on one line.
	StepCount, StepLine string
}

// htmlStep is one storyboard step as the page shows it: a passed step on
// one line; one that did not pass with its failed validations and its
// payloads.
type htmlStep struct {
	Outcome Outcome
	Class   string // the outcome in lower case
	// Where is phase/step; Where, Task, Title and Error are cleaned, so
	// are Skip's Detail, the observations and the notices.
	Where, Task, Title, Error string
	Skip                      *Skip
	Notices                   []Notice
	// Failed are the failed required validations, Advisory the failed
	// advisory ones, NotApplicable those graded not applicable (Check
	// and Note cleaned).
	Failed        []htmlValidation
	Advisory      []htmlValidation
	NotApplicable []Validation
	Observations  []string
	Request       codeBlock
	Response      codeBlock
	// RequestLine and ResponseLine say what the payloads are.
	RequestLine  string
	ResponseLine string
	// Baseline is the baseline's mark of the step, when it lists the step;
	// BaselineChecks the check kinds its entry lists, BaselineSpec and
	// BaselineUpstream the entry's spec text and upstream reference.
	Baseline         *StepBaselineMark
	BaselineChecks   string
	BaselineSpec     string
	BaselineUpstream string
}

// htmlValidation is one failed validation, its values made readable,
// its strings cleaned.
type htmlValidation struct {
	// Advisory is set for an advisory validation.
	Advisory                                 bool
	Check, Pointer, ID, Description, Message string
	Expected                                 codeBlock
	Actual                                   codeBlock
	// Promoted is set when the runner promoted the validation from
	// advisory to required.
	Promoted bool
	// Null is set when the recorded actual is the contract's null: nothing
	// was observed at the pointer (the message says what was seen).
	Null bool
}

// htmlStoryboards lays out the run's storyboards by category: the
// categories with a failure or an error first, in each the failed
// storyboards first, then the errored, then the passed, then the skipped
// ones by reason.
func htmlStoryboards(r *Run) []htmlSBCategory {
	var out []htmlSBCategory
	for _, c := range storyboardCategories(r) {
		hc := htmlSBCategory{Name: c.Name, Counts: c.Counts}
		for _, o := range []Outcome{Failed, Error, Passed} {
			for _, sb := range c.Storyboards {
				if sb.Outcome != o {
					continue
				}
				hs := htmlStoryboard{ID: sb.ID, Outcome: sb.Outcome, Class: lowerOutcome(sb.Outcome), Baseline: sb.Baseline,
					Title: clean(sb.Title), Path: clean(sb.Path), Error: clean(sb.Error), Open: o != Passed,
					StepLine: countLine(sb.Counts, storyboardOrder)}
				for _, st := range r.StoryboardSteps(sb.ID) {
					h := htmlStepOf(st)
					if h.Baseline = sb.StepMark(st.PhaseID, st.StepID); h.Baseline != nil {
						h.BaselineChecks = strings.Join(h.Baseline.Checks, ", ")
						if e := r.baselineEntry(sb.BaselineKey(), h.Baseline.Step); e != nil {
							h.BaselineSpec, h.BaselineUpstream = e.Spec, e.Upstream
						}
					}
					hs.Steps = append(hs.Steps, h)
				}
				hs.StepCount = fmt.Sprintf("%d steps", len(hs.Steps))
				if len(hs.Steps) == 1 {
					hs.StepCount = "1 step"
				}
				hc.Storyboards = append(hc.Storyboards, hs)
			}
		}
		for _, sb := range c.Storyboards {
			if sb.Outcome != Skipped {
				continue
			}
			reason := "no step was run"
			if sb.Skip != nil {
				reason = sb.Skip.Reason
			}
			i := slices.IndexFunc(hc.Skipped, func(g htmlSkipGroup) bool { return g.Reason == reason })
			if i < 0 {
				i = len(hc.Skipped)
				hc.Skipped = append(hc.Skipped, htmlSkipGroup{Reason: reason})
			}
			hs := htmlSkipped{ID: sb.ID, Baseline: sb.Baseline}
			if sb.Skip != nil {
				hs.Skip = &Skip{Reason: sb.Skip.Reason, Detail: clean(sb.Skip.Detail)}
			}
			hc.Skipped[i].Storyboards = append(hc.Skipped[i].Storyboards, hs)
		}
		out = append(out, hc)
	}
	slices.SortStableFunc(out, func(a, b htmlSBCategory) int {
		bad := func(c htmlSBCategory) int {
			if c.Counts[Failed]+c.Counts[Error] > 0 {
				return 0
			}
			return 1
		}
		return bad(a) - bad(b)
	})
	return out
}

// htmlStepOf makes one storyboard step readable.
func htmlStepOf(st Step) htmlStep {
	hs := htmlStep{Outcome: st.Outcome(), Where: clean(st.PhaseID) + "/" + clean(st.StepID), Task: clean(st.Task),
		Title: clean(st.Title), Error: clean(st.Error)}
	hs.Class = lowerOutcome(hs.Outcome)
	if st.Skip != nil {
		hs.Skip = &Skip{Reason: st.Skip.Reason, Detail: clean(st.Skip.Detail)}
	}
	for _, n := range st.Notices {
		hs.Notices = append(hs.Notices, Notice{Severity: clean(n.Severity), EffectiveVersion: clean(n.EffectiveVersion),
			Code: clean(n.Code), Message: clean(n.Message)})
	}
	for _, v := range st.Validations {
		for _, o := range v.Observations {
			hs.Observations = append(hs.Observations, clean(o))
		}
		switch {
		case v.NotApplicable:
			hs.NotApplicable = append(hs.NotApplicable, Validation{Check: clean(v.Check), Note: clean(v.Note)})
		case v.Passed:
		default:
			hv := htmlValidation{Advisory: v.Severity == Advisory, Check: clean(v.Check), ID: clean(v.ID),
				Description: clean(v.Description), Message: clean(v.Message), Expected: expectedText(v.Expected),
				Promoted: v.SeverityPromotedFromAdvisory != nil && *v.SeverityPromotedFromAdvisory}
			if v.JSONPointer != nil {
				hv.Pointer = clean(*v.JSONPointer)
			}
			if hv.Null = rawValue(v.Actual) == "null"; !hv.Null && len(v.Actual) > 0 {
				hv.Actual = readable(v.Actual, maxValueText)
			}
			if v.Severity == Advisory {
				hs.Advisory = append(hs.Advisory, hv)
			} else {
				hs.Failed = append(hs.Failed, hv)
			}
		}
	}
	if hs.Outcome == Failed || hs.Outcome == Error {
		if q := st.Request; q != nil {
			hs.RequestLine = clean(cut(strings.TrimSpace(q.Transport+" "+q.Operation+" "+q.URL), 2048))
			hs.Request = readable(q.Payload, maxExchangeText)
		}
		if p := st.Response; p != nil {
			hs.ResponseLine = clean(p.Transport)
			if p.Status != 0 {
				hs.ResponseLine += fmt.Sprintf(" · HTTP %d", p.Status)
			}
			hs.Response = readable(p.Payload, maxExchangeText)
		}
	}
	return hs
}

// baselineEntry is the run's baseline entry in scope for a storyboard's
// step, nil when none lists it.
func (r *Run) baselineEntry(rule, step string) *BaselineEntry {
	for i, e := range r.Baseline {
		if e.Rule == rule && e.Step == step && e.AppliesTo(r.StoryboardsRelease, r.Sandbox) {
			return &r.Baseline[i]
		}
	}
	return nil
}

// htmlFuzz is a fuzz run's account as the page shows it (Run.Fuzz laid
// out): every tool name, reason, finding, argument and note cleaned.
type htmlFuzz struct {
	Seed         uint64
	TurnsPerTool int
	CrossTenant  bool
	Tools        []htmlFuzzTool
	Pools        []htmlFuzzPool
	Notes        []string
	Repros       []htmlFuzzRepro
}

// htmlFuzzTool is one tool's row (a FuzzTool, its strings cleaned);
// Class is "failed" when a turn failed.
type htmlFuzzTool struct {
	Tool, Tier, Skipped, Class                           string
	Turns, Accepted, Rejected, Failed, Unjudged, Shrinks int
}

// htmlFuzzPool is one entity's ids the fuzzer drew from, on one line.
type htmlFuzzPool struct{ Entity, IDs string }

// htmlFuzzRepro is one failed turn's shrunk reproduction; Linked is set
// when the page has a row for its rule to link to.
type htmlFuzzRepro struct {
	Rule, Tool, Turn, Call, What  string
	Linked                        bool
	TurnBytes, Bytes, ShrinkCalls int
	Arguments, Shell              codeBlock
}

// htmlFuzzOf lays out a fuzz run's account, nil for a run without one.
func htmlFuzzOf(r *Run) *htmlFuzz {
	f := r.Fuzz
	if f == nil {
		return nil
	}
	h := &htmlFuzz{Seed: f.Seed, TurnsPerTool: f.TurnsPerTool, CrossTenant: f.CrossTenant}
	for _, t := range f.Tools {
		ht := htmlFuzzTool{Tool: clean(cut(t.Tool, 256)), Tier: clean(t.Tier), Skipped: clean(cut(t.Skipped, 2048)),
			Turns: t.Turns, Accepted: t.Accepted, Rejected: t.Rejected, Failed: t.Failed, Unjudged: t.Unjudged, Shrinks: t.Shrinks}
		if t.Failed > 0 {
			ht.Class = lowerOutcome(Failed)
		}
		h.Tools = append(h.Tools, ht)
	}
	for _, ent := range slices.Sorted(maps.Keys(f.Pools)) {
		h.Pools = append(h.Pools, htmlFuzzPool{Entity: clean(cut(ent, 256)), IDs: clean(cut(strings.Join(f.Pools[ent], ", "), maxValueText))})
	}
	for _, n := range f.Notes {
		h.Notes = append(h.Notes, clean(cut(n, maxValueText)))
	}
	for _, p := range f.Reproductions {
		hp := htmlFuzzRepro{Rule: clean(p.Rule), Tool: clean(cut(p.Tool, 256)), Turn: clean(cut(p.Turn, 256)), Call: clean(cut(p.Call, 256)),
			What: clean(cut(p.What, maxValueText)), TurnBytes: p.TurnBytes, Bytes: p.Bytes, ShrinkCalls: p.ShrinkCalls,
			Linked: slices.ContainsFunc(r.Rules, func(rule RuleResult) bool { return rule.ID == p.Rule })}
		if p.Arguments != "" {
			hp.Arguments = readable([]byte(p.Arguments), maxExchangeText)
		}
		if p.Shell != "" {
			hp.Shell = codeBlock{{T: clean(cut(p.Shell, maxExchangeText))}}
		}
		h.Repros = append(h.Repros, hp)
	}
	return h
}

// CountLine is the account on one line: the tools fuzzed and skipped,
// the failed turns and their reproductions.
func (h *htmlFuzz) CountLine() string {
	skipped, failed := 0, 0
	for _, t := range h.Tools {
		if t.Skipped != "" {
			skipped++
		}
		failed += t.Failed
	}
	return fmt.Sprintf("%s fuzzed, %d skipped · %s · %s", plural(len(h.Tools)-skipped, "tool"), skipped,
		plural(failed, "failed turn"), plural(len(h.Repros), "reproduction"))
}

// plural is n and noun, the noun with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
