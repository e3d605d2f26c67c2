package rawjson

import (
	"encoding/json"
	"math"
)

// This file tells the JSON kind and the JavaScript truthiness of a value
// already decoded into Go (map[string]any, []any, string, float64 or
// json.Number, bool, nil: what encoding/json decodes into any), for the
// readers that work on decoded documents.

// KindOfDecoded returns the JSON kind of a decoded value; KindInvalid for
// a Go value JSON does not decode to.
func KindOfDecoded(v any) Kind {
	switch v.(type) {
	case nil:
		return KindNull
	case bool:
		return KindBool
	case float64, json.Number:
		return KindNumber
	case string:
		return KindString
	case []any:
		return KindArray
	case map[string]any:
		return KindObject
	}
	return KindInvalid
}

// String names the kind as JSON Schema's type keyword does: "null",
// "boolean", "number", "string", "array", "object"; "invalid" for
// KindInvalid.
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	}
	return "invalid"
}

// TruthyDecoded is JavaScript truthiness of a decoded value: null, false,
// "", 0 and NaN are falsy; every other value, every object and array
// included, is truthy.
func TruthyDecoded(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case json.Number:
		f, _ := x.Float64() // ±Inf on overflow: truthy, as in JS
		return f != 0
	case string:
		return x != ""
	}
	return true
}
