package runner

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// Meta is what a report says about the run besides the verdicts.
type Meta struct {
	Tool, Version, AdcpRelease, MCPProtocolVersion string
	Target                                         string
	// TargetKind is what Target is (report.TargetSeller when empty);
	// Face the faces the report covers, when the run spans several.
	TargetKind   report.TargetKind
	Face         string
	StartedAt    time.Time
	Duration     time.Duration
	Strict       bool
	HarnessError string
}

// StoryboardID names the project's own storyboard in the steps.
const StoryboardID = "adcp_conform"

// Limits on what a report keeps per rule.
const (
	maxFindingsPerRule = 50
	maxEvidencePerRule = 8
	maxActualBytes     = 2048
	// maxEmbeddedEvents bounds the events of each exchange results.json
	// embeds, as report.MaxEmbeddedBytes bounds each body, event and
	// payload.
	maxEmbeddedEvents = 200
)

// Report builds the report model: every catalogue rule (judged, excluded by
// the filter, or not implemented), the findings and redacted evidence behind
// failures and errors, and one step per recorded call. The model is not
// settled: whoever finishes the run (the CLI's finish) adds the
// storyboards, the baseline and what the run's diagnosis changes, then
// calls run.Settle once.
func Report(meta Meta, store *evidence.Store, sel Selection, results []Result) *report.Run {
	run := &report.Run{
		Tool: meta.Tool, Version: meta.Version, AdcpRelease: meta.AdcpRelease, MCPProtocolVersion: meta.MCPProtocolVersion,
		Target: meta.Target, StartedAt: meta.StartedAt.UTC(), DurationMS: float64(meta.Duration.Microseconds()) / 1000,
		Strict: meta.Strict, LabelFilter: sel.Filter, HarnessError: meta.HarnessError, TargetKind: meta.TargetKind, Face: meta.Face,
	}
	if run.TargetKind == "" {
		run.TargetKind = report.TargetSeller
	}
	specs := map[string][]report.SpecResult{}
	byRule := map[string][]Result{}
	for _, r := range results {
		specs[r.Check.ID] = append(specs[r.Check.ID], report.SpecResult{
			Name:      strings.ToUpper(string(r.Check.Transport)) + " " + catalogue.FamilyTitle(familyOf(r.Check.ID)) + " " + r.Check.Text,
			Transport: string(r.Check.Transport), Outcome: r.Outcome, Message: wire.Sanitize(r.Message, 1000), DurationMS: r.DurationMS,
		})
		byRule[r.Check.ID] = append(byRule[r.Check.ID], r)
	}
	for _, c := range sel.Excluded {
		specs[c.ID] = append(specs[c.ID], report.SpecResult{
			Name: strings.ToUpper(string(c.Transport)) + " " + catalogue.FamilyTitle(familyOf(c.ID)) + " " + c.Text, Transport: string(c.Transport),
			Outcome: report.Disabled, Message: "not selected by --label-filter",
		})
	}
	for _, rule := range catalogue.All() {
		if catalogue.CommandOf(rule.ID) != sel.Options.Command() {
			continue // another command's rule: not part of this run
		}
		rr := report.RuleResult{ID: rule.ID, Family: rule.Family, Level: report.Level(rule.Level), Statement: rule.Statement,
			Source: rule.Source, Specs: specs[rule.ID]}
		for _, t := range rule.Transports {
			rr.Transports = append(rr.Transports, string(t))
		}
		for _, r := range byRule[rule.ID] {
			if r.Outcome != report.Failed && r.Outcome != report.Error {
				continue
			}
			for _, f := range r.Verdict.Findings {
				if len(rr.Findings) < maxFindingsPerRule {
					rr.Findings = append(rr.Findings, report.Finding{Transport: string(r.Check.Transport), ProbeID: f.ProbeID,
						JSONPointer: f.Pointer, Message: f.What})
				}
			}
			for _, c := range r.Verdict.Calls {
				if len(rr.Evidence) < maxEvidencePerRule {
					rr.Evidence = append(rr.Evidence, report.Evidence{Transport: string(c.Transport), ProbeID: c.ProbeID, Exchanges: excerpts(c.Exchanges)})
				}
			}
		}
		run.Rules = append(run.Rules, rr)
	}
	run.Steps = steps(store.Probes(), results)
	var refused []string
	for _, c := range store.Calls() {
		if c.Refused != "" && c.Has(evidence.PurposeValid) {
			refused = append(refused, c.Tool+" ("+wire.Sanitize(c.Refused, 120)+")")
		}
	}
	if len(refused) > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("%d read tools refused the harness's arguments, so their probes could not run: %s; "+
			"give the arguments they need with --inputs", len(refused), strings.Join(refused, "; ")))
	}
	return run
}

func familyOf(id string) string {
	f, _, _ := strings.Cut(id, "-")
	return f
}

// steps turns every recorded call into a runner-output-contract step, with
// one validation per judge that examined it.
func steps(store *evidence.Store, results []Result) []report.Step {
	type examined struct {
		res      Result
		findings []suites.Finding
	}
	per := map[string][]examined{}
	for _, r := range results {
		byProbe := map[string][]suites.Finding{}
		for _, f := range r.Verdict.Findings {
			byProbe[f.ProbeID] = append(byProbe[f.ProbeID], f)
		}
		for _, id := range r.Verdict.Examined {
			per[id] = append(per[id], examined{r, byProbe[id]})
		}
	}
	var out []report.Step
	for _, c := range store.Calls() {
		st := report.Step{StoryboardID: StoryboardID, PhaseID: phase(c), StepID: c.ProbeID, Task: task(c), DurationMS: c.DurationMS,
			Validations: []report.Validation{}, Extraction: report.Extraction{Path: extractionPath(c)}, Passed: true}
		st.Request = &report.Request{Transport: string(c.Transport), Operation: task(c), Payload: report.Embed(orNull(c.Arguments)), URL: c.URL}
		if c.Answered() || c.HTTPStatus != 0 {
			st.Response = response(c)
		}
		switch {
		case c.NotRun != "":
			st.Skip = &report.Skip{Reason: "not_applicable", Detail: c.NotRun}
			st.Request = nil
		case c.HarnessError != "":
			st.Error = wire.Sanitize(c.HarnessError, 500)
			st.Passed = false
		case c.Refused != "":
			st.Skip = &report.Skip{Reason: "unsatisfied_contract", Detail: "the seller refused the call for its arguments (" +
				wire.Sanitize(c.Refused, 300) + "); give base arguments with --inputs"}
			st.Passed = false
		}
		idx := &docIndex{}
		ex := per[c.ProbeID]
		sort.SliceStable(ex, func(i, j int) bool { return ex[i].res.Check.ID < ex[j].res.Check.ID })
		for _, e := range ex {
			desc := e.res.Check.Text
			if len(e.findings) == 0 {
				st.Validations = append(st.Validations, report.Validation{Check: "rule", Rule: e.res.Check.ID, Passed: true, Description: desc})
				continue
			}
			for _, f := range e.findings {
				p := f.Pointer
				st.Validations = append(st.Validations, report.Validation{Check: "rule", Rule: e.res.Check.ID, Passed: false,
					Description: desc, JSONPointer: &p, Expected: desc, Actual: actual(idx, c, f), Message: f.What})
				st.Passed = false
			}
		}
		out = append(out, st)
	}
	return out
}

func phase(c evidence.Call) string {
	p := string(c.Transport)
	switch {
	case c.Has(evidence.PurposeAuthNone) || c.Has(evidence.PurposeAuthRandom) || c.Has(evidence.PurposeAuthCapabilities):
		return p + "_auth"
	case c.Has(evidence.PurposeRateBurst):
		return p + "_rate_limit"
	case c.Has(evidence.PurposeErrorVersion) || c.Has(evidence.PurposeErrorWrongType) || c.Has(evidence.PurposeErrorUnknownID) ||
		c.Has(evidence.PurposeErrorUnknownTask) || c.Has(evidence.PurposeErrorMajorVersion):
		return p + "_errors"
	case c.Kind != evidence.KindToolCall:
		return p + "_discovery"
	}
	return p + "_read"
}

func task(c evidence.Call) string {
	if c.Tool != "" {
		return c.Tool
	}
	if c.Method != "" {
		return c.Method
	}
	return string(c.Kind)
}

func extractionPath(c evidence.Call) string {
	if c.Message == nil {
		return "none"
	}
	o, err := extract.FromJSONRPCResponse(extract.TransportMCP, c.Message)
	switch {
	case err != nil:
		return "none"
	case o.Error != nil || o.Path == extract.PathJSONRPCError:
		return "error"
	}
	return string(o.Path)
}

func response(c evidence.Call) *report.Response {
	r := &report.Response{Transport: string(c.Transport), Status: c.HTTPStatus, DurationMS: c.DurationMS}
	switch {
	case c.Result != nil:
		r.Payload = c.Result
	case c.RPCError != nil:
		r.Payload, _ = json.Marshal(map[string]json.RawMessage{"error": c.RPCError})
	case c.Body != nil:
		r.Transport, r.Payload = "http", c.Body
	default:
		r.Payload = json.RawMessage("null")
	}
	r.Payload = report.Embed(r.Payload)
	if n := len(c.Exchanges); n > 0 {
		r.Headers = wire.ReportResponseHeaders(c.Exchanges[n-1].ResponseHeaders)
	}
	return r
}

// excerpts returns the exchanges with their bodies and events cut to what
// a report embeds.
func excerpts(xs []wire.Exchange) []wire.Exchange {
	out := make([]wire.Exchange, len(xs))
	for i, x := range xs {
		out[i] = x.Excerpt(report.MaxEmbeddedBytes, maxEmbeddedEvents)
	}
	return out
}

func orNull(b json.RawMessage) json.RawMessage {
	if b == nil {
		return json.RawMessage("{}")
	}
	return b
}

// actual returns the value a finding's pointer locates in the recorded
// reply, bounded; a string describing the absence when there is none.
func actual(idx *docIndex, c evidence.Call, f suites.Finding) json.RawMessage {
	v, ok := idx.resolve(c, f.Pointer)
	if !ok {
		v = c.Body
		if f.Pointer != "" || v == nil {
			b, _ := json.Marshal("(absent)")
			return b
		}
	}
	if len(v) > maxActualBytes {
		b, _ := json.Marshal(string(v[:maxActualBytes]) + "…")
		return b
	}
	return report.Embed(v) // 2 KiB may nest a thousand levels
}

// docIndex resolves the findings' JSON pointers into one call's reply,
// parsing each container on a pointer's path once: a reply with a
// thousand findings is parsed about once, not a thousand times, so
// writing the report stays linear in the evidence (a hostile seller's
// 50 000-item reply with a finding per item must not take minutes).
type docIndex struct {
	message, events *node
}

// node is one JSON value of a reply, its children parsed on first use.
type node struct {
	raw      json.RawMessage
	parsed   bool
	obj      *rawjson.Object
	arr      []json.RawMessage
	children map[string]*node
	// text is the value, a JSON string, parsed as a document ("#").
	text *node
}

func (idx *docIndex) resolve(c evidence.Call, pointer string) (json.RawMessage, bool) {
	var root *node
	if strings.HasPrefix(pointer, "/events/") {
		if idx.events == nil {
			doc, _ := json.Marshal(map[string][]json.RawMessage{"events": a2a.Events(c)})
			idx.events = &node{raw: doc}
		}
		root = idx.events
	} else {
		if c.Message == nil {
			return nil, false
		}
		if idx.message == nil {
			idx.message = &node{raw: c.Message}
		}
		root = idx.message
	}
	outer, inner, nested := strings.Cut(pointer, "#")
	n, ok := root.walk(outer)
	if !ok || !nested {
		return nodeRaw(n), ok
	}
	if n.text == nil {
		var s string
		if json.Unmarshal(n.raw, &s) != nil {
			return nil, false
		}
		n.text = &node{raw: json.RawMessage(s)}
	}
	n, ok = n.text.walk(inner)
	return nodeRaw(n), ok
}

func nodeRaw(n *node) json.RawMessage {
	if n == nil {
		return nil
	}
	return n.raw
}

// walk follows an RFC 6901 pointer from n (its leading "/" optional).
func (n *node) walk(pointer string) (*node, bool) {
	if pointer == "" {
		return n, true
	}
	tokens, _ := rawjson.Tokens("/" + strings.TrimPrefix(pointer, "/"))
	cur := n
	for _, tok := range tokens {
		next, ok := cur.child(tok)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// child returns the member or element tok of n, parsing n once.
func (n *node) child(tok string) (*node, bool) {
	if !n.parsed {
		n.parsed = true
		if o, err := rawjson.ParseObject(n.raw); err == nil {
			n.obj = o
		} else if rawjson.KindOf(n.raw) == rawjson.KindArray {
			_ = json.Unmarshal(n.raw, &n.arr)
		}
	}
	if c, ok := n.children[tok]; ok {
		return c, true
	}
	var v json.RawMessage
	switch {
	case n.obj != nil:
		raw, ok := n.obj.Get(tok)
		if !ok {
			return nil, false
		}
		v = raw
	case n.arr != nil:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(n.arr) {
			return nil, false
		}
		v = n.arr[i]
	default:
		return nil, false
	}
	if n.children == nil {
		n.children = map[string]*node{}
	}
	c := &node{raw: v}
	n.children[tok] = c
	return c, true
}
