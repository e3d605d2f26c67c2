package report

import (
	"html/template"
	"strings"
	"testing"
)

// TestCodeBlocksWriteWhatTheTemplateWrote checks that a code block renders
// to the bytes html/template writes for its segments (the page's code
// template before blocks were rendered in Go): every byte value, invalid
// UTF-8, markup and references, in plain and classed segments.
func TestCodeBlocksWriteWhatTheTemplateWrote(t *testing.T) {
	ref := template.Must(template.New("code").Parse(
		`{{range .}}{{if .C}}<span class="{{.C}}">{{.T}}</span>{{else}}{{.T}}{{end}}{{end}}`))
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	texts := []string{"", all.String(), `<script>alert("x" + 'y')</script> &amp; &#34;`, "é\u202e\xff\xfe\x00ok",
		strings.Repeat(`{"k": [1, true, "s\"q"]}`, 3)}
	for _, class := range []string{"", "k", "s", "n", "l", `"><x>`} {
		for _, text := range texts {
			block := codeBlock{{C: class, T: text}, {T: text}, {C: "s", T: text}}
			var want strings.Builder
			if err := ref.Execute(&want, block); err != nil {
				t.Fatal(err)
			}
			if got := string(block.HTML()); got != want.String() {
				t.Errorf("class %q, text %q:\n got %q\nwant %q", class, text, got, want.String())
			}
		}
	}
	if got, want := string(readable([]byte(`{"a":"<b>","n":-1.5e3,"t":true}`), 1<<10).HTML()),
		"{\n  <span class=\"k\">&#34;a&#34;</span>: <span class=\"s\">&#34;&lt;b&gt;&#34;</span>,\n"+
			"  <span class=\"k\">&#34;n&#34;</span>: <span class=\"n\">-1.5e3</span>,\n  <span class=\"k\">&#34;t&#34;</span>: <span class=\"l\">true</span>\n}"; got != want {
		t.Errorf("readable JSON:\n got %q\nwant %q", got, want)
	}
}
