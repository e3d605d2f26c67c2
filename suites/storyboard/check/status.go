package check

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// The status and error kinds: status_code, http_status, http_status_in,
// error_code, on_401_require_header, resource_equals_agent_url.

// checkStatusCode: the contract's only word is "status_code → expected
// status" and no shipped storyboard uses it. Read as: with a numeric
// value, the reply's HTTP status equals it (as http_status); without one,
// the task succeeded — no error on any layer — as the reference runner
// grades it (expected "success").
func checkStatusCode(v spec.Validation, f Facts) spec.Result {
	if v.Has("value") {
		return checkHTTPStatus(v, f)
	}
	if f.Obs.IsError || f.Obs.Error != nil {
		var actual any = "failed"
		if f.Obs.ErrorCode != "" {
			actual = spec.Clip(f.Obs.ErrorCode, 200)
		}
		return fail(nil, "success", actual, "the task did not succeed")
	}
	return pass()
}

func checkHTTPStatus(v spec.Validation, f Facts) spec.Result {
	want, ok := count(v.Value)
	if !ok {
		return notApplicable(fmt.Sprintf("the %s validation declares no integer status value: an authoring error", v.Check))
	}
	if f.Obs.HTTPStatus == 0 {
		return notApplicable("no HTTP status was observed for this step (the transport carried none)")
	}
	if f.Obs.HTTPStatus != want {
		return fail(nil, float64(want), float64(f.Obs.HTTPStatus), "HTTP %d, not %d", f.Obs.HTTPStatus, want)
	}
	return pass()
}

func checkHTTPStatusIn(v spec.Validation, f Facts) spec.Result {
	allowed, _ := spec.Normalize(v.AllowedValues).([]any)
	if len(allowed) == 0 {
		return notApplicable("the http_status_in validation declares no allowed_values: an authoring error")
	}
	if f.Obs.HTTPStatus == 0 {
		return notApplicable("no HTTP status was observed for this step (the transport carried none)")
	}
	if !member(float64(f.Obs.HTTPStatus), allowed) {
		return fail(nil, allowed, float64(f.Obs.HTTPStatus), "HTTP %d is not an allowed status", f.Obs.HTTPStatus)
	}
	return pass()
}

// checkErrorCode is shape-agnostic (storyboard-schema.yaml, "Error-shape
// validation"; transport-errors.mdx "Storyboard check: error_code
// contract"): the code is Obs.ErrorCode, which the dispatcher resolves by
// the client detection order (adcp_error at any layer, then errors[0]).
// No code on any layer fails with error_code_not_resolvable. A validation
// with neither value nor allowed_values asserts only that a typed code is
// there (the shipped "Rejected response carries a typed AdCP error code").
func checkErrorCode(v spec.Validation, f Facts) spec.Result {
	allowed, expected, constrained := expectation(v)
	if !constrained {
		expected = "any AdCP error code"
	}
	code := f.Obs.ErrorCode
	if code == "" {
		return fail(nil, expected, nil, "error_code_not_resolvable: the reply carries no AdCP error code on any layer")
	}
	at := errorCodePointer(f.Obs.Payload, code)
	if constrained && !member(code, allowed) {
		return fail(at, expected, spec.Clip(code, 200), "the reply's error code is not the expected one")
	}
	return pass()
}

// errorCodePointer is where in the payload the code sits, when it sits in
// the payload (adcp_error.code, else errors[0].code); nil when it came
// from another layer (JSON-RPC error.data, an A2A status message).
func errorCodePointer(payload any, code string) *string {
	for _, p := range []string{"adcp_error.code", "errors[0].code"} {
		if v, at, ok := spec.Lookup(payload, p); ok && v == code {
			return ptr(at)
		}
	}
	return nil
}

// checkOn401RequireHeader: "if response was 401, require the named
// header" (RFC 6750 §3); the header name is the validation's value, as
// every shipped use writes it (value: "www-authenticate"), matched
// case-insensitively (runner-output-contract.yaml response_headers). On
// any other status the requirement does not apply: not_applicable, with
// the status in the note.
func checkOn401RequireHeader(v spec.Validation, f Facts) spec.Result {
	name, _ := v.Value.(string)
	name = strings.TrimSpace(name)
	if name == "" {
		return notApplicable("the on_401_require_header validation names no header in value: an authoring error")
	}
	if f.Obs.HTTPStatus == 0 {
		return notApplicable("no HTTP status was observed for this step (the transport carried none)")
	}
	if f.Obs.HTTPStatus != 401 {
		return notApplicable(fmt.Sprintf("the reply was HTTP %d, not 401: the header requirement applies only to 401 responses", f.Obs.HTTPStatus))
	}
	for k, vals := range f.Obs.Header {
		if !strings.EqualFold(k, name) {
			continue
		}
		for _, s := range vals {
			if strings.TrimSpace(s) != "" {
				return pass()
			}
		}
	}
	lower := strings.ToLower(name)
	return fail(ptr("/headers/"+rawjson.EscapeToken(lower)), lower, nil, "the 401 response carries no %s header", spec.Clip(lower, 100))
}

// checkResourceEqualsAgentURL compares the RFC 9728 metadata's `resource`
// with the agent URL under the rule security.yaml states and the 3.2
// oauth-setup-runner test kit spells out as the one shared rule: scheme and
// host lowercased, default ports (443 for https, 80 for http) elided, the
// rest compared exactly — the path is case-sensitive and a trailing slash
// is significant. An empty path and "/" are the same URL (RFC 3986
// §6.2.3). The message does not echo the advertised value; the
// machine-readable actual does.
func checkResourceEqualsAgentURL(v spec.Validation, f Facts) spec.Result {
	if f.AgentURL == "" {
		return notApplicable("the agent URL under test is unknown: resource cannot be compared")
	}
	want, err := canonicalResource(f.AgentURL)
	if err != nil {
		return notApplicable(fmt.Sprintf("the agent URL under test does not parse (%v)", err))
	}
	val, _, _ := spec.Lookup(f.Obs.Payload, "resource")
	s, isStr := val.(string)
	if !isStr || s == "" {
		return fail(ptr("/resource"), want, echo(val), "the metadata carries no string resource")
	}
	got, err := canonicalResource(s)
	if err != nil || got != want {
		return fail(ptr("/resource"), want, spec.Clip(s, maxEchoString), "the advertised resource is not the agent URL under test")
	}
	return pass()
}

func canonicalResource(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme == "" || u.Host == "" {
		return "", errors.New("not an absolute URL")
	}
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	rest := u.EscapedPath()
	if rest == "/" {
		rest = ""
	}
	if u.RawQuery != "" || u.ForceQuery {
		rest += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		rest += "#" + u.EscapedFragment()
	}
	user := ""
	if u.User != nil {
		user = u.User.String() + "@"
	}
	return scheme + "://" + user + host + rest, nil
}
