package storyboard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
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
		v, _ = atPointer(msg, strings.TrimSuffix(pointer, "/adcp_error"))
	case strings.HasSuffix(pointer, "/text"):
		if t, ok := atPointer(msg, pointer); ok {
			if str, ok := t.(string); ok {
				v, _ = DecodeJSON([]byte(str))
			}
		}
	default:
		v, _ = atPointer(msg, "/result/structuredContent")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil
	}
	raw, _ := json.Marshal(m)
	return m, raw
}

// atPointer resolves an RFC 6901 JSON pointer in decoded JSON.
func atPointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			// RFC 6901 array-index: "0" or digits without a leading zero.
			n, err := strconv.Atoi(tok)
			if err != nil || strings.Trim(tok, "0123456789") != "" || (len(tok) > 1 && tok[0] == '0') || n >= len(c) {
				return nil, false
			}
			cur = c[n]
		default:
			return nil, false
		}
	}
	return cur, true
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
