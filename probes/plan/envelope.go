package plan

import (
	"slices"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// EnvelopeCases returns the probes of TOL-01 and IDEM-05: each listed read
// tool called with its valid arguments and every envelope field. pin is the
// adcp_version they carry, a release the seller advertises (see
// EnvelopePin), so VERSION_UNSUPPORTED is never provoked by them; "" sends
// no adcp_version (the seller advertises no release).
func EnvelopeCases(listed []string, nonce, pin string) []Case {
	ctxValue := contextValue(nonce)
	var cases []Case
	for _, t := range readTools {
		if !slices.Contains(listed, t.name) {
			continue
		}
		args := with(t.args, "context", ctxValue, "context_id", "adcp-conform-"+nonce, "idempotency_key", "adcp-conform-"+nonce+"-"+t.name,
			"push_notification_config", map[string]any{"url": "https://buyer.invalid/webhooks/adcp-conform", "authentication": map[string]any{"schemes": []any{"Bearer"}, "credentials": "adcp-conform-placeholder-credential-0000000000"}},
			"governance_context", "adcp-conform-"+nonce, "ext", map[string]any{"adcp_conform": true})
		if pin != "" {
			args["adcp_version"] = pin
		}
		cases = append(cases, Case{ID: "mcp/" + t.name + "/envelope_fields", Tool: t.name,
			Purposes: []evidence.Purpose{evidence.PurposeEnvelopeFields, evidence.PurposeContext}, Args: args})
	}
	return cases
}

// harnessRelease is the release the harness speaks at the wire's precision.
const harnessRelease = "3.1"

// EnvelopePin picks the adcp_version of the envelope probes from the
// releases the seller advertises: the harness's own when advertised, else
// the highest plain release, else the first advertised one; "" when it
// advertises none.
func EnvelopePin(supported []string) string {
	if slices.Contains(supported, harnessRelease) {
		return harnessRelease
	}
	best, bm, bn := "", -1, -1
	for _, v := range supported {
		if m, n, ok := plainRelease(v); ok && (m > bm || m == bm && n > bn) {
			best, bm, bn = v, m, n
		}
	}
	if best == "" && len(supported) > 0 {
		best = supported[0]
	}
	return best
}
