// Package extract holds the strict extractors: pure functions over the raw
// bytes of one captured reply that implement the spec's normative
// algorithms exactly, and report which path they took.
//
//	x, err := extract.MCPSuccess(result)          // mcp-response-extraction.mdx: AdCP data from a CallToolResult
//	e, err := extract.MCPError(result)            // transport-errors.mdx: adcp_error from a CallToolResult
//	e, err := extract.JSONRPCError(errorMember)   // transport-errors.mdx: error.data.adcp_error
//	x, err := extract.A2A(taskOrEvent)            // a2a-response-extraction.mdx: AdCP data from a Task / event
//	e, err := extract.A2AError(taskOrEvent)       // transport-errors.mdx: adcp_error from a Task / event
//	out, err := extract.FromJSONRPCResponse(extract.TransportMCP, response)
//	a := extract.Decide(*e.Error)                 // the action layer: retry / surface / escalate
//
// Every result names its Path (structured_content, text_fallback, artifact,
// status_message, jsonrpc_error or none) and the RFC 6901 pointer of what it
// found. Data and errors are returned as the bytes received
// (json.RawMessage); extraction never normalizes or clamps. Irregularities
// met on the way (duplicate keys, invalid UTF-8, a non-boolean isError, a
// nested stream envelope, …) are returned as Anomalies for rules to judge.
//
// # Strict decoding
//
// The extractors read their input with probes/rawjson, the harness's
// JSON.parse-compatible reader: case-sensitive, an absent key told from
// null, false and "", duplicate keys resolved as JSON.parse does (the last
// one wins) and recorded, any depth of nesting read without recursion.
// Every input is bounded at MaxInputBytes. Invalid UTF-8 and lone surrogate
// escapes are read as U+FFFD and recorded as anomalies. JavaScript
// truthiness is applied wherever the reference code tests a value for
// truthiness (isError, text, adcp_error, recovery).
//
// # Decisions where the spec leaves room
//
//   - Text limit: TextLimit is 1 048 576 UTF-16 code units, exactly the
//     reference code's `item.text.length`, counted on the raw string before
//     it is decoded or parsed.
//   - Error size: MaxErrorLength is measured as the reference code's
//     JSON.stringify(error).length, in UTF-16 code units, the same unit as
//     TextLimit; the prose's "4096 bytes" is the stricter reading for
//     non-ASCII text (the same for ASCII), and a seller is never failed for
//     an error a reference client keeps.
//   - Code table: with recovery absent, the class comes from the standard
//     error-code table (codes.go, 3.2.0-beta.5), of which transport-errors.mdx's
//     CODE_RECOVERY is an excerpt; the two agree on all 20 excerpted codes,
//     and the vectors need codes beyond them. Unknown codes are terminal
//     (transport-errors page; the error-handling page's "transient" default
//     for unknown codes is not followed: the two pages disagree, and the
//     transport-errors vector mcp-missing-recovery-unknown-code says terminal).
//   - Nested stream envelopes: the prose of a2a-response-extraction.mdx requires rejecting an
//     envelope whose inner object has any of the four envelope keys; its
//     reference code does not. The prose is followed (no data,
//     AnomalyNestedEnvelope).
//   - Wrappers: the prose's "{response: {...}}" (an object) is followed; the
//     reference code's typeof test would also flag null and arrays.
//   - Non-object content items and non-string texts are skipped and recorded;
//     the reference code would throw on null items and String()-coerce
//     non-string texts.
//   - A2AError applies A2A's single envelope unwrap too, scans every artifact
//     and then status.message.parts, and, like the MCP code, stops at the
//     first truthy adcp_error even when it fails validation (Rejected).
//   - Actions use transport-errors.mdx's vocabulary, which the CLI contract names too:
//     retry, fix_request, escalate (the vectors call them retry,
//     surface_to_caller, escalate_to_human). The vectors' generic_error is
//     an Outcome without Error.
//
// The spec's vectors (mcp-response-extraction, transport-error-mapping,
// a2a-response-extraction) all pass as published; vectors_test.go explains
// how their fields map onto this package.
package extract
