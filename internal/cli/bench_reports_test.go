package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/conform"
	"github.com/adcp-conform/adcp-conform/suites/runner"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// BenchmarkReportWriting builds the report model of a run and writes its
// four files (issue 21), for the replies of the storyboard bombs: one
// nested 10 001 levels deep (and one 5 000 deep, which encoding/json
// reads), a schema bomb of 10 000 items and its failed validation, and
// 8 MiB replies; each recorded as a rule probe's call and as the payload
// of storyboardSteps storyboard steps (slimmed, as a run slims a graded
// storyboard). It reports the bytes allocated and
// the sampled peak heap growth per run (see memWatch), and the size of
// results.json:
//
//	go test -run '^$' -bench ReportWriting -benchtime 3x ./internal/cli/
func BenchmarkReportWriting(b *testing.B) {
	const storyboardSteps = 40
	deep := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	var bomb strings.Builder
	bomb.WriteString(`{"products":[`)
	for i := range hostile.SchemaBombItems {
		if i > 0 {
			bomb.WriteByte(',')
		}
		bomb.WriteString(`{"product_id":7,"name":false,"x":1}`)
	}
	bomb.WriteString(`]}`)
	huge, _ := json.Marshal(map[string]string{"padding": strings.Repeat("p", hostile.HugeReplyBytes)})
	for _, c := range []struct {
		name    string
		payload []byte
	}{
		{"deep-10001", deep(hostile.DeepLevels)},
		{"deep-5000", deep(hostile.DeepLegalLevels)},
		{"schema-bomb-10000", []byte(bomb.String())},
		{"8MiB", huge},
	} {
		b.Run(c.name, func(b *testing.B) {
			store, sel, sbResults := reportFixture(b, c.payload, storyboardSteps)
			dir := b.TempDir()
			var allocated, peak uint64
			var size int64
			for b.Loop() {
				w := startMemWatch()
				run := runner.Report(runner.Meta{Tool: "adcp-conform", StartedAt: time.Now(), Target: "http://127.0.0.1:1/mcp"}, store, sel, nil)
				runner.AddStoryboards(run, sbResults, "")
				if err := conform.WriteReports(dir, run, store, sel, conform.Finish{}); err != nil {
					b.Fatal(err)
				}
				a, p := w.stop()
				allocated += a
				peak = max(peak, p)
				size = fileSize(b, dir, FileResults)
			}
			b.ReportMetric(float64(allocated)/float64(b.N)/(1<<20), "alloc-MB/run")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(size)/(1<<20), "results-MB")
		})
	}
}

// reportFixture records payload as the result of a rule probe's call and
// of n storyboard steps, each step failing a validation whose actual
// value is the payload.
func reportFixture(b *testing.B, payload []byte, n int) (*evidence.Store, runner.Selection, []storyboard.StoryboardResult) {
	b.Helper()
	store := evidence.NewStore(evidence.Target{MCP: "http://127.0.0.1:1/mcp"})
	message := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":` + string(payload) + `}}`)
	ex := wire.Exchange{Method: "POST", URL: "http://127.0.0.1:1/mcp", Status: 200, ResponseBody: message, ResponseBodySize: int64(len(message)), Finished: true, Complete: true}
	store.Add(evidence.Call{ProbeID: "mcp/get_products/valid", Transport: evidence.MCP, Kind: evidence.KindToolCall, Tool: "get_products",
		Arguments: json.RawMessage(`{"brief":"video"}`), Message: message, Result: message[len(`{"jsonrpc":"2.0","id":1,"result":`) : len(message)-1],
		HTTPStatus: 200, Exchanges: []wire.Exchange{ex}})
	sel, err := runner.Select("", suites.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var actual any
	_ = json.Unmarshal(payload, &actual) // nil for the 10 001-deep reply, as the engine sees it
	sb := &spec.Storyboard{ID: "bomb", Title: "bomb", Path: "protocols/media-buy/index.yaml"}
	res := storyboard.StoryboardResult{Storyboard: sb, Outcome: storyboard.Failed}
	for i := range n {
		obs := &spec.Observation{Call: store.Calls()[0], Transport: "mcp", Task: "get_products", PayloadRaw: payload, Payload: actual}
		res.Steps = append(res.Steps, storyboard.StepResult{PhaseID: "p", StepID: fmt.Sprintf("s%d", i), Task: "get_products", Obs: obs,
			Request: map[string]any{"brief": "video"}, Validations: []spec.Result{{Check: "response_schema", Passed: false,
				Description: "validates", Expected: actual, Actual: actual, Message: "the reply breaks its schema"}}})
	}
	res.Slim(report.Embed) // as a run does once a storyboard is graded
	return store, sel, []storyboard.StoryboardResult{res}
}

func fileSize(b *testing.B, dir, name string) int64 {
	b.Helper()
	st, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}
