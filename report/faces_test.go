package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// facesOf is the bundled reference seller's two faces over the same
// storyboard run: the A2A 0.3 face's steps went over A2A, one of its
// failures says something else, and one step fails on it alone.
func facesOf(t *testing.T) []Face {
	t.Helper()
	first := storyboardRun()
	first.TargetKind, first.Face, first.Transports = TargetBundledReference, "MCP + A2A 1.0", []string{"mcp", "a2a"}
	second := storyboardRun()
	second.TargetKind, second.Face, second.Transports = TargetBundledReference, "A2A 0.3", []string{"a2a"}
	for i := range second.Rules {
		rule := &second.Rules[i]
		for k := range rule.Specs {
			rule.Specs[k].Transport = "a2a"
		}
		for k := range rule.Findings {
			rule.Findings[k].Transport = "a2a"
		}
	}
	for i := range second.Steps {
		st := &second.Steps[i]
		if st.Request != nil {
			st.Request.Transport = "a2a"
		}
		if st.Response != nil {
			st.Response.Transport = "a2a"
		}
		if st.StepID == "create_twice" {
			st.Error = "the stream ended before a final state"
		}
	}
	only := sbStep("capability_discovery", "protocol_discovery", "get_capabilities_again", "get_adcp_capabilities", false,
		Validation{Check: "field_present", Description: "declares supported_protocols", JSONPointer: ptr("/supported_protocols"),
			Expected: "/supported_protocols", Actual: json.RawMessage(`null`), Message: "supported_protocols is missing"})
	only.Request = &Request{Transport: "a2a", Operation: "get_adcp_capabilities", Payload: json.RawMessage(`{}`)}
	second.Steps = append(second.Steps, only)
	second.Settle()
	return []Face{{Name: "MCP + A2A 1.0", Dir: "out", Run: first}, {Name: "A2A 0.3", Dir: "out/a2a-0.3", Run: second}}
}

// TestFacesListEachFailureOnceWithItsFaces: the summary of a run over two
// faces lists a rule or a storyboard step failing on both once, naming
// both faces; a step that fails differently keeps each face's message;
// one failing on one face names that face only.
func TestFacesListEachFailureOnceWithItsFaces(t *testing.T) {
	var out bytes.Buffer
	if err := WriteFacesText(&out, facesOf(t), TextOptions{}, 1); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for want, n := range map[string]int{
		"FAILED   [MCP, A2A 0.3] media_buy_seller/create/create_media_buy\n":                  1,
		"ERROR    [MCP, A2A 0.3] media_buy_seller/delivery/get_media_buy_delivery\n":          1,
		"ERROR    [MCP, A2A 0.3] idempotency/replay/create_twice\n":                           1,
		"MCP: connection reset by peer · A2A 0.3: the stream ended before a final state\n":    1,
		"FAILED   [A2A 0.3] capability_discovery/protocol_discovery/get_capabilities_again\n": 1,
		"field_present /supported_protocols: expected \"/supported_protocols\"; supported_pr": 1,
		"FAILED   ENV-02    must   ": 1,
		"on mcp, a2a · probe mcp/get_products/valid · out/report.html#rule-ENV-02":             0,
		"storyboard failures first (4)\n":                                                      1,
		"verdict: non_conformant (" + ReferenceLabel + ") — the same on every face (exit 1)\n": 1,
		"rules by family\n": 1,
		"\nA2A 0.3 — http://127.0.0.1:8931/mcp\n  rules: ": 1,
	} {
		if got := strings.Count(s, want); got != n {
			t.Errorf("%q appears %d times, want %d:\n%s", want, got, n, s)
		}
	}
	if !strings.Contains(s, "on MCP, A2A 0.3 · probe mcp/get_products/valid · out/report.html#rule-ENV-02") {
		t.Errorf("the rule failing on every face does not name them all:\n%s", s)
	}
}

// TestOneReportNamesTheFaceOfEachStoryboardFailure: a report of one run
// lists each failing step once, with the face it ran on, in the terminal
// and in report.html.
func TestOneReportNamesTheFaceOfEachStoryboardFailure(t *testing.T) {
	r := facesOf(t)[1].Run
	var text, page bytes.Buffer
	if err := WriteText(&text, r, TextOptions{Dir: "out"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(text.String(), "] media_buy_seller/create/create_media_buy\n"); n != 1 || !strings.Contains(text.String(), "FAILED   [A2A 0.3] media_buy_seller/create/create_media_buy") {
		t.Errorf("the terminal lists the step %d times, or without its face:\n%s", n, text.String())
	}
	root, err := html.Parse(&page)
	if err != nil {
		t.Fatal(err)
	}
	list := findElement(root, func(n *html.Node) bool { return attr(n, "id") == "sb-attention" })
	if list == nil {
		t.Fatal("no storyboard failures first list")
	}
	if got := textOf(list); strings.Count(got, "create/create_media_buy") != 1 || strings.Count(got, "on A2A 0.3") != 4 {
		t.Errorf("report.html's storyboard failures first: %q", got)
	}
}

// TestAFailedValidationSaysWhatWasSeen: a validation line never reads
// "expected null, got null": a null actual (nothing observed there) gives
// the validation's own message, and one with no value at all its message.
func TestAFailedValidationSaysWhatWasSeen(t *testing.T) {
	null := json.RawMessage(`null`)
	for _, tc := range []struct {
		name string
		v    Validation
		want string
	}{
		{"nothing fetched, nothing expected", Validation{Check: "http_status", Description: "the metadata document can be located", Actual: null,
			Message: "nothing to fetch: the protected-resource metadata request answered HTTP 404, so no authorization server is named"},
			"http_status: nothing to fetch: the protected-resource metadata request answered HTTP 404, so no authorization server is named"},
		{"a field absent", Validation{Check: "field_value", JSONPointer: ptr("/media_buy_id"), Expected: "mb-1", Actual: null, Message: "media_buy_id is missing"},
			`field_value /media_buy_id: expected "mb-1"; media_buy_id is missing`},
		{"a field present but null", Validation{Check: "field_value", JSONPointer: ptr("/status"), Expected: "active", Actual: null, Message: "status is present but null"},
			`field_value /status: expected "active"; status is present but null`},
		{"a value seen", Validation{Check: "field_value", JSONPointer: ptr("/status"), Expected: "active", Actual: json.RawMessage(`"paused"`), Message: "m"},
			`field_value /status: expected "active", got "paused"`},
		{"a value that must not be there", Validation{Check: "field_absent", JSONPointer: ptr("/debug"), Actual: json.RawMessage(`true`), Message: "debug is present and must not be"},
			`field_absent /debug: debug is present and must not be (got true)`},
		{"the runner's stand-in message", Validation{Check: "http_status", Expected: float64(200), Actual: null, Message: "http_status failed"},
			"http_status: expected 200, got null"},
		{"nothing but a description", Validation{Check: "any_of", Description: "one branch passes", Actual: null, Message: "any_of failed"},
			"any_of: one branch passes"},
	} {
		got := validationLine(tc.v)
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
		if strings.Contains(got, "expected null") {
			t.Errorf("%s: %q", tc.name, got)
		}
	}
}
