package plan

import (
	"context"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// maxPins bounds the releases the version probes pin.
const maxPins = 8

func init() {
	registerMCP(func(ctx context.Context, env Env) {
		invoke := func(c Case) evidence.Call {
			call := run(ctx, env.Config, env.Shared, c)
			call.Refused = refusal(call)
			return call
		}
		versionProbes(env, invoke, "mcp/", extract.TransportMCP)
	})
	registerA2A(func(ctx context.Context, env Env) {
		invoke := func(c Case) evidence.Call {
			args := env.Config.Inputs.base(c.Tool)
			merge(args, c.Args)
			call := env.A2A.Send(ctx, a2aID(c.ID), c.Tool, args, c.Purposes...)
			call.Arguments, call.Context = redactedArgs(args)
			call.Credential = "configured"
			call.Refused = refusal(call)
			return call
		}
		versionProbes(env, invoke, "a2a/", extract.TransportA2A)
	})
}

// versionProbes reads the releases get_adcp_capabilities advertises
// (adcp.supported_versions), then makes the probes that depend on them: the
// envelope-field probes pinned to an advertised release (TOL-01, IDEM-05),
// get_adcp_capabilities pinned to each release (VER-03), and a call
// declaring the unsupported major version 99 (VER-02).
func versionProbes(env Env, invoke func(Case) evidence.Call, prefix string, t extract.Transport) {
	var supported []string
	if contains(env.Listed, "get_adcp_capabilities") {
		caps := invoke(Case{ID: "mcp/ver/capabilities", Tool: "get_adcp_capabilities", Args: map[string]any{},
			Purposes: []evidence.Purpose{evidence.PurposeDiscovery}})
		caps.Refused = ""
		env.Add(caps)
		supported = supportedVersions(t, caps)
	}
	for _, c := range EnvelopeCases(env.Listed, env.Nonce, EnvelopePin(supported)) {
		env.Add(invoke(c))
	}
	if c, ok := MajorVersionCase(env.Listed, env.Nonce, env.Usable); ok {
		env.Add(invoke(c))
	}
	if !contains(env.Listed, "get_adcp_capabilities") {
		return
	}
	pins := append([]string(nil), supported[:min(len(supported), maxPins)]...)
	if v := downshiftPin(supported); v != "" {
		pins = append(pins, v)
	}
	for _, v := range pins {
		id := "mcp/ver/pin/" + v
		if !contains(supported, v) {
			id = "mcp/ver/downshift/" + v
		}
		c := invoke(Case{ID: id, Tool: "get_adcp_capabilities", Args: map[string]any{"adcp_version": v},
			Purposes: []evidence.Purpose{evidence.PurposeVersionPin}})
		c.Refused = ""
		env.Add(c)
	}
}

// MajorVersionCase is VER-02's second probe: a read tool (one that answered
// its valid probe, when usable says so) called declaring the integer
// adcp_major_version 99, which no seller supports; the seller must answer
// VERSION_UNSUPPORTED (protocol/get_adcp_capabilities.mdx, Version
// negotiation).
func MajorVersionCase(listed []string, nonce string, usable func(string) bool) (Case, bool) {
	tools := []string{"get_products", "get_adcp_capabilities", "list_creative_formats"}
	for _, pass := range []bool{true, false} {
		for _, t := range tools {
			if contains(listed, t) && (!pass || usable == nil || usable(t)) {
				return Case{ID: "mcp/" + t + "/error_major_version", Tool: t, Fresh: true,
					Purposes: []evidence.Purpose{evidence.PurposeErrorMajorVersion, evidence.PurposeContext},
					Args:     with(argsOf(t), "adcp_major_version", 99, "context", contextValue(nonce))}, true
			}
		}
	}
	return Case{}, false
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
	_ = rawjson.Decode(out.Data, &body)
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

// Advertised returns adcp.supported_versions of the first valid
// get_adcp_capabilities reply recorded over t (DiscoveryOnly records one),
// and whether such a reply carried AdCP data at all: a seller that answers
// without the list is read, one that never answered is not.
func Advertised(store *evidence.Store, t evidence.Transport) (versions []string, read bool) {
	for _, c := range store.Calls() {
		if c.Transport != t || c.Kind != evidence.KindToolCall || c.Tool != "get_adcp_capabilities" || !c.Has(evidence.PurposeValid) || c.OtherAgent() || c.Message == nil {
			continue
		}
		out, err := extract.FromJSONRPCResponse(extract.Transport(t), c.Message)
		if err != nil || out.Data == nil {
			continue
		}
		return supportedVersions(extract.Transport(t), c), true
	}
	return nil, false
}
