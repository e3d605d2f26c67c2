package suites

import (
	"math"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The bounds of retry_after, in seconds (transport-errors.mdx).
const (
	minRetryAfter = 1
	maxRetryAfter = 3600
)

func retryChecks() []Check {
	return []Check{
		// Rule: RETRY-01 · Spec: transport-errors.mdx (retry_after bounds) · Since: 0.1.0 ·
		// Description: retry_after, when present, MUST be a finite number from 1 to 3600
		// inclusive. Judged on every adcp_error that carries retry_after, JSON-RPC
		// error.data included, each occurrence of a repeated key; an error without it shows
		// nothing of the bound, and a run in which no error carried one skips.
		{ID: "RETRY-01", Transport: catalogue.MCP, Text: "bounds retry_after between 1 and 3600 seconds", Judge: judgeRETRY01},
		// Rule: RETRY-02 · Spec: §4.21 · Since: 0.1.0 ·
		// Description: retry_after SHOULD be an integer (AdCP 3.2 producers MUST). A number
		// with a zero fraction (5.0) is an integer, as in JSON Schema; a string ("5"), a
		// boolean, null, an array or an object is not. An overflowing literal (1e400, which
		// clients read as Infinity and treat as absent) holds no integer to judge: it is
		// RETRY-01's.
		{ID: "RETRY-02", Transport: catalogue.MCP, Text: "gives retry_after as a whole number of seconds", Judge: judgeRETRY02},
		// Rule: RETRY-03 · Spec: §4.22 · Since: 0.1.0 ·
		// Description: a RATE_LIMITED error SHOULD carry retry_after. Judged on every
		// RATE_LIMITED seen, the opt-in burst probe's included. A null retry_after is
		// absent (transport-errors.mdx's extraction keeps it only when it is != null).
		{ID: "RETRY-03", Transport: catalogue.MCP, Text: "tells a rate-limited caller when to retry", Judge: judgeRETRY03},
	}
}

// noRetryAfter is the skip reason of RETRY-01 and RETRY-02.
const noRetryAfter = "no retry_after observed"

func judgeRETRY01(s *evidence.Store, _ Options) Verdict {
	return eachErrorWhere("RETRY-01", s, noRetryAfter, func(_ *reply, c candidate) (bool, []finding) {
		vs := values(c.obj, "retry_after")
		var fs []finding
		for _, v := range vs {
			f, isNum := number(v)
			switch {
			case !isNum:
				fs = append(fs, finding{c.ptr + "/retry_after", "is " + kindName(v) + ", not a number"})
			case math.IsInf(f, 0) || f < minRetryAfter || f > maxRetryAfter:
				fs = append(fs, finding{c.ptr + "/retry_after", wireText(v) + " is outside 1..3600"})
			}
		}
		return len(vs) > 0, fs
	})
}

func judgeRETRY02(s *evidence.Store, _ Options) Verdict {
	return eachErrorWhere("RETRY-02", s, noRetryAfter, func(_ *reply, c candidate) (bool, []finding) {
		seen := false
		var fs []finding
		for _, v := range values(c.obj, "retry_after") {
			f, isNum := number(v)
			switch {
			case isNum && math.IsInf(f, 0):
				continue // no value to judge: RETRY-01's
			case !isNum:
				fs = append(fs, finding{c.ptr + "/retry_after", "is " + kindName(v) + ", not an integer"})
			case f != math.Trunc(f):
				fs = append(fs, finding{c.ptr + "/retry_after", wireText(v) + " is not a whole number"})
			}
			seen = true
		}
		return seen, fs
	})
}

func judgeRETRY03(s *evidence.Store, _ Options) Verdict {
	t := newTally("RETRY-03")
	burst := false
	for _, call := range s.Calls() {
		if call.Has(evidence.PurposeRateBurst) {
			burst = true
			if !t.account(call) {
				continue
			}
		}
		if call.Message == nil || call.NotRun != "" {
			continue
		}
		var fs []finding
		seen := false
		for _, c := range parseReply(call).candidates() {
			if code, _ := str(c.obj, "code"); code != "RATE_LIMITED" {
				continue
			}
			seen = true
			if v, ok := c.obj.Get("retry_after"); !ok {
				fs = append(fs, finding{c.ptr + "/retry_after", "is absent from a RATE_LIMITED error"})
			} else if rawjson.KindOf(v) == rawjson.KindNull {
				fs = append(fs, finding{c.ptr + "/retry_after", "is null on a RATE_LIMITED error, which clients read as absent"})
			}
		}
		if seen {
			t.judged(call, fs)
		}
	}
	if !burst {
		return t.verdict("no RATE_LIMITED observed; the rate-limit burst is opt-in (--rate-burst N)")
	}
	return t.verdict("not_applicable: rate_limit_not_triggered (the burst saw no RATE_LIMITED)")
}
