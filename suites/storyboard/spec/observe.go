package spec

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// Observation is what one dispatched step saw, read from the raw bytes of
// its recorded call by the project's extractors. The checks read only
// this (and Facts): they do no I/O.
type Observation struct {
	// Call is the recorded call: raw, redacted exchanges; it is also in the
	// run's evidence store under Call.ProbeID.
	Call evidence.Call
	// Transport is "mcp", "a2a" or "http" (a plain HTTP GET such as
	// protected-resource metadata).
	Transport string
	// Task is the AdCP task invoked (or the HTTP pseudo-task's name).
	Task string
	// Request is the resolved request payload the step sent (redacted).
	Request map[string]any
	// Payload is the extracted task result (MCP structuredContent or text
	// fallback, A2A DataPart data; for "http" the JSON body), decoded; nil
	// when the reply held none.
	Payload any
	// PayloadRaw is Payload's raw bytes (nil when none).
	PayloadRaw json.RawMessage
	// Error is the extracted AdCP error object (adcp_error from any layer
	// of the client detection order, else errors[0] of the payload),
	// decoded; nil when the reply is no error.
	Error map[string]any
	// ErrorCode is Error's code ("" when none).
	ErrorCode string
	// IsError says the reply was an error by its transport's discipline
	// (MCP isError, A2A failed/rejected state, JSON-RPC error).
	IsError bool
	// Refused says the agent refused the call: an error by its transport's
	// discipline or an adcp_error at any layer (an errors[] array of a
	// success-shaped payload alone is not a refusal).
	Refused bool
	// ExtractionPath is the path the extractor took ("structured_content",
	// "text_fallback", "artifact", "status_message", "jsonrpc_error",
	// "none", or "http_body").
	ExtractionPath string
	// A2AState is the normalized A2A task state, "" over MCP.
	A2AState string
	// A2AResult is the raw JSON-RPC result (the A2A Task or Message), for
	// the a2a_* checks; nil over MCP.
	A2AResult json.RawMessage
	// HTTPStatus and Header are those of the exchange that answered.
	HTTPStatus int
	Header     http.Header
	// Failure is set when the call proves nothing about the seller: the
	// network or the harness failed, or the call never reached the
	// application (evidence.Call.Unreached). The step is then an error,
	// never a failure.
	Failure string

	// hadPayload is set by Slimmed when it dropped Payload.
	hadPayload bool
}

// HasPayload reports whether the reply held a payload (Payload is not
// nil), also once Slim dropped it.
func (o *Observation) HasPayload() bool { return o.Payload != nil || o.hadPayload }

// Slimmed is a copy of o without what only grading reads: the decoded
// reply and error object (HasPayload still says whether there was a
// payload) and the A2A result, whose bytes the evidence store keeps.
func (o *Observation) Slimmed() *Observation {
	slim := *o
	slim.hadPayload = o.HasPayload()
	slim.Payload, slim.Error, slim.A2AResult = nil, nil, nil
	return &slim
}

// Observe reads a recorded call the way a client reads it — the spec's
// extraction algorithm over the raw bytes — into what the checks see. It
// is pure, so `adcp-conform judge` re-reads a recorded run the same way.
// authOverride says the step deliberately sent no or a bogus credential:
// a 401 or 403 is then the evidence, not a call that never reached the
// application.
func Observe(c evidence.Call, task string, req map[string]any, authOverride bool) *Observation {
	o := &Observation{Call: c, Transport: string(c.Transport), Task: task, Request: req, HTTPStatus: c.HTTPStatus}
	if n := len(c.Exchanges); n > 0 {
		o.Header = c.Exchanges[n-1].ResponseHeaders
		if o.HTTPStatus == 0 {
			o.HTTPStatus = c.Exchanges[n-1].Status
		}
	}
	if o.Header == nil {
		o.Header = http.Header{}
	}
	switch {
	case c.NotRun != "":
		o.Failure = "not run: " + c.NotRun
		return o
	case c.HarnessError != "" && !(authOverride && refusedStatus(o.HTTPStatus)):
		o.Failure = c.HarnessError
		return o
	}
	if !authOverride {
		if why := c.Unreached(); why != "" {
			o.Failure = why
			return o
		}
	}
	if c.Kind == evidence.KindHTTPGet {
		o.Transport = "http"
		o.ExtractionPath = "http_body"
		if v, err := DecodeJSON(bytes.TrimSpace(c.Body)); err == nil {
			o.Payload, o.PayloadRaw = v, c.Body
		}
		return o
	}
	if c.Message == nil {
		o.ExtractionPath = string(extract.PathNone)
		return o
	}
	t := extract.TransportMCP
	if c.Transport == evidence.A2A {
		t = extract.TransportA2A
		o.A2AResult = c.Result
		if c.Result != nil {
			if x, err := extract.A2A(c.Result); err == nil {
				o.A2AState = x.State
			}
		}
		o.IsError = o.A2AState == "failed" || o.A2AState == "rejected"
	} else if v, ok := rawjson.Field(c.Result, "isError"); ok && rawjson.Truthy(v) {
		o.IsError = true
	}
	if c.RPCError != nil {
		o.IsError = true
	}
	o.Refused = o.IsError
	out, err := extract.FromJSONRPCResponse(t, c.Message)
	if err != nil {
		o.ExtractionPath = string(extract.PathNone)
		return o
	}
	o.ExtractionPath = string(out.Path)
	if out.Data != nil {
		if v, err := DecodeJSON(out.Data); err == nil {
			o.Payload, o.PayloadRaw = v, out.Data
		}
	} else if body, raw := errorBody(c.Message, out.Pointer); body != nil {
		// An error reply has no success data, but its body still carries
		// the envelope the storyboards check on errors (context echoed,
		// status, adcp_version): the object the error was found in.
		o.Payload, o.PayloadRaw = body, raw
	}
	if out.Error != nil {
		o.Refused = true
		if m, ok := decodeObject(out.Error.Raw); ok {
			o.Error = m
		}
	} else if m, ok := payloadError(o.Payload); ok {
		o.Error = m
	}
	if code, ok := o.Error["code"].(string); ok {
		o.ErrorCode = code
	}
	return o
}

// errorBody returns the object of a reply that holds its AdCP error: the
// parent of the adcp_error member the extractor found, the text item it
// parsed, else an MCP result's structuredContent (an error carried as
// errors[] there). Nil when there is none.
func errorBody(message json.RawMessage, pointer string) (map[string]any, json.RawMessage) {
	msg, err := DecodeJSON(message)
	if err != nil {
		return nil, nil
	}
	var v any
	switch {
	case strings.HasSuffix(pointer, "/adcp_error"):
		v, _ = rawjson.Resolve(msg, strings.TrimSuffix(pointer, "/adcp_error"))
	case strings.HasSuffix(pointer, "/text"):
		if t, ok := rawjson.Resolve(msg, pointer); ok {
			if str, ok := t.(string); ok {
				v, _ = DecodeJSON([]byte(str))
			}
		}
	default:
		v, _ = rawjson.Resolve(msg, "/result/structuredContent")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil
	}
	raw, _ := json.Marshal(m)
	return m, raw
}

func refusedStatus(s int) bool { return s == http.StatusUnauthorized || s == http.StatusForbidden }

func decodeObject(raw json.RawMessage) (map[string]any, bool) {
	v, err := DecodeJSON(raw)
	if err != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// payloadError is errors[0] of a task payload, top-level or under
// "payload" (storyboard-schema.yaml, "Error-shape validation": the
// error_code check resolves the code from adcp_error at any layer, else
// errors[0].code).
func payloadError(payload any) (map[string]any, bool) {
	for _, p := range []string{"errors[0]", "payload.errors[0]"} {
		if v, _, ok := Lookup(payload, p); ok {
			if m, ok := v.(map[string]any); ok {
				if _, has := m["code"].(string); has {
					return m, true
				}
			}
		}
	}
	return nil, false
}
