package diagnose_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/suites/diagnose"
)

// TestTheA2AFaceIsWalkedToo: over A2A the walk reads the card, calls the
// tasks without and with the token, and a bearer token the seller takes
// leaves no likely cause (the reference seller publishes no OAuth metadata
// for its A2A faces, which an API-key seller need not).
func TestTheA2AFaceIsWalkedToo(t *testing.T) {
	const token = "reference-bearer-token-0123"
	ep, stop, err := seller.StartAll(context.Background(), seller.Options{BearerToken: token})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, tc := range []struct {
		name, token string
		exit        int
		first       string
	}{
		{"the token taken", token, 0, ""},
		{"a wrong token", "not-the-reference-token-42", 1, "token_refused_unexplained likely"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := diagnose.Run(context.Background(), diagnose.Config{A2A: a2a.Config{BaseURL: ep.A2A03, BearerToken: tc.token, Timeout: 10 * time.Second,
				Guard: fetch.NewGuard(fetch.GuardConfig{Agents: []string{ep.A2A03}})}, LocalFetch: true, Now: clock})
			var b strings.Builder
			_ = rep.WriteText(&b)
			if rep.ExitCode() != tc.exit || firstCause(rep) != tc.first {
				t.Errorf("exit %d, first cause %q; want %d, %q\n%s", rep.ExitCode(), firstCause(rep), tc.exit, tc.first, b.String())
			}
			if !strings.Contains(b.String(), "GET the agent card") || strings.Contains(b.String(), tc.token) {
				t.Errorf("the walk does not show the card, or shows the token:\n%s", b.String())
			}
		})
	}
}
