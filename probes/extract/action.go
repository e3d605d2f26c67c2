package extract

import (
	"math"
	"strconv"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// This file is the ACTION layer of transport-errors.mdx ("Recovery Behavior"): it turns
// an extracted AdcpError, whose values are raw, into what a buyer client does.
// Extraction never clamps; only Decide does.

// Recovery is an adcp_error recovery class.
type Recovery string

// The recovery classes of transport-errors.mdx.
const (
	RecoveryTransient   Recovery = "transient"
	RecoveryCorrectable Recovery = "correctable"
	RecoveryTerminal    Recovery = "terminal"
)

// ActionKind is what a client does with an error. The values are the ones
// transport-errors.mdx's handleAdcpError returns (retry / fix_request / escalate), which
// the project's CLI contract also names. The transport-error-mapping vectors
// call the same three outcomes retry / surface_to_caller /
// escalate_to_human (VectorName maps them); their fourth value,
// generic_error, means "no structured error" and is an Outcome without Error
// and Action.
type ActionKind string

// The actions.
const (
	ActionRetry      ActionKind = "retry"       // vectors: retry
	ActionFixRequest ActionKind = "fix_request" // vectors: surface_to_caller
	ActionEscalate   ActionKind = "escalate"    // vectors: escalate_to_human
)

// VectorName is the name the transport-error-mapping vectors give the
// action (expected_action).
func (k ActionKind) VectorName() string {
	switch k {
	case ActionFixRequest:
		return "surface_to_caller"
	case ActionEscalate:
		return "escalate_to_human"
	}
	return string(k)
}

// The retry_after clamp of transport-errors.mdx.
const (
	MinRetryAfter = 1
	MaxRetryAfter = 3600
)

// Action is the decision for one AdcpError.
type Action struct {
	Kind ActionKind
	// DelaySeconds is retry_after clamped to [1, 3600], for ActionRetry only.
	// nil means retry_after was absent, not a number, or not finite (a JSON
	// literal too large for a double): the client backs off exponentially.
	DelaySeconds *float64
	// Recovery is the class the decision used; "" for a recovery value the
	// client does not know (escalated as terminal).
	Recovery Recovery
	// FromCodeTable is true when recovery was absent or falsy and the class
	// came from the standard code table (or defaulted to terminal).
	FromCodeTable bool
}

// MarshalJSON renders {"kind": …} plus "delay_seconds" (a number or null)
// for a retry.
func (a Action) MarshalJSON() ([]byte, error) {
	b := []byte(`{"kind":`)
	b = strconv.AppendQuote(b, string(a.Kind))
	if a.Kind == ActionRetry {
		b = append(b, `,"delay_seconds":`...)
		if a.DelaySeconds == nil {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendFloat(b, *a.DelaySeconds, 'f', -1, 64)
		}
	}
	return append(b, '}'), nil
}

// Decide applies transport-errors.mdx's getRecovery and handleAdcpError:
//
//   - a truthy recovery is used as is: "transient" → retry, "correctable" →
//     fix_request, "terminal" → escalate, and any other value (another
//     string, a number, an object…) → escalate;
//   - a falsy recovery (absent, null, false, "", 0) falls back to the code
//     table; an unknown code is terminal;
//   - for a retry, retry_after is used only when it is a finite JSON number
//     (Number.isFinite does not coerce strings) and is clamped: below 1 → 1,
//     above 3600 → 3600.
func Decide(e AdcpError) Action {
	var a Action
	if e.Recovery != nil && rawjson.TruthyValue(e.Recovery) {
		if s, ok := rawjson.StringValue(e.Recovery); ok {
			switch r := Recovery(s); r {
			case RecoveryTransient, RecoveryCorrectable, RecoveryTerminal:
				a.Recovery = r
			}
		}
	} else {
		a.FromCodeTable = true
		a.Recovery = RecoveryTerminal
		if r, ok := codeRecovery[e.Code]; ok {
			a.Recovery = r
		}
	}
	switch a.Recovery {
	case RecoveryTransient:
		a.Kind = ActionRetry
		a.DelaySeconds = clampRetryAfter(e.RetryAfter)
	case RecoveryCorrectable:
		a.Kind = ActionFixRequest
	default:
		a.Kind = ActionEscalate
	}
	return a
}

// clampRetryAfter returns the clamped delay, or nil when raw is absent, not
// a number, or not finite.
func clampRetryAfter(raw []byte) *float64 {
	if raw == nil || rawjson.KindOf(raw) != rawjson.KindNumber {
		return nil
	}
	f, _ := strconv.ParseFloat(string(raw), 64)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil
	}
	f = math.Max(MinRetryAfter, math.Min(MaxRetryAfter, f))
	return &f
}

// CodeRecovery returns the standard recovery class registered for code.
func CodeRecovery(code string) (Recovery, bool) {
	r, ok := codeRecovery[code]
	return r, ok
}
