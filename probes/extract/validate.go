package extract

import (
	"encoding/json"
	"strconv"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// The validation bounds of transport-errors.mdx (validate()).
const (
	// MaxCodeLength bounds adcp_error.code, in UTF-16 code units (JS .length).
	MaxCodeLength = 64
	// MaxErrorLength bounds the serialized adcp_error: the length of
	// JSON.stringify(error), the compact re-serialization of the parsed
	// object (duplicate keys collapsed, numbers in JavaScript form), counted
	// in UTF-16 code units exactly as the reference code's .length does. The
	// spec's prose says "4096 bytes" twice; the two readings differ only for
	// non-ASCII text, where bytes is the stricter one. The project counts
	// both of mcp-response-extraction.mdx/002's length limits in one unit, the reference code's
	// (TextLimit likewise), so a seller whose error a reference client keeps
	// is never failed for it, and the harness keeps what that client keeps.
	MaxErrorLength = 4096
	// MaxErrorBytes is the former name of MaxErrorLength, which is counted
	// in UTF-16 code units, not bytes.
	//
	// Deprecated: use MaxErrorLength.
	MaxErrorBytes = MaxErrorLength
)

// AdcpError is an extracted, validated adcp_error object. Its field values
// are kept as received (retry_after is not clamped here; see Decide).
type AdcpError struct {
	Raw        json.RawMessage // the adcp_error object exactly as received
	Code       string          // the decoded code (validated: 1..64 UTF-16 units)
	Recovery   json.RawMessage // the recovery member as received, nil when absent
	RetryAfter json.RawMessage // the retry_after member as received, nil when absent
}

// MarshalJSON renders the error object as received.
func (e AdcpError) MarshalJSON() ([]byte, error) { return e.Raw, nil }

// ValidationError says why a candidate adcp_error was discarded.
type ValidationError struct {
	Pointer string // the offending member, e.g. /structuredContent/adcp_error/code
	Reason  string
}

func (e *ValidationError) Error() string {
	p := e.Pointer
	if p == "" {
		p = "adcp_error"
	}
	return p + ": " + e.Reason
}

// ValidateError applies transport-errors.mdx's validate() to one adcp_error value: it
// must be a non-array object whose code is a string of 1..64 UTF-16 code
// units, and whose JSON.stringify form is at most MaxErrorBytes bytes. It
// returns nil, a *ValidationError (pointers relative to raw), or an
// *InputError when raw is not JSON.
func ValidateError(raw []byte) error {
	if len(raw) > MaxInputBytes {
		return &InputError{Msg: "input is over the size limit"}
	}
	if _, err := rawjson.Scan(raw); err != nil {
		return &InputError{Msg: "input is not JSON: " + err.Error()}
	}
	_, verr := validateAdcpError(rawjson.Trim(raw), "")
	if verr != nil {
		return verr
	}
	return nil
}

// validateAdcpError validates a trimmed, validated candidate located at ptr.
func validateAdcpError(raw []byte, ptr string) (*AdcpError, *ValidationError) {
	if rawjson.KindOf(raw) != rawjson.KindObject {
		return nil, &ValidationError{Pointer: ptr, Reason: "is " + rawjson.KindOf(raw).Phrase() + ", not an object"}
	}
	o := rawjson.ObjectOf(raw)
	code, ok := o.Get("code")
	if !ok {
		return nil, &ValidationError{Pointer: rawjson.Pointer(ptr, "code"), Reason: "is absent"}
	}
	if rawjson.KindOf(code) != rawjson.KindString {
		return nil, &ValidationError{Pointer: rawjson.Pointer(ptr, "code"), Reason: "is " + rawjson.KindOf(code).Phrase() + ", not a string"}
	}
	if n := rawjson.UTF16Len(code); n == 0 {
		return nil, &ValidationError{Pointer: rawjson.Pointer(ptr, "code"), Reason: "is empty"}
	} else if n > MaxCodeLength {
		return nil, &ValidationError{Pointer: rawjson.Pointer(ptr, "code"), Reason: "is " + strconv.Itoa(n) + " UTF-16 code units, over " + strconv.Itoa(MaxCodeLength)}
	}
	if n, _ := rawjson.StringifyUnits(raw); n > MaxErrorLength {
		return nil, &ValidationError{Pointer: ptr, Reason: "serializes to " + strconv.Itoa(n) + " UTF-16 code units, over " + strconv.Itoa(MaxErrorLength)}
	}
	e := &AdcpError{Raw: raw}
	e.Code, _ = rawjson.DecodeString(code)
	if v, ok := o.Get("recovery"); ok {
		e.Recovery = v
	}
	if v, ok := o.Get("retry_after"); ok {
		e.RetryAfter = v
	}
	return e, nil
}
