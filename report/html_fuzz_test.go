package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

// fuzzRun is a fuzz run's results: the FUZZ rules, FUZZ-04 failed, and
// the account of two tools, one fuzzed with a failed turn shrunk to one
// reproduction, one skipped.
func fuzzRun() *Run {
	r := &Run{Tool: "adcp-conform", Version: "0.1.0", AdcpRelease: "3.1.19", Target: "http://127.0.0.1:8931/mcp",
		StartedAt: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), DurationMS: 4321,
		Rules: []RuleResult{
			rule("FUZZ-01", Must, spec(Passed, "")),
			rule("FUZZ-02", Must, spec(Passed, "")),
			rule("FUZZ-03", Should, spec(Passed, "")),
			rule("FUZZ-04", Must, spec(Failed, "fuzz/s7/get_media_buys/t000: HTTP 500 with no JSON-RPC response")),
			rule("FUZZ-05", Must, spec(Skipped, "no second tenant's credential")),
		}}
	r.Rules[3].Findings = []Finding{{Transport: "mcp", ProbeID: "fuzz/s7/get_media_buys/t000", Message: "HTTP 500 with no JSON-RPC response"}}
	r.Fuzz = &Fuzz{Seed: 7, TurnsPerTool: 20,
		Tools: []FuzzTool{
			{Tool: "get_media_buys", Tier: "read", Turns: 20, Accepted: 12, Rejected: 7, Failed: 1, Unjudged: 0, Shrinks: 23},
			{Tool: "create_media_buy", Skipped: "mutating tool: give --tools create_media_buy to fuzz it"},
		},
		Pools: map[string][]string{"media_buy": {"mb_1", "mb_2"}},
		Notes: []string{"get_media_buys: 3 turns reused an id from the pool"},
		Reproductions: []FuzzRepro{{Rule: "FUZZ-04", Tool: "get_media_buys", Turn: "fuzz/s7/get_media_buys/t000",
			Call: "fuzz/s7/get_media_buys/t000/shrink/016", What: "HTTP 500 Internal Server Error with no JSON-RPC response",
			Arguments: `{"pagination":{}}`, TurnBytes: 326, Bytes: 17, ShrinkCalls: 23,
			Shell: "URL='http://127.0.0.1:8931/mcp'\ncurl -sS \"$URL\" --data-binary '{\"params\":{\"arguments\":{\"pagination\":{}}}}' | adcp-conform extract --jsonrpc --transport mcp\n"}},
	}
	r.Settle()
	return r
}

func TestHTMLFuzzStructureMatchesItsGoldenFile(t *testing.T) {
	var got bytes.Buffer
	if err := WriteHTML(&got, fuzzRun()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report_fuzz.structure.golden"), []byte(outline(t, &got)))
}

// TestHTMLShowsTheFuzzAccount checks the section holds the budget, the
// tools' tallies with the failed one marked and the skipped one's reason,
// and the reproduction linked to its rule with its arguments and replay.
func TestHTMLShowsTheFuzzAccount(t *testing.T) {
	var out bytes.Buffer
	if err := WriteHTML(&out, fuzzRun()); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	sec := byID(doc, "fuzzing")
	if sec == nil {
		t.Fatal("no fuzzing section")
	}
	budget := byID(doc, "fuzz-budget")
	if budget == nil {
		t.Fatal("no budget line")
	}
	if got := textOf(budget); !strings.Contains(got, "seed 7") || !strings.Contains(got, "20 turns per tool") || !strings.Contains(got, "no second tenant") {
		t.Errorf("budget line %q", got)
	}
	rows := findAll(sec, func(n *html.Node) bool { return n.Data == "tr" && strings.HasPrefix(attr(n, "class"), "fuzz-tool") })
	if len(rows) != 2 {
		t.Fatalf("%d tool rows, want 2", len(rows))
	}
	if attr(rows[0], "class") != "fuzz-tool failed" || !strings.Contains(textOf(rows[0]), "get_media_buys") || !strings.Contains(textOf(rows[0]), "23") {
		t.Errorf("the failed tool's row: class %q, text %q", attr(rows[0], "class"), textOf(rows[0]))
	}
	if attr(rows[1], "class") != "fuzz-tool" || !strings.Contains(textOf(rows[1]), "skipped: mutating tool") {
		t.Errorf("the skipped tool's row: class %q, text %q", attr(rows[1], "class"), textOf(rows[1]))
	}
	repro := findAll(sec, func(n *html.Node) bool { return attr(n, "class") == "fuzz-repro" })
	if len(repro) != 1 {
		t.Fatalf("%d reproductions, want 1", len(repro))
	}
	links := findAll(repro[0], func(n *html.Node) bool { return n.Data == "a" })
	if len(links) != 1 || attr(links[0], "href") != "#rule-FUZZ-04" || byID(doc, "rule-FUZZ-04") == nil {
		t.Error("the reproduction does not link its rule's row")
	}
	text := textOf(repro[0])
	for _, want := range []string{"HTTP 500 Internal Server Error", "326 bytes → 17 bytes in 23 shrink calls", "\"pagination\": {}", "adcp-conform extract --jsonrpc"} {
		if !strings.Contains(text, want) {
			t.Errorf("the reproduction lacks %q: %q", want, text)
		}
	}
	if pres := findAll(repro[0], func(n *html.Node) bool { return n.Data == "pre" }); len(pres) != 2 {
		t.Errorf("%d code blocks in the reproduction, want the arguments' and the replay's", len(pres))
	}
	if !strings.Contains(textOf(sec), "3 turns reused an id") || !strings.Contains(textOf(sec), "mb_1, mb_2") {
		t.Error("the notes or the pools are missing")
	}
}

// TestHTMLEscapesTheFuzzAccount puts markup, quotes and control
// characters in a tool name, a finding and the arguments: the page shows
// them as text, never as markup.
func TestHTMLEscapesTheFuzzAccount(t *testing.T) {
	bad := `"><script>alert(1)</script>` + "\x1b[31m\u202e\x00'"
	r := fuzzRun()
	r.Fuzz.Tools[0].Tool = bad
	r.Fuzz.Tools[1].Skipped = bad
	r.Fuzz.Notes = []string{bad}
	p := &r.Fuzz.Reproductions[0]
	p.Tool, p.What, p.Rule = bad, bad, bad
	// JSON escapes the C0 controls; a bidi control stays raw.
	p.Arguments = `{"x":"\"><script>alert(1)</script>\u001b` + "\u202e" + `'"}`
	p.Shell = bad
	r.Fuzz.Pools = map[string][]string{bad: {bad}}
	var out bytes.Buffer
	if err := WriteHTML(&out, r); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d <script elements, want the page's own only", n)
	}
	for _, raw := range []string{"<script>alert", `"><script`, "\x1b", "\u202e", "\x00"} {
		if strings.Contains(page, raw) {
			t.Errorf("the page holds %q unescaped", raw)
		}
	}
	// The tool name, the finding and the arguments' string, each escaped.
	if n := strings.Count(page, "&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"); n < 3 {
		t.Errorf("the escaped text appears %d times, want the tool's, the finding's and more", n)
	}
	if !strings.Contains(page, `\&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\u001b`+"\uFFFD&#39;") {
		t.Error("the arguments are not shown escaped as JSON")
	}
}

func byID(root *html.Node, id string) *html.Node {
	return findElement(root, func(n *html.Node) bool { return attr(n, "id") == id })
}

func findAll(root *html.Node, ok func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && ok(n) {
			out = append(out, n)
		}
	}
	return out
}
