package suites

import (
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func ctxChecks() []Check {
	return []Check{
		// Rule: CTX-01 · Spec: mcp-guide.mdx; L2/context-sessions · Since: 0.1.0 ·
		// Description: the request's context object MUST be echoed unchanged (JSON-equal: no
		// added, removed or retyped keys) at the root of a success response. Each occurrence
		// of a repeated context key must be the echo.
		{ID: "CTX-01", Transport: catalogue.MCP, Text: "echoes the request's context unchanged on success", Judge: judgeCTX01},
		// Rule: CTX-02 · Spec: §4.43; L2/context-sessions · Since: 0.1.0 ·
		// Description: the same echo MUST happen on an error response.
		// Policy: judged on what a client reads: the error replies (MCP isError results; A2A
		// tasks carrying adcp_error, which the client detection reads whatever the state, or
		// in state failed/rejected) to the calls that sent a context (the context probes and
		// the error probes). The body judged is the one holding the adcp_error the detection
		// order extracts first (structuredContent, else the first JSON text item; the DataPart
		// on A2A); when it has no context, a structuredContent (MCP) or extracted body (A2A)
		// echoing it also meets the rule, so an error whose context sits only in the text
		// fallback beside an empty structuredContent passes. A body carrying a context that
		// differs fails. A JSON-RPC error has no body to echo in and is not judged (MCP
		// transport-level errors are exempt, error-compliance storyboard).
		{ID: "CTX-02", Transport: catalogue.MCP, Text: "echoes the request's context unchanged on error", Judge: judgeCTX02},
		// Rule: CTX-03 · Spec: §4.44; L2/context-sessions (No synthesis) · Since: 0.1.0 ·
		// Description: no context MUST be synthesized when the request had none.
		// Policy: context-sessions.mdx has the reply "omit the context field (or emit it
		// as null / absent per the transport's normal serialization)": "context": null
		// passes; any other value (an empty object included) is synthesized and fails,
		// each occurrence of a repeated key judged.
		{ID: "CTX-03", Transport: catalogue.MCP, Text: "synthesizes no context when the request had none", Judge: judgeCTX03},
	}
}

// echoed compares the context at the root of body with the one sent.
// Each occurrence of a repeated context must be the echo.
func echoed(call evidence.Call, rt root) []finding {
	vs := values(rt.obj, "context")
	if len(vs) == 0 {
		return []finding{{ptr(rt.ptr, "context"), "is absent; the request's context is not echoed"}}
	}
	for _, v := range vs {
		if !jsonEqual(v, call.Context) {
			return []finding{{ptr(rt.ptr, "context"), "differs from the request's context"}}
		}
	}
	return nil
}

func judgeCTX01(s *evidence.Store, _ Options) Verdict {
	return eachReply("CTX-01", toolCalls(s, evidence.WithPurpose(evidence.PurposeContext)), func(c evidence.Call) bool { return !errorProbe(c) },
		"no success reply to a call with context observed", func(r *reply) (bool, []finding) {
			if !r.success() || r.data == nil || len(r.candidates()) > 0 {
				return false, nil
			}
			return true, echoed(r.call, root{r.dataPtr, r.data})
		})
}

func judgeCTX02(s *evidence.Store, _ Options) Verdict {
	sent := func(c evidence.Call) bool {
		return c.Context != nil && (c.Has(evidence.PurposeContext) || errorProbe(c))
	}
	return eachReply("CTX-02", toolCalls(s, sent), errorProbe,
		"no error result to a call with context observed", func(r *reply) (bool, []finding) {
			if r.result == nil {
				return false, nil
			}
			rt, ok := r.errorRoot()
			switch {
			case r.a2a == nil && !r.isError:
				return false, nil // a client reads no error without isError
			case r.a2a != nil && !r.isError && !hasResultCandidate(r):
				return false, nil
			}
			if !ok {
				// No adcp_error body (ERR-02's defect); the context is
				// still owed on the error response: in any JSON body a
				// client reads, and an error with none carries no echo.
				for _, alt := range r.roots() {
					if echoed(r.call, alt) == nil {
						return true, nil
					}
				}
				where := "/result"
				if r.a2a != nil {
					where = r.a2a.taskPtr
				}
				if rts := r.roots(); len(rts) > 0 {
					where = ptr(rts[0].ptr, "context")
				}
				return true, []finding{{where, "the error response does not echo the request's context (it carries no AdCP error body to echo it in)"}}
			}
			fs := echoed(r.call, rt)
			if _, has := rt.obj.Get("context"); !has {
				for _, alt := range []root{{"/result/structuredContent", r.sc}, {r.dataPtr, r.data}} {
					if alt.obj != nil && alt.ptr != rt.ptr && echoed(r.call, alt) == nil {
						return true, nil
					}
				}
			}
			return true, fs
		})
}

// hasResultCandidate reports whether the reply carries an adcp_error in its
// result (not in a JSON-RPC error).
func hasResultCandidate(r *reply) bool {
	for _, c := range r.candidates() {
		if !c.jsonrpc {
			return true
		}
	}
	return false
}

func judgeCTX03(s *evidence.Store, _ Options) Verdict {
	calls := toolCalls(s, func(c evidence.Call) bool { return c.Context == nil && !c.Has(evidence.PurposeContext) })
	return eachReply("CTX-03", calls, func(c evidence.Call) bool { return c.Has(evidence.PurposeNoContext) },
		"no tool result to a call without context observed", func(r *reply) (bool, []finding) {
			rts := r.roots()
			if r.success() && r.data != nil {
				rts = append([]root{{r.dataPtr, r.data}}, rts...)
			}
			for _, c := range r.candidates() {
				if !c.jsonrpc {
					rts = append(rts, c.root)
				}
			}
			if len(rts) == 0 {
				return false, nil
			}
			seen := map[string]bool{}
			for _, rt := range rts {
				if seen[rt.ptr] {
					continue
				}
				seen[rt.ptr] = true
				for _, v := range values(rt.obj, "context") {
					if rawjson.KindOf(v) != rawjson.KindNull {
						return true, []finding{{ptr(rt.ptr, "context"), "is " + kindName(v) + " although the request had no context"}}
					}
				}
			}
			return true, nil
		})
}
