package extract

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// hasAnomaly reports whether an anomaly of kind at ptr was recorded.
func hasAnomaly(an []Anomaly, kind AnomalyKind, ptr string) bool {
	for _, a := range an {
		if a.Kind == kind && a.Pointer == ptr {
			return true
		}
	}
	return false
}

type anomalyWant struct {
	kind AnomalyKind
	ptr  string
}

func checkAnomalies(t *testing.T, got []Anomaly, want []anomalyWant) {
	t.Helper()
	for _, w := range want {
		if !hasAnomaly(got, w.kind, w.ptr) {
			t.Errorf("anomaly %s at %q not recorded; got %+v", w.kind, w.ptr, got)
		}
	}
}

// textItem returns a content array holding one text item per argument,
// each text JSON-encoded as a string.
func textItems(texts ...string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range texts {
		if i > 0 {
			b.WriteByte(',')
		}
		q, _ := json.Marshal(s)
		b.WriteString(`{"type":"text","text":` + string(q) + `}`)
	}
	b.WriteByte(']')
	return b.String()
}

var mcpSuccessCases = []struct {
	name     string
	in       string
	path     Path
	data     string // "" means no data
	ptr      string
	anomalie []anomalyWant
}{
	// Step 1: the isError guard, with JavaScript truthiness.
	{name: "isError true guards", in: `{"isError":true,"structuredContent":{"products":[]}}`, path: PathNone},
	{name: "isError truthy string guards", in: `{"isError":"false","structuredContent":{"a":1}}`, path: PathNone,
		anomalie: []anomalyWant{{AnomalyNonBooleanFlag, "/isError"}}},
	{name: "isError 1 guards", in: `{"isError":1,"structuredContent":{"a":1}}`, path: PathNone},
	{name: "isError false extracts", in: `{"isError":false,"structuredContent":{"a":1}}`, path: PathStructuredContent, data: `{"a":1}`, ptr: "/structuredContent"},
	{name: "isError 0 is falsy", in: `{"isError":0,"structuredContent":{"a":1}}`, path: PathStructuredContent, data: `{"a":1}`, ptr: "/structuredContent",
		anomalie: []anomalyWant{{AnomalyNonBooleanFlag, "/isError"}}},
	{name: "isError -0.0e5 is falsy", in: `{"isError":-0.0e5,"structuredContent":{"a":1}}`, path: PathStructuredContent, data: `{"a":1}`, ptr: "/structuredContent"},
	{name: "isError empty string is falsy", in: `{"isError":"","structuredContent":{"a":1}}`, path: PathStructuredContent, data: `{"a":1}`, ptr: "/structuredContent"},
	{name: "isError null is falsy", in: `{"isError":null,"structuredContent":{"a":1}}`, path: PathStructuredContent, data: `{"a":1}`, ptr: "/structuredContent"},
	{name: "isError empty object is truthy", in: `{"isError":{},"structuredContent":{"a":1}}`, path: PathNone},
	{name: "duplicate isError: last wins", in: `{"isError":true,"isError":false,"structuredContent":{"a":1}}`, path: PathStructuredContent, data: `{"a":1}`, ptr: "/structuredContent",
		anomalie: []anomalyWant{{AnomalyDuplicateKey, "/isError"}}},
	{name: "keys are case-sensitive", in: `{"IsError":true,"StructuredContent":{"a":1},"content":` + textItems(`{"b":2}`) + `}`, path: PathTextFallback, data: `{"b":2}`, ptr: "/content/0/text"},

	// Step 2: structuredContent.
	{name: "structuredContent kept byte for byte", in: `{"structuredContent": { "b" : [1, 2.50], "a":"\u00e9" } }`, path: PathStructuredContent, data: `{ "b" : [1, 2.50], "a":"\u00e9" }`, ptr: "/structuredContent"},
	{name: "empty structuredContent is data", in: `{"structuredContent":{}}`, path: PathStructuredContent, data: `{}`, ptr: "/structuredContent"},
	{name: "structuredContent wins over text", in: `{"structuredContent":{"a":1},"content":` + textItems(`{"b":2}`) + `}`, path: PathStructuredContent, data: `{"a":1}`, ptr: "/structuredContent"},
	{name: "adcp_error-only structuredContent is no data and stops", in: `{"structuredContent":{"adcp_error":{"code":"X"}},"content":` + textItems(`{"b":2}`) + `}`, path: PathNone,
		anomalie: []anomalyWant{{AnomalyErrorOnlyPayload, "/structuredContent"}}},
	{name: "repeated adcp_error is still one key", in: `{"structuredContent":{"adcp_error":1,"adcp_error":{"code":"X"}}}`, path: PathNone},
	{name: "adcp_error beside data is data", in: `{"structuredContent":{"adcp_error":{"code":"X"},"products":[]}}`, path: PathStructuredContent, data: `{"adcp_error":{"code":"X"},"products":[]}`, ptr: "/structuredContent"},
	{name: "array structuredContent falls back to text", in: `{"structuredContent":[{"a":1}],"content":` + textItems(`{"b":2}`) + `}`, path: PathTextFallback, data: `{"b":2}`, ptr: "/content/0/text"},
	{name: "string structuredContent falls back to text", in: `{"structuredContent":"{\"a\":1}","content":` + textItems(`{"b":2}`) + `}`, path: PathTextFallback, data: `{"b":2}`, ptr: "/content/0/text"},
	{name: "null structuredContent falls back to text", in: `{"structuredContent":null,"content":` + textItems(`{"b":2}`) + `}`, path: PathTextFallback, data: `{"b":2}`, ptr: "/content/0/text"},

	// Step 3: text fallback.
	{name: "first object text wins, in array order", in: `{"content":` + textItems("Found 3 products", `[1]`, `"s"`, `null`, `{"first":1}`, `{"second":2}`) + `}`, path: PathTextFallback, data: `{"first":1}`, ptr: "/content/4/text"},
	{name: "text is trimmed of JSON whitespace", in: `{"content":` + textItems(" \n\t{\"a\" : 1}\r\n ") + `}`, path: PathTextFallback, data: `{"a" : 1}`, ptr: "/content/0/text"},
	{name: "adcp_error-only text is skipped", in: `{"content":` + textItems(`{"adcp_error":{"code":"RATE_LIMITED"}}`, `{"a":1}`) + `}`, path: PathTextFallback, data: `{"a":1}`, ptr: "/content/1/text",
		anomalie: []anomalyWant{{AnomalyErrorOnlyPayload, "/content/0/text"}}},
	{name: "invalid JSON text is skipped", in: `{"content":` + textItems(`{"a":1`, `{"a":1} x`, `{'a':1}`, `{"a":01}`, `{"a":1}`) + `}`, path: PathTextFallback, data: `{"a":1}`, ptr: "/content/4/text"},
	{name: "a BOM is not JSON whitespace", in: `{"content":` + textItems("\ufeff{\"a\":1}") + `}`, path: PathNone},
	{name: "only type text is read", in: `{"content":[{"type":"TEXT","text":"{\"a\":1}"},{"type":"image","text":"{\"b\":1}"},{"text":"{\"c\":1}"},{"type":"t\u0065xt","text":"{\"d\":1}"}]}`, path: PathTextFallback, data: `{"d":1}`, ptr: "/content/3/text"},
	{name: "empty text is skipped", in: `{"content":[{"type":"text","text":""},{"type":"text","text":"{}"}]}`, path: PathTextFallback, data: `{}`, ptr: "/content/1/text"},
	{name: "non-string text is skipped", in: `{"content":[{"type":"text","text":["{\"a\":1}"]},{"type":"text","text":{"a":1}},{"type":"text","text":"{\"b\":2}"}]}`, path: PathTextFallback, data: `{"b":2}`, ptr: "/content/2/text",
		anomalie: []anomalyWant{{AnomalyNonStringText, "/content/0/text"}, {AnomalyNonStringText, "/content/1/text"}}},
	{name: "non-object items are skipped", in: `{"content":[null,"text",7,[],{"type":"text","text":"{\"a\":1}"}]}`, path: PathTextFallback, data: `{"a":1}`, ptr: "/content/4/text",
		anomalie: []anomalyWant{{AnomalyNonObjectItem, "/content/0"}, {AnomalyNonObjectItem, "/content/3"}}},
	{name: "content not an array is no data", in: `{"content":{"type":"text","text":"{\"a\":1}"}}`, path: PathNone,
		anomalie: []anomalyWant{{AnomalyNotArray, "/content"}}},
	{name: "no content is no data", in: `{}`, path: PathNone},
	{name: "plain text is no data", in: `{"content":` + textItems("Found 3 products.") + `}`, path: PathNone},
	{name: "prototype keys are ordinary data", in: `{"structuredContent":{"__proto__":{"isAdmin":true},"constructor":1}}`, path: PathStructuredContent, data: `{"__proto__":{"isAdmin":true},"constructor":1}`, ptr: "/structuredContent"},
	{name: "pointer escapes ~ and /", in: `{"isError":false,"structuredContent":{"a/b~c":1,"a/b~c":2}}`, path: PathStructuredContent, data: `{"a/b~c":1,"a/b~c":2}`, ptr: "/structuredContent"},
}

func TestMCPSuccess(t *testing.T) {
	for _, c := range mcpSuccessCases {
		t.Run(c.name, func(t *testing.T) {
			x, err := MCPSuccess([]byte(c.in))
			if err != nil {
				t.Fatalf("MCPSuccess: %v", err)
			}
			if x.Path != c.path {
				t.Errorf("path = %q, want %q", x.Path, c.path)
			}
			if string(x.Data) != c.data {
				t.Errorf("data = %s, want %s", x.Data, c.data)
			}
			if x.Pointer != c.ptr {
				t.Errorf("pointer = %q, want %q", x.Pointer, c.ptr)
			}
			checkAnomalies(t, x.Anomalies, c.anomalie)
		})
	}
}

// TestMCPSuccessTextLimit pins the 1 MB limit in UTF-16 code units (JS
// .length), applied before parsing.
func TestMCPSuccessTextLimit(t *testing.T) {
	object := func(filler string, units int) string {
		// {"f":"<filler…>"} with exactly `units` UTF-16 units in total.
		n := units - len(`{"f":""}`)
		per := len(utf16Units(filler))
		return `{"f":"` + strings.Repeat(filler, n/per) + `"}`
	}
	cases := []struct {
		name  string
		text  string
		found bool
	}{
		{"ASCII at the limit", object("a", TextLimit), true},
		{"ASCII one unit over", object("a", TextLimit+1), false},
		{"two-byte characters at the limit (2 MiB of UTF-8)", object("é", TextLimit), true},
		{"astral characters count two units", object("😀", TextLimit+2), false},
		{"escapes count decoded units (6 MiB raw)", strings.Repeat(`\u0041`, TextLimit-8), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var in string
			if strings.HasPrefix(c.text, `\u0041`) {
				// Escapes in the reply itself: each decodes to one unit.
				in = `{"content":[{"type":"text","text":"{\"f\":\"` + c.text + `\"}"}]}`
			} else {
				in = `{"content":` + textItems(c.text) + `}`
			}
			x, err := MCPSuccess([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if got := x.Path == PathTextFallback; got != c.found {
				t.Fatalf("found = %v, want %v (anomalies %+v)", got, c.found, x.Anomalies)
			}
			if !c.found && !hasAnomaly(x.Anomalies, AnomalyTextTooLarge, "/content/0/text") {
				t.Errorf("text_too_large not recorded: %+v", x.Anomalies)
			}
		})
	}
}

func utf16Units(s string) []uint16 {
	var u []uint16
	for _, r := range s {
		if r > 0xFFFF {
			u = append(u, 0, 0)
		} else {
			u = append(u, 0)
		}
	}
	return u
}

var mcpErrorCases = []struct {
	name     string
	in       string
	path     Path
	code     string // "" means no error
	ptr      string
	rejected string // pointer of the rejected candidate
}{
	{name: "structuredContent adcp_error", in: `{"isError":true,"structuredContent":{"adcp_error":{"code":"RATE_LIMITED","retry_after":5}}}`, path: PathStructuredContent, code: "RATE_LIMITED", ptr: "/structuredContent/adcp_error"},
	{name: "no isError: never an error", in: `{"structuredContent":{"adcp_error":{"code":"RATE_LIMITED"}},"content":` + textItems(`{"adcp_error":{"code":"X"}}`) + `}`, path: PathNone},
	{name: "isError false: never an error", in: `{"isError":false,"structuredContent":{"adcp_error":{"code":"RATE_LIMITED"}}}`, path: PathNone},
	{name: "isError truthy string counts", in: `{"isError":"yes","structuredContent":{"adcp_error":{"code":"X"}}}`, path: PathStructuredContent, code: "X", ptr: "/structuredContent/adcp_error"},
	{name: "invalid structured error ends the search", in: `{"isError":true,"structuredContent":{"adcp_error":{"code":429}},"content":` + textItems(`{"adcp_error":{"code":"X"}}`) + `}`, path: PathNone, rejected: "/structuredContent/adcp_error/code"},
	{name: "falsy structured adcp_error falls to text", in: `{"isError":true,"structuredContent":{"adcp_error":""},"content":` + textItems(`{"adcp_error":{"code":"X"}}`) + `}`, path: PathTextFallback, code: "X", ptr: "/content/0/text"},
	{name: "structuredContent without adcp_error falls to text", in: `{"isError":true,"structuredContent":{"error_info":{}},"content":` + textItems(`{"adcp_error":{"code":"X"}}`) + `}`, path: PathTextFallback, code: "X", ptr: "/content/0/text"},
	{name: "text fallback in array order", in: `{"isError":true,"content":` + textItems("Rate limited.", `{"error":"x"}`, `{"adcp_error":null}`, `{"adcp_error":{"code":"FIRST"}}`, `{"adcp_error":{"code":"SECOND"}}`) + `}`, path: PathTextFallback, code: "FIRST", ptr: "/content/3/text"},
	{name: "text adcp_error beside other keys counts", in: `{"isError":true,"content":` + textItems(`{"adcp_error":{"code":"X"},"payload":{}}`) + `}`, path: PathTextFallback, code: "X", ptr: "/content/0/text"},
	{name: "invalid text error ends the search", in: `{"isError":true,"content":` + textItems(`{"adcp_error":{"code":""}}`, `{"adcp_error":{"code":"X"}}`) + `}`, path: PathNone, rejected: "/content/0/text"},
	{name: "truthy non-object adcp_error is rejected", in: `{"isError":true,"structuredContent":{"adcp_error":"RATE_LIMITED"}}`, path: PathNone, rejected: "/structuredContent/adcp_error"},
	{name: "no structure", in: `{"isError":true,"content":` + textItems("Rate limit exceeded.") + `}`, path: PathNone},
}

func TestMCPError(t *testing.T) {
	for _, c := range mcpErrorCases {
		t.Run(c.name, func(t *testing.T) {
			x, err := MCPError([]byte(c.in))
			if err != nil {
				t.Fatalf("MCPError: %v", err)
			}
			if x.Path != c.path {
				t.Errorf("path = %q, want %q", x.Path, c.path)
			}
			code := ""
			if x.Error != nil {
				code = x.Error.Code
			}
			if code != c.code {
				t.Errorf("code = %q, want %q", code, c.code)
			}
			if x.Pointer != c.ptr {
				t.Errorf("pointer = %q, want %q", x.Pointer, c.ptr)
			}
			rej := ""
			if x.Rejected != nil {
				rej = x.Rejected.Pointer
			}
			if rej != c.rejected {
				t.Errorf("rejected at %q, want %q (%v)", rej, c.rejected, x.Rejected)
			}
		})
	}
}

// TestMCPErrorTextHasNoSizeLimit: the seed's error text fallback has no
// per-item limit (only the success path does).
func TestMCPErrorTextHasNoSizeLimit(t *testing.T) {
	text := `{"adcp_error":{"code":"X"},"pad":"` + strings.Repeat("p", TextLimit) + `"}`
	x, err := MCPError([]byte(`{"isError":true,"content":` + textItems(text) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if x.Error == nil || x.Error.Code != "X" {
		t.Fatalf("error not found past the success-path limit: %+v", x)
	}
}

func TestInputErrors(t *testing.T) {
	cases := []struct{ name, in, msg string }{
		{"empty", ``, "input is not JSON: unexpected end of input at byte 0"},
		{"not JSON", `{"a":}`, "input is not JSON: invalid value at byte 5"},
		{"array", `[{}]`, "input is an array, not a JSON object"},
		{"string", `"{}"`, "input is a string, not a JSON object"},
		{"trailing data", `{} {}`, "input is not JSON: unexpected data after the top-level value at byte 3"},
		{"single quotes", `{'a':1}`, "input is not JSON: expected object key at byte 1"},
		{"raw control character", "{\"a\":\"\x01\"}", "input is not JSON: control character in string at byte 6"},
		{"bad escape", `{"a":"\x"}`, "input is not JSON: invalid escape in string at byte 6"},
		{"leading zero", `{"a":01}`, "input is not JSON: expected ',' or a closing bracket at byte 6"},
		{"mismatched bracket", `{"a":[1}`, "input is not JSON: expected ',' or a closing bracket at byte 7"},
		{"unterminated", `{"a":"x`, "input is not JSON: unterminated string at byte 5"},
	}
	fns := map[string]func([]byte) error{
		"MCPSuccess": func(b []byte) error { _, err := MCPSuccess(b); return err },
		"MCPError":   func(b []byte) error { _, err := MCPError(b); return err },
		"A2A":        func(b []byte) error { _, err := A2A(b); return err },
		"A2AError":   func(b []byte) error { _, err := A2AError(b); return err },
		"FromResult": func(b []byte) error { _, err := FromResult(TransportMCP, b); return err },
	}
	for _, c := range cases {
		for fn, call := range fns {
			t.Run(c.name+"/"+fn, func(t *testing.T) {
				err := call([]byte(c.in))
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("error = %v, want *InputError", err)
				}
				if ie.Error() != c.msg {
					t.Errorf("message = %q, want %q", ie.Error(), c.msg)
				}
			})
		}
	}
}

func TestOversizedInput(t *testing.T) {
	big := make([]byte, MaxInputBytes+1)
	_, err := MCPSuccess(big)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Msg, "over the") {
		t.Fatalf("error = %v, want a size *InputError", err)
	}
}
