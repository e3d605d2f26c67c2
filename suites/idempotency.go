package suites

import (
	"strconv"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func init() { registerChecks("IDEM", idemChecks) }

// The bounds of idempotency.replay_ttl_seconds (§4.49).
const (
	minReplayTTL = 3600
	maxReplayTTL = 604800
)

func idemChecks() []Check {
	return []Check{
		// Rule: IDEM-01 · Spec: §4.49 · Since: 0.1.0 ·
		// Description: capabilities MUST declare adcp.idempotency; with supported: true,
		// replay_ttl_seconds MUST be an integer from 3600 to 604800.
		{ID: "IDEM-01", Transport: catalogue.MCP, Text: "declares its idempotency replay window in capabilities", Judge: judgeIDEM01},
		// Rule: IDEM-05 · Spec: §4.57 · Since: 0.1.0 ·
		// Description: read tools MUST accept an optional idempotency_key. Judged on the read
		// probes that carry every envelope field, idempotency_key among them: a rejection
		// naming idempotency_key fails; a rejection naming another field is TOL-01's.
		{ID: "IDEM-05", Transport: catalogue.MCP, Text: "accepts an idempotency_key on read tools", Judge: judgeIDEM05},
	}
}

func judgeIDEM01(s *evidence.Store, _ Options) Verdict {
	t := newTally("IDEM-01")
	call, found := s.Call(probe(s, capabilitiesProbe))
	if !found {
		return t.verdict("get_adcp_capabilities was not called")
	}
	if !t.account(call) {
		return t.verdict("")
	}
	r := parseReply(call)
	adcp := child(r.data, "adcp")
	if !r.success() || adcp == nil {
		return t.verdict("get_adcp_capabilities carries no adcp object (CAP-01)")
	}
	base := ptr(r.dataPtr, "adcp", "idempotency")
	idem := child(adcp, "idempotency")
	var fs []finding
	switch {
	case idem == nil:
		fs = append(fs, finding{base, "is absent or not an object"})
	default:
		sup, ok := idem.Get("supported")
		if !ok || kindOf(sup) != extract.KindBool {
			fs = append(fs, finding{base + "/supported", "is absent or not a boolean"})
			break
		}
		if string(trim(sup)) != "true" {
			break
		}
		v, ok := idem.Get("replay_ttl_seconds")
		n, isNum := number(v)
		switch {
		case !ok:
			fs = append(fs, finding{base + "/replay_ttl_seconds", "is absent while supported is true"})
		case !isNum || n != float64(int64(n)):
			fs = append(fs, finding{base + "/replay_ttl_seconds", "is " + kindName(v) + ", not an integer"})
		case n < minReplayTTL || n > maxReplayTTL:
			fs = append(fs, finding{base + "/replay_ttl_seconds", wireText(v) + " is outside " + strconv.Itoa(minReplayTTL) + ".." + strconv.Itoa(maxReplayTTL)})
		}
	}
	t.judged(call, fs)
	return t.verdict("")
}

func judgeIDEM05(s *evidence.Store, _ Options) Verdict {
	return eachReply("IDEM-05", toolCalls(s, evidence.WithPurpose(evidence.PurposeEnvelopeFields)), nil,
		"no read call with an idempotency_key was answered", func(r *reply) (bool, []finding) {
			if !r.isError && r.rpcErr == nil {
				return r.result != nil, nil
			}
			if namesField(r, "idempotency_key") {
				return true, []finding{{"", "the read call is rejected naming idempotency_key"}}
			}
			return false, nil // refused for another field: TOL-01's
		})
}
