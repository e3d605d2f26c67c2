package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/adcp-conform/adcp-conform/internal/golden"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// outline renders the structure of an HTML page for a golden file: one
// line per element with its id, class, data-*, aria-*, role, for, value and
// type attributes, one quoted line per text (pre text whole, cut), and the
// size of style and script text. The policy's script hash is normalized
// (TestTheScriptIsAllowedByItsHashOnly checks it).
func outline(t *testing.T, r io.Reader) string {
	t.Helper()
	doc, err := html.Parse(r)
	if err != nil {
		t.Fatal(err)
	}
	hash := regexp.MustCompile(`'sha256-[A-Za-z0-9+/=]+'`)
	var b strings.Builder
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		pad := strings.Repeat("  ", depth)
		switch n.Type {
		case html.ElementNode:
			b.WriteString(pad + "<" + n.Data)
			for _, a := range n.Attr {
				k := a.Key
				if k == "id" || k == "class" || k == "open" || k == "role" || k == "for" || k == "value" || k == "type" || k == "href" || k == "hidden" ||
					k == "http-equiv" || strings.HasPrefix(k, "data-") || strings.HasPrefix(k, "aria-") ||
					(k == "content" && strings.Contains(a.Val, "default-src")) {
					fmt.Fprintf(&b, " %s=%q", k, hash.ReplaceAllString(a.Val, "'sha256-HASH'"))
				}
			}
			b.WriteString(">\n")
			switch n.Data {
			case "style", "script":
				fmt.Fprintf(&b, "%s  (%s text)\n", pad, n.Data)
				return
			case "pre":
				fmt.Fprintf(&b, "%s  %q\n", pad, textOf(n))
				return
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c, depth+1)
			}
		case html.TextNode:
			if s := strings.Join(strings.Fields(n.Data), " "); s != "" {
				if len(s) > 120 {
					s = s[:120] + "…"
				}
				fmt.Fprintf(&b, "%s%q\n", pad, s)
			}
		default:
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c, depth)
			}
		}
	}
	walk(doc, 0)
	return b.String()
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func TestHTMLStructureMatchesItsGoldenFile(t *testing.T) {
	var got bytes.Buffer
	if err := WriteHTML(&got, syntheticRun()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report.structure.golden"), []byte(outline(t, &got)))
}

// TestHTMLShowsWhatAFailureNeeds checks the failed rule's row carries the
// rule text, its source, the finding's pointer, the step's expected and
// actual values, and the exchange pretty-printed in a collapsed block.
func TestHTMLShowsWhatAFailureNeeds(t *testing.T) {
	var out bytes.Buffer
	if err := WriteHTML(&out, syntheticRun()); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	row := findElement(doc, func(n *html.Node) bool { return attr(n, "id") == "rule-ENV-02" })
	if row == nil {
		t.Fatal("no row for ENV-02")
	}
	if attr(row, "data-outcome") != "failed" || attr(row, "data-family") != "ENV" || attr(row, "data-transports") != "mcp a2a" {
		t.Errorf("row attributes %v", row.Attr)
	}
	text := textOf(row)
	for _, want := range []string{
		"statement of ENV-02", "source: seeds",
		"/result/structuredContent/payload", "nests body fields",
		"keeps envelope and body fields flat at the root", // expected
		`"note": "<img src=x onerror=alert(5)>"`,          // actual, pretty-printed
		"POST http://127.0.0.1:8931/mcp",
		"\"jsonrpc\": \"2.0\",\n  \"id\": 2,", // the request body, pretty-printed
		"Content-Type: application/json",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the ENV-02 row lacks %q", want)
		}
	}
	if d := findElement(row, func(n *html.Node) bool { return n.Data == "details" }); d == nil || attr(d, "open") != "" {
		t.Error("the exchange is not in a collapsed <details>")
	}
	fences := 0
	for n := range row.Descendants() {
		if strings.Contains(attr(n, "class"), "untrusted") {
			fences++
		}
	}
	// The fence is for the seller's bytes only: the actual value at the
	// pointer and the exchange's response, not the harness's request or
	// the judge's words.
	if fences != 2 {
		t.Errorf("%d untrusted fences in the failed row, want the actual value and the response", fences)
	}
	for n := range row.Descendants() {
		if strings.Contains(attr(n, "class"), "untrusted") && strings.Contains(textOf(n), "POST http://") {
			t.Error("the harness's request is fenced as seller bytes")
		}
	}
	if findElement(doc, func(n *html.Node) bool { return attr(n, "id") == "filters" }) == nil {
		t.Error("no filter controls")
	}
}

func findElement(root *html.Node, ok func(*html.Node) bool) *html.Node {
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && ok(n) {
			return n
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// TestHTMLEscapesSellerStrings puts markup, attribute-breaking quotes and a
// javascript: URL where a seller controls the text, and checks none of it
// survives as markup.
func TestHTMLEscapesSellerStrings(t *testing.T) {
	r := syntheticRun()
	r.Target = `javascript:alert(1)//"><img src=x onerror=alert(2)>`
	r.Rules[1].Specs[0].Message = `"><script>alert(3)</script><a href="javascript:alert(4)">x</a>` + "\u202Egnp.exe\x1b[31m"
	r.Rules[1].Findings[0].JSONPointer = `/a"><script>alert(6)</script>`
	r.Rules[1].Findings[0].Message = r.Rules[1].Specs[0].Message
	r.Notes = append(r.Notes, `<svg onload=alert(7)>`)
	r.Settle()
	var out bytes.Buffer
	if err := WriteHTML(&out, r); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	if strings.Contains(page, "X-Secret-Breadcrumb") {
		t.Error("a response header outside the allowlist reached the page")
	}
	for _, bad := range []string{"<script>alert", "<img src=x", `href="javascript:`, "onerror=alert(2)>", "<svg", "\u202E", "\x1b"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d <script elements, want the page's own only", n)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(3)&lt;/script&gt;") {
		t.Error("the seller's message is not shown escaped")
	}
}

// TestHTMLLoadsNothingFromTheNetwork walks every tag: no element that
// loads a resource, no event handler attribute, links only within the
// page, and one inline script.
func TestHTMLLoadsNothingFromTheNetwork(t *testing.T) {
	var out bytes.Buffer
	if err := WriteHTML(&out, syntheticRun()); err != nil {
		t.Fatal(err)
	}
	z := html.NewTokenizer(&out)
	scripts := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			if scripts != 1 {
				t.Errorf("%d <script> elements, want 1", scripts)
			}
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch tok.Data {
			case "script":
				scripts++
			case "link", "img", "iframe", "object", "embed", "base", "form", "svg", "video", "audio", "source":
				t.Errorf("the page has a <%s> element", tok.Data)
			}
			for _, a := range tok.Attr {
				switch {
				case a.Key == "href" && !strings.HasPrefix(a.Val, "#") && !strings.HasPrefix(a.Val, specDocs),
					a.Key == "src", a.Key == "srcset", a.Key == "action", strings.HasPrefix(a.Key, "on"):
					t.Errorf("<%s> has %s=%q", tok.Data, a.Key, a.Val)
				}
			}
		}
	}
}

// TestTheScriptIsAllowedByItsHashOnly checks the policy allows nothing but
// the page's own script, by the SHA-256 of the exact text between its tags.
func TestTheScriptIsAllowedByItsHashOnly(t *testing.T) {
	var out bytes.Buffer
	if err := WriteHTML(&out, syntheticRun()); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	m := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no inline script")
	}
	sum := sha256.Sum256([]byte(m[1]))
	want := "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "';"
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
	if csp == nil {
		t.Fatal("no Content-Security-Policy meta element")
	}
	policy := html.UnescapeString(csp[1])
	if !strings.Contains(policy, want) {
		t.Errorf("policy %q does not allow the script by its hash (%s)", policy, want)
	}
	if !strings.HasPrefix(policy, "default-src 'none';") || strings.Contains(policy, "unsafe-eval") ||
		strings.Count(policy, "script-src") != 1 || strings.Contains(policy, "script-src 'unsafe-inline'") {
		t.Errorf("policy %q is looser than default-src 'none' plus the hash", policy)
	}
}

func TestReadablePrettyPrintsJSONAndKeepsOtherText(t *testing.T) {
	join := func(segs []seg) string {
		var b strings.Builder
		for _, s := range segs {
			b.WriteString(s.T)
		}
		return b.String()
	}
	segs := readable([]byte(`{"a":[1,"x\"y",true],"b":null}`), 1<<10)
	if got := join(segs); got != "{\n  \"a\": [\n    1,\n    \"x\\\"y\",\n    true\n  ],\n  \"b\": null\n}" {
		t.Errorf("pretty JSON = %q", got)
	}
	classes := map[string]string{}
	for _, s := range segs {
		if s.C != "" {
			classes[s.T] = s.C
		}
	}
	if classes[`"a"`] != "k" || classes[`"x\"y"`] != "s" || classes["1"] != "n" || classes["true"] != "l" || classes["null"] != "l" {
		t.Errorf("classes %v", classes)
	}
	if got := join(readable([]byte("not json\x1b[31m"), 1<<10)); got != "not json\uFFFD[31m" {
		t.Errorf("plain text = %q", got)
	}
	long := join(readable([]byte(`{"s":"`+strings.Repeat("é", 100)+`"}`), 50))
	if !strings.HasSuffix(long, "… (cut)") || !strings.ContainsRune(long, 'é') || strings.ContainsRune(long, '\uFFFD') {
		t.Errorf("cut text = %q", long)
	}
}

func TestExchangesShowServerSentEventsReadably(t *testing.T) {
	x := wire.Exchange{Method: "POST", URL: "http://127.0.0.1/mcp", Status: 200, DurationMS: 2,
		ResponseHeaders: http.Header{"Content-Type": {"text/event-stream"}, "Set-Cookie": {"secret"}},
		ResponseBody:    wire.Bytes("event: message\ndata: {\"id\":1}\n\n"),
		Events:          []wire.Event{{Data: `{"id":1}`}}}
	hx := readableExchange(Evidence{ProbeID: "p", Transport: "mcp"}, x)
	var body strings.Builder
	for _, s := range hx.ResponseBody {
		body.WriteString(s.T)
	}
	if body.String() != "event: message\n{\n  \"id\": 1\n}\n" {
		t.Errorf("SSE body = %q", body.String())
	}
	if strings.Join(hx.Headers, "|") != "Content-Type: text/event-stream" {
		t.Errorf("headers %v, want the allowlisted ones only", hx.Headers)
	}
}

// TestHTMLMarksBaselineEntries checks a stale entry and an expected failure
// are labelled on their rows.
func TestHTMLMarksBaselineEntries(t *testing.T) {
	var out bytes.Buffer
	if err := WriteHTML(&out, summaryRun()); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"rule-CTX-04": "stale entry — the rule passes now; remove it from the baseline (fixed in 2.1)",
		"rule-CTX-05": "expected failure (tracked as SELL-12)",
	} {
		row := findElement(doc, func(n *html.Node) bool { return attr(n, "id") == id })
		if row == nil {
			t.Fatalf("no row %s", id)
		}
		if attr(row, "data-baseline") == "" || !strings.Contains(textOf(row), want) {
			t.Errorf("%s: data-baseline %q, text lacks %q", id, attr(row, "data-baseline"), want)
		}
	}
}

func TestHTMLShowsPublishabilityOnACertificationRunOnly(t *testing.T) {
	for _, certify := range []bool{false, true} {
		r := syntheticRun()
		r.Certify, r.Publishable = certify, false
		r.PublishableReason = "not a certification run (--certify); the target is not served over HTTPS"
		var out bytes.Buffer
		if err := WriteHTML(&out, r); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "not publishable"); got != certify {
			t.Errorf("certify %v: the page shows \"not publishable\": %v", certify, got)
		}
	}
}

// TestHTMLMarksBaselineStorySteps checks a storyboard listed step by step:
// the listed step shows its mark with the reason, the spec text and the
// upstream link (a javascript: URL is neutralized), the storyboard how
// many steps are listed.
func TestHTMLMarksBaselineStorySteps(t *testing.T) {
	r := storyboardRun()
	r.Baseline = []BaselineEntry{{Rule: "storyboard:media_buy_seller", Step: "create/create_media_buy", Reason: "asks what the spec does not",
		Spec: "error-codes: CREATIVE_NOT_FOUND", Upstream: "https://github.com/adcontextprotocol/adcp/issues/1"},
		{Rule: "storyboard:capability_discovery", Step: "protocol_discovery/get_capabilities", Reason: "fixed", Upstream: "javascript:alert(1)"}}
	r.Settle()
	var out bytes.Buffer
	if err := WriteHTML(&out, r); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	for _, want := range []string{"baseline: 1 listed step — ",
		"baseline: expected failure (asks what the spec does not)", "the spec: error-codes: CREATIVE_NOT_FOUND",
		`<a href="https://github.com/adcontextprotocol/adcp/issues/1">`,
		"baseline: stale entry — the step passes now; remove it from the baseline (fixed)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, `href="javascript:`) {
		t.Error("a javascript: upstream is a link")
	}
}
