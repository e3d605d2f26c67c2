package extract

import (
	"encoding/json"
	"strconv"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// MaxInputBytes bounds every input handed to an extractor. Larger inputs
// return an *InputError before any parsing (the transport layer bounds reply
// bodies well below this).
const MaxInputBytes = rawjson.MaxInputBytes

// TextLimit is the success text-fallback limit of mcp-response-extraction.mdx ("1MB"), measured
// as JavaScript's string .length, that is UTF-16 code units of the decoded
// text, exactly as the normative code `item.text.length > 1_048_576` does.
// For ASCII text this equals the byte count; for other text a reference
// client accepts up to this many code units, and so does the harness.
const TextLimit = 1_048_576

// Path says where an extractor found its result.
type Path string

// The extraction paths.
const (
	PathStructuredContent Path = "structured_content" // MCP result.structuredContent
	PathTextFallback      Path = "text_fallback"      // MCP result.content[i].text, JSON-parsed
	PathArtifact          Path = "artifact"           // A2A artifacts[…].parts[…].data
	PathStatusMessage     Path = "status_message"     // A2A status.message.parts[…].data
	PathJSONRPCError      Path = "jsonrpc_error"      // JSON-RPC error.data.adcp_error
	PathNone              Path = "none"               // nothing found
)

// Transport is the protocol a reply came over.
type Transport string

// The transports.
const (
	TransportMCP Transport = "mcp"
	TransportA2A Transport = "a2a"
)

// ParseTransport accepts "mcp" or "a2a".
func ParseTransport(s string) (Transport, error) {
	switch Transport(s) {
	case TransportMCP, TransportA2A:
		return Transport(s), nil
	}
	return "", &InputError{Msg: "unknown transport " + strconv.Quote(s) + " (want mcp or a2a)"}
}

// AnomalyKind names an irregularity the extractors noticed on their way. An
// anomaly never changes the extraction result; rules decide what it means.
type AnomalyKind string

// The anomalies.
const (
	AnomalyDuplicateKey     AnomalyKind = "duplicate_key"       // an object the algorithm read repeats a key (last wins)
	AnomalyInvalidUTF8      AnomalyKind = "invalid_utf8"        // the input holds bytes that are not UTF-8 (read as U+FFFD)
	AnomalyLoneSurrogate    AnomalyKind = "lone_surrogate"      // a \uD800-\uDFFF escape without its pair (read as U+FFFD)
	AnomalyNonBooleanFlag   AnomalyKind = "non_boolean_iserror" // isError is present but not true/false (JS truthiness applied)
	AnomalyNonStringText    AnomalyKind = "non_string_text"     // a text content item whose text is not a string (skipped)
	AnomalyNonObjectItem    AnomalyKind = "non_object_item"     // a content item, artifact or part that is not an object (skipped)
	AnomalyNotArray         AnomalyKind = "not_array"           // content, artifacts or parts present but not an array
	AnomalyTextTooLarge     AnomalyKind = "text_too_large"      // a text item over TextLimit UTF-16 units (skipped unparsed)
	AnomalyErrorOnlyPayload AnomalyKind = "adcp_error_only"     // a success-path payload whose only key is adcp_error
	AnomalyNestedEnvelope   AnomalyKind = "nested_envelope"     // an A2A stream envelope inside a stream envelope
	AnomalyUnknownState     AnomalyKind = "unknown_state"       // an A2A status.state outside the known tokens
	AnomalyNonStringState   AnomalyKind = "non_string_state"    // an A2A status.state that is not a string
	AnomalyResultNotObject  AnomalyKind = "result_not_object"   // a JSON-RPC result that is not an object
	AnomalyErrorAndResult   AnomalyKind = "error_and_result"    // a JSON-RPC response with a null error beside a result
)

// Anomaly is one irregularity, located by an RFC 6901 JSON pointer into the
// extractor's input.
type Anomaly struct {
	Kind    AnomalyKind `json:"kind"`
	Pointer string      `json:"pointer"`
	Detail  string      `json:"detail,omitempty"`
}

// Extraction is the result of a success extractor (MCPSuccess, A2A).
type Extraction struct {
	Path Path
	// Data is the extracted AdCP object exactly as received (for the text
	// fallback: the decoded text, trimmed of JSON whitespace), or nil.
	Data json.RawMessage
	// Pointer locates Data in the input ("" with PathNone). For the text
	// fallback it is the text member, e.g. /content/1/text.
	Pointer string
	// State is the normalized A2A status.state ("" for MCP or when absent).
	State     string
	Anomalies []Anomaly
}

// InputError is returned when the input itself is unusable: not JSON, not an
// object where one is required, or too large. The CLI maps it to exit code 2.
type InputError = rawjson.InputError

// WrapperError reports a framework wrapper in an A2A final-state DataPart:
// data whose only key is "response" holding an object (a2a-response-extraction.mdx step 3c). The
// reference algorithm throws here; the extractors return it as an error that
// errors.As finds. It renders as {"error_type":"wrapper_detected"}.
type WrapperError struct {
	Pointer string // the DataPart's data member, e.g. /artifacts/0/parts/1/data
}

func (e *WrapperError) Error() string {
	return "wrapper_detected: " + e.Pointer + " is a {\"response\": {…}} framework wrapper"
}

// MarshalJSON renders the detection the way the spec's vectors name it.
func (e *WrapperError) MarshalJSON() ([]byte, error) {
	return []byte(`{"error_type":"wrapper_detected"}`), nil
}

// root validates and bounds input, returning the object view and the
// anomalies of the whole input.
func root(input []byte) (*rawjson.Object, []Anomaly, error) {
	if len(input) > MaxInputBytes {
		return nil, nil, &InputError{Msg: "input is " + strconv.Itoa(len(input)) + " bytes, over the " + strconv.Itoa(MaxInputBytes) + "-byte limit"}
	}
	o, err := rawjson.ParseObject(input)
	if err != nil {
		return nil, nil, err
	}
	var an []Anomaly
	an = flagAnomalies(an, o.Irregularities(), "")
	an = dupAnomalies(an, o, "")
	return o, an, nil
}

func flagAnomalies(an []Anomaly, flags rawjson.Irregular, ptr string) []Anomaly {
	if flags&rawjson.InvalidUTF8 != 0 {
		an = append(an, Anomaly{Kind: AnomalyInvalidUTF8, Pointer: ptr})
	}
	if flags&rawjson.LoneSurrogate != 0 {
		an = append(an, Anomaly{Kind: AnomalyLoneSurrogate, Pointer: ptr})
	}
	return an
}

// dupAnomalies records the duplicate keys of an object the algorithm read.
func dupAnomalies(an []Anomaly, o *rawjson.Object, ptr string) []Anomaly {
	for _, k := range o.Duplicates() {
		an = append(an, Anomaly{Kind: AnomalyDuplicateKey, Pointer: rawjson.Pointer(ptr, k)})
	}
	return an
}

// objectAt returns the object view of raw when it is an object.
func objectAt(raw []byte, an *[]Anomaly, ptr string) (*rawjson.Object, bool) {
	if rawjson.KindOf(raw) != rawjson.KindObject {
		return nil, false
	}
	o := rawjson.ObjectOf(raw)
	*an = dupAnomalies(*an, o, ptr)
	return o, true
}
