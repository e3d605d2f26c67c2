package conform

import (
	"context"

	"github.com/adcp-conform/adcp-conform/suites/diagnose"
)

// Diagnose walks the seller's OAuth handshake and its brand.json → JWKS
// chain with cfg's credential, and names why a token is refused
// (suites/diagnose): one face, cfg.MCP or else cfg.A2A. Of cfg only the
// target, the credential (BearerToken, Header or OAuth), TLS, LocalFetch,
// BrandJSON, Timeout, Redact and Network count; task is the task the
// credential is tried on ("": the first the seller lists that needs one).
// The report quotes the seller: print it through cfg.Redact's secrets.
func Diagnose(ctx context.Context, cfg Config, task string) (*diagnose.Report, error) {
	c := cfg.withDefaults()
	if err := c.check(); err != nil {
		return nil, err
	}
	pc := c.probeConfig().WithGuard()
	dc := diagnose.Config{MCP: pc.MCP, A2A: pc.A2A, LocalFetch: c.LocalFetch, TLS: pc.TLS, Task: task, BrandJSON: c.BrandJSON}
	if o := c.OAuth; o != nil {
		src, err := o.source(c, &pc)
		if err != nil {
			return nil, err
		}
		dc.Source, dc.TokenURL, dc.Scope, dc.Resources, dc.Audience = src, o.TokenURL, o.Scope, o.Resources, o.Audience
		pc.MCP.Limits.LiveSecrets = src.Secrets()
	}
	if c.Redact != nil {
		c.Redact(pc.Secrets(), pc.MCP.Limits.LiveSecrets)
	}
	return diagnose.Run(ctx, dc), nil
}
