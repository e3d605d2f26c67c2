package diagnose_test

import (
	"context"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/oauthgate"
	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/auth"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/diagnose"
)

// The fixed clock of the set-ups: the tokens' claims and the walk's reading
// of them agree on it.
var clock = func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

const (
	clientID     = "conform-client"
	clientSecret = "s3cret-of-the-conform-client"
)

// gateSetup starts the gate fixture with defect in front of the reference
// seller and diagnoses it with client credentials.
func gateSetup(t *testing.T, defect oauthgate.Defect, scope string) *diagnose.Report {
	t.Helper()
	ctx := context.Background()
	ep, stop, err := oauthgate.Start(ctx, oauthgate.Options{Defect: defect, ClientID: clientID, ClientSecret: clientSecret, Now: clock,
		Next: seller.New(seller.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	src, err := auth.New(auth.Config{TokenURL: ep.Token, ClientID: clientID, ClientSecret: clientSecret, Scope: scope,
		Resource: []string{ep.MCP}, Policy: fetch.Policy{Local: true}, Now: clock, Secrets: &wire.SecretSet{}})
	if err != nil {
		t.Fatal(err)
	}
	g := fetch.NewGuard(fetch.GuardConfig{Agents: []string{ep.MCP}})
	return diagnose.Run(ctx, diagnose.Config{MCP: mcp.Config{Endpoint: ep.MCP, Guard: g, Timeout: 10 * time.Second}, Source: src,
		TokenURL: ep.Token, Scope: scope, Resources: []string{ep.MCP}, LocalFetch: true, Now: clock})
}

func TestSetupsPrint(t *testing.T) {
	for _, d := range append([]oauthgate.Defect{oauthgate.Sound}, oauthgate.Defects...) {
		rep := gateSetup(t, d, "")
		var b = new(stringsBuilder)
		_ = rep.WriteText(b)
		t.Logf("=== %s exit %d\n%s", d, rep.ExitCode(), b.String())
	}
}

type stringsBuilder struct{ s []byte }

func (b *stringsBuilder) Write(p []byte) (int, error) { b.s = append(b.s, p...); return len(p), nil }
func (b *stringsBuilder) String() string              { return string(b.s) }
