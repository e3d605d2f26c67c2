package cli

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/leakcheck"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/conform"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

const reportSecret = "rp/Leak+Tok3n-5e6f7a"

// leakyRun is a storyboard run's results (report/testdata) with text
// everywhere a seller's words reach a report: the harness error, the
// notes, each step's error, skip detail, validation descriptions and
// request and response payloads, a storyboard's error.
func leakyRun(t testing.TB, text string) *report.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "report", "testdata", "results_storyboards.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run report.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]string{"media_buy_id": "mb~" + text, "text": `{"id":"` + text + `"}`})
	run.HarnessError, run.Notes = "refused "+text, append(run.Notes, "a note on "+text)
	for i := range run.Steps {
		st := &run.Steps[i]
		st.Error = "the seller answered " + text
		if st.Skip != nil {
			st.Skip.Detail += " " + text
		}
		for j := range st.Validations {
			st.Validations[j].Description += " " + text
		}
		st.Request = &report.Request{Transport: "mcp", Operation: st.Task, Payload: payload}
		st.Response = &report.Response{Transport: "mcp", Payload: payload, Headers: map[string][]string{"X-Echo": {text}}}
	}
	for i := range run.Storyboards {
		run.Storyboards[i].Error = "stopped at " + text
	}
	return &run
}

// FuzzReportsHoldNoEscapedCredential writes the credential escaped at
// random (leakcheck.Escape) wherever a seller's words reach a report, and
// writes every report as a run does (conform.WriteReports, the step
// summary, the terminal's text through Main's guard): no reading of any
// output by any JSON, HTML or URL decoder, or several in turn, holds the
// credential, and results.json and evidence.json stay valid JSON.
func FuzzReportsHoldNoEscapedCredential(f *testing.F) {
	f.Add([]byte{0, 4, 2, 3, 5, 6, 7, 8, 9, 10})
	f.Add([]byte{1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1})
	f.Add([]byte{2, 5, 6, 5, 6, 5, 6, 5, 6, 5, 6, 5, 6, 5, 6, 5, 6, 5, 6, 5, 6, 2, 3})
	f.Add([]byte{3, 9, 1, 9, 1, 9, 1, 9, 1, 9, 1, 9, 1, 9, 1, 9, 1, 9, 1, 9, 1, 0, 0, 3})
	f.Fuzz(func(t *testing.T, pick []byte) {
		if len(pick) > 64 {
			return
		}
		esc := leakcheck.Escape(reportSecret, pick)
		dir := t.TempDir()
		store := evidence.NewStore(evidence.Target{MCP: "http://127.0.0.1:1/mcp"}, reportSecret)
		store.Add(evidence.Call{ProbeID: "storyboard/x/p/s", Transport: evidence.MCP, Kind: evidence.KindToolCall, HarnessError: "refused " + esc,
			Arguments: json.RawMessage(`{"media_buy_id":"mb~` + strings.ReplaceAll(esc, `"`, `\"`) + `"}`)})
		run := leakyRun(t, esc)
		if err := conform.WriteReports(dir, run, store, runner.Selection{}, conform.Finish{}); err != nil {
			t.Fatal(err)
		}
		summary := filepath.Join(dir, "summary.md")
		if err := appendStepSummary(summary, store.Redactor(), run); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		stdio, flush := Stdio{Out: &out, Err: &out}.guarded()
		stdio.redact([]string{reportSecret}, nil)
		if err := report.WriteText(stdio.Out, run, report.TextOptions{Verbose: true, Dir: dir}); err != nil {
			t.Fatal(err)
		}
		flush()
		noLeak(t, dir, []string{reportSecret}, map[string]string{"the terminal": out.String()})
	})
}

// noLeak fails when a secret is in any reading (see leakcheck) of a file
// under dir or of one of the texts, and when a JSON report does not parse.
func noLeak(t *testing.T, dir string, secrets []string, texts map[string]string) {
	t.Helper()
	for name, s := range texts {
		if where := leakcheck.Find([]byte(s), secrets); where != "" {
			t.Errorf("%s holds a credential: %s", name, where)
		}
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if where := leakcheck.Find(b, secrets); where != "" {
			t.Errorf("%s holds a credential: %s", path, where)
		}
		if strings.HasSuffix(path, ".json") && !json.Valid(b) {
			t.Errorf("%s is not valid JSON", path)
		}
		return nil
	})
}
