package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

func TestDiagnoseTellsAUsersMistakeFromASellersAnswer(t *testing.T) {
	ok := evidence.Call{ProbeID: "mcp/get_adcp_capabilities/valid", Kind: evidence.KindToolCall, Credential: "configured",
		HTTPStatus: 200, Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{}}`)}
	refused := evidence.Call{ProbeID: "mcp/get_products/valid", Kind: evidence.KindToolCall, Credential: "configured", HTTPStatus: 401}
	timedOut := evidence.Call{ProbeID: "mcp/get_products/context", Kind: evidence.KindToolCall, HarnessError: "no response within the call timeout"}
	// A storyboard's negative auth step sends a bad credential on purpose.
	storyRefused := evidence.Call{ProbeID: evidence.StoryboardPrefix + "security_baseline/api_key_path/probe_invalid_api_key", Kind: evidence.KindToolCall,
		Credential: "configured", HTTPStatus: 401}
	for _, tc := range []struct {
		name       string
		credential bool
		calls      []evidence.Call
		harness    string // substring; "" for none
		note       string // substring of a note; "" for none
	}{
		{"no credential, refused", false, []evidence.Call{ok, refused}, "the seller wants authentication", ""},
		{"the credential refused everywhere", true, []evidence.Call{refused}, "refused the run's credential", ""},
		{"the credential accepted, one call refused", true, []evidence.Call{ok, refused}, "", "although the run's credential was accepted"},
		{"a timeout", true, []evidence.Call{ok, timedOut}, "", "timed out"},
		{"all well", true, []evidence.Call{ok}, "", ""},
		{"a storyboard's refused bad credential", true, []evidence.Call{ok, storyRefused}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := evidence.NewStore(evidence.Target{MCP: "https://s.example/mcp", Credential: tc.credential})
			for _, c := range tc.calls {
				s.Add(c)
			}
			d := Diagnose(s)
			if (d.Harness == "") != (tc.harness == "") || !strings.Contains(d.Harness, tc.harness) {
				t.Errorf("harness %q, want one holding %q", d.Harness, tc.harness)
			}
			notes := strings.Join(d.Notes, "\n")
			if (notes == "") != (tc.note == "") || !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want one holding %q", notes, tc.note)
			}
		})
	}
}
