package runner

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// A storyboard's steps slimmed once it is graded (StoryboardResult.Slim,
// as a live run does) make the same report as the steps whole: the
// decoded replies and the values of passed validations are what only
// grading read, and a failed validation's values are embedded the same
// way, small (as they are) or large (an excerpt with size and hash).
func TestASlimmedStoryboardMakesTheSameReport(t *testing.T) {
	var big strings.Builder
	big.WriteString(`{"products":[`)
	for i := range 10_000 {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `{"product_id":%d,"name":false}`, i)
	}
	big.WriteString(`]}`)
	result := func() storyboard.StoryboardResult {
		sb := &spec.Storyboard{ID: "bomb", Title: "bomb", Path: "protocols/media-buy/index.yaml"}
		res := storyboard.StoryboardResult{Storyboard: sb, Outcome: storyboard.Failed}
		for i, payload := range []string{`{"products":[{"product_id":"p1"}]}`, big.String(), `{"status":"completed"}`} {
			var v any
			if err := json.Unmarshal([]byte(payload), &v); err != nil {
				t.Fatal(err)
			}
			msg := `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":` + payload + `}}`
			obs := &spec.Observation{Transport: "mcp", Task: "get_products", HTTPStatus: 200, ExtractionPath: "structured_content",
				Payload: v, PayloadRaw: json.RawMessage(payload), Error: map[string]any{"code": "X"},
				Call: evidence.Call{ProbeID: fmt.Sprintf("storyboard/bomb/p/s%d", i), Message: json.RawMessage(msg)}}
			if i == 2 {
				obs.Payload, obs.PayloadRaw, obs.ExtractionPath = nil, nil, "none"
			}
			res.Steps = append(res.Steps, storyboard.StepResult{PhaseID: "p", StepID: fmt.Sprintf("s%d", i), Task: "get_products", Obs: obs,
				Request: map[string]any{"brief": "video"}, Validations: []spec.Result{
					{Check: "field_present", Passed: true, Description: "products", Expected: "products", Actual: v},
					{Check: "response_schema", Passed: false, Description: "validates", Expected: map[string]any{"n": 1}, Actual: v, Message: "breaks"},
				}})
		}
		return res
	}
	whole, slim := result(), result()
	slim.Slim(report.Embed)
	for _, st := range slim.Steps {
		if st.Obs.Payload != nil || st.Obs.Error != nil || st.Validations[0].Actual != nil {
			t.Errorf("%s: slimmed step still holds its decoded reply", st.StepID)
		}
		// The 10 000 items are an excerpt: 64 KiB of text, escaped.
		if a, ok := st.Validations[1].Actual.(json.RawMessage); !ok || len(a) > 2*report.MaxEmbeddedBytes {
			t.Errorf("%s: a failed validation's actual value is %T of %d bytes", st.StepID, st.Validations[1].Actual, len(a))
		}
	}
	if !slim.Steps[1].Obs.HasPayload() || slim.Steps[2].Obs.HasPayload() {
		t.Error("HasPayload does not say whether the reply held a payload")
	}
	reportOf := func(res storyboard.StoryboardResult) string {
		run := &report.Run{}
		AddStoryboards(run, []storyboard.StoryboardResult{res}, "")
		b, err := json.Marshal(run)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if w, s := reportOf(whole), reportOf(slim); w != s {
		t.Errorf("the reports differ:\nwhole %.2000s\nslim  %.2000s", w, s)
	}
}
