package cli

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// TestExtractCommandPrintsWhatTheVectorsSay runs every official extraction
// vector (spec/vectors: mcp-response-extraction, a2a-response-extraction,
// transport-error-mapping; 79 in all) through `adcp-conform extract` and
// its JSON output, not only through the Go functions: what a user of the
// command reads must be what the vectors say.
func TestExtractCommandPrintsWhatTheVectorsSay(t *testing.T) {
	type vector struct {
		ID                string          `json:"id"`
		Path              string          `json:"path"`
		Transport         string          `json:"transport"`
		Response          json.RawMessage `json:"response"`
		ExpectedData      json.RawMessage `json:"expected_data"`
		ExpectedError     json.RawMessage `json:"expected_error"`
		ExpectedAction    string          `json:"expected_action"`
		ExpectedErrorType string          `json:"expected_error_type"`
	}
	load := func(rel string) []vector {
		b, err := os.ReadFile(shared.File(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		var f struct{ Vectors []vector }
		if err := json.Unmarshal(b, &f); err != nil || len(f.Vectors) == 0 {
			t.Fatalf("%s: %v (%d vectors)", rel, err, len(f.Vectors))
		}
		return f.Vectors
	}
	same := func(a, b json.RawMessage) bool {
		var x, y any
		if len(a) == 0 {
			a = json.RawMessage("null")
		}
		if len(b) == 0 {
			b = json.RawMessage("null")
		}
		return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
	}
	isNull := func(raw json.RawMessage) bool { return len(raw) == 0 || strings.TrimSpace(string(raw)) == "null" }
	path := func(s string) string {
		if s == "structuredContent" {
			return string(extract.PathStructuredContent)
		}
		return s
	}
	total := 0
	for _, file := range []string{"mcp-response-extraction", "a2a-response-extraction", "transport-error-mapping"} {
		for _, v := range load("spec/vectors/" + file + ".json") {
			total++
			t.Run(file+"/"+v.ID, func(t *testing.T) {
				transport := v.Transport
				switch file {
				case "mcp-response-extraction":
					transport = "mcp"
				case "a2a-response-extraction":
					transport = "a2a"
				}
				args := []string{"extract", "--transport", transport}
				if _, ok := extractField(v.Response, "jsonrpc"); ok {
					args = append(args, "--jsonrpc")
				}
				code, out, errOut := run(t, nil, string(v.Response), args...)
				if code != ExitOK {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				if v.ExpectedErrorType != "" {
					if !same(json.RawMessage(out), json.RawMessage(`{"error_type":"`+v.ExpectedErrorType+`"}`)) {
						t.Fatalf("printed %s, want error_type %s", out, v.ExpectedErrorType)
					}
					return
				}
				var got struct {
					Path   string          `json:"path"`
					Data   json.RawMessage `json:"data"`
					Error  json.RawMessage `json:"error"`
					Action *struct {
						Kind string `json:"kind"`
					} `json:"action"`
				}
				if err := rawjson.Decode([]byte(out), &got); err != nil {
					t.Fatalf("output %s: %v", out, err)
				}
				if file == "transport-error-mapping" {
					if !same(got.Error, v.ExpectedError) {
						t.Errorf("error = %s, want %s", got.Error, v.ExpectedError)
					}
					if !isNull(v.ExpectedError) && got.Path != path(v.Path) {
						t.Errorf("path = %q, want %q", got.Path, path(v.Path))
					}
					switch {
					case v.ExpectedAction == "generic_error" && got.Action != nil:
						t.Errorf("action = %s, want none (generic_error)", got.Action.Kind)
					case v.ExpectedAction != "generic_error" && (got.Action == nil || extract.ActionKind(got.Action.Kind).VectorName() != v.ExpectedAction):
						t.Errorf("action = %+v, want %s", got.Action, v.ExpectedAction)
					}
					return
				}
				if !same(got.Data, v.ExpectedData) {
					t.Errorf("data = %s, want %s", got.Data, v.ExpectedData)
				}
				if !isNull(v.ExpectedData) && got.Path != path(v.Path) {
					t.Errorf("path = %q, want %q", got.Path, path(v.Path))
				}
			})
		}
	}
	if total != 79 {
		t.Errorf("ran %d vectors, the spec has 79", total)
	}
}

// extractField reports whether the JSON object raw has the exact key.
func extractField(raw []byte, key string) (json.RawMessage, bool) { return rawjson.Field(raw, key) }
