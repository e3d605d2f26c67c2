package suites

import (
	"errors"
	"fmt"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// noSchemas is the skip reason of a run without schemas.
const noSchemas = "no schemas were loaded (--schemas off): give a local copy of the release's published schemas with --schemas DIR (e.g. schemas/3.1.19), or leave the flag out to fetch them"

// SchemasUnavailablePrefix starts the skip message of SCHEMA-01/02 when
// the run looked for schemas and found none; Options.SchemasUnavailable
// follows it.
const SchemasUnavailablePrefix = "no schemas: "

// schemasSkip is the verdict of a run without schemas, with the reason the
// run gave (a fetch that failed) when it gave one.
func schemasSkip(o Options) Verdict {
	if o.SchemasUnavailable != "" {
		return Verdict{Outcome: Skip, Message: SchemasUnavailablePrefix + o.SchemasUnavailable}
	}
	return Verdict{Outcome: Skip, Message: noSchemas}
}

func schemaChecks() []Check {
	return []Check{
		// Rule: SCHEMA-01 · Spec: §4.5; the release's <task>-response.json schemas · Since: 0.1.0 ·
		// Description: every extracted success body MUST validate against its task's
		// response schema for the served release (draft-07, each schema's own
		// additionalProperties honoured); a submitted or working body against the task's
		// async variant where the release has one (the release's manifest.json names
		// them). A body echoing another release than the loaded schemas' (a pin to an
		// older release the seller also serves) is not judged. Findings carry the JSON
		// pointer and the schema $id with the keyword's location.
		{ID: "SCHEMA-01", Transport: catalogue.MCP, Text: "sends responses that validate against their task's schema", Judge: judgeSCHEMA01},
		// Rule: SCHEMA-02 · Spec: schemas core/error.json · Since: 0.1.0 ·
		// Description: every extracted adcp_error MUST validate against core/error.json.
		{ID: "SCHEMA-02", Transport: catalogue.MCP, Text: "sends errors that validate against core/error.json", Judge: judgeSCHEMA02},
	}
}

// violations turns schema violations into findings under base.
func violations(base string, vs []schemas.Violation) []finding {
	fs := make([]finding, 0, len(vs)+1)
	for _, v := range vs {
		fs = append(fs, finding{base + v.Pointer, v.Message + " (" + v.SchemaID + ")"})
	}
	if n := len(vs); n > 0 && (vs[n-1].More > 0 || vs[n-1].Unlisted != "") {
		fs = append(fs, finding{base, unlisted(vs[n-1])})
	}
	return fs
}

// unlisted says what the last violation of a document leaves unlisted.
func unlisted(v schemas.Violation) string {
	var parts []string
	if v.More > 0 {
		parts = append(parts, fmt.Sprintf("%d more schema errors not listed", v.More))
	}
	if v.Unlisted != "" {
		parts = append(parts, v.Unlisted)
	}
	return strings.Join(parts, "; ")
}

func judgeSCHEMA01(s *evidence.Store, o Options) Verdict {
	if o.Schemas == nil {
		return schemasSkip(o)
	}
	var u unvalidated
	v := eachReply("SCHEMA-01", toolCalls(s), nil, noSuccess, func(r *reply) (bool, []finding) {
		if !r.success() || r.data == nil || len(r.candidates()) > 0 {
			return false, nil
		}
		if v, ok := str(r.data, "adcp_version"); ok && !o.Schemas.Serves(v) {
			return false, nil // served in another release: these are not its schemas
		}
		vs, err := o.Schemas.Response(r.call.Tool, r.data.Raw())
		switch {
		case errors.Is(err, schemas.ErrNoSchema):
			return false, nil
		case err != nil:
			u.add(r.call, err)
			return false, nil
		}
		return true, violations(r.dataPtr, vs)
	})
	return u.verdict(v)
}

func judgeSCHEMA02(s *evidence.Store, o Options) Verdict {
	if o.Schemas == nil {
		return schemasSkip(o)
	}
	var u unvalidated
	v := eachErrorWhere("SCHEMA-02", s, noErrorObject, func(r *reply, c candidate) (bool, []finding) {
		vs, err := o.Schemas.Error(c.raw)
		if err != nil {
			u.add(r.call, err)
			return false, nil
		}
		return true, violations(c.ptr, vs)
	})
	return u.verdict(v)
}

// unvalidated collects the replies a schema could not be applied to (a
// schema that does not compile, a validator failure): the harness's or
// the release's problem, never the seller's violation.
type unvalidated struct {
	calls []evidence.Call
	first string
}

func (u *unvalidated) add(c evidence.Call, err error) {
	if u.first == "" {
		u.first = c.ProbeID + ": " + wire.Sanitize(err.Error(), 300)
	}
	u.calls = append(u.calls, c)
}

// verdict is v, unless replies went unvalidated and v found no violation:
// then the rule could not judge every reply, a harness error (a pass would
// claim replies nobody read; a failure found elsewhere stands).
func (u *unvalidated) verdict(v Verdict) Verdict {
	if len(u.calls) == 0 || v.Outcome == Fail {
		return v
	}
	return Verdict{Rule: v.Rule, Outcome: HarnessError, Examined: v.Examined, Calls: u.calls,
		Message: fmt.Sprintf("%s: harness error: the schema could not be applied to %d repl(ies), e.g. %s", v.Rule, len(u.calls), u.first)}
}
