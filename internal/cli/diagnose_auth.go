package cli

import (
	"bytes"
	"context"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

// diagnoseDeadline bounds a whole diagnosis: a dozen calls and fetches,
// each bounded by --timeout, and the discovery graph's walk (60 s at most).
const diagnoseDeadline = 3 * time.Minute

// runDiagnose is `adcp-conform diagnose`: the OAuth handshake walk with
// ranked hypotheses and the brand.json → JWKS chain (suites/diagnose).
// Exit 0 when nothing is wrong, 1 when a likely cause was found, 2 usage,
// 3 when the seller could not be reached at all.
func runDiagnose(args []string, stdio Stdio) error {
	var c runConfig
	var task string
	var asJSON bool
	fs := newFlagSet("diagnose", "diagnose --mcp URL | --a2a URL [flags]", stdio.Err)
	fs.Var(&targetValue{&c.mcpURL, "the seller's MCP endpoint"}, "mcp", "the seller's MCP endpoint `URL` (Streamable HTTP)")
	fs.Var(&targetValue{&c.a2aURL, "the seller's A2A base URL"}, "a2a", "the seller's A2A base `URL` (instead of --mcp)")
	fs.StringVar(&c.bearerEnv, "bearer-env", "", "the `NAME` of the environment variable holding the bearer token to diagnose (not the token itself)")
	fs.Var(&c.headers, "header", "an extra request header, `'NAME: VALUE'`, repeatable (credential headers are not sent on the call without a credential)")
	fs.DurationVar(&c.timeout, "timeout", mcp.DefaultTimeout, "per-call timeout")
	fs.BoolVar(&c.localFetch, "allow-local-fetch", false, "local development only: the discovery documents, brand.json and the JWKS may be http and on loopback or private addresses (never link-local)")
	fs.StringVar(&c.brandJSON, "brand-json", "", "`URL` of the seller's brand.json when its capabilities advertise no identity.brand_json_url")
	fs.StringVar(&c.caCert, "ca-cert", "", "PEM `FILE` of CA certificates to trust for HTTPS targets besides the system's")
	fs.StringVar(&task, "task", "", "the `TASK` the credential is tried on (default: the first the seller lists of get_media_buys, list_creatives, list_accounts, get_media_buy_delivery, get_products)")
	fs.BoolVar(&asJSON, "json", false, "print the diagnosis as JSON")
	addOAuthFlags(fs, &c.oauth) // --oauth-token-url, --oauth-client-id, … (oauthcc.go)
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", wire.Sanitize(fs.Arg(0), 80))
	case c.mcpURL == "" && c.a2aURL == "":
		return usagef("diagnose needs the seller: give --mcp URL or --a2a URL")
	case c.mcpURL != "" && c.a2aURL != "":
		return usagef("diagnose walks one face at a time: give --mcp or --a2a, not both")
	}
	if err := c.oauth.check(&c, false, stdio); err != nil {
		return err
	}
	cfg := conform.Config{MCP: c.mcpURL, A2A: c.a2aURL, Timeout: c.timeout, LocalFetch: c.localFetch, BrandJSON: c.brandJSON, Network: stdio.network,
		OAuth: c.oauth.config()}
	if err := c.credentials(&cfg, stdio); err != nil { // the same checks of the token, the headers and --ca-cert as run's
		return err
	}
	var red *wire.Redactor
	cfg.Redact = func(secrets []string, learnt *wire.SecretSet) { red = wire.NewLiveRedactor(secrets, learnt, nil) }
	ctx, cancel := context.WithTimeout(context.Background(), diagnoseDeadline)
	defer cancel()
	rep, err := conform.Diagnose(ctx, cfg, task)
	if err != nil {
		return runError(err)
	}
	var buf bytes.Buffer
	if asJSON {
		err = rep.WriteJSON(&buf)
	} else {
		err = rep.WriteText(&buf)
	}
	if err != nil {
		return err
	}
	// Every secret of the walk — the token given or obtained, the client
	// secret, credential headers — out of the output, wherever a seller
	// echoed it.
	out, _ := red.Text(buf.Bytes(), false)
	if _, err := stdio.Out.Write(out); err != nil {
		return err
	}
	if code := ExitCode(rep.ExitCode()); code != ExitOK {
		return &codeError{code: code}
	}
	return nil
}
