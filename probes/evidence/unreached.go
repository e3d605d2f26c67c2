package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// The JSON-RPC codes AdCP reserves for refusals made before a call reaches
// the seller's application (transport-errors.mdx, Reserved JSON-RPC Codes).
const (
	rpcServiceUnavailable = -32027
	rpcAuthRequired       = -32028
	rpcRateLimited        = -32029
)

// Unreached says why a call never reached the seller's application, or ""
// when it did (or when it could not be answered at all: see HarnessError).
// A call refused by authentication (HTTP 401/403, or JSON-RPC -32028) that
// was not an authentication probe, a rate limit met outside the burst probe
// (HTTP 429, or -32029), and a gateway error (HTTP 502/503/504, or -32027)
// prove nothing about how the application answers the probe: the rules that
// needed the application's answer are not judged on such a call. The
// refusal itself stays evidence for the rules about refusals (AUTH, the
// JSON-RPC and error-object rules).
func (c Call) Unreached() string {
	if c.Kind == KindWebhook || c.Kind == KindTLSHandshake {
		return ""
	}
	authProbe := c.Has(PurposeAuthNone) || c.Has(PurposeAuthRandom) || c.Has(PurposeAuthCapabilities)
	burst := c.Has(PurposeRateBurst)
	switch s := c.HTTPStatus; {
	case (s == http.StatusUnauthorized || s == http.StatusForbidden) && !authProbe:
		return fmt.Sprintf("the seller refused the call before its application: HTTP %d %s (authentication)", s, http.StatusText(s))
	case s == http.StatusTooManyRequests && !burst:
		return "the seller refused the call before its application: HTTP 429 Too Many Requests (rate limit)"
	case s == http.StatusBadGateway || s == http.StatusServiceUnavailable || s == http.StatusGatewayTimeout:
		return fmt.Sprintf("the seller refused the call before its application: HTTP %d %s (gateway)", s, http.StatusText(s))
	}
	switch code, _ := rpcCode(c.RPCError); {
	case code == rpcAuthRequired && !authProbe:
		return "the seller refused the call before its application: JSON-RPC -32028 (authentication)"
	case code == rpcRateLimited && !burst:
		return "the seller refused the call before its application: JSON-RPC -32029 (rate limit)"
	case code == rpcServiceUnavailable:
		return "the seller refused the call before its application: JSON-RPC -32027 (service unavailable)"
	}
	return ""
}

// rpcCode reads the integer code of a raw JSON-RPC error member (exact-case
// key, no struct decoding).
func rpcCode(rpcErr json.RawMessage) (int64, bool) {
	if len(rpcErr) == 0 {
		return 0, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(rpcErr, &m) != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(m["code"])), 10, 64)
	return n, err == nil
}

// View returns a view of the store (same target and scope) whose calls are
// f applied to each call.
func (s *Store) View(f func(Call) Call) *Store {
	v := &Store{target: s.target, scope: s.scope, red: s.red}
	for _, c := range s.Calls() {
		v.calls = append(v.calls, f(c))
	}
	return v
}
