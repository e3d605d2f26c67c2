package browsertest

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
)

// The hostile strings a seller puts in its replies. Each would set
// window.__pwned if it ran.
const (
	hostileScript = `<script>window.__pwned = "script"</script>`
	hostileImg    = `<img src=x onerror="window.__pwned = 'onerror'">`
	hostileLink   = `<a id="evil" href="javascript:window.__pwned='link'">click me</a>`
	hostileAll    = hostileScript + hostileImg + hostileLink
)

// hostileRun is a failing run whose seller-controlled strings — messages,
// findings, notes, a JSON pointer, the recorded values and the exchange —
// all carry the hostile markup.
func hostileRun() *report.Run {
	spec := func(o report.Outcome, tr, msg string) report.SpecResult {
		return report.SpecResult{Name: "judge", Transport: tr, Outcome: o, Message: msg}
	}
	rule := func(id string, transports []string, specs ...report.SpecResult) report.RuleResult {
		return report.RuleResult{ID: id, Family: strings.SplitN(id, "-", 2)[0], Level: report.Must, Transports: transports,
			Statement: "statement of " + id, Source: "§4.1", Specs: specs}
	}
	mcp, both := []string{"mcp"}, []string{"mcp", "a2a"}
	r := &report.Run{Tool: "adcp-conform", Version: "0.1.0", AdcpRelease: "3.1.19", MCPProtocolVersion: "2025-06-18",
		Target: "http://127.0.0.1:8931/mcp", StartedAt: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), DurationMS: 321,
		Notes: []string{"note from the seller: " + hostileAll},
		Rules: []report.RuleResult{
			rule("ENV-01", mcp, spec(report.Passed, "mcp", "")),
			rule("ENV-02", both, spec(report.Failed, "mcp", "ENV-02: mcp/get_products/valid: /payload nests body fields "+hostileAll)),
			rule("ENV-03", both, spec(report.Passed, "mcp", ""), spec(report.Passed, "a2a", "")),
			rule("CTX-01", mcp, spec(report.Skipped, "mcp", "no call without context")),
			rule("AUTH-01", mcp, spec(report.Error, "mcp", "mcp/get_products/auth_none: timeout "+hostileLink)),
			rule("A2A-01", []string{"a2a"}, spec(report.Passed, "a2a", "")),
		}}
	pointer := `/result/structuredContent/payload`
	r.Rules[1].Findings = []report.Finding{
		{Transport: "mcp", ProbeID: "mcp/get_products/valid", JSONPointer: pointer, Message: "nests body fields"},
		{Transport: "mcp", ProbeID: "mcp/get_products/valid", JSONPointer: "/result/" + hostileImg, Message: hostileScript},
	}
	body := `{"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"payload":{"note":` + jsonString(hostileAll) + `}}}}`
	r.Rules[1].Evidence = []report.Evidence{{Transport: "mcp", ProbeID: "mcp/get_products/valid", Exchanges: []wire.Exchange{{
		Method: "POST", URL: "http://127.0.0.1:8931/mcp", RequestBody: wire.Bytes(`{"jsonrpc":"2.0","id":2,"method":"tools/call"}`),
		Status: 200, ResponseHeaders: http.Header{"Content-Type": {"application/json; " + hostileScript}},
		ResponseBody: wire.Bytes(body), DurationMS: 1.5,
	}}}}
	r.Steps = []report.Step{{StoryboardID: "adcp_conform", PhaseID: "mcp", StepID: "mcp/get_products/valid", Task: "get_products",
		Validations: []report.Validation{{Check: "rule", Rule: "ENV-02", Description: "keeps envelope and body fields flat",
			JSONPointer: &pointer, Expected: "keeps envelope and body fields flat", Actual: []byte(`{"note":` + jsonString(hostileAll) + `}`)}}}}
	// Storyboards: a failing one whose description, actual value, response
	// and error carry the hostile markup, a passing one, and one skipped
	// with a hostile detail.
	r.Storyboards = []report.StoryboardResult{
		{ID: "media_buy_seller", Title: "Media buy " + hostileImg, Category: "media-buy", Path: "protocols/media-buy/index.yaml"},
		{ID: "capability_discovery", Title: "Capability discovery", Category: "universal"},
		{ID: "signal_marketplace", Category: "specialism/signal-marketplace", Skip: &report.Skip{Reason: "not_applicable", Detail: "not declared " + hostileAll}},
	}
	status := "/status"
	r.Steps = append(r.Steps,
		report.Step{StoryboardID: "capability_discovery", PhaseID: "discovery", StepID: "get_capabilities", Task: "get_adcp_capabilities", Passed: true,
			Validations: []report.Validation{}, Extraction: report.Extraction{Path: "structured_content"}},
		report.Step{StoryboardID: "media_buy_seller", PhaseID: "create", StepID: "create_media_buy", Task: "create_media_buy",
			Validations: []report.Validation{{Check: "field_value", Description: "pending " + hostileScript, JSONPointer: &status,
				Expected: "pending_activation", Actual: []byte(jsonString(hostileAll)), Message: "status is " + hostileImg},
				{Check: "field_pattern", Severity: report.Advisory, Description: "advisory " + hostileLink, JSONPointer: &status,
					Expected: map[string]any{"pattern": "^p"}, Actual: []byte(jsonString(hostileImg))}},
			Extraction: report.Extraction{Path: "structured_content"},
			Request:    &report.Request{Transport: "mcp", Operation: "create_media_buy", Payload: []byte(`{"buyer_ref":"b-1"}`)},
			Response:   &report.Response{Transport: "mcp", Status: 200, Payload: []byte(`{"status":` + jsonString(hostileAll) + `}`)}},
		report.Step{StoryboardID: "media_buy_seller", PhaseID: "delivery", StepID: "get_delivery", Task: "get_media_buy_delivery",
			Error: "timeout " + hostileLink, Validations: []report.Validation{}, Extraction: report.Extraction{Path: "none"}})
	// A fuzz account whose tool names, skip reason, finding, arguments,
	// replay and notes carry the hostile markup.
	r.Fuzz = &report.Fuzz{Seed: 7, TurnsPerTool: 20, Notes: []string{"note " + hostileAll},
		Tools: []report.FuzzTool{{Tool: "get_media_buys" + hostileImg, Tier: "read", Turns: 20, Accepted: 12, Rejected: 7, Failed: 1, Shrinks: 23},
			{Tool: "create_media_buy", Skipped: "skipped " + hostileAll}},
		Reproductions: []report.FuzzRepro{{Rule: "FUZZ-04", Tool: "get_media_buys" + hostileImg, Turn: "fuzz/s7/t000", Call: "fuzz/s7/t000/shrink/016",
			What: "fuzz finding " + hostileScript, Arguments: `{"x":` + jsonString(hostileAll) + `}`, TurnBytes: 326, Bytes: 17, ShrinkCalls: 23,
			Shell: "curl " + hostileLink}}}
	r.Settle()
	return r
}

func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// findBrowser returns the Chromium to drive, or skips the test (fails it
// under CI, where .ci/run installs one).
func findBrowser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ADCP_CONFORM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (looked for $ADCP_CONFORM_CHROMIUM, chromium, chromium-browser, google-chrome): " +
		"install Debian's chromium package (apt-get install chromium) to run the report's browser test"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI must have it (.ci/run installs it)")
	}
	t.Skip(msg)
	return ""
}

// browser starts a headless Chromium for the test and returns a tab's
// context. The sandbox is off: the tab only opens the test's own file.
func browser(t *testing.T, bin string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 1400), chromedp.UserDataDir(t.TempDir()))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	tab, tcancel := chromedp.NewContext(actx)
	t.Cleanup(tcancel)
	if err := chromedp.Do(tab, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	return tab
}

// watch records, for every page the tab loads, the Content-Security-Policy
// violations in window.__csp, and counts the JavaScript dialogs opened
// (each is dismissed).
func watch(t *testing.T, tab context.Context) *atomic.Int32 {
	t.Helper()
	_, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__csp = []; document.addEventListener("securitypolicyviolation", function (e) { window.__csp.push(e.violatedDirective + " " + e.blockedURI); });`})
	if err != nil {
		t.Fatal(err)
	}
	var dialogs atomic.Int32
	events := chromedp.Events(tab, page.JavascriptDialogOpening)
	go func() {
		for _, err := range events {
			if err != nil {
				return
			}
			dialogs.Add(1)
			_, _ = chromedp.Call(tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return &dialogs
}

// outDir is where the test leaves its page and screenshot for a person to
// look at: testdata/out, ignored by git.
func outDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writePage(t *testing.T, path string, r *report.Run, tamper func(string) string) {
	t.Helper()
	var b strings.Builder
	if err := report.WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if tamper != nil {
		page = tamper(page)
	}
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, tab context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// visibleRules lists the IDs of the rule rows a person sees.
const visibleRules = `Array.from(document.querySelectorAll("tr.rule")).filter(function (r) { return r.offsetParent !== null; }).map(function (r) { return r.id.replace("rule-", ""); }).join(" ")`

// TestReportInChromium opens the report of a failing run with hostile
// seller strings: the verdict shows, the filters work, no hostile string
// runs, and a screenshot is written.
func TestReportInChromium(t *testing.T) {
	bin := findBrowser(t)
	tab := browser(t, bin)
	dialogs := watch(t, tab)
	dir := outDir(t)
	htmlPath := filepath.Join(dir, "report-failing.html")
	writePage(t, htmlPath, hostileRun(), nil)

	if err := chromedp.Do(tab,
		chromedp.Navigate("file://"+htmlPath),
		chromedp.WaitVisible(chromedp.CSS("#verdict")),
		chromedp.WaitReady(chromedp.CSS(`html[data-filters="ready"]`)),
	); err != nil {
		t.Fatalf("loading the report: %v", err)
	}
	verdict, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#verdict")))
	if err != nil || verdict != "non_conformant" {
		t.Fatalf("verdict %q (%v), want non_conformant", verdict, err)
	}
	// The page opens on what did not pass: the failures first.
	if got := eval[string](t, tab, visibleRules); got != "ENV-02 CTX-01 AUTH-01" {
		t.Fatalf("visible rules as the page opens: %q, want the not passed ones", got)
	}
	if got := eval[string](t, tab, `document.querySelector("#attention").innerText`); !strings.Contains(got, "ENV-02") || !strings.Contains(got, "AUTH-01") {
		t.Errorf("the failures-first list lacks ENV-02 or AUTH-01: %q", got)
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`button[data-filter-outcome="all"]`))); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, tab, visibleRules); got != "ENV-01 ENV-02 ENV-03 CTX-01 AUTH-01 A2A-01" {
		t.Fatalf("visible rules with all: %q", got)
	}

	t.Run("filters", func(t *testing.T) {
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`button[data-filter-outcome="failed"]`))); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, visibleRules); got != "ENV-02" {
			t.Errorf("after clicking failed, visible rules %q, want ENV-02 only", got)
		}
		if eval[bool](t, tab, `document.getElementById("family-CTX").offsetParent !== null`) {
			t.Error("a family with no failed rule still shows its section")
		}
		if got := eval[string](t, tab, `document.getElementById("shown").textContent`); got != "1 of 6 rules shown" {
			t.Errorf("the counter says %q", got)
		}
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`button[data-filter-outcome="all"]`))); err != nil {
			t.Fatal(err)
		}
		choose := func(id, value string) {
			t.Helper()
			if err := chromedp.Do(tab, chromedp.SetValue(chromedp.CSS("#"+id), value),
				chromedp.Evaluate[chromedp.Void](`document.getElementById("`+id+`").dispatchEvent(new Event("change"))`)); err != nil {
				t.Fatal(err)
			}
		}
		choose("filter-transport", "a2a")
		if got := eval[string](t, tab, visibleRules); got != "ENV-02 ENV-03 A2A-01" {
			t.Errorf("transport a2a shows %q, want ENV-02 ENV-03 A2A-01", got)
		}
		choose("filter-transport", "all")
		choose("filter-family", "AUTH")
		if got := eval[string](t, tab, visibleRules); got != "AUTH-01" {
			t.Errorf("family AUTH shows %q", got)
		}
		choose("filter-family", "all")
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`button[data-filter-outcome="notpassed"]`))); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, visibleRules); got != "ENV-02 CTX-01 AUTH-01" {
			t.Errorf("not passed shows %q", got)
		}
	})

	t.Run("hostile seller strings stay text", func(t *testing.T) {
		// Open every exchange, so anything hidden in one would load.
		if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("details").forEach(function (d) { d.open = true; })`)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if got := eval[string](t, tab, `String(window.__pwned)`); got != "undefined" {
			t.Errorf("a hostile string ran: window.__pwned = %q", got)
		}
		if n := dialogs.Load(); n != 0 {
			t.Errorf("%d dialogs opened", n)
		}
		if n := eval[int](t, tab, `document.scripts.length`); n != 1 {
			t.Errorf("%d scripts in the page, want its own only", n)
		}
		if n := eval[int](t, tab, `document.querySelectorAll("img, [onerror], [onload], [onclick], a[href^='javascript:'], #evil").length`); n != 0 {
			t.Errorf("%d hostile elements became markup", n)
		}
		if got := eval[string](t, tab, `window.__csp.join("; ")`); got != "" {
			t.Errorf("the policy had to block something (so markup got through, or the page's own script was refused): %s", got)
		}
		text := eval[string](t, tab, `document.body.innerText`)
		for _, want := range []string{hostileScript, `onerror="window.__pwned = 'onerror'"`, `href="javascript:window.__pwned='link'">click me</a>`} {
			if !strings.Contains(text, want) {
				t.Errorf("the page does not show %q as text", want)
			}
		}
		if !eval[bool](t, tab, `Array.from(document.querySelectorAll(".untrusted .fence")).some(function (e) { return e.offsetParent !== null; })`) {
			t.Error("no visible untrusted fence")
		}
		sb := eval[string](t, tab, `document.getElementById("storyboards").innerText`)
		for _, want := range []string{"pending " + hostileScript, "[ADVISORY]", "not declared " + hostileScript} {
			if !strings.Contains(sb, want) {
				t.Errorf("the storyboards section does not show %q as text", want)
			}
		}
		fz := eval[string](t, tab, `document.getElementById("fuzzing").innerText`)
		for _, want := range []string{"fuzz finding " + hostileScript, "skipped " + hostileScript, "curl " + hostileLink} {
			if !strings.Contains(fz, want) {
				t.Errorf("the fuzzing section does not show %q as text", want)
			}
		}
	})

	// The screenshots: the page as it opens (not passed), at a laptop's
	// and a phone's width, with the failure's exchange open.
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`button[data-filter-outcome="notpassed"]`))); err != nil {
		t.Fatal(err)
	}
	for _, shot := range screenshots(t, tab, dir, "report-failing") {
		t.Logf("screenshot: %s (page: %s)", shot, htmlPath)
	}
}

// The widths the screenshots are taken at: a laptop and a phone.
var widths = []struct {
	Name          string
	Width, Height int64
}{{"laptop-1366", 1366, 900}, {"phone-390", 390, 844}}

// screenshots writes a full-page screenshot of the tab at each width into
// dir as NAME-WIDTH.png, checks the page does not scroll sideways there,
// and returns the files' paths.
func screenshots(t *testing.T, tab context.Context, dir, name string) []string {
	t.Helper()
	var paths []string
	for _, w := range widths {
		if err := chromedp.Do(tab, chromedp.EmulateViewport(w.Width, w.Height)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // the layout settles
		if over := eval[int](t, tab, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
			t.Errorf("at %d px the page is %d px too wide: it scrolls sideways", w.Width, over)
		}
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+"-"+w.Name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// TestThePolicyStopsInjectedMarkup is the second line of defence: markup
// spliced into the page past the escaping (as a template bug would) is
// refused by the page's Content-Security-Policy.
func TestThePolicyStopsInjectedMarkup(t *testing.T) {
	bin := findBrowser(t)
	tab := browser(t, bin)
	dialogs := watch(t, tab)
	htmlPath := filepath.Join(t.TempDir(), "report-tampered.html")
	writePage(t, htmlPath, hostileRun(), func(page string) string {
		return strings.Replace(page, `<p class="counts">`, hostileScript+hostileImg+`<button id="evilbutton" onclick="window.__pwned='click'">x</button><p class="counts">`, 1)
	})
	if err := chromedp.Do(tab,
		chromedp.Navigate("file://"+htmlPath),
		chromedp.WaitReady(chromedp.CSS(`html[data-filters="ready"]`)),
		chromedp.Click(chromedp.CSS("#evilbutton")),
	); err != nil {
		t.Fatalf("loading the tampered report: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if got := eval[string](t, tab, `String(window.__pwned)`); got != "undefined" {
		t.Errorf("injected markup ran under the policy: window.__pwned = %q", got)
	}
	if n := dialogs.Load(); n != 0 {
		t.Errorf("%d dialogs opened", n)
	}
	if got := eval[string](t, tab, `window.__csp.join("; ")`); !strings.Contains(got, "script-src") {
		t.Errorf("the policy reported no blocked script: %q", got)
	}
	if !eval[bool](t, tab, `document.getElementById("filters").hidden === false`) {
		t.Error("the page's own script did not run beside the injected one")
	}

	// The control: without the policy the same markup runs, so the checks
	// above can tell.
	open := filepath.Join(t.TempDir(), "report-no-policy.html")
	writePage(t, open, hostileRun(), func(page string) string {
		page = strings.Replace(page, `http-equiv="Content-Security-Policy"`, `name="x-removed"`, 1)
		return strings.Replace(page, `<p class="counts">`, hostileScript+`<p class="counts">`, 1)
	})
	if err := chromedp.Do(tab, chromedp.Navigate("file://"+open), chromedp.WaitVisible(chromedp.CSS("#verdict"))); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, tab, `String(window.__pwned)`); got != "script" {
		t.Errorf("control: without the policy the injected script should run, window.__pwned = %q", got)
	}
}
