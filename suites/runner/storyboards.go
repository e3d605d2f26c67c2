package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// AddStoryboards puts a run's storyboard results into its report: one
// StoryboardResult per storyboard, and one step (runner output contract
// step_result) per step of each storyboard that ran. unavailable, when
// set, is why the run had no storyboards: a note. Settle the run after
// (once, when every part of it is in).
func AddStoryboards(run *report.Run, results []storyboard.StoryboardResult, unavailable string) {
	if unavailable != "" {
		run.Notes = append(run.Notes, "storyboards: "+unavailable)
	}
	for _, res := range results {
		sb := res.Storyboard
		out := report.StoryboardResult{ID: sb.ID, Title: sb.Title, Category: sb.Group(), Path: sb.Path, Track: sb.Track,
			Outcome: outcomeOf(res.Outcome), DurationMS: res.DurationMS}
		switch {
		case res.NotSelected != nil:
			out.NotSelected = &report.Skip{Reason: res.NotSelected.Reason, Detail: res.NotSelected.Detail}
		case res.Skip != nil:
			out.Skip = &report.Skip{Reason: res.Skip.Reason, Detail: res.Skip.Detail}
		}
		for _, st := range res.Steps {
			run.Steps = append(run.Steps, reportStep(sb, st))
		}
		run.Storyboards = append(run.Storyboards, out)
	}
	sort.SliceStable(run.Storyboards, func(i, j int) bool { return run.Storyboards[i].Category < run.Storyboards[j].Category })
}

func outcomeOf(o storyboard.Outcome) report.Outcome {
	switch o {
	case storyboard.Passed:
		return report.Passed
	case storyboard.Failed:
		return report.Failed
	case storyboard.Errored:
		return report.Error
	}
	return report.Skipped
}

func reportStep(sb *spec.Storyboard, st storyboard.StepResult) report.Step {
	// A step that made no call (skipped, or a runner-side assertion)
	// extracted nothing: path "none", which the contract's enum holds
	// (an empty path does not match results.schema.json).
	step := report.Step{StoryboardID: sb.ID, PhaseID: st.PhaseID, StepID: st.StepID, Title: st.Title, Task: st.Task,
		Passed: st.Passed, DurationMS: st.DurationMS, Error: st.Error, Validations: []report.Validation{}, Extraction: report.Extraction{Path: "none"}}
	if st.Skip != nil {
		step.Skip = &report.Skip{Reason: st.Skip.Reason, Detail: st.Skip.Detail}
		step.Passed = false
	}
	step.Optional = st.Optional
	if st.Agent != "" {
		step.Notices = append(step.Notices, report.Notice{Severity: "info", Code: "routed_agent",
			Message: "sent to the logical agent " + wire.Sanitize(st.Agent, 64) + " (--agent), not the agent under test"})
	}
	for _, n := range st.Notes {
		step.Notices = append(step.Notices, report.Notice{Severity: "info", Code: "runner_note", Message: wire.Sanitize(n, 300)})
	}
	for _, v := range st.Validations {
		step.Validations = append(step.Validations, reportValidation(v))
	}
	if o := st.Obs; o != nil {
		step.Extraction = extraction(o)
		if st.Request != nil {
			b, _ := json.Marshal(st.Request)
			step.Request = &report.Request{Transport: o.Transport, Operation: st.Task, Payload: report.Embed(wire.RedactJSON(b))}
		}
		resp := &report.Response{Transport: o.Transport, Status: o.HTTPStatus, Payload: o.PayloadRaw}
		if resp.Payload == nil && o.Call.Message != nil {
			resp.Payload = o.Call.Message
		}
		resp.Payload = report.Embed(resp.Payload) // cut as the rules' evidence is
		step.Response = resp
	}
	return step
}

// extraction is the contract's extraction record ("structured_content" |
// "text_fallback" | "error" | "none"); an A2A DataPart is the structured
// channel of A2A, said in the note.
func extraction(o *spec.Observation) report.Extraction {
	switch {
	case o.Refused:
		return report.Extraction{Path: "error", Note: "extracted by " + o.ExtractionPath}
	case o.Transport == "http":
		return report.Extraction{Path: "none", Note: "an HTTP document, read as JSON"}
	case !o.HasPayload():
		return report.Extraction{Path: "none"}
	case o.ExtractionPath == "artifact" || o.ExtractionPath == "status_message":
		return report.Extraction{Path: "structured_content", Note: "A2A DataPart (" + o.ExtractionPath + ")"}
	}
	return report.Extraction{Path: o.ExtractionPath}
}

func reportValidation(v spec.Result) report.Validation {
	out := report.Validation{ID: v.ID, Check: v.Check, Rule: "storyboard", Passed: v.Passed, Description: v.Description, Severity: v.Severity,
		NotApplicable: v.NotApplicable, Note: v.Note, Observations: v.Observations, Message: v.Message, JSONPointer: v.JSONPointer}
	if !v.Passed {
		// A value a seller sent may be megabytes long, or nested
		// thousands deep: embedded as rule evidence is, unless
		// StoryboardResult.Slim already did.
		out.Expected = v.Expected
		switch e := v.Expected.(type) {
		case nil, json.RawMessage:
		default:
			if b, err := json.Marshal(e); err == nil {
				if e := report.Embed(b); !bytes.Equal(e, b) {
					out.Expected = e
				}
			}
		}
		switch a := v.Actual.(type) {
		case nil:
			out.Actual = json.RawMessage("null")
		case json.RawMessage:
			out.Actual = a
		default:
			out.Actual = report.EmbedValue(a)
		}
	}
	if v.SchemaID != "" {
		id, url := v.SchemaID, v.SchemaURL
		out.SchemaID, out.SchemaURL = &id, &url
	}
	if v.Message == "" && !v.Passed {
		out.Message = fmt.Sprintf("%s failed", v.Check)
	}
	return out
}
