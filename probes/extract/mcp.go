package extract

import (
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"strconv"
)

// MCPSuccess implements mcp-response-extraction.mdx (extractAdcpResponseFromMcp) over the raw
// `result` member of a tools/call response (a CallToolResult object):
//
//  1. isError truthy (JavaScript truthiness) → no data.
//  2. structuredContent that is a non-array object → it, unless its only key
//     is adcp_error (an error missing its isError flag) → no data.
//  3. content[] in array order: items with type "text" and a non-empty text;
//     a text longer than TextLimit UTF-16 units is skipped before parsing;
//     the first text that parses to a non-array object, other than an
//     adcp_error-only object, is the data.
//  4. Otherwise no data.
//
// It returns an *InputError when result is not a JSON object.
func MCPSuccess(result []byte) (Extraction, error) {
	o, an, err := root(result)
	if err != nil {
		return Extraction{Path: PathNone}, err
	}
	x := mcpSuccess(o, "")
	x.Anomalies = append(an, x.Anomalies...)
	return x, nil
}

func mcpSuccess(o *rawjson.Object, base string) Extraction {
	x := Extraction{Path: PathNone}
	if isErrorFlag(o, base, &x.Anomalies) {
		return x
	}
	if sc, ok := o.Get("structuredContent"); ok && rawjson.KindOf(sc) == rawjson.KindObject {
		ptr := rawjson.Pointer(base, "structuredContent")
		if key, only := rawjson.SoleKey(sc); only && key == "adcp_error" {
			x.Anomalies = append(x.Anomalies, Anomaly{Kind: AnomalyErrorOnlyPayload, Pointer: ptr})
			return x
		}
		x.Path, x.Data, x.Pointer = PathStructuredContent, sc, ptr
		return x
	}
	content, ok := o.Get("content")
	if !ok {
		return x
	}
	if rawjson.KindOf(content) != rawjson.KindArray {
		if rawjson.TruthyValue(content) {
			x.Anomalies = append(x.Anomalies, Anomaly{Kind: AnomalyNotArray, Pointer: rawjson.Pointer(base, "content")})
		}
		return x
	}
	eachText(content, rawjson.Pointer(base, "content"), &x.Anomalies, func(tok []byte, ptr string) bool {
		if n := rawjson.UTF16Len(tok); n > TextLimit {
			x.Anomalies = append(x.Anomalies, Anomaly{Kind: AnomalyTextTooLarge, Pointer: ptr, Detail: strconv.Itoa(n) + " UTF-16 code units"})
			return true
		}
		obj, ok := parseText(tok, ptr, &x.Anomalies)
		if !ok {
			return true
		}
		if _, has := obj.Get("adcp_error"); has && obj.Len() == 1 {
			x.Anomalies = append(x.Anomalies, Anomaly{Kind: AnomalyErrorOnlyPayload, Pointer: ptr})
			return true
		}
		x.Path, x.Data, x.Pointer = PathTextFallback, obj.Raw(), ptr
		return false
	})
	return x
}

// ErrorExtraction is the result of an error extractor (MCPError,
// JSONRPCError, A2AError).
type ErrorExtraction struct {
	Path  Path
	Error *AdcpError // nil when no structured error was found
	// Pointer locates the adcp_error member in the input; for the text
	// fallback it is the text member holding it, e.g. /content/0/text.
	Pointer string
	// Rejected is set when a candidate adcp_error was found at a detection
	// path but failed validation; the result then is "no structured error"
	// (PathNone), as the seed requires.
	Rejected  *ValidationError
	Anomalies []Anomaly
}

// MCPError implements transport-errors.mdx's extractAdcpErrorFromMcp over the raw
// `result` member of a tools/call response:
//
//  1. isError falsy → no error (a success reply is never read as an error).
//  2. structuredContent.adcp_error truthy → validate it; the result, valid or
//     not, ends the search.
//  3. content[] in array order: the first text item that parses to a
//     non-array object with a truthy adcp_error → validate it; that ends the
//     search. (The seed's error path has no per-item size limit; MaxInputBytes
//     bounds the whole input.)
//
// It returns an *InputError when result is not a JSON object.
func MCPError(result []byte) (ErrorExtraction, error) {
	o, an, err := root(result)
	if err != nil {
		return ErrorExtraction{Path: PathNone}, err
	}
	x := mcpError(o, "")
	x.Anomalies = append(an, x.Anomalies...)
	return x, nil
}

func mcpError(o *rawjson.Object, base string) ErrorExtraction {
	x := ErrorExtraction{Path: PathNone}
	if !isErrorFlag(o, base, &x.Anomalies) {
		return x
	}
	if sc, ok := o.Get("structuredContent"); ok {
		if sco, ok := objectAt(sc, &x.Anomalies, rawjson.Pointer(base, "structuredContent")); ok {
			if ae, ok := sco.Get("adcp_error"); ok && rawjson.TruthyValue(ae) {
				x.settle(ae, rawjson.Pointer(base, "structuredContent", "adcp_error"), PathStructuredContent)
				return x
			}
		}
	}
	content, ok := o.Get("content")
	if !ok || rawjson.KindOf(content) != rawjson.KindArray {
		if ok && rawjson.TruthyValue(content) && rawjson.KindOf(content) != rawjson.KindArray {
			x.Anomalies = append(x.Anomalies, Anomaly{Kind: AnomalyNotArray, Pointer: rawjson.Pointer(base, "content")})
		}
		return x
	}
	eachText(content, rawjson.Pointer(base, "content"), &x.Anomalies, func(tok []byte, ptr string) bool {
		obj, ok := parseText(tok, ptr, &x.Anomalies)
		if !ok {
			return true
		}
		ae, ok := obj.Get("adcp_error")
		if !ok || !rawjson.TruthyValue(ae) {
			return true
		}
		x.settle(ae, ptr, PathTextFallback)
		return false
	})
	return x
}

// settle validates a candidate and records the outcome. For the text
// fallback, ptr is the text member; a JSON pointer cannot reach into the
// parsed string, so the rejection names the member inside it in its reason.
func (x *ErrorExtraction) settle(candidate []byte, ptr string, path Path) {
	e, verr := validateAdcpError(candidate, "")
	if verr != nil {
		if path == PathTextFallback {
			verr.Reason = "parsed adcp_error" + verr.Pointer + " " + verr.Reason
			verr.Pointer = ptr
		} else {
			verr.Pointer = ptr + verr.Pointer
		}
		x.Rejected = verr
		return
	}
	x.Path, x.Error, x.Pointer = path, e, ptr
}

// isErrorFlag reads isError with JavaScript truthiness, noting a non-boolean.
func isErrorFlag(o *rawjson.Object, base string, an *[]Anomaly) bool {
	v, ok := o.Get("isError")
	if !ok {
		return false
	}
	if rawjson.KindOf(v) != rawjson.KindBool {
		*an = append(*an, Anomaly{Kind: AnomalyNonBooleanFlag, Pointer: rawjson.Pointer(base, "isError"), Detail: rawjson.KindOf(v).Phrase()})
	}
	return rawjson.TruthyValue(v)
}

// eachText calls fn with the raw text token of every content item whose type
// is the string "text" and whose text is a non-empty string, in array order,
// until fn returns false. Items that are not objects (JS would throw on null
// and read undefined on others) and truthy non-string texts (JS would coerce
// them with String()) are skipped and noted.
func eachText(content []byte, base string, an *[]Anomaly, fn func(tok []byte, ptr string) bool) {
	rawjson.Elements(content, func(i int, item []byte) bool {
		ip := rawjson.Pointer(base, strconv.Itoa(i))
		io, ok := objectAt(item, an, ip)
		if !ok {
			*an = append(*an, Anomaly{Kind: AnomalyNonObjectItem, Pointer: ip, Detail: rawjson.KindOf(item).Phrase()})
			return true
		}
		t, ok := io.Get("type")
		if s, isStr := rawjson.StringValue(t); !ok || !isStr || s != "text" {
			return true
		}
		text, ok := io.Get("text")
		if !ok || !rawjson.TruthyValue(text) {
			return true
		}
		tp := rawjson.Pointer(ip, "text")
		if rawjson.KindOf(text) != rawjson.KindString {
			*an = append(*an, Anomaly{Kind: AnomalyNonStringText, Pointer: tp, Detail: rawjson.KindOf(text).Phrase()})
			return true
		}
		return fn(text, tp)
	})
}

// parseText decodes a text token and JSON-parses it (JSON.parse semantics),
// returning the object view (over the trimmed text) when the text is a
// non-array object.
func parseText(tok []byte, ptr string, an *[]Anomaly) (*rawjson.Object, bool) {
	s, dflags := rawjson.DecodeString(tok)
	// Cheap pre-check: JSON.parse of anything not starting with '{' after
	// whitespace cannot give an object.
	b := []byte(s)
	t := rawjson.Trim(b)
	if len(t) == 0 || t[0] != '{' {
		return nil, false
	}
	if _, err := rawjson.Scan(t); err != nil {
		return nil, false
	}
	*an = flagAnomalies(*an, dflags, ptr)
	o := rawjson.ObjectOf(t)
	for _, k := range o.Duplicates() {
		*an = append(*an, Anomaly{Kind: AnomalyDuplicateKey, Pointer: ptr, Detail: "parsed text repeats key " + strconv.Quote(k)})
	}
	return o, true
}
