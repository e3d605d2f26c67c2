package check

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/release"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// response_schema: the reply against the release's JSON schemas.

// checkResponseSchema validates the reply against the step's
// response_schema_ref (a path relative to the release's schemas folder)
// or, without one, the task's response schema in the release manifest.
//
// On an error reply the spec gives a seller two layers (transport-errors
// .mdx "Envelope vs. payload errors", error-handling.mdx "the two-layer
// model"): the task payload's errors[] and the transport's adcp_error,
// and says a fatal failure SHOULD populate both — not MUST. The task
// response schemas describe the payload layer (their error arm requires
// errors[]). So:
//
//   - the payload is validated against the response schema; when it
//     passes, the check passes;
//   - when it fails and the payload carries adcp_error but no errors[] of
//     its own (the error only on the transport layer), or there is no
//     payload and the error came on another layer (JSON-RPC error.data),
//     the adcp_error object is validated as the error it is, against
//     core/error.json, with a note: failing it against the task schema
//     would fail a shape the spec allows;
//   - an error reply with neither a payload nor an AdCP error object
//     grades not_applicable (error_code grades the missing code); a
//     non-error reply with no payload fails.
//
// expect_error does not change the verdict: the schema judges the shape of
// whatever came back (a success where an error was expected is
// error_code's failure to report, not this check's).
//
// A payload in an async status (submitted, working, input-required)
// against the task's main response schema is validated against the
// release's async variant for that status when there is one.
func checkResponseSchema(v spec.Validation, f Facts) spec.Result {
	set := f.Schemas
	if set == nil {
		return notApplicable("no schemas (--schemas): response_schema not validated")
	}
	rel := strings.TrimSpace(f.SchemaRef)
	rel = strings.TrimPrefix(rel, "/schemas/"+set.Release()+"/")
	rel = strings.TrimPrefix(rel, "/")
	if strings.ContainsAny(rel, "$<>{}") {
		return notApplicable(fmt.Sprintf("response_schema_ref %q was not resolved to a schema path", spec.Clip(rel, 200)))
	}
	status, _ := lookupString(f.Obs.Payload, "status")
	if rel == "" || rel == set.ResponseSchema(f.Obs.Task, "") {
		rel = set.ResponseSchema(f.Obs.Task, status)
	}
	if rel == "" {
		return notApplicable(fmt.Sprintf("release %s has no response schema for task %q and the step names none", set.Release(), spec.Clip(f.Obs.Task, 100)))
	}
	id := "/schemas/" + set.Release() + "/" + rel
	res := spec.Result{SchemaID: id, SchemaURL: release.PublishedSchemas + "/" + set.Release() + "/" + rel}
	doc := payloadBytes(f.Obs)
	if doc == nil {
		if f.Obs.Error != nil {
			// A JSON-RPC error.data (or other non-payload layer) adcp_error.
			b, _ := json.Marshal(f.Obs.Error)
			return Schema(set, "core/error.json", b, onlyTransportError)
		}
		if f.Obs.IsError {
			return notApplicable("the reply is an error with neither a task payload nor an AdCP error object: nothing for the schema to judge (error_code grades the missing code)")
		}
		res.Expected = id
		res.JSONPointer = ptr("")
		res.Actual = []map[string]any{{"instance_path": "", "schema_path": id, "keyword": "type", "message": "the reply carried no JSON payload"}}
		res.Message = "the reply carried no JSON payload to validate"
		return res
	}
	out := Schema(set, rel, doc, "")
	if out.Passed {
		return out
	}
	// The error only on the transport layer: the payload holds adcp_error
	// and no errors[] of its own.
	if m, ok := f.Obs.Payload.(map[string]any); ok {
		_, hasErrors := m["errors"]
		if ae, has := m["adcp_error"]; has && !hasErrors {
			b, _ := json.Marshal(ae)
			return Schema(set, "core/error.json", b, onlyTransportError)
		}
	}
	return out
}

const onlyTransportError = "the reply carries its error only on the transport layer (adcp_error), which transport-errors.mdx allows (populating both layers is a SHOULD): validated against core/error.json"

// Schema validates doc against the release schema rel: a
// response_schema result (note, when given, says why this schema).
func Schema(set *schemas.Set, rel string, doc []byte, note string) spec.Result {
	id := "/schemas/" + set.Release() + "/" + rel
	res := spec.Result{SchemaID: id, SchemaURL: release.PublishedSchemas + "/" + set.Release() + "/" + rel, Note: note}
	vs, err := set.Validate(rel, doc)
	if err != nil {
		na := notApplicable(fmt.Sprintf("schema %s could not be applied: %v", rel, err))
		na.SchemaID, na.SchemaURL = res.SchemaID, res.SchemaURL
		return na
	}
	if len(vs) == 0 {
		res.Passed = true
		return res
	}
	res.Expected = id
	res.JSONPointer = ptr(vs[0].Pointer)
	out := make([]map[string]any, 0, min(len(vs), maxEchoItems))
	last := vs[len(vs)-1]
	for i, x := range vs {
		if i == maxEchoItems {
			res.Observations = append(res.Observations, fmt.Sprintf("%d more schema errors not listed", schemas.Total(vs)-maxEchoItems))
			break
		}
		out = append(out, map[string]any{"instance_path": x.Pointer, "schema_path": x.SchemaPath, "keyword": x.Keyword, "message": spec.Clip(x.Message, maxEchoString)})
	}
	if len(vs) <= maxEchoItems && last.More > 0 {
		res.Observations = append(res.Observations, fmt.Sprintf("%d more schema errors not listed", last.More))
	}
	if last.Unlisted != "" {
		res.Observations = append(res.Observations, last.Unlisted)
	}
	res.Actual = out
	atLeast := ""
	if last.Unlisted != "" {
		atLeast = "at least "
	}
	res.Message = fmt.Sprintf("the reply breaks %s (%s%d schema errors)", rel, atLeast, schemas.Total(vs))
	return res
}

// payloadBytes is the payload's JSON, nil when the reply carried none.
func payloadBytes(o *spec.Observation) []byte {
	if o.Payload == nil {
		return nil
	}
	if len(o.PayloadRaw) > 0 {
		return o.PayloadRaw
	}
	b, err := json.Marshal(o.Payload)
	if err != nil {
		return nil
	}
	return b
}

func lookupString(doc any, p string) (string, bool) {
	v, _, ok := spec.Lookup(doc, p)
	s, isStr := v.(string)
	return s, ok && isStr
}
