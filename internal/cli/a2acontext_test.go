package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/report"
)

// Over A2A a storyboard is one buyer's conversation, as over MCP one
// session: its calls share a contextId of their own, so idempotency's
// rate-limit trip meets the seller's per-context limit (RATE_LIMITED,
// retry_after 1) and is graded, not skipped rate_limit_not_triggered.
func TestAStoryboardsA2ACallsShareAContext(t *testing.T) {
	compliance, _ := specDirs(t)
	eps, stop, err := seller.StartAll(t.Context(), seller.Options{Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	out := t.TempDir()
	code, so, se := run(t, nil, "", "run", "--a2a", eps.A2A03, "--sandbox", "--allow-mutations", "--storyboards", compliance,
		"--storyboard", "idempotency", "--storyboard", "capability_discovery", "--schemas", "off", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	r := readResults(t, out)
	tripped := false
	for _, st := range r.Steps {
		if st.StepID == "expect_rate_limit_not_replayed" {
			tripped = st.Outcome() == report.Passed
		}
	}
	if !tripped {
		t.Error("the rate-limit trip was not graded on a real RATE_LIMITED")
	}
	b, err := os.ReadFile(filepath.Join(out, FileEvidence))
	if err != nil {
		t.Fatal(err)
	}
	var ev struct{ Calls []evidence.Call }
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	contextID := regexp.MustCompile(`"contextId":"([^"]+)"`)
	contexts := map[string]map[string]bool{}
	for _, c := range ev.Calls {
		if !strings.HasPrefix(c.ProbeID, evidence.StoryboardPrefix) {
			continue
		}
		id := strings.Split(strings.TrimPrefix(c.ProbeID, evidence.StoryboardPrefix), "/")[0]
		for _, x := range c.Exchanges {
			if m := contextID.FindSubmatch(x.RequestBody); m != nil {
				if contexts[id] == nil {
					contexts[id] = map[string]bool{}
				}
				contexts[id][string(m[1])] = true
			}
		}
	}
	if len(contexts) != 2 {
		t.Fatalf("contexts by storyboard: %v", contexts)
	}
	seen := map[string]bool{}
	for id, ids := range contexts {
		if len(ids) != 1 {
			t.Errorf("%s: %d contexts, want one", id, len(ids))
		}
		for c := range ids {
			if seen[c] {
				t.Errorf("%s shares a context with another storyboard", id)
			}
			seen[c] = true
		}
	}
}
