package plan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
)

// CardPaths are where an MCP server card may be published (mcp-guide.mdx).
var CardPaths = []string{"/.well-known/mcp.json", "/.well-known/server.json"}

// cards fetches the server card candidates at the endpoint's origin.
func cards(ctx context.Context, cfg Config) []evidence.Call {
	u, err := url.Parse(cfg.MCP.Endpoint)
	if err != nil || u.Host == "" {
		return nil
	}
	var out []evidence.Call
	for i, p := range CardPaths {
		origin := url.URL{Scheme: u.Scheme, Host: u.Host, Path: p}
		c := mcp.Get(ctx, cfg.MCP, fmt.Sprintf("mcp/server_card/%d", i+1), origin.String(), evidence.PurposeDiscovery)
		out = append(out, c)
		if c.HTTPStatus == 200 && c.Body != nil {
			break // the first card found is the one a client reads
		}
	}
	return out
}

// authProbes runs the authentication probes when the run has a credential:
// a protected call and get_adcp_capabilities without any credential (the
// user's extra headers dropped too, since they may carry one), and a
// protected call with a random bearer token. A refusal at initialize is
// recorded as the probe's answer.
func authProbes(ctx context.Context, cfg Config, listed []string) []evidence.Call {
	if cfg.MCP.BearerToken == "" {
		return nil
	}
	protected := ""
	for _, t := range []string{"get_products", "get_media_buys", "list_creative_formats"} {
		if slices.Contains(listed, t) {
			protected = t
			break
		}
	}
	var out []evidence.Call
	anon := cfg.MCP
	anon.BearerToken, anon.Header = "", nil
	s, init, err := mcp.Dial(ctx, anon, "mcp/auth/no_credential#initialize")
	if err != nil {
		// A refusal at initialize answers both unauthenticated probes; the
		// random-credential probe below still runs.
		init.Purposes = []evidence.Purpose{evidence.PurposeAuthNone, evidence.PurposeAuthCapabilities}
		init.ProbeID = "mcp/auth/no_credential"
		init.Credential = "none"
		out = append(out, init)
	} else {
		if protected != "" {
			c := s.CallTool(ctx, "mcp/auth/no_credential", protected, argsOf(protected), evidence.PurposeAuthNone)
			c.Credential = "none"
			out = append(out, c)
		}
		if slices.Contains(listed, "get_adcp_capabilities") {
			c := s.CallTool(ctx, "mcp/auth/no_credential/capabilities", "get_adcp_capabilities", map[string]any{}, evidence.PurposeAuthCapabilities)
			c.Credential = "none"
			out = append(out, c)
		}
		_ = s.Close()
	}

	random := cfg.MCP
	random.BearerToken = randomToken()
	s, init, err = mcp.Dial(ctx, random, "mcp/auth/random_credential#initialize")
	if err != nil {
		init.Purposes = []evidence.Purpose{evidence.PurposeAuthRandom}
		init.ProbeID = "mcp/auth/random_credential"
		init.Credential = "random"
		return append(out, init)
	}
	defer s.Close()
	if protected != "" {
		c := s.CallTool(ctx, "mcp/auth/random_credential", protected, argsOf(protected), evidence.PurposeAuthRandom)
		c.Credential = "random"
		out = append(out, c)
	}
	return out
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "adcp-conform-invalid-" + hex.EncodeToString(b)
}

// rateBurst calls get_adcp_capabilities up to cfg.RateBurst times on one
// fresh session until the seller answers RATE_LIMITED (or HTTP 429), and
// records that answer; when none comes, it records the last call.
func rateBurst(ctx context.Context, cfg Config) evidence.Call {
	n := min(cfg.RateBurst, MaxRateBurst)
	s, init, err := mcp.Dial(ctx, cfg.MCP, "mcp/rate_burst#initialize")
	if err != nil {
		init.ProbeID, init.Purposes = "mcp/rate_burst", []evidence.Purpose{evidence.PurposeRateBurst}
		if init.HarnessError == "" {
			init.HarnessError = err.Error()
		}
		return init
	}
	defer s.Close()
	return burst("mcp/rate_burst", n, extract.TransportMCP, func() evidence.Call {
		return s.CallTool(ctx, "mcp/rate_burst", "get_adcp_capabilities", map[string]any{}, evidence.PurposeRateBurst)
	})
}

// burst makes call up to n times until the seller answers RATE_LIMITED (or
// HTTP 429) or the harness fails, and returns that call, or the last one,
// numbered in its probe ID.
func burst(id string, n int, t extract.Transport, call func() evidence.Call) evidence.Call {
	var last evidence.Call
	for i := range n {
		last = call()
		last.Credential = "configured"
		if last.HarnessError != "" || last.HTTPStatus == 429 || rateLimitedOn(t, last) {
			last.ProbeID = fmt.Sprintf("%s/%d", id, i+1)
			return last
		}
	}
	last.ProbeID = fmt.Sprintf("%s/%d", id, n)
	return last
}

func rateLimitedOn(t extract.Transport, c evidence.Call) bool {
	if c.Message == nil {
		return false
	}
	out, err := extract.FromJSONRPCResponse(t, c.Message)
	return err == nil && out.Error != nil && out.Error.Code == "RATE_LIMITED"
}
