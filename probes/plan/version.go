package plan

import (
	"context"
	"encoding/json"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
)

// maxPins bounds the releases the version probes pin.
const maxPins = 8

func init() {
	registerMCP(func(ctx context.Context, env Env) {
		versionPins(env, func(id string, args map[string]any, ps ...evidence.Purpose) evidence.Call {
			return env.Shared.CallTool(ctx, id, "get_adcp_capabilities", args, ps...)
		}, "mcp/", extract.TransportMCP)
	})
	registerA2A(func(ctx context.Context, env Env) {
		versionPins(env, func(id string, args map[string]any, ps ...evidence.Purpose) evidence.Call {
			return env.A2A.Send(ctx, id, "get_adcp_capabilities", args, ps...)
		}, "a2a/", extract.TransportA2A)
	})
}

// versionPins reads the releases get_adcp_capabilities advertises
// (adcp.supported_versions) and calls it once pinned to each (VER-03).
func versionPins(env Env, call func(id string, args map[string]any, ps ...evidence.Purpose) evidence.Call, prefix string, t extract.Transport) {
	if !contains(env.Listed, "get_adcp_capabilities") {
		return
	}
	caps := call(prefix+"ver/capabilities", map[string]any{}, evidence.PurposeDiscovery)
	caps.Credential = "configured"
	env.Add(caps)
	for i, v := range supportedVersions(t, caps) {
		if i == maxPins {
			break
		}
		c := call(prefix+"ver/pin/"+v, map[string]any{"adcp_version": v}, evidence.PurposeVersionPin)
		c.Arguments, _ = json.Marshal(map[string]any{"adcp_version": v})
		c.Credential = "configured"
		env.Add(c)
	}
}

// supportedVersions returns adcp.supported_versions of a capabilities
// reply, when it is a list of strings.
func supportedVersions(t extract.Transport, c evidence.Call) []string {
	if c.Message == nil {
		return nil
	}
	out, err := extract.FromJSONRPCResponse(t, c.Message)
	if err != nil || out.Data == nil {
		return nil
	}
	var body struct {
		Adcp struct {
			SupportedVersions []string `json:"supported_versions"`
		} `json:"adcp"`
	}
	_ = json.Unmarshal(out.Data, &body)
	return body.Adcp.SupportedVersions
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
