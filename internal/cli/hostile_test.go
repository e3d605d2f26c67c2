package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"golang.org/x/net/html"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/report"
)

// The limits every hostile run is held to (issue 7): the run ends within
// its deadline plus hostileSlack, and its heap grows less than
// hostileMemory (not checked under the race detector).
const (
	hostileTimeout  = 500 * time.Millisecond
	hostileDeadline = 4 * time.Second
	hostileSlack    = time.Second
	hostileMemory   = 256 << 20
	hostileToken    = "hostile-test-token-6a1f0c2e9b"
)

// memWatch measures the memory of what runs between start and stop, in
// this process: the bytes allocated (runtime.MemStats.TotalAlloc delta, an
// upper bound on how much the heap can have grown, whatever the GC did) and
// the peak of live heap objects sampled every millisecond through
// runtime/metrics (which does not stop the world). Both include whatever
// else runs in the process at the time, the hostile server among it, so
// they over-count the harness.
type memWatch struct {
	// gc is the GOGC in force before the watch applied the binary's
	// (cli.SetGC): a run's memory is held to the binary's targets.
	gc         int
	startAlloc uint64
	base       uint64
	peak       uint64
	stopCh     chan struct{}
	wg         sync.WaitGroup
}

const heapObjects = "/memory/classes/heap/objects:bytes"

func readHeapObjects(s []metrics.Sample) uint64 {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func startMemWatch() *memWatch {
	gc := debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	SetGC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := &memWatch{gc: gc, startAlloc: ms.TotalAlloc, stopCh: make(chan struct{})}
	s := []metrics.Sample{{Name: heapObjects}}
	w.base = readHeapObjects(s)
	w.peak = w.base
	w.wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stopCh:
				return
			case <-tick.C:
				w.peak = max(w.peak, readHeapObjects(s))
			}
		}
	})
	return w
}

// stop returns the bytes allocated and the growth of the sampled peak heap
// over the heap at start.
func (w *memWatch) stop() (allocated, peakGrowth uint64) {
	close(w.stopCh)
	w.wg.Wait()
	defer debug.SetGCPercent(w.gc)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc - w.startAlloc, w.peak - w.base
}

// hostileRun runs `adcp-conform run` against url with the hostile limits,
// -v on, and fails the test if the command panics or does not return
// within the deadline plus a margin.
func hostileRun(t *testing.T, url, dir string, extra ...string) (code ExitCode, out, errOut string, took time.Duration) {
	t.Helper()
	args := append([]string{"run", "--mcp", url, "--out", dir, "--timeout", hostileTimeout.String(),
		"--deadline", hostileDeadline.String(), "--bearer-env", "HOSTILE_TOKEN", "-v"}, extra...)
	return guardedRun(t, args, map[string]string{"HOSTILE_TOKEN": hostileToken}, hangAfter())
}

// guardedRun runs the command line in process with the environment env and
// fails the test if it panics or does not return within hang, with every
// goroutine's stack: a hostile seller must never hang or crash the run.
func guardedRun(t *testing.T, args []string, env map[string]string, hang time.Duration) (code ExitCode, out, errOut string, took time.Duration) {
	t.Helper()
	return guardedRunLate(t, fetch.Network{}, args, env, 0, hang)
}

// guardedRunLate is guardedRun with the run's guard on network n that,
// when the run has not returned after late (0: never), takes every
// goroutine's stack then and logs it once the run is over: what held a run
// past its bound, though it ended.
func guardedRunLate(t *testing.T, n fetch.Network, args []string, env map[string]string, late, hang time.Duration) (code ExitCode, out, errOut string, took time.Duration) {
	t.Helper()
	var ob, eb bytes.Buffer
	done := make(chan any, 1)
	start := time.Now()
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Sprintf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		done <- Main(args, Stdio{In: strings.NewReader(""), Out: &ob, Err: &eb, Getenv: func(k string) string { return env[k] }, network: n})
	}()
	var lateStacks []byte
	var lateTimer <-chan time.Time
	if late > 0 {
		lateTimer = time.After(late)
	}
	hung := time.After(hang)
	for {
		select {
		case r := <-done:
			took = time.Since(start)
			if lateStacks != nil {
				t.Logf("the run was still going %v after start; its goroutines then:\n%s", late, lateStacks)
			}
			c, ok := r.(ExitCode)
			if !ok {
				t.Fatalf("the run panicked: %v", r)
			}
			return c, ob.String(), eb.String(), took
		case <-lateTimer:
			buf := make([]byte, 1<<20)
			lateStacks = buf[:runtime.Stack(buf, true)]
		case <-hung:
			buf := make([]byte, 4<<20)
			t.Fatalf("the run hung (no return %v after start)\n%s", time.Since(start), buf[:runtime.Stack(buf, true)])
		}
	}
}

// overTarget names the fixtures known to miss the targets (the
// deadline + 1 s, 256 MB), and why; they are held to the looser
// overTargetSlack and overTargetMemory so a regression still fails. The run
// deadline bounds the probes only: judging and report writing come after it
// and cost time and memory in proportion to the reply bytes times the rules
// that read them (each judge parses every reply again; every failed rule
// carries its evidence into results.json).
var overTarget = map[hostile.Behaviour]string{
	// None since the judges parse each reply once per run (the 1 MB reader
	// attack went from 4.5–6.6 s to about 3 s against a 4 s deadline).
}

const (
	overTargetSlack  = 6 * time.Second
	overTargetMemory = 512 << 20
)

// cpuHeavy are the fixtures whose runs are CPU-bound (megabytes parsed,
// decompressed, judged and written): 15 to 60 s each under the race
// detector, so they run only without it.
var cpuHeavy = map[hostile.Behaviour]bool{hostile.HugeBody: true, hostile.GzipBomb: true, hostile.ReaderAttack: true}

// hangAfter is how long hostileRun waits before calling a run hung: well
// past the deadline, and longer under the race detector.
func hangAfter() time.Duration {
	if raceEnabled {
		return 3 * time.Minute
	}
	return hostileDeadline + 10*time.Second
}

// TestHostileSellers points the run at each hostile MCP seller: it ends
// within its deadline (+1 s), writes its four reports, reports a failed
// rule or a harness error with the recorded evidence, and allocates less
// than 256 MB.
func TestHostileSellers(t *testing.T) {
	if testing.Short() {
		t.Skip("hostile sellers take about a minute")
	}
	for _, b := range hostile.Behaviours {
		t.Run(string(b), func(t *testing.T) {
			if raceEnabled && cpuHeavy[b] {
				t.Skip("CPU-bound for a minute under the race detector; run without -race: go test -run TestHostileSellers ./internal/cli/")
			}
			if raceEnabled {
				// Under the race detector time is not held, and the runs
				// mostly wait on the sellers: two at a time (-parallel),
				// within CI's 15 minutes. Without it, one by one.
				t.Parallel()
			}
			m := hostile.StartMCP(b)
			defer m.Stop()
			dir := t.TempDir()
			mem := startMemWatch()
			code, out, errOut, took := hostileRun(t, m.URL, dir)
			allocated, peak := mem.stop()
			r := readResults(t, dir)
			t.Logf("%s: exit %d in %v, allocated %.1f MB, peak heap growth %.1f MB (sampled); verdict %s, failed %v, harness error %q",
				b, code, took.Round(time.Millisecond), float64(allocated)/(1<<20), float64(peak)/(1<<20),
				r.Verdict, failedRules(r), cutText(r.HarnessError, 160))
			slack, memLimit := hostileSlack, uint64(hostileMemory)
			if why, ok := overTarget[b]; ok {
				t.Logf("OVER TARGET (known): %s", why)
				slack, memLimit = overTargetSlack, overTargetMemory
			}
			held := !raceEnabled && os.Getenv("ADCP_CONFORM_HOSTILE_TARGETS") != ""
			switch {
			case !held:
				t.Log("time and memory are logged, not held to the targets (set ADCP_CONFORM_HOSTILE_TARGETS=1 without -race, on an otherwise idle machine, as .ci/run does)")
			case took > hostileDeadline+slack:
				t.Errorf("the run took %v, over its deadline %v + %v", took, hostileDeadline, slack)
			}
			if held && peak >= memLimit {
				t.Errorf("memory: peak heap growth %d bytes (%d allocated); limit %d", peak, allocated, memLimit)
			}
			if code != ExitNonConformant && code != ExitHarness {
				t.Errorf("exit %d, want %d (a failed rule) or %d (a harness error)\n%s\n%s", code, ExitNonConformant, ExitHarness, out, tail(errOut))
			}
			for _, f := range []string{FileJUnit, FileHTML, FileResults, FileEvidence} {
				if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
					t.Errorf("%s not written: %v", f, err)
				}
			}
			if why := evidenced(r); why != "" {
				t.Errorf("no failed rule or harness error with evidence: %s\nverdict %s, counts %v", why, r.Verdict, r.Counts)
			}
			checkReaderSafe(t, dir, out, errOut)
			if b == hostile.RedirectOffHost {
				for _, req := range m.OffHost.Requests() {
					if req.Header.Get("Authorization") != "" || strings.Contains(fmt.Sprint(req.Header), hostileToken) ||
						bytes.Contains(req.Body, []byte(hostileToken)) {
						t.Errorf("the other host received credentials: %s %s %v", req.Method, req.URL, req.Header)
					}
				}
			}
		})
	}
}

// evidenced says why r holds no failed rule with evidence and no harness
// error (run-level, or a rule in error) backed by recorded calls; "" when
// it does.
func evidenced(r report.Run) string {
	for _, rule := range r.Rules {
		if (rule.Outcome == report.Failed || rule.Outcome == report.Error) && len(rule.Evidence) > 0 {
			return ""
		}
	}
	if r.HarnessError != "" && len(r.Steps) > 0 {
		return ""
	}
	return fmt.Sprintf("harness error %q, %d steps", r.HarnessError, len(r.Steps))
}

func failedRules(r report.Run) []string {
	var ids []string
	for _, rule := range r.Rules {
		if rule.Outcome == report.Failed {
			ids = append(ids, rule.ID)
		}
	}
	return ids
}

func cutText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// unsafeRune reports a rune a terminal or a log must never receive from a
// seller: C0 and C1 controls (but newline and tab), DEL, and the bidi
// overrides and isolates.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == unicode.ReplacementChar:
		return false
	}
	return false
}

// checkReaderSafe holds the terminal output, the logs (-v on stderr) and
// the reports to what a reader of a hostile seller's run must be safe
// from: no control characters or bidi overrides on the terminal, no forged
// log line, and a report.html whose only script is its own, whose markup
// holds no seller element or event attribute, and a junit.xml that parses.
func checkReaderSafe(t *testing.T, dir, out, errOut string) {
	t.Helper()
	for name, s := range map[string]string{"stdout": out, "stderr": errOut} {
		for i, r := range s {
			if unsafeRune(r) {
				t.Errorf("%s has %U at byte %d: %q", name, r, i, s[max(0, i-40):min(len(s), i+40)])
				break
			}
		}
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), hostile.ForgedLogLine) {
				t.Errorf("%s holds a forged log line: %q", name, line)
			}
		}
		if len(s) > 4<<20 {
			t.Errorf("%s is %d bytes long", name, len(s))
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, FileHTML))
	if err != nil {
		t.Fatal(err)
	}
	if bad := unsafeMarkup(page); bad != "" {
		t.Errorf("report.html: %s", bad)
	}
	for _, s := range []string{"\x1b", "\u202e", "\r\n" + hostile.ForgedLogLine} {
		if bytes.Contains(page, []byte(s)) {
			t.Errorf("report.html holds %q raw", s)
		}
	}
	junit, err := os.ReadFile(filepath.Join(dir, FileJUnit))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := xml.Unmarshal(junit, &v); err != nil {
		t.Errorf("junit.xml does not parse: %v", err)
	}
	for _, f := range []string{FileResults, FileEvidence} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Errorf("%s is not valid JSON", f)
		}
	}
}

// pageElements are the elements report.html is made of; anything else
// came from a seller.
var pageElements = map[string]bool{"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true,
	"header": true, "main": true, "footer": true, "section": true, "h1": true, "h2": true, "h3": true, "h4": true, "p": true,
	"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "details": true, "summary": true,
	"pre": true, "code": true, "span": true, "div": true, "ul": true, "ol": true, "li": true, "a": true, "button": true,
	"select": true, "option": true, "label": true, "nav": true, "small": true, "strong": true, "em": true, "dl": true,
	"dt": true, "dd": true, "script": true, "b": false, "img": false, "svg": false, "iframe": false, "caption": true,
	"abbr": true, "time": true, "mark": true, "output": true, "fieldset": true, "legend": true, "kbd": true, "br": true,
	"sup": true, "sub": true, "q": true}

// unsafeMarkup returns what in page could only have come from a seller: an
// element outside the page's own set, a second script, an event-handler
// attribute or a javascript: URL; "" when none.
func unsafeMarkup(page []byte) string {
	z := html.NewTokenizer(bytes.NewReader(page))
	scripts := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			if scripts != 1 {
				return fmt.Sprintf("%d script elements, want the page's own only", scripts)
			}
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if !pageElements[tok.Data] {
				return fmt.Sprintf("element <%s> is not the page's", tok.Data)
			}
			if tok.Data == "script" {
				scripts++
			}
			for _, a := range tok.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					return fmt.Sprintf("event attribute %s=%q", a.Key, a.Val)
				}
				if strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") {
					return fmt.Sprintf("javascript: URL in %s", a.Key)
				}
			}
		}
	}
}
