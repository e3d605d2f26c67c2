package suites

import (
	"strconv"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func init() { registerChecks("HOOK", hookChecks) }

func hookChecks() []Check {
	return []Check{
		// Rule: HOOK-04 · Spec: seeds 001 (Webhook Trigger Rules) · Since: 0.1.0 ·
		// Description: no webhook MUST be sent for a call whose first response was already
		// terminal. The probe registers a webhook on a read call pointing at the harness's
		// own receiver and waits a bounded time; a terminal answer followed by a delivery
		// fails. An interim (submitted, working) answer is not judged here.
		{ID: "HOOK-04", Transport: catalogue.MCP, Text: "sends no webhook after a terminal first response", Judge: judgeHOOK04},
	}
}

var terminalStatuses = map[string]bool{"completed": true, "failed": true, "rejected": true, "canceled": true}

func judgeHOOK04(s *evidence.Store, _ Options) Verdict {
	t := newTally("HOOK-04")
	call, found := s.Call(probe(s, "hook/sync"))
	if !found {
		return t.verdict("get_products is not listed")
	}
	if !t.account(call) {
		return t.verdict("")
	}
	r := parseReply(call)
	status := ""
	switch {
	case r.errorSignal():
		status = "failed"
	case r.data != nil:
		status, _ = str(r.data, "status")
	}
	if !terminalStatuses[status] {
		return t.verdict("the call registering the webhook was answered " + quote(status) + ", not a terminal status")
	}
	deliveries, ok := s.Call(probe(s, "hook/sync/deliveries"))
	if !ok || !t.account(deliveries) {
		return t.verdict("the receiver's deliveries were not recorded")
	}
	if n := len(deliveries.Exchanges); n > 0 {
		t.judged(deliveries, []finding{{"", strconv.Itoa(n) + " webhook(s) posted for a call whose first response was terminal (" + status + ")"}})
	} else {
		t.judged(deliveries, nil)
	}
	return t.verdict("")
}
