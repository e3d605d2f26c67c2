package report

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// runWith is syntheticRun with s in every place a seller's bytes reach the
// page: the target, a rule message, a finding's pointer and message, a
// note, the harness error, an exchange's URL, header value and bodies, and
// a validation's actual value (when s is JSON); and every storyboard string
// the page shows (category, title, description, message, note, skip
// detail, error, notice, payloads); and every string of a fuzz account.
func runWith(s string) *Run {
	r := storyboardRun()
	r.Target = s
	r.HarnessError = s
	r.Notes = append(r.Notes, s)
	r.Rules[1].Specs[0].Message = s
	r.Rules[1].Message = s
	r.Rules[1].Findings = append(r.Rules[1].Findings, Finding{Transport: "mcp", ProbeID: s, JSONPointer: s, Message: s})
	x := &r.Rules[1].Evidence[0].Exchanges[0]
	x.URL = s
	x.Error = s
	x.ResponseHeaders = http.Header{"Content-Type": {s}}
	x.RequestBody = wire.Bytes(s)
	x.ResponseBody = wire.Bytes(s)
	x.Events = []wire.Event{{Type: s, Data: s, Raw: wire.Bytes(s)}}
	if json.Valid([]byte(s)) {
		r.Steps[0].Validations[1].Actual = []byte(s)
	}
	r.Steps[0].Validations[1].Message = s
	for i := range r.Storyboards {
		sb := &r.Storyboards[i]
		sb.Title, sb.Path = s, s
		if i%2 == 0 {
			sb.Category = s
		}
		if sb.Skip != nil {
			sb.Skip.Detail = s
		}
	}
	for i := range r.Steps {
		st := &r.Steps[i]
		if st.StoryboardID == StoryboardID {
			continue
		}
		st.Title = s
		if st.Error != "" {
			st.Error = s
		}
		if st.Skip != nil {
			st.Skip.Detail = s
		}
		for j := range st.Notices {
			st.Notices[j].Message, st.Notices[j].Code = s, s
		}
		for j := range st.Validations {
			v := &st.Validations[j]
			v.Description, v.Note, v.Message, v.Check = s, s, s, s
			v.Observations = []string{s}
			if !v.Passed {
				v.Expected = s
				v.JSONPointer = &s
				if json.Valid([]byte(s)) {
					v.Actual = []byte(s)
				}
			}
		}
		if st.Response != nil && json.Valid([]byte(s)) {
			st.Response.Payload = []byte(s)
		}
		if st.Request != nil {
			st.Request.Operation = s
		}
	}
	r.Fuzz = &Fuzz{Seed: 7, TurnsPerTool: 20, Pools: map[string][]string{s: {s}}, Notes: []string{s},
		Tools:         []FuzzTool{{Tool: s, Tier: s, Turns: 3, Failed: 1}, {Tool: s, Skipped: s}},
		Reproductions: []FuzzRepro{{Rule: s, Tool: s, Turn: s, Call: s, What: s, Arguments: s, Shell: s}}}
	r.Settle()
	return r
}

// markup is what a page is made of: its element names, attribute names,
// and the text of its scripts.
type markup struct {
	elements, attrs map[string]bool
	scripts         []string
}

func markupOf(t *testing.T, page []byte) markup {
	m := markup{elements: map[string]bool{}, attrs: map[string]bool{}}
	z := html.NewTokenizer(bytes.NewReader(page))
	inScript := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return m
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			m.elements[tok.Data] = true
			for _, a := range tok.Attr {
				m.attrs[tok.Data+"@"+a.Key] = true
				if v := strings.ToLower(strings.TrimSpace(a.Val)); strings.HasPrefix(v, "javascript:") {
					t.Fatalf("javascript: URL in <%s %s>", tok.Data, a.Key)
				}
			}
			inScript = tok.Data == "script"
		case html.TextToken:
			if inScript {
				m.scripts = append(m.scripts, string(z.Text()))
			}
		case html.EndTagToken:
			inScript = false
		}
	}
}

// FuzzWriteHTML puts arbitrary seller strings everywhere they reach
// report.html and checks that none becomes markup: every element and
// attribute of the page is one the page has with harmless strings (where
// it already shows JSON evidence and every optional section), and the only
// script is the page's own, unchanged.
func FuzzWriteHTML(f *testing.F) {
	for _, s := range []string{
		`"><script>alert(1)</script>`, `' onmouseover='alert(2)' x='`, `javascript:alert(3)`,
		"\x1b[31m\u202egnp.exe\r\nX: y", `{"a":"<img src=x onerror=alert(4)>"}`, `</pre></td></tr></table><svg onload=alert(5)>`,
		`<!--`, `<![CDATA[`, `</script><script>alert(6)</script>`, `{{.Target}}`, "\xff\xfe<b>", `<a href="//evil">x</a>`,
	} {
		f.Add(s)
	}
	var base bytes.Buffer
	if err := WriteHTML(&base, runWith(`{"benign":["json",1,true,null],"s":"text"}`)); err != nil {
		f.Fatal(err)
	}
	var plain bytes.Buffer
	if err := WriteHTML(&plain, runWith("plain text")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := markupOf(t, base.Bytes())
		for k := range markupOf(t, plain.Bytes()).elements {
			want.elements[k] = true
		}
		for k := range markupOf(t, plain.Bytes()).attrs {
			want.attrs[k] = true
		}
		var out bytes.Buffer
		if err := WriteHTML(&out, runWith(s)); err != nil {
			t.Fatalf("WriteHTML: %v", err)
		}
		got := markupOf(t, out.Bytes())
		for e := range got.elements {
			if !want.elements[e] {
				t.Errorf("element <%s> came from the input %q", e, s)
			}
		}
		for a := range got.attrs {
			if !want.attrs[a] {
				t.Errorf("attribute %s came from the input %q", a, s)
			}
		}
		if len(got.scripts) != 1 || got.scripts[0] != filterScript {
			t.Errorf("%d scripts, or the page's script changed, for input %q", len(got.scripts), s)
		}
	})
}
