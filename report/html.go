package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"

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
}).Parse(htmlSource))

// maxExchangeText bounds each body an exchange shows in the page.
const maxExchangeText = 16 << 10

// exchangeText renders one redacted exchange for reading: the request line,
// the status, the allowlisted response headers and both bodies, bounded.
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
