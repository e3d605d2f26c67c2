package report

import (
	_ "embed"
	"html/template"
	"io"
	"strings"
)

//go:embed report.html.tmpl
var htmlSource string

// page is the one template of report.html, parsed at init. html/template
// escapes every value for its context (text, attribute, URL), so seller
// strings can never become markup.
var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"lower": func(o Outcome) string { return strings.ToLower(string(o)) },
	"clean": clean,
}).Parse(htmlSource))

// clean drops what escaping leaves harmful in a page: control characters
// (but newlines and tabs) and the bidi controls that can make text read
// backwards. Each becomes U+FFFD.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0),
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
			return '\uFFFD'
		}
		return r
	}, s)
}

// htmlFamily is one family's section of the page.
type htmlFamily struct {
	ID    string
	Rules []RuleResult
}

// WriteHTML writes report.html: one self-contained file, no network assets,
// with the verdict, the counts and the rules grouped by family; every rule
// that did not pass shows its specs and their messages.
func WriteHTML(w io.Writer, r *Run) error {
	var families []htmlFamily
	for _, rule := range r.Rules {
		if n := len(families); n == 0 || families[n-1].ID != rule.Family {
			families = append(families, htmlFamily{ID: rule.Family})
		}
		f := &families[len(families)-1]
		f.Rules = append(f.Rules, rule)
	}
	return page.Execute(w, struct {
		*Run
		Families []htmlFamily
	}{r, families})
}
