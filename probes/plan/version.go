package plan

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

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
	supported := supportedVersions(t, caps)
	pins := append([]string(nil), supported[:min(len(supported), maxPins)]...)
	if v := downshiftPin(supported); v != "" {
		pins = append(pins, v)
	}
	for _, v := range pins {
		id := prefix + "ver/pin/" + v
		if !contains(supported, v) {
			id = prefix + "ver/downshift/" + v
		}
		c := call(id, map[string]any{"adcp_version": v}, evidence.PurposeVersionPin)
		c.Arguments, _ = json.Marshal(map[string]any{"adcp_version": v})
		c.Credential = "configured"
		env.Add(c)
	}
}

// downshiftPin returns a release the seller does not advertise but should
// downshift from (reference/versioning.mdx): the highest advertised major's
// release "<major>.99", or "" when none fits (no plain release advertised,
// or that one is).
func downshiftPin(supported []string) string {
	major := -1
	for _, v := range supported {
		if m, _, ok := plainRelease(v); ok && m > major {
			major = m
		}
	}
	pin := strconv.Itoa(major) + ".99"
	if major < 0 || contains(supported, pin) {
		return ""
	}
	return pin
}

// plainRelease splits a release-precision version without a pre-release
// tag ("3.1" → 3, 1).
func plainRelease(v string) (major, minor int, ok bool) {
	maj, mnr, found := strings.Cut(v, ".")
	if !found {
		return 0, 0, false
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(maj)
	minor, err2 = strconv.Atoi(mnr)
	return major, minor, err1 == nil && err2 == nil && major >= 0 && minor >= 0
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
	_ = extract.Decode(out.Data, &body)
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
