package extract

import (
	"errors"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// The fuzzers check that no input panics, that results are consistent
// (a path with data, a valid error with an action in bounds) and that output
// is bounded by the input: data is a slice of the input, or a decoded text
// item, which can be at most three times its raw size (an invalid byte
// becomes the three-byte U+FFFD).

func addSeeds(f *testing.F, ins ...string) {
	for _, in := range ins {
		f.Add([]byte(in))
	}
}

func mcpSeeds() []string {
	var s []string
	for _, c := range mcpSuccessCases {
		s = append(s, c.in)
	}
	for _, c := range mcpErrorCases {
		s = append(s, c.in)
	}
	return s
}

func a2aSeeds() []string {
	var s []string
	for _, c := range a2aCases {
		s = append(s, c.in)
	}
	for _, c := range a2aErrorCases {
		s = append(s, c.in)
	}
	return s
}

var validPaths = map[Path]bool{PathStructuredContent: true, PathTextFallback: true, PathArtifact: true, PathStatusMessage: true, PathJSONRPCError: true, PathNone: true}

func checkInputErr(t *testing.T, err error, allowWrapper bool) {
	t.Helper()
	if err == nil {
		return
	}
	var ie *InputError
	var we *WrapperError
	if errors.As(err, &ie) || (allowWrapper && errors.As(err, &we)) {
		return
	}
	t.Fatalf("unexpected error type %T: %v", err, err)
}

func checkData(t *testing.T, in []byte, path Path, data []byte, ptr string) {
	t.Helper()
	if !validPaths[path] {
		t.Fatalf("invalid path %q", path)
	}
	if data == nil {
		return
	}
	if path == PathNone || ptr == "" {
		t.Fatalf("data with path %q pointer %q", path, ptr)
	}
	if len(data) > 3*len(in) {
		t.Fatalf("data of %d bytes from %d input bytes", len(data), len(in))
	}
	if _, err := rawjson.Scan(data); err != nil || rawjson.KindOf(rawjson.Trim(data)) != rawjson.KindObject {
		t.Fatalf("data is not a JSON object: %v", err)
	}
}

func checkError(t *testing.T, in []byte, x ErrorExtraction) {
	t.Helper()
	if x.Error == nil {
		if x.Path != PathNone {
			t.Fatalf("path %q without an error", x.Path)
		}
		return
	}
	if x.Path == PathNone || x.Pointer == "" {
		t.Fatalf("error with path %q pointer %q", x.Path, x.Pointer)
	}
	if len(x.Error.Raw) > 3*len(in) {
		t.Fatal("error larger than its input")
	}
	if err := ValidateError(x.Error.Raw); err != nil {
		t.Fatalf("extracted error does not validate: %v", err)
	}
	checkAction(t, Decide(*x.Error))
}

func checkAction(t *testing.T, a Action) {
	t.Helper()
	switch a.Kind {
	case ActionRetry:
		if d := a.DelaySeconds; d != nil && (*d < MinRetryAfter || *d > MaxRetryAfter) {
			t.Fatalf("delay %v out of bounds", *d)
		}
	case ActionFixRequest, ActionEscalate:
		if a.DelaySeconds != nil {
			t.Fatal("delay on a non-retry action")
		}
	default:
		t.Fatalf("invalid action %q", a.Kind)
	}
}

func FuzzMCPSuccess(f *testing.F) {
	addSeeds(f, mcpSeeds()...)
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := MCPSuccess(in)
		checkInputErr(t, err, false)
		checkData(t, in, x.Path, x.Data, x.Pointer)
		if x.Path == PathArtifact || x.Path == PathStatusMessage || x.Path == PathJSONRPCError {
			t.Fatalf("MCP success path %q", x.Path)
		}
	})
}

func FuzzMCPError(f *testing.F) {
	addSeeds(f, mcpSeeds()...)
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := MCPError(in)
		checkInputErr(t, err, false)
		checkError(t, in, x)
	})
}

func FuzzA2A(f *testing.F) {
	addSeeds(f, a2aSeeds()...)
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := A2A(in)
		checkInputErr(t, err, true)
		checkData(t, in, x.Path, x.Data, x.Pointer)
		if x.Data != nil && x.Path != PathArtifact && x.Path != PathStatusMessage {
			t.Fatalf("A2A data on path %q", x.Path)
		}
	})
}

func FuzzA2AError(f *testing.F) {
	addSeeds(f, a2aSeeds()...)
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := A2AError(in)
		checkInputErr(t, err, false)
		checkError(t, in, x)
	})
}

func FuzzJSONRPCError(f *testing.F) {
	for _, c := range []string{`{"code":-32029,"data":{"adcp_error":{"code":"RATE_LIMITED","retry_after":10}}}`, `{"code":-32600}`, `null`, `{"data":{"adcp_error":{"code":""}}}`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := JSONRPCError(in)
		checkInputErr(t, err, false)
		checkError(t, in, x)
	})
}

func FuzzFromJSONRPCResponse(f *testing.F) {
	for _, s := range mcpSeeds() {
		f.Add(false, []byte(`{"jsonrpc":"2.0","id":1,"result":`+s+`}`))
	}
	for _, s := range a2aSeeds() {
		f.Add(true, []byte(`{"jsonrpc":"2.0","id":1,"result":`+s+`}`))
	}
	f.Add(false, []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32029,"data":{"adcp_error":{"code":"RATE_LIMITED"}}}}`))
	f.Fuzz(func(t *testing.T, a2a bool, in []byte) {
		tr := TransportMCP
		if a2a {
			tr = TransportA2A
		}
		out, err := FromJSONRPCResponse(tr, in)
		checkInputErr(t, err, a2a)
		checkData(t, in, out.Path, out.Data, out.Pointer)
		if out.Error != nil {
			if out.Data != nil || out.Action == nil {
				t.Fatal("error outcome with data or without action")
			}
			checkAction(t, *out.Action)
		}
		b, merr := out.MarshalJSON()
		if merr != nil {
			t.Fatal(merr)
		}
		if _, verr := rawjson.Scan(b); verr != nil {
			t.Fatalf("outcome renders invalid JSON: %v", verr)
		}
	})
}

func FuzzValidateError(f *testing.F) {
	for _, c := range []string{`{"code":"X"}`, `{"code":"X","p":"\ud800","n":1e400,"m":-0.0}`, `{"code":"","code":"Y"}`, `[]`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		err := ValidateError(in)
		var ve *ValidationError
		var ie *InputError
		if err != nil && !errors.As(err, &ve) && !errors.As(err, &ie) {
			t.Fatalf("unexpected error type %T", err)
		}
		if err == nil {
			if n := must(rawjson.StringifyUnits(in)); n > MaxErrorLength {
				t.Fatalf("validated error serializes to %d UTF-16 code units", n)
			}
			if u, b := must(rawjson.StringifyUnits(in)), must(rawjson.StringifyLen(in)); u > b {
				t.Fatalf("%d UTF-16 units exceed %d UTF-8 bytes", u, b)
			}
			e, _ := validateAdcpError(rawjson.Trim(in), "")
			checkAction(t, Decide(*e))
		}
	})
}

// must is the length a measure of validated input returns (its error is
// for input that is not JSON).
func must(n int, err error) int {
	if err != nil {
		panic(err)
	}
	return n
}
