package report

import (
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
	"lower":        func(o Outcome) string { return strings.ToLower(string(o)) },
	"clean":        clean,
	"exchangeText": exchangeText,
	"outcomes":     func() []Outcome { return outcomeOrder },
	"md":           catalogueMarkdown,
	"lowerString":  strings.ToLower,
	"outcomeOf":    attentionOutcome,
}).Parse(htmlSource))

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
	if json.Indent(&out, b, "", "  ") == nil { // Indent validates as json.Valid does
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
	SBAttention []sbAttention
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
}

// htmlAttention is one line of the page's "failures first" list.
type htmlAttention struct {
	ID, Level, Label, Transports, Finding string
	Outcome                               Outcome
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
	RuleResult
	// TransportList is the rule's transports, space-separated, for the
	// transport filter.
	TransportList string
	Findings      []htmlFinding
	Exchanges     []htmlExchange
	Links         []specLink
	// SpecLines are the judges' messages worth showing: all of them, but
	// a failure's when its findings say it better.
	SpecLines []SpecResult
}

// htmlFinding is one finding — or several alike: the same message at the
// same pointer on several probes, collapsed — with the failed validation
// behind the first, if the run's steps recorded one.
type htmlFinding struct {
	Finding
	// Probes are the probes of the collapsed findings, the first's
	// included; Count is how many.
	Probes []string
	Count  int
	// Actual is nil when the value is absent at the pointer (Absent) or
	// the step recorded none.
	Expected codeBlock
	Actual   codeBlock
	Absent   bool
	// Sent is what the harness sent that the finding is about (the
	// request's context, for the CTX rules).
	Sent codeBlock
}

// htmlExchange is one redacted exchange, made readable.
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
// recorded, and its redacted exchanges. Seller-controlled text is escaped
// and fenced as untrusted.
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
		hr := htmlRule{RuleResult: rule, TransportList: strings.Join(trs, " "), Links: specLinks(rule)}
		for _, sp := range rule.Specs {
			if sp.Outcome == Failed && len(rule.Findings) > 0 {
				continue
			}
			hr.SpecLines = append(hr.SpecLines, sp)
		}
		same := map[[3]string]int{}
		for _, f := range rule.Findings {
			k := [3]string{f.Transport, f.JSONPointer, f.Message}
			if i, ok := same[k]; ok {
				hr.Findings[i].Count++
				hr.Findings[i].Probes = append(hr.Findings[i].Probes, f.ProbeID)
				continue
			}
			same[k] = len(hr.Findings)
			hf := htmlFinding{Finding: f, Probes: []string{f.ProbeID}, Count: 1}
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
	v.SBAttention = storyboardAttention(r)
	for i := range v.SBAttention {
		v.SBAttention[i].What = clean(v.SBAttention[i].What)
	}
	v.SBCategories = htmlStoryboards(r)
	v.SBCounts = Counts{}
	for _, sb := range r.Storyboards {
		v.SBCounts[sb.Outcome]++
	}
	v.SBSteps, v.SBAdvisory, v.SBNotApplicable = storyboardStepTally(r)
	return page.Execute(w, v)
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
			Transports: failedTransports(rule), Finding: clean(what), Outcome: rule.Outcome})
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
	hx := htmlExchange{ProbeID: e.ProbeID, Transport: e.Transport,
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
	Storyboards []StoryboardResult
}

// htmlStoryboard is one storyboard's row: its steps, open when it failed
// or errored.
type htmlStoryboard struct {
	StoryboardResult
	Open  bool
	Steps []htmlStep
}

// StepLine is the storyboard's step counts on one line.
func (s htmlStoryboard) StepLine() string { return countLine(s.Counts, storyboardOrder) }

// htmlStep is one storyboard step as the page shows it: a passed step on
// one line; one that did not pass with its failed validations and its
// payloads.
type htmlStep struct {
	Step
	Outcome Outcome
	// Failed are the failed required validations, Advisory the failed
	// advisory ones, NotApplicable those graded not applicable.
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

// htmlValidation is one failed validation, its values made readable.
type htmlValidation struct {
	Validation
	Pointer  string
	Expected codeBlock
	Actual   codeBlock
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
				hs := htmlStoryboard{StoryboardResult: sb, Open: o != Passed}
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
			hc.Skipped[i].Storyboards = append(hc.Skipped[i].Storyboards, sb)
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
	hs := htmlStep{Step: st, Outcome: st.Outcome()}
	for _, v := range st.Validations {
		hs.Observations = append(hs.Observations, v.Observations...)
		switch {
		case v.NotApplicable:
			hs.NotApplicable = append(hs.NotApplicable, v)
		case v.Passed:
		default:
			hv := htmlValidation{Validation: v, Expected: expectedText(v.Expected),
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
