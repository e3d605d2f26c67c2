package report

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestCatalogueMarkdownRendersCodeAndStrongOnly(t *testing.T) {
	for in, want := range map[string]string{
		"a `context` **MUST** be echoed":     "a <code>context</code> <strong>MUST</strong> be echoed",
		"`**not bold**` in code":             "<code>**not bold**</code> in code",
		"<b>x</b> & `<i>`":                   "&lt;b&gt;x&lt;/b&gt; &amp; <code>&lt;i&gt;</code>",
		"an unpaired ` backtick":             "an unpaired ` backtick",
		"**<script>alert(1)</script>**":      "<strong>&lt;script&gt;alert(1)&lt;/script&gt;</strong>",
		"seeds `001_…txt` (Producer rule)":   "seeds <code>001_…txt</code> (Producer rule)",
		"control\x1b[31m and \u202Ebidi are": "control\uFFFD[31m and \uFFFDbidi are",
	} {
		if got := string(catalogueMarkdown(in)); got != want {
			t.Errorf("catalogueMarkdown(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSpecLinksComeFromTheSourceElseTheFamily(t *testing.T) {
	r := RuleResult{Family: "ERR", Source: "building/by-layer/L3/error-handling.mdx; §4.20 and reference/versioning.mdx"}
	got := specLinks(r)
	if len(got) != 2 || got[0].URL != "https://adcontextprotocol.org/docs/building/by-layer/L3/error-handling" ||
		got[1].URL != "https://adcontextprotocol.org/docs/reference/versioning" {
		t.Errorf("links %+v", got)
	}
	if got := specLinks(RuleResult{Family: "CTX", Source: "§4.12"}); len(got) != 1 ||
		got[0].URL != "https://adcontextprotocol.org/docs/building/by-layer/L2/context-sessions" {
		t.Errorf("family fallback %+v", got)
	}
}

// readableRun is a CTX failure seen on three probes — the same finding at
// the same pointer — with the value absent and the request's context
// recorded.
func readableRun() *Run {
	r := &Run{Tool: "adcp-conform", Transports: []string{"mcp"},
		Rules: []RuleResult{rule("CTX-01", Must, spec(Failed, "CTX-01: drops the context"))}}
	r.Rules[0].Statement = "Every reply echoes the request's `context` **unchanged**."
	ptr := "/result/structuredContent/context"
	for _, p := range []string{"mcp/a/context", "mcp/b/context", "mcp/c/context"} {
		r.Rules[0].Findings = append(r.Rules[0].Findings, Finding{Transport: "mcp", ProbeID: p, JSONPointer: ptr, Message: "is absent"})
		r.Steps = append(r.Steps, Step{StepID: p, Request: &Request{Transport: "mcp", Payload: []byte(`{"context":{"trace":"t-1"},"brief":"x"}`)},
			Validations: []Validation{{Rule: "CTX-01", JSONPointer: &ptr, Expected: "the request's context", Actual: []byte(absentActual)}}})
	}
	r.Settle()
	return r
}

func TestHTMLMakesFailuresReadable(t *testing.T) {
	var out bytes.Buffer
	if err := WriteHTML(&out, readableRun()); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	row := findElement(doc, func(n *html.Node) bool { return attr(n, "id") == "rule-CTX-01" })
	if row == nil {
		t.Fatal("no row for CTX-01")
	}
	text := textOf(row)
	if !strings.Contains(page, "echoes the request&#39;s <code>context</code> <strong>unchanged</strong>.") {
		t.Error("the statement's Markdown is not rendered")
	}
	if strings.Contains(text, "**") || strings.Contains(text, "`") {
		t.Errorf("raw Markdown left in the row: %q", text)
	}
	if n := strings.Count(text, "is absent"); n != 1 || !strings.Contains(text, "×3") {
		t.Errorf("the three alike findings are not collapsed with a count (%d rows): %q", n, text)
	}
	if strings.Contains(text, "(absent)") || findElement(row, func(n *html.Node) bool { return attr(n, "class") == "absent" }) == nil {
		t.Error("the absent value is not shown as a marker")
	}
	if !strings.Contains(text, "sent (the request's context)") || !strings.Contains(text, `"trace": "t-1"`) || strings.Contains(text, `"brief"`) {
		t.Errorf("the CTX finding does not show the context sent: %q", text)
	}
	if findElement(doc, func(n *html.Node) bool { return attr(n, "href") == "#rule-CTX-01" }) == nil {
		t.Error("no failures-first link to the rule")
	}
	if b := findElement(doc, func(n *html.Node) bool { return attr(n, "aria-pressed") == "true" }); b == nil || attr(b, "data-filter-outcome") != "notpassed" {
		t.Error("the outcome filter does not default to not passed")
	}
	if !strings.Contains(filterScript, `outcome: "notpassed"`) {
		t.Error("the script does not start on not passed")
	}
}
