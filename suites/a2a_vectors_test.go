package suites

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// a2aCall wraps an A2A result as the recorded reply of a call.
func a2aCall(result json.RawMessage) evidence.Call {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": result})
	return evidence.Call{ProbeID: "a2a/get_products/valid", Transport: evidence.A2A, Kind: evidence.KindToolCall,
		Tool: "get_products", Message: msg, Result: result, HTTPStatus: 200}
}

func readVectors(t *testing.T, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(shared.File(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestA2AExtractionVectorsThroughTheJudges feeds every vector of
// a2a-response-extraction.json to the judges' own reply view: the body a
// judge reads is the vector's expected data, and a wrapper vector is what
// A2A-03 fails — the run-time checks and the extractor are one code path.
func TestA2AExtractionVectorsThroughTheJudges(t *testing.T) {
	var doc struct {
		Vectors []struct {
			ID                string          `json:"id"`
			Response          json.RawMessage `json:"response"`
			ExpectedData      json.RawMessage `json:"expected_data"`
			ExpectedErrorType string          `json:"expected_error_type"`
		} `json:"vectors"`
	}
	readVectors(t, "spec/vectors/a2a-response-extraction.json", &doc)
	if len(doc.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range doc.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			r := parseA2AReply(a2aCall(v.Response))
			var got, want any
			if r.data != nil {
				_ = json.Unmarshal(r.data.Raw(), &got)
			}
			if len(v.ExpectedData) > 0 && string(v.ExpectedData) != "null" && v.ExpectedErrorType == "" {
				_ = json.Unmarshal(v.ExpectedData, &want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the judges read %v, the vector expects %v", got, want)
			}
			// The same response as the one event of a stream: the task the
			// stream builds gives the same body.
			forgetReplies()
			sr := parseReply(a2aStream("a2a/get_products/stream", "get_products", string(v.Response)))
			var streamed any
			if sr.data != nil {
				_ = json.Unmarshal(sr.data.Raw(), &streamed)
			}
			if !reflect.DeepEqual(streamed, want) {
				t.Errorf("as a stream, the judges read %v, the vector expects %v", streamed, want)
			}
			s := evidence.NewStore(evidence.Target{A2A: "https://seller.example.com/a2a"})
			s.Add(a2aCall(v.Response))
			verdict := judgeA2A03(s.Only(evidence.A2A), Options{})
			if wrapped := v.ExpectedErrorType == "wrapper_detected"; wrapped != (verdict.Outcome == Fail) {
				t.Errorf("A2A-03 is %s (%s); the vector's wrapper verdict is %v", verdict.Outcome, verdict.Message, wrapped)
			}
		})
	}
}

// TestA2AProfileVectorsThroughTheJudges runs the advertisement and response
// vectors of a2a-profile-extension-v3.json through the checks A2A-09,
// A2A-10, A2A-06 and A2A-07 apply at run time: a valid vector draws no
// finding, an invalid one a finding from the rule its expected error names.
func TestA2AProfileVectorsThroughTheJudges(t *testing.T) {
	var doc struct {
		Advertisement []struct {
			ID            string          `json:"id"`
			Valid         bool            `json:"valid"`
			ExpectedError string          `json:"expected_error"`
			Card          json.RawMessage `json:"agent_card"`
		} `json:"advertisement_vectors"`
		Response []struct {
			ID            string          `json:"id"`
			Valid         bool            `json:"valid"`
			ExpectedError string          `json:"expected_error"`
			Response      json.RawMessage `json:"response"`
		} `json:"response_vectors"`
	}
	readVectors(t, "spec/vectors/a2a-profile-extension-v3.json", &doc)
	cardRules := map[string]string{
		"extension_not_under_capabilities":       "A2A-10",
		"extension_params_not_empty":             "A2A-10",
		"missing_get_adcp_capabilities_skill_id": "A2A-09",
	}
	for _, v := range doc.Advertisement {
		t.Run(v.ID, func(t *testing.T) {
			a09 := cardFindings(200, v.Card, "https://sales.example/.well-known/agent-card.json", false)
			a10 := extensionFindings(v.Card)
			failed := map[string]bool{"A2A-09": len(a09) > 0, "A2A-10": len(a10) > 0}
			switch {
			case v.Valid && (failed["A2A-09"] || failed["A2A-10"]):
				t.Errorf("a valid card draws findings: %v %v", a09, a10)
			case !v.Valid && !failed[cardRules[v.ExpectedError]]:
				t.Errorf("%s: %s draws no finding (A2A-09 %v, A2A-10 %v)", v.ExpectedError, cardRules[v.ExpectedError], a09, a10)
			}
		})
	}
	responseRules := map[string][]string{
		"invalid_send_message_response":              {"A2A-06"},
		"submitted_handler_return_not_a2a_completed": {"A2A-07"},
		"adcp_task_id_metadata_duplication":          {"A2A-07"},
	}
	for _, v := range doc.Response {
		t.Run(v.ID, func(t *testing.T) {
			var body struct {
				Result json.RawMessage `json:"result"`
			}
			result := v.Response
			if json.Unmarshal(v.Response, &body) == nil && body.Result != nil {
				result = body.Result
			}
			r := parseA2AReply(a2aCall(result))
			failed := map[string]bool{"A2A-06": len(taskBranch(r)) > 0}
			if seen, fs := submittedMapping(r.builtTask()); seen {
				failed["A2A-07"] = len(fs) > 0
			}
			var got []string
			for rule, f := range failed {
				if f {
					got = append(got, rule)
				}
			}
			slices.Sort(got)
			want := responseRules[v.ExpectedError]
			if v.Valid {
				want = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("rules failed %v, want %v", got, want)
			}
		})
	}
}
