package webhook

// The webhook body (building/by-layer/L3/webhooks.mdx, "Payload anatomy",
// "Payload extraction"; core/mcp-webhook-payload.json): the checks the
// HOOK judges apply to each delivery, held to webhook-receiver-envelope.json
// and webhook-payload-extraction.json.

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// The envelope failures. The first three are the codes of
// webhook-receiver-envelope.json; the rest are the harness's own.
const (
	EnvMissingFields        = "missing_envelope_fields"
	EnvMissingKey           = "missing_idempotency_key"
	EnvInvalidStatus        = "invalid_envelope_status"
	EnvNotJSONObject        = "not_a_json_object"
	EnvInvalidKey           = "invalid_idempotency_key"
	EnvMissingResult        = "missing_result"
	EnvWrongFieldType       = "envelope_field_not_a_string"
	EnvOperationIDNotEchoed = "operation_id_not_echoed"
)

// TaskStatuses is the task-status enum the envelope's status is drawn from.
var TaskStatuses = []string{"submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required", "unknown"}

// envelopeFields are the fields besides idempotency_key that every envelope
// carries (core/mcp-webhook-payload.json's required list).
var envelopeFields = []string{"operation_id", "task_id", "task_type", "status", "timestamp"}

// IdempotencyKeyPattern is the pattern a webhook's idempotency_key
// matches (core/mcp-webhook-payload.json): the harness's one copy, which
// the envelope check and the storyboard engine's expect_idempotency_key
// both apply.
const IdempotencyKeyPattern = `^[A-Za-z0-9_.:-]{16,255}$`

var idempotencyKeyPattern = regexp.MustCompile(IdempotencyKeyPattern)

// ValidIdempotencyKey reports whether key matches IdempotencyKeyPattern.
func ValidIdempotencyKey(key string) bool { return idempotencyKeyPattern.MatchString(key) }

// EnvelopeError is a webhook body that is not a dispatchable envelope.
type EnvelopeError struct {
	Code   string
	Detail string
}

func (e *EnvelopeError) Error() string { return e.Code + ": " + e.Detail }

// CheckEnvelope checks a webhook POST body as core/mcp-webhook-payload.json
// and the receiver-envelope vectors require: a JSON object with every
// envelope field (a bare result is not a body), an idempotency_key of the
// schema's pattern, a status of the task-status enum (not a media-buy
// lifecycle value), and a result for a completed or failed task, which
// carries the full task response. It returns nil or an *EnvelopeError.
func CheckEnvelope(body []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return &EnvelopeError{EnvNotJSONObject, "the body is not a JSON object"}
	}
	var missing []string
	for _, f := range envelopeFields {
		if _, ok := m[f]; !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return &EnvelopeError{EnvMissingFields, "missing " + quoteList(missing) + " (a bare result is not a webhook body)"}
	}
	raw, ok := m["idempotency_key"]
	if !ok {
		return &EnvelopeError{EnvMissingKey, "missing idempotency_key"}
	}
	var key string
	if json.Unmarshal(raw, &key) != nil || !ValidIdempotencyKey(key) {
		return &EnvelopeError{EnvInvalidKey, "idempotency_key " + clip(raw) + " does not match " + IdempotencyKeyPattern}
	}
	for _, f := range envelopeFields {
		// json.Unmarshal reads null into a string without an error; the
		// schema types each field string, and null is none.
		if _, ok := rawjson.StringValue(m[f]); !ok {
			return &EnvelopeError{EnvWrongFieldType, f + " is " + clip(m[f]) + ", not a string"}
		}
	}
	var status string
	_ = json.Unmarshal(m["status"], &status)
	if !slices.Contains(TaskStatuses, status) {
		return &EnvelopeError{EnvInvalidStatus, "status " + clip(m["status"]) + " is not a task status"}
	}
	if r, ok := m["result"]; (status == "completed" || status == "failed") && (!ok || bytes.Equal(bytes.TrimSpace(r), []byte("null"))) {
		return &EnvelopeError{EnvMissingResult, "a " + status + " webhook carries no result"}
	}
	return nil
}

// CheckOperationID reports whether the body echoes operation_id verbatim.
func CheckOperationID(body []byte, want string) error {
	var m struct {
		OperationID *string `json:"operation_id"`
	}
	if rawjson.Decode(body, &m) != nil || m.OperationID == nil || *m.OperationID != want {
		got := "none"
		if m.OperationID != nil {
			got = quote(*m.OperationID)
		}
		return &EnvelopeError{EnvOperationIDNotEchoed, "operation_id " + got + ", registered " + quote(want)}
	}
	return nil
}

// IdempotencyKey returns a body's idempotency_key ("" when absent).
func IdempotencyKey(body []byte) string {
	var m struct {
		Key string `json:"idempotency_key"`
	}
	_ = rawjson.Decode(body, &m)
	return m.Key
}

// The webhook formats of the extraction vectors.
const (
	FormatMCP = "mcp"
	FormatA2A = "a2a"
)

// DetectFormat tells an AdCP envelope (status a string and a task_id) from
// an A2A Task or status update (status an object with a state); "" when
// neither. A {"task": …} or {"statusUpdate": …} wrapper is looked through.
func DetectFormat(payload []byte) string {
	m := unwrapA2A(object(payload))
	if m == nil {
		return ""
	}
	if st := object(m["status"]); st != nil {
		if _, ok := st["state"]; ok {
			return FormatA2A
		}
	}
	var s string
	if json.Unmarshal(m["status"], &s) == nil {
		if _, ok := m["task_id"]; ok {
			return FormatMCP
		}
	}
	return ""
}

// Extract returns the AdCP data of a webhook body of the given format
// (detected when format is ""): an envelope's result; an A2A final task's
// last DataPart of its first artifact, or an interim one's first DataPart
// of status.message. nil when there is none (or it is null).
func Extract(payload []byte, format string) json.RawMessage {
	if format == "" {
		format = DetectFormat(payload)
	}
	m := object(payload)
	switch format {
	case FormatMCP:
		if r, ok := m["result"]; ok && !bytes.Equal(bytes.TrimSpace(r), []byte("null")) {
			return r
		}
	case FormatA2A:
		m = unwrapA2A(m)
		var st struct {
			State string `json:"state"`
		}
		_ = json.Unmarshal(m["status"], &st)
		switch st.State {
		case "working", "input-required", "submitted", "auth-required",
			"TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_SUBMITTED", "TASK_STATE_AUTH_REQUIRED":
			var msg struct {
				Parts []json.RawMessage `json:"parts"`
			}
			_ = json.Unmarshal(object(m["status"])["message"], &msg)
			if d := dataParts(msg.Parts); len(d) > 0 {
				return d[0]
			}
		default:
			var arts []struct {
				Parts []json.RawMessage `json:"parts"`
			}
			_ = json.Unmarshal(m["artifacts"], &arts)
			if len(arts) > 0 {
				if d := dataParts(arts[0].Parts); len(d) > 0 {
					return d[len(d)-1]
				}
			}
		}
	}
	return nil
}

func dataParts(parts []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for _, p := range parts {
		pm := object(p)
		var kind string
		_ = json.Unmarshal(pm["kind"], &kind)
		if d, ok := pm["data"]; ok && (kind == "" || kind == "data") {
			out = append(out, d)
		}
	}
	return out
}

func unwrapA2A(m map[string]json.RawMessage) map[string]json.RawMessage {
	if len(m) == 1 {
		for _, k := range []string{"task", "statusUpdate"} {
			if inner := object(m[k]); inner != nil {
				return inner
			}
		}
	}
	return m
}

func object(b []byte) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

func clip(b []byte) string { return truncate(string(b), 60) }

func quote(s string) string { b, _ := json.Marshal(truncate(s, 80)); return string(b) }

func quoteList(fs []string) string {
	out := ""
	for i, f := range fs {
		if i > 0 {
			out += ", "
		}
		out += f
	}
	return out
}
