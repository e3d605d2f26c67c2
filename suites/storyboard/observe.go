package storyboard

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
)

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
	} else if v, ok := extract.Field(c.Result, "isError"); ok && extract.Truthy(v) {
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
