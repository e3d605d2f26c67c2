package material

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/release"
	"github.com/adcp-conform/adcp-conform/report"
)

func TestMayNameStoryboards(t *testing.T) {
	for filter, want := range map[string]bool{
		"rule:NOPE-1":                          false,
		"family:env && level:must":             false,
		"storyboard:capability_discovery":      true,
		"category:media-buy":                   true,
		"kind:universal":                       true,
		"!transport:mcp && !transport:a2a":     true, // holds on every storyboard
		"/discovery/":                          true,
		"rule:NOPE-1 || Storyboard:x":          true,
		"!rule:ENV-01 && family:nope":          false,
		"transport: isEmpty && !family:schema": true,
	} {
		if got, err := mayNameStoryboards(filter); err != nil || got != want {
			t.Errorf("mayNameStoryboards(%q) = %v, %v; want %v", filter, got, err, want)
		}
	}
	if _, err := mayNameStoryboards("rule:ENV-02 &&"); err == nil {
		t.Error("a filter that does not parse was accepted")
	}
}

// capsCall is a recorded get_adcp_capabilities reply over MCP listing
// versions.
func capsCall(t evidence.Transport, versions any) evidence.Call {
	payload, _ := json.Marshal(map[string]any{"adcp": map[string]any{"supported_versions": versions}, "supported_protocols": []string{"media_buy"}})
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"structuredContent": json.RawMessage(payload), "content": []any{map[string]any{"type": "text", "text": string(payload)}}}})
	if t == evidence.A2A {
		msg, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"kind": "task", "id": "t", "contextId": "c",
			"status": map[string]any{"state": "completed"}, "artifacts": []any{map[string]any{"artifactId": "a", "parts": []any{map[string]any{"kind": "data", "data": json.RawMessage(payload)}}}}}})
	}
	return evidence.Call{Transport: t, Kind: evidence.KindToolCall, Tool: "get_adcp_capabilities", Purposes: []evidence.Purpose{evidence.PurposeValid}, Message: msg}
}

// The versions a seller lists are untrusted: bounded in number and
// length, stripped of control characters before they reach a terminal or
// a report; a face that never answered leaves the other's list.
func TestAdvertisedVersionsAreReadFromTheEvidenceAndCleaned(t *testing.T) {
	many := make([]string, 5000)
	for i := range many {
		many[i] = "3.1"
	}
	for _, tc := range []struct {
		name  string
		calls []evidence.Call
		cfg   plan.Config
		want  []string
		read  bool
		note  string
	}{
		{"MCP", []evidence.Call{capsCall(evidence.MCP, []string{"3.0", "3.1"})}, mcpOnly, []string{"3.0", "3.1"}, true, ""},
		{"control characters", []evidence.Call{capsCall(evidence.MCP, []string{"3.1\x1b[2J", strings.Repeat("9", 500)})}, mcpOnly,
			[]string{"3.1?[2J", strings.Repeat("9", 40) + "…"}, true, ""},
		{"thousands", []evidence.Call{capsCall(evidence.MCP, many)}, mcpOnly, many[:64], true, ""},
		{"no list", []evidence.Call{capsCall(evidence.MCP, nil)}, mcpOnly, []string{}, true, ""},
		{"not a list of strings", []evidence.Call{capsCall(evidence.MCP, []int{3})}, mcpOnly, []string{""}, true, ""}, // no version: the default release
		{"no reply", nil, mcpOnly, []string{}, false, ""},
		{"the A2A face alone answered", []evidence.Call{capsCall(evidence.A2A, []string{"3.1"})}, bothFaces, []string{"3.1"}, true, ""},
		{"the faces differ", []evidence.Call{capsCall(evidence.A2A, []string{"3.2-beta.5\x07"}), capsCall(evidence.MCP, []string{"3.1"})}, bothFaces, []string{"3.1"}, true,
			"; the seller's A2A face lists [3.2-beta.5?], its MCP face, where the storyboards run, [3.1]: the release follows the MCP face"},
	} {
		store := evidence.NewStore(evidence.Target{})
		for _, c := range tc.calls {
			store.Add(c)
		}
		got, read, note := advertisedIn(store, tc.cfg)
		if !slices.Equal(got, tc.want) || read != tc.read || note != tc.note {
			t.Errorf("%s: %q, read %v, note %q; want %q, %v, %q", tc.name, got[:min(len(got), 3)], read, note, tc.want[:min(len(tc.want), 3)], tc.read, tc.note)
		}
	}
}

var (
	mcpOnly   = plan.Config{MCP: mcp.Config{Endpoint: "http://s.example/mcp"}}
	bothFaces = plan.Config{MCP: mcp.Config{Endpoint: "http://s.example/mcp"}, A2A: a2a.Config{BaseURL: "http://s.example/a2a"}}
)

// A seller whose capabilities name no version (or were not read) is graded
// on the harness's default release, said so; a version pin the mirror has
// no release of leaves none.
func TestChooseReleaseFallsBackToTheDefaultOnlyWithoutAVersion(t *testing.T) {
	m, err := release.ParseMirror(shared.Mirror(t, "3.1.19", "3.2.0-beta.5"))
	if err != nil {
		t.Fatal(err)
	}
	seller := func(vs []string, read bool) func() ([]string, bool, string) {
		return func() ([]string, bool, string) { return vs, read, "" }
	}
	for _, tc := range []struct {
		name, pin, version, by, why string
		advertised                  func() ([]string, bool, string)
	}{
		{"not read", "", "3.1.19", report.ReleaseByDefault, "no get_adcp_capabilities reply with AdCP data was read: the harness's default release 3.1.19", seller(nil, false)},
		{"no version", "", "3.1.19", report.ReleaseByDefault, `the seller's adcp.supported_versions [""] holds no release-precision version: the harness's default release 3.1.19`, seller([]string{""}, true)},
		{"a 3.2 seller", "", "3.2.0-beta.5", report.ReleaseBySeller, "3.2.0-beta.5 is the newest release of 3.2-beta.5", seller([]string{"3.1", "3.2-beta.5"}, true)},
		{"a version nobody has", "3.3", "", "--release", "--release 3.3: the run can get no release of it from " + m.Dir + " (it has 3.2.0-beta.5, 3.1.19)", nil},
		{"a final without one", "3.2", "3.2.0-beta.5", "--release", "--release 3.2 has no final release the run can get from " + m.Dir + ": its newest pre-release 3.2.0-beta.5 stands in", nil},
	} {
		r := chooseRelease(t.Context(), releaseInputs{pin: tc.pin, mirror: m}, tc.advertised)
		if r.version != tc.version || r.by != tc.by || !strings.HasPrefix(r.why, tc.why) {
			t.Errorf("%s: %q by %s, %q; want %q by %s, %q", tc.name, r.version, r.by, r.why, tc.version, tc.by, tc.why)
		}
	}
}
