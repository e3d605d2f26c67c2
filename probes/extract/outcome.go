package extract

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// JSONRPCError implements transport-errors.mdx's extractAdcpErrorFromMcpError over the
// raw `error` member of a JSON-RPC response (the same for MCP and A2A):
// error.data.adcp_error, validated. It returns an *InputError when
// errorMember is not JSON.
func JSONRPCError(errorMember []byte) (ErrorExtraction, error) {
	if len(errorMember) > MaxInputBytes {
		return ErrorExtraction{Path: PathNone}, &InputError{Msg: "input is over the size limit"}
	}
	flags, err := rawjson.Scan(errorMember)
	if err != nil {
		return ErrorExtraction{Path: PathNone}, &InputError{Msg: "input is not JSON: " + err.Error()}
	}
	x := jsonrpcError(rawjson.Trim(errorMember), "")
	x.Anomalies = append(flagAnomalies(nil, flags, ""), x.Anomalies...)
	return x, nil
}

func jsonrpcError(raw []byte, base string) ErrorExtraction {
	x := ErrorExtraction{Path: PathNone}
	eo, ok := objectAt(raw, &x.Anomalies, base)
	if !ok {
		return x
	}
	dv, ok := eo.Get("data")
	if !ok {
		return x
	}
	do, ok := objectAt(dv, &x.Anomalies, rawjson.Pointer(base, "data"))
	if !ok {
		return x
	}
	ae, ok := do.Get("adcp_error")
	if !ok || rawjson.KindOf(ae) == rawjson.KindNull {
		return x
	}
	x.settle(ae, rawjson.Pointer(base, "data", "adcp_error"), PathJSONRPCError)
	return x
}

// Outcome is what a client makes of one reply: the path taken, the data or
// the error found, and the action for the error.
type Outcome struct {
	Path   Path
	Data   json.RawMessage // extracted success data, nil when absent
	Error  *AdcpError      // extracted error, nil when absent
	Action *Action         // Decide(*Error), nil when Error is nil
	// Pointer locates Data or Error in the input.
	Pointer string
	// Rejected is a candidate adcp_error that failed validation.
	Rejected  *ValidationError
	Anomalies []Anomaly
}

// MarshalJSON renders exactly {"path", "data", "error", "action"}, with
// null for an absent data, error or action. Data and error are written as
// received.
func (o Outcome) MarshalJSON() ([]byte, error) {
	b := []byte(`{"path":`)
	b = strconv.AppendQuote(b, string(o.Path))
	b = append(b, `,"data":`...)
	b = appendRaw(b, o.Data)
	b = append(b, `,"error":`...)
	if o.Error != nil {
		b = appendRaw(b, o.Error.Raw)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"action":`...)
	if o.Action != nil {
		ab, _ := o.Action.MarshalJSON()
		b = append(b, ab...)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}'), nil
}

func appendRaw(b, raw []byte) []byte {
	if raw == nil {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

func errorOutcome(x ErrorExtraction) Outcome {
	o := Outcome{Path: x.Path, Pointer: x.Pointer, Rejected: x.Rejected, Anomalies: x.Anomalies}
	if x.Error != nil {
		o.Error = x.Error
		a := Decide(*x.Error)
		o.Action = &a
	}
	return o
}

// FromResult applies the client flow to a bare reply: for MCP a
// CallToolResult (error extraction, then success extraction, mcp-response-extraction.mdx
// handleMcpResponse), for A2A a Task or event (A2AError, then A2A, a2a-response-extraction.mdx
// handleA2aResponse). When an error is found, Data is nil. A wrapper returns
// the Outcome so far and a *WrapperError.
func FromResult(t Transport, result []byte) (Outcome, error) {
	o, an, err := root(result)
	if err != nil {
		return Outcome{Path: PathNone}, err
	}
	out, err := fromResult(t, o, "")
	out.Anomalies = append(an, out.Anomalies...)
	return out, err
}

func fromResult(t Transport, o *rawjson.Object, base string) (Outcome, error) {
	switch t {
	case TransportMCP:
		e := mcpError(o, base)
		if e.Error != nil {
			return errorOutcome(e), nil
		}
		s := mcpSuccess(o, base)
		return Outcome{Path: s.Path, Data: s.Data, Pointer: s.Pointer, Rejected: e.Rejected, Anomalies: append(e.Anomalies, s.Anomalies...)}, nil
	case TransportA2A:
		e := a2aError(o, base)
		if e.Error != nil {
			return errorOutcome(e), nil
		}
		s, werr := a2aSuccess(o, base)
		out := Outcome{Path: s.Path, Data: s.Data, Pointer: s.Pointer, Rejected: e.Rejected, Anomalies: append(e.Anomalies, s.Anomalies...)}
		if werr != nil {
			return out, werr
		}
		return out, nil
	}
	return Outcome{Path: PathNone}, &InputError{Msg: "unknown transport " + strconv.Quote(string(t))}
}

// FromJSONRPCResponse applies the full client detection order of transport-errors.mdx
// to a whole JSON-RPC response for transport t: a non-null `error` member is
// read with JSONRPCError (path jsonrpc_error); otherwise the `result` member
// goes through FromResult. Pointers are relative to the response
// (/result/…, /error/…). It returns an *InputError when the response is not
// a JSON object, has neither member, or has both a result and a non-null
// error; a result that is not an object gives no data (as in the reference
// code) with an anomaly.
func FromJSONRPCResponse(t Transport, response []byte) (Outcome, error) {
	if t != TransportMCP && t != TransportA2A {
		return Outcome{Path: PathNone}, &InputError{Msg: "unknown transport " + strconv.Quote(string(t))}
	}
	o, an, err := root(response)
	if err != nil {
		return Outcome{Path: PathNone}, err
	}
	ev, hasErr := o.Get("error")
	rv, hasRes := o.Get("result")
	if hasErr && rawjson.KindOf(ev) != rawjson.KindNull {
		if hasRes {
			return Outcome{Path: PathNone}, &InputError{Msg: "the JSON-RPC response has both result and error"}
		}
		out := errorOutcome(jsonrpcError(ev, "/error"))
		out.Anomalies = append(an, out.Anomalies...)
		return out, nil
	}
	if !hasRes {
		return Outcome{Path: PathNone}, &InputError{Msg: "the JSON-RPC response has neither result nor error"}
	}
	if hasErr {
		an = append(an, Anomaly{Kind: AnomalyErrorAndResult, Pointer: "/error"})
	}
	ro, ok := objectAt(rv, &an, "/result")
	if !ok {
		an = append(an, Anomaly{Kind: AnomalyResultNotObject, Pointer: "/result", Detail: rawjson.KindOf(rv).Phrase()})
		return Outcome{Path: PathNone, Anomalies: an}, nil
	}
	out, err := fromResult(t, ro, "/result")
	out.Anomalies = append(an, out.Anomalies...)
	return out, err
}

// Describe is the entry point of `adcp-conform extract --transport mcp|a2a
// [--jsonrpc]`: input is a whole JSON-RPC response when jsonrpc is set,
// otherwise the bare MCP CallToolResult or A2A Task/event. It returns a
// value to print as JSON: an Outcome (for an A2A error, with the data the
// A2A extraction selects beside the error), or a *WrapperError rendering as
// {"error_type":"wrapper_detected"}. Unusable input returns an *InputError
// with a one-line message.
func Describe(t Transport, jsonrpc bool, input []byte) (any, error) {
	var (
		out Outcome
		err error
	)
	if jsonrpc {
		out, err = FromJSONRPCResponse(t, input)
	} else {
		out, err = FromResult(t, input)
	}
	var w *WrapperError
	if errors.As(err, &w) {
		return w, nil
	}
	if err != nil {
		return nil, err
	}
	if t == TransportA2A && out.Error != nil && out.Data == nil {
		// A failed or rejected task: data is still what a2a-response-extraction.mdx's
		// extraction selects, the DataPart holding adcp_error, as the
		// official vectors' expected_data says (a2a-response-extraction:
		// failed-adcp-error, a2a-1.0-failed-adcp-error,
		// a2a-1.0-rejected-adcp-error). An MCP error keeps data null, as
		// the MCP vectors say.
		result := input
		if jsonrpc {
			result, _ = rawjson.Field(input, "result")
		}
		if x, _ := A2A(result); x.Data != nil {
			out.Data = x.Data
		}
	}
	return out, nil
}
