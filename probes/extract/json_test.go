package extract

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDeepNesting: 100 000 levels are valid JSON for JSON.parse and for this
// package (an explicit stack, no recursion); encoding/json refuses them.
func TestDeepNesting(t *testing.T) {
	const depth = 100_000
	deep := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	in := []byte(`{"structuredContent":{"deep":` + deep + `}}`)
	x, err := MCPSuccess(in)
	if err != nil {
		t.Fatal(err)
	}
	if x.Path != PathStructuredContent || len(x.Data) != len(deep)+len(`{"deep":}`) {
		t.Errorf("path = %q, data length = %d", x.Path, len(x.Data))
	}
	var v any
	if err := json.Unmarshal(in, &v); err == nil || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Errorf("encoding/json on %d levels: %v (the package doc says it refuses)", depth, err)
	}
	// The same depth as an adcp_error is rejected by size, without recursion.
	e, err := MCPError([]byte(`{"isError":true,"structuredContent":{"adcp_error":{"code":"X","d":` + deep + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.Error != nil || e.Rejected == nil {
		t.Errorf("deep adcp_error: error %v, rejected %v", e.Error, e.Rejected)
	}
	// Unbalanced depth is a syntax error, not a crash.
	if _, err := MCPSuccess([]byte(`{"a":` + strings.Repeat("[", depth))); err == nil {
		t.Error("unterminated nesting accepted")
	}
}

func TestInvalidUTF8(t *testing.T) {
	x, err := MCPSuccess([]byte("{\"structuredContent\":{\"name\":\"caf\xe9\"}}"))
	if err != nil {
		t.Fatal(err)
	}
	if x.Path != PathStructuredContent || string(x.Data) != "{\"name\":\"caf\xe9\"}" {
		t.Errorf("data = %q", x.Data)
	}
	if !hasAnomaly(x.Anomalies, AnomalyInvalidUTF8, "") {
		t.Errorf("invalid_utf8 not recorded: %+v", x.Anomalies)
	}
	// In a text item the bytes are decoded (as U+FFFD) before JSON.parse.
	x, err = MCPSuccess([]byte("{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"n\\\":\\\"\xff\\\"}\"}]}"))
	if err != nil {
		t.Fatal(err)
	}
	if string(x.Data) != "{\"n\":\"\uFFFD\"}" || !hasAnomaly(x.Anomalies, AnomalyInvalidUTF8, "/content/0/text") {
		t.Errorf("data = %q, anomalies %+v", x.Data, x.Anomalies)
	}
}
