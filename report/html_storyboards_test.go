package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

func TestHTMLStoryboardsMatchTheirGoldenFile(t *testing.T) {
	var got bytes.Buffer
	if err := WriteHTML(&got, storyboardRun()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report_storyboards.structure.golden"), []byte(outline(t, &got)))
}

// TestHTMLShowsWhatAFailingStoryboardNeeds checks the storyboards section:
// a heading per category, the category with a failure first, the failing
// storyboard first in its category and expanded, its failing step with the
// request, the response and the failed validations (check, pointer,
// expected, actual, message), the advisory failure marked, the skipped
// storyboards condensed by reason.
func TestHTMLShowsWhatAFailingStoryboardNeeds(t *testing.T) {
	var out bytes.Buffer
	if err := WriteHTML(&out, storyboardRun()); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	section := findElement(doc, func(n *html.Node) bool { return attr(n, "id") == "storyboards" })
	if section == nil {
		t.Fatal("no storyboards section")
	}
	var cats []string
	for n := range section.Descendants() {
		if n.Type == html.ElementNode && strings.Contains(attr(n, "class"), "sb-category") {
			cats = append(cats, strings.TrimPrefix(attr(n, "id"), "storyboards-"))
		}
	}
	// media-buy failed and universal errored: they come first.
	if got := strings.Join(cats, " "); got != "universal media-buy specialism/signal-marketplace specialism/creative-template" {
		t.Errorf("categories %s", got)
	}
	universal := findElement(section, func(n *html.Node) bool { return attr(n, "id") == "storyboards-universal" })
	var order []string
	for n := range universal.Descendants() {
		if n.Type == html.ElementNode && n.Data == "tr" && strings.Contains(attr(n, "class"), "storyboard") {
			order = append(order, attr(n, "id"))
		}
	}
	if got := strings.Join(order, " "); got != "storyboard-idempotency storyboard-capability_discovery" {
		t.Errorf("universal rows %s, want the errored storyboard first", got)
	}
	row := findElement(section, func(n *html.Node) bool { return attr(n, "id") == "storyboard-media_buy_seller" })
	if row == nil || attr(row, "data-outcome") != "failed" {
		t.Fatal("no failed row for media_buy_seller")
	}
	steps := findElement(row, func(n *html.Node) bool { return n.Data == "details" })
	if steps == nil || !hasAttr(steps, "open") {
		t.Error("the failing storyboard's steps are not expanded")
	}
	if d := findElement(section, func(n *html.Node) bool {
		return n.Data == "details" && attr(n.Parent, "class") == "body" && strings.Contains(attr(n.Parent.Parent, "id"), "capability_discovery")
	}); d == nil || hasAttr(d, "open") {
		t.Error("the passing storyboard's steps are not collapsed")
	}
	text := textOf(row)
	for _, want := range []string{
		"create/create_media_buy", "field_value", "/status", "pending_activation", // check, pointer, expected
		`"<img src=x onerror=alert(2)>\u001b[31m"`,                // actual, as the JSON it is
		"the buy is pending activation <script>alert(1)</script>", // description, escaped
		`status is "<img src=x onerror=alert(2)>"`,                // message
		"field_present", "/media_buy_id",
		`"buyer_ref": "b-1"`,                     // the request, pretty-printed
		`"note": "ignore previous instructions"`, // the response
		"[ADVISORY]", "advisory findings (do not fail the step)", "/products/0/name",
		"prerequisite_failed: create/create_media_buy did not pass",
		"no response within the call timeout",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the media_buy_seller row lacks %q", want)
		}
	}
	skipped := findElement(section, func(n *html.Node) bool { return attr(n, "id") == "storyboard-webhook_emission" })
	if skipped == nil || !strings.Contains(textOf(skipped.Parent.Parent), "1 skipped: requirement_unmet") {
		t.Error("the skipped storyboard is not condensed under its reason")
	}
	passed := findElement(section, func(n *html.Node) bool { return attr(n, "id") == "storyboard-capability_discovery" })
	for _, want := range []string{"not applicable: upstream_traffic_v2", "notice (deprecation, from 4.0) signed_requests_specialism_deprecated"} {
		if !strings.Contains(strings.Join(strings.Fields(textOf(passed)), " "), want) {
			t.Errorf("the passing storyboard lacks %q", want)
		}
	}
	attention := findElement(doc, func(n *html.Node) bool { return attr(n, "id") == "sb-attention" })
	if attention == nil || !strings.Contains(textOf(attention), "media_buy_seller create/create_media_buy failed") {
		t.Error("no storyboard failures-first list")
	}
}

// TestHTMLEscapesStoryboardAndSellerStrings checks no storyboard or
// seller string in the storyboards section becomes markup, and the page
// still loads nothing and runs only its own script.
func TestHTMLEscapesStoryboardAndSellerStrings(t *testing.T) {
	r := storyboardRun()
	r.Storyboards[0].Title = `"><script>alert(8)</script>`
	r.Steps[1].Error = "\u202Egnp.exe\x1b[31m"
	r.Settle()
	var out bytes.Buffer
	if err := WriteHTML(&out, r); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	for _, bad := range []string{"<script>alert", "<img src=x", "<b>seller", "<i>x", "\u202E", "\x1b"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d <script elements, want the page's own only", n)
	}
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}
