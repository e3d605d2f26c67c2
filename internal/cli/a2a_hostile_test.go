package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/report"
)

// TestHostileA2AStreamsEndInAFailedRuleWithEvidence: a stream that never
// ends, one with an event over the size limit, and one closed before a
// final state each give A2A-11 failed with the recorded exchange, within
// the per-call timeout — never a hang.
func TestHostileA2AStreamsEndInAFailedRuleWithEvidence(t *testing.T) {
	for _, mode := range []hostile.A2AStream{hostile.StreamForever, hostile.StreamOversize, hostile.StreamNoFinal} {
		t.Run(string(mode), func(t *testing.T) {
			url, stop := hostile.A2A(mode)
			defer stop()
			dir := t.TempDir()
			// Only the endless stream needs the call timeout to end; the
			// others end on their own, so a loaded machine (both cores
			// busy, the race detector) must not turn their reading into a
			// timeout: no verdict here depends on timing.
			timeout := 10 * time.Second
			if mode == hostile.StreamForever {
				timeout = 700 * time.Millisecond
			}
			start := time.Now()
			code, out, errOut := run(t, nil, "", "run", "--a2a", url, "--out", dir, "--timeout", timeout.String(), "--label-filter", "rule:A2A-11")
			if took := time.Since(start); took > timeout+15*time.Second {
				t.Errorf("the run took %v: a hostile stream held it", took)
			}
			if code != ExitNonConformant {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitNonConformant, out, errOut)
			}
			r := readResults(t, dir)
			for _, rule := range r.Rules {
				if rule.ID != "A2A-11" {
					continue
				}
				if rule.Outcome != report.Failed || len(rule.Evidence) == 0 || len(rule.Findings) == 0 {
					t.Fatalf("A2A-11: %s (%s), %d findings, %d evidence", rule.Outcome, rule.Message, len(rule.Findings), len(rule.Evidence))
				}
				if !strings.Contains(rule.Message, "final") {
					t.Errorf("A2A-11 says %q", rule.Message)
				}
			}
		})
	}
}
