package check_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/check"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// val decodes one validation as a storyboard writes it.
func val(t testing.TB, src string) spec.Validation {
	t.Helper()
	var v spec.Validation
	if err := yaml.Unmarshal([]byte(src), &v); err != nil {
		t.Fatalf("validation %q: %v", src, err)
	}
	return v
}

// obs is a reply whose extracted payload is the JSON text payload ("" for
// none).
func obs(t testing.TB, payload string) *spec.Observation {
	t.Helper()
	o := &spec.Observation{Transport: "mcp", Task: "get_products", HTTPStatus: 200, ExtractionPath: "structured_content"}
	if payload != "" {
		doc, err := spec.DecodeJSON([]byte(payload))
		if err != nil {
			t.Fatalf("payload %q: %v", payload, err)
		}
		o.Payload, o.PayloadRaw = doc, json.RawMessage(payload)
	}
	return o
}

func facts(t testing.TB, payload string) check.Facts {
	return check.Facts{Obs: obs(t, payload), AgentURL: "https://seller.example/mcp"}
}

// verdict is how a result reads: pass, fail or na.
func verdict(r spec.Result) string {
	switch {
	case r.NotApplicable && r.Passed:
		return "na"
	case r.NotApplicable:
		return "BROKEN: not_applicable but not passed"
	case r.Passed:
		return "pass"
	}
	return "fail"
}

type gradeCase struct {
	name       string
	validation string
	facts      check.Facts
	want       string // pass, fail, na
	// On a failure, when set: the pointer, expected and actual the contract
	// asks for (compared as JSON).
	pointer  *string
	expected any
	actual   any
}

func sp(s string) *string { return &s }

func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	return string(b)
}

func runGrade(t *testing.T, cases []gradeCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := val(t, c.validation)
			r := check.Grade(v, c.facts, "3.2.0")
			if got := verdict(r); got != c.want {
				t.Fatalf("verdict %s, want %s: %+v", got, c.want, r)
			}
			if r.Check != v.Check || r.Description != v.Description {
				t.Errorf("check/description not copied: %+v", r)
			}
			if c.want == "na" && r.Note == "" {
				t.Errorf("not_applicable without a note: %+v", r)
			}
			if c.want != "fail" {
				return
			}
			if r.Message == "" {
				t.Errorf("failure without a message: %+v", r)
			}
			if c.pointer != nil && (r.JSONPointer == nil || *r.JSONPointer != *c.pointer) {
				t.Errorf("json_pointer %v, want %q", deref(r.JSONPointer), *c.pointer)
			}
			if c.expected != nil && asJSON(t, r.Expected) != asJSON(t, c.expected) {
				t.Errorf("expected %s, want %s", asJSON(t, r.Expected), asJSON(t, c.expected))
			}
			if c.actual != nil && asJSON(t, r.Actual) != asJSON(t, c.actual) {
				t.Errorf("actual %s, want %s", asJSON(t, r.Actual), asJSON(t, c.actual))
			}
		})
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// null is an expectation of a JSON null in expected/actual.
var null = json.RawMessage("null")

func TestFieldPresentAndAbsent(t *testing.T) {
	const p = `{"status":"completed","context":{"correlation_id":"c1"},"products":[{"product_id":"p1","format_ids":null}],"note":"text","replayed":false}`
	runGrade(t, []gradeCase{
		{name: "present", validation: `{check: field_present, path: "context", description: d}`, facts: facts(t, p), want: "pass"},
		{name: "present nested index", validation: `{check: field_present, path: "products[0].product_id"}`, facts: facts(t, p), want: "pass"},
		{name: "present false is present", validation: `{check: field_present, path: "replayed"}`, facts: facts(t, p), want: "pass"},
		{name: "present length pseudo-field", validation: `{check: field_present, path: "products.length"}`, facts: facts(t, p), want: "pass"},
		{name: "missing", validation: `{check: field_present, path: "context.missing"}`, facts: facts(t, p), want: "fail", pointer: sp("/context/missing"), expected: "context.missing", actual: null},
		{name: "missing index", validation: `{check: field_present, path: "products[1]"}`, facts: facts(t, p), want: "fail", pointer: sp("/products/1"), actual: null},
		{name: "blocked by a scalar", validation: `{check: field_present, path: "note.inner"}`, facts: facts(t, p), want: "fail", pointer: sp("/note/inner"), actual: "text"},
		{name: "null is not present", validation: `{check: field_present, path: "products[0].format_ids"}`, facts: facts(t, p), want: "fail", pointer: sp("/products/0/format_ids"), actual: null},
		{name: "no payload", validation: `{check: field_present, path: "context"}`, facts: facts(t, ""), want: "fail", actual: null},
		{name: "envelope present", validation: `{check: envelope_field_present, path: "status"}`, facts: facts(t, p), want: "pass"},
		{name: "envelope missing", validation: `{check: envelope_field_present, path: "adcp_version"}`, facts: facts(t, p), want: "fail", pointer: sp("/adcp_version"), expected: "adcp_version"},
		{name: "no path", validation: `{check: field_present}`, facts: facts(t, p), want: "na"},
		{name: "wildcard not defined", validation: `{check: field_present, path: "products[*].product_id"}`, facts: facts(t, p), want: "na"},
		{name: "bad path", validation: `{check: field_present, path: "products[x]"}`, facts: facts(t, p), want: "na"},

		{name: "absent", validation: `{check: field_absent, path: "task_status"}`, facts: facts(t, p), want: "pass"},
		{name: "absent null", validation: `{check: field_absent, path: "products[0].format_ids"}`, facts: facts(t, p), want: "pass"},
		{name: "absent no payload", validation: `{check: field_absent, path: "errors"}`, facts: facts(t, ""), want: "pass"},
		{name: "present when it must be absent", validation: `{check: field_absent, path: "products[0]"}`, facts: facts(t, p), want: "fail", pointer: sp("/products/0"), actual: map[string]any{"product_id": "p1", "format_ids": nil}},
		{name: "envelope absent fails on legacy field", validation: `{check: envelope_field_absent, path: "status"}`, facts: facts(t, p), want: "fail", pointer: sp("/status"), actual: "completed"},
	})
}

func TestFieldPattern(t *testing.T) {
	const semverRelease = `"^(?:0|[1-9]\\d*)\\.(?:0|[1-9]\\d*)(?:-[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?)?$"`
	runGrade(t, []gradeCase{
		{name: "release precision", validation: `{check: envelope_field_pattern, path: adcp_version, pattern: ` + semverRelease + `}`, facts: facts(t, `{"adcp_version":"3.1-beta.1"}`), want: "pass"},
		{name: "full semver is not release precision", validation: `{check: envelope_field_pattern, path: adcp_version, pattern: ` + semverRelease + `}`, facts: facts(t, `{"adcp_version":"3.1.0"}`), want: "fail", pointer: sp("/adcp_version"), expected: map[string]any{"pattern": `^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?)?$`}, actual: "3.1.0"},
		{name: "https resource", validation: `{check: field_pattern, path: resource, pattern: "^https://"}`, facts: facts(t, `{"resource":"https://seller.example/mcp"}`), want: "pass"},
		{name: "http resource", validation: `{check: field_pattern, path: resource, pattern: "^https://"}`, facts: facts(t, `{"resource":"http://seller.example/mcp"}`), want: "fail"},
		{name: "unanchored like RegExp.test", validation: `{check: field_pattern, path: s, pattern: "b+"}`, facts: facts(t, `{"s":"abbc"}`), want: "pass"},
		{name: "ECMAScript lookahead", validation: `{check: field_pattern, path: s, pattern: "^(?=.*\\d)[a-z0-9]+$"}`, facts: facts(t, `{"s":"abc1"}`), want: "pass"},
		{name: "missing", validation: `{check: field_pattern, path: s, pattern: "x"}`, facts: facts(t, `{}`), want: "fail", pointer: sp("/s"), actual: null},
		{name: "not a string", validation: `{check: field_pattern, path: s, pattern: "1"}`, facts: facts(t, `{"s":1}`), want: "fail", actual: 1},
		{name: "bad pattern", validation: `{check: field_pattern, path: s, pattern: "("}`, facts: facts(t, `{"s":"x"}`), want: "na"},
		{name: "no pattern", validation: `{check: field_pattern, path: s}`, facts: facts(t, `{"s":"x"}`), want: "na"},
	})
}

// TestFieldValueTellsNullFromAbsent: the contract writes actual null both
// for a field that is absent and for one present as null, so the message
// says which was seen.
func TestFieldValueTellsNullFromAbsent(t *testing.T) {
	f := facts(t, `{"status":null}`)
	for path, want := range map[string]string{"status": "status is present but null", "media_buy_id": "media_buy_id is missing"} {
		r := check.Grade(val(t, `{check: field_value, path: `+path+`, value: active}`), f, "3.2.0")
		if r.Passed || r.Actual != nil || r.Message != want {
			t.Errorf("%s: passed %v, actual %v, message %q, want %q", path, r.Passed, r.Actual, r.Message, want)
		}
	}
}

func TestFieldValue(t *testing.T) {
	const p = `{"status":"completed","count":1,"ratio":1.5,"flag":true,"nothing":null,"context":{"correlation_id":"c1"},"media_buy_status":"active","list":[1,2],"obj":{"a":1,"b":[1,2]}}`
	runGrade(t, []gradeCase{
		{name: "string", validation: `{check: field_value, path: "context.correlation_id", value: "c1"}`, facts: facts(t, p), want: "pass"},
		{name: "integer 1 equals 1.0", validation: `{check: field_value, path: count, value: 1.0}`, facts: facts(t, p), want: "pass"},
		{name: "yaml int equals json 1", validation: `{check: field_value, path: count, value: 1}`, facts: facts(t, p), want: "pass"},
		{name: "boolean", validation: `{check: field_value, path: flag, value: true}`, facts: facts(t, p), want: "pass"},
		{name: "null equals null", validation: `{check: field_value, path: nothing, value: null}`, facts: facts(t, p), want: "pass"},
		{name: "object deep-equal", validation: `{check: field_value, path: obj, value: {b: [1, 2], a: 1}}`, facts: facts(t, p), want: "pass"},
		{name: "array order matters", validation: `{check: field_value, path: list, value: [2, 1]}`, facts: facts(t, p), want: "fail"},
		{name: "allowed_values", validation: `{check: field_value, path: media_buy_status, allowed_values: [pending_activation, active]}`, facts: facts(t, p), want: "pass"},
		{name: "allowed_values miss", validation: `{check: field_value, path: media_buy_status, allowed_values: [paused, completed]}`, facts: facts(t, p), want: "fail", pointer: sp("/media_buy_status"), expected: []any{"paused", "completed"}, actual: "active"},
		{name: "wrong value", validation: `{check: field_value, path: "context.correlation_id", value: "c2"}`, facts: facts(t, p), want: "fail", pointer: sp("/context/correlation_id"), expected: "c2", actual: "c1"},
		{name: "string is not number", validation: `{check: field_value, path: count, value: "1"}`, facts: facts(t, p), want: "fail", actual: 1},
		{name: "absent fails", validation: `{check: field_value, path: missing, value: null}`, facts: facts(t, p), want: "fail", pointer: sp("/missing"), actual: null},
		{name: "no payload", validation: `{check: field_value, path: status, value: completed}`, facts: facts(t, ""), want: "fail", actual: null},
		{name: "neither value nor allowed_values", validation: `{check: field_value, path: status}`, facts: facts(t, p), want: "na"},
		{name: "empty allowed_values", validation: `{check: field_value, path: status, allowed_values: []}`, facts: facts(t, p), want: "na"},

		{name: "or_absent absent", validation: `{check: field_value_or_absent, path: replayed, value: false}`, facts: facts(t, p), want: "pass"},
		{name: "or_absent null", validation: `{check: field_value_or_absent, path: nothing, value: false}`, facts: facts(t, p), want: "pass"},
		{name: "or_absent equal", validation: `{check: field_value_or_absent, path: status, value: completed}`, facts: facts(t, p), want: "pass"},
		{name: "or_absent allowed", validation: `{check: field_value_or_absent, path: media_buy_status, allowed_values: [active, paused]}`, facts: facts(t, p), want: "pass"},
		{name: "or_absent wrong", validation: `{check: field_value_or_absent, path: flag, value: false}`, facts: facts(t, p), want: "fail", pointer: sp("/flag"), expected: false, actual: true},
		{name: "or_absent neither", validation: `{check: field_value_or_absent, path: flag}`, facts: facts(t, p), want: "na"},
	})
}

func TestFieldContains(t *testing.T) {
	const caps = `{"supported_protocols":["media_buy","creative"],"experimental_features":["creative.evaluator"],
		"accounts":[{"identity_change_preview":{"impacts":[{"area":"account_id","effect":"blocked","detail":"x"},{"area":"billing","effect":"revalidation_required"}]}}],
		"creatives":[{"creative_id":"c1","errors":[{"code":"POLICY_VIOLATION","details":{"policy_id":"p1","extra":1}}]},{"creative_id":"c2"}],
		"nested":[[1,2],[3]]}`
	runGrade(t, []gradeCase{
		{name: "wildcard scalar", validation: `{check: field_contains, path: "supported_protocols[*]", value: media_buy}`, facts: facts(t, caps), want: "pass"},
		{name: "wildcard field", validation: `{check: field_contains, path: "creatives[*].creative_id", value: c2}`, facts: facts(t, caps), want: "pass"},
		{name: "array path without wildcard", validation: `{check: field_contains, path: experimental_features, value: creative.evaluator}`, facts: facts(t, caps), want: "pass"},
		{name: "object subset", validation: `{check: field_contains, path: "accounts[0].identity_change_preview.impacts", value: {area: account_id, effect: blocked}}`, facts: facts(t, caps), want: "pass"},
		{name: "object subset deep", validation: `{check: field_contains, path: "creatives[0].errors[*]", value: {code: POLICY_VIOLATION, details: {policy_id: p1}}}`, facts: facts(t, caps), want: "pass"},
		{name: "object mismatch", validation: `{check: field_contains, path: "accounts[0].identity_change_preview.impacts", value: {area: grants, effect: revoke_and_regrant}}`, facts: facts(t, caps), want: "fail", pointer: sp("/accounts/0/identity_change_preview/impacts")},
		{name: "array path subset of the whole array", validation: `{check: field_contains, path: "supported_protocols", value: [creative, media_buy]}`, facts: facts(t, caps), want: "pass"},
		{name: "mid-path wildcard over arrays spreads them", validation: `{check: field_contains, path: "creatives[*].errors", value: {code: POLICY_VIOLATION}}`, facts: facts(t, caps), want: "pass"},
		{name: "array subset", validation: `{check: field_contains, path: "nested[*]", value: [2]}`, facts: facts(t, caps), want: "pass"},
		{name: "allowed_values any", validation: `{check: field_contains, path: "supported_protocols[*]", allowed_values: [signals, creative]}`, facts: facts(t, caps), want: "pass"},
		{name: "missing value", validation: `{check: field_contains, path: "supported_protocols[*]", value: signals}`, facts: facts(t, caps), want: "fail", pointer: sp("/supported_protocols"), expected: "signals", actual: []any{"media_buy", "creative"}},
		{name: "nothing resolves", validation: `{check: field_contains, path: "specialisms[*]", value: sales_guaranteed}`, facts: facts(t, caps), want: "fail", pointer: sp("/specialisms"), actual: []any{}},
		{name: "scalar is not a subset of an object", validation: `{check: field_contains, path: "creatives[*]", value: c1}`, facts: facts(t, caps), want: "fail"},
		{name: "neither value nor allowed_values", validation: `{check: field_contains, path: "creatives[*]"}`, facts: facts(t, caps), want: "na"},
	})
}

func TestArrayLengthAndGreaterThan(t *testing.T) {
	const p = `{"products":[{"enforced_policies":["a","b"],"pricing_options":[{"unit_price":2.5},{"unit_price":0},{"unit_price":"3"}]}],"creatives":[{"errors":[]}],"s":"x"}`
	runGrade(t, []gradeCase{
		{name: "exact", validation: `{check: array_length, path: "products[0].enforced_policies", value: 2}`, facts: facts(t, p), want: "pass"},
		{name: "exact miss", validation: `{check: array_length, path: "products[0].enforced_policies", value: 3}`, facts: facts(t, p), want: "fail", pointer: sp("/products/0/enforced_policies"), expected: 3, actual: 2},
		{name: "empty array exact 0", validation: `{check: array_length, path: "creatives[0].errors", value: 0}`, facts: facts(t, p), want: "pass"},
		{name: "range", validation: `{check: array_length, path: "products[0].pricing_options", min: 1, max: 3}`, facts: facts(t, p), want: "pass"},
		{name: "min only", validation: `{check: array_length, path: "products[0].pricing_options", min: 4}`, facts: facts(t, p), want: "fail", expected: map[string]any{"min": 4}, actual: 3},
		{name: "max only", validation: `{check: array_length, path: "products[0].pricing_options", max: 2}`, facts: facts(t, p), want: "fail", expected: map[string]any{"max": 2}, actual: 3},
		{name: "missing", validation: `{check: array_length, path: "creatives[1].errors", value: 2}`, facts: facts(t, p), want: "fail", pointer: sp("/creatives/1/errors"), expected: "array", actual: null},
		{name: "not an array", validation: `{check: array_length, path: s, value: 1}`, facts: facts(t, p), want: "fail", expected: "array", actual: "x"},
		{name: "both value and range", validation: `{check: array_length, path: s, value: 1, min: 0}`, facts: facts(t, p), want: "na"},
		{name: "negative value", validation: `{check: array_length, path: s, value: -1}`, facts: facts(t, p), want: "na"},
		{name: "fractional value", validation: `{check: array_length, path: s, value: 1.5}`, facts: facts(t, p), want: "na"},
		{name: "min over max", validation: `{check: array_length, path: s, min: 3, max: 1}`, facts: facts(t, p), want: "na"},
		{name: "wildcard", validation: `{check: array_length, path: "products[*].enforced_policies", value: 2}`, facts: facts(t, p), want: "na"},

		{name: "greater", validation: `{check: field_greater_than, path: "products[0].pricing_options[0].unit_price", value: 0}`, facts: facts(t, p), want: "pass"},
		{name: "equal is not greater", validation: `{check: field_greater_than, path: "products[0].pricing_options[1].unit_price", value: 0}`, facts: facts(t, p), want: "fail", expected: 0, actual: 0},
		{name: "string is not a number", validation: `{check: field_greater_than, path: "products[0].pricing_options[2].unit_price", value: 0}`, facts: facts(t, p), want: "fail", actual: "3"},
		{name: "missing", validation: `{check: field_greater_than, path: "products[0].pricing_options[3].unit_price", value: 0}`, facts: facts(t, p), want: "fail", pointer: sp("/products/0/pricing_options/3/unit_price"), actual: null},
		{name: "length pseudo-field", validation: `{check: field_greater_than, path: "products[0].pricing_options.length", value: 2}`, facts: facts(t, p), want: "pass"},
		{name: "no threshold", validation: `{check: field_greater_than, path: s}`, facts: facts(t, p), want: "na"},
		{name: "non-numeric threshold", validation: `{check: field_greater_than, path: s, value: "0"}`, facts: facts(t, p), want: "na"},
	})
}

func withHTTP(t testing.TB, status int, header http.Header, payload string) check.Facts {
	f := facts(t, payload)
	f.Obs.Transport, f.Obs.HTTPStatus, f.Obs.Header = "http", status, header
	return f
}

func withError(t testing.TB, code string, payload string) check.Facts {
	f := facts(t, payload)
	f.Obs.IsError = true
	if code != "" {
		f.Obs.ErrorCode = code
		f.Obs.Error = map[string]any{"code": code, "message": "m"}
	}
	return f
}

func TestStatusAndErrorChecks(t *testing.T) {
	challenge := http.Header{"Www-Authenticate": {`Bearer realm="x"`}}
	runGrade(t, []gradeCase{
		{name: "http_status", validation: `{check: http_status, value: 200}`, facts: withHTTP(t, 200, nil, `{}`), want: "pass"},
		{name: "http_status miss", validation: `{check: http_status, value: 401}`, facts: withHTTP(t, 403, nil, ""), want: "fail", expected: 401, actual: 403},
		{name: "http_status none observed", validation: `{check: http_status, value: 200}`, facts: withHTTP(t, 0, nil, ""), want: "na"},
		{name: "http_status_in", validation: `{check: http_status_in, allowed_values: [401, 403]}`, facts: withHTTP(t, 403, nil, ""), want: "pass"},
		{name: "http_status_in miss", validation: `{check: http_status_in, allowed_values: [400, 401, 403]}`, facts: withHTTP(t, 200, nil, ""), want: "fail", expected: []any{400, 401, 403}, actual: 200},
		{name: "http_status_in no list", validation: `{check: http_status_in}`, facts: withHTTP(t, 200, nil, ""), want: "na"},

		{name: "401 with challenge", validation: `{check: on_401_require_header, value: "www-authenticate"}`, facts: withHTTP(t, 401, challenge, ""), want: "pass"},
		{name: "401 header case-insensitive", validation: `{check: on_401_require_header, value: "WWW-Authenticate"}`, facts: withHTTP(t, 401, http.Header{"www-authenticate": {"Basic"}}, ""), want: "pass"},
		{name: "401 without challenge", validation: `{check: on_401_require_header, value: "www-authenticate"}`, facts: withHTTP(t, 401, http.Header{"Content-Type": {"application/json"}}, ""), want: "fail", pointer: sp("/headers/www-authenticate"), actual: null},
		{name: "401 empty challenge", validation: `{check: on_401_require_header, value: "www-authenticate"}`, facts: withHTTP(t, 401, http.Header{"Www-Authenticate": {" "}}, ""), want: "fail"},
		{name: "403 does not need it", validation: `{check: on_401_require_header, value: "www-authenticate"}`, facts: withHTTP(t, 403, nil, ""), want: "na"},
		{name: "no header named", validation: `{check: on_401_require_header}`, facts: withHTTP(t, 401, challenge, ""), want: "na"},

		{name: "error_code value", validation: `{check: error_code, value: INVALID_REQUEST}`, facts: withError(t, "INVALID_REQUEST", `{"adcp_error":{"code":"INVALID_REQUEST"}}`), want: "pass"},
		{name: "error_code allowed_values", validation: `{check: error_code, allowed_values: [PRODUCT_NOT_FOUND, INVALID_REQUEST]}`, facts: withError(t, "INVALID_REQUEST", ""), want: "pass"},
		{name: "error_code any typed code", validation: `{check: error_code, description: "carries a typed AdCP error code"}`, facts: withError(t, "BUDGET_TOO_LOW", ""), want: "pass"},
		{name: "error_code wrong", validation: `{check: error_code, value: INVALID_REQUEST}`, facts: withError(t, "BUDGET_TOO_LOW", `{"errors":[{"code":"BUDGET_TOO_LOW"}]}`), want: "fail", pointer: sp("/errors/0/code"), expected: "INVALID_REQUEST", actual: "BUDGET_TOO_LOW"},
		{name: "error_code absent", validation: `{check: error_code, value: INVALID_REQUEST}`, facts: facts(t, `{"products":[]}`), want: "fail", expected: "INVALID_REQUEST", actual: null},
		{name: "error_code error without code", validation: `{check: error_code}`, facts: withError(t, "", ""), want: "fail", actual: null},

		{name: "status_code success", validation: `{check: status_code}`, facts: facts(t, `{}`), want: "pass"},
		{name: "status_code failed", validation: `{check: status_code}`, facts: withError(t, "INVALID_REQUEST", ""), want: "fail", expected: "success", actual: "INVALID_REQUEST"},
		{name: "status_code with value", validation: `{check: status_code, value: 200}`, facts: withHTTP(t, 200, nil, ""), want: "pass"},
	})
}

func TestResourceEqualsAgentURL(t *testing.T) {
	const v = `{check: resource_equals_agent_url, description: "resource is the agent URL"}`
	res := func(resource string) check.Facts {
		b, _ := json.Marshal(map[string]any{"resource": resource, "authorization_servers": []any{"https://auth.example"}})
		return withHTTP(t, 200, nil, string(b))
	}
	noAgent := res("https://seller.example/mcp")
	noAgent.AgentURL = ""
	runGrade(t, []gradeCase{
		{name: "equal", validation: v, facts: res("https://seller.example/mcp"), want: "pass"},
		{name: "scheme and host case", validation: v, facts: res("HTTPS://Seller.EXAMPLE/mcp"), want: "pass"},
		{name: "default port elided", validation: v, facts: res("https://seller.example:443/mcp"), want: "pass"},
		{name: "other port", validation: v, facts: res("https://seller.example:8443/mcp"), want: "fail", pointer: sp("/resource")},
		{name: "path is case-sensitive", validation: v, facts: res("https://seller.example/MCP"), want: "fail"},
		{name: "trailing slash is significant", validation: v, facts: res("https://seller.example/mcp/"), want: "fail"},
		{name: "auth server origin is not the resource", validation: v, facts: res("https://seller.example"), want: "fail", expected: "https://seller.example/mcp", actual: "https://seller.example"},
		{name: "missing resource", validation: v, facts: withHTTP(t, 200, nil, `{"authorization_servers":[]}`), want: "fail", pointer: sp("/resource"), actual: null},
		{name: "non-string resource", validation: v, facts: withHTTP(t, 200, nil, `{"resource":42}`), want: "fail", actual: 42},
		{name: "unparseable resource", validation: v, facts: res("::not a url"), want: "fail"},
		{name: "no agent URL", validation: v, facts: noAgent, want: "na"},
	})
	root := res("https://seller.example/")
	root.AgentURL = "https://seller.example"
	runGrade(t, []gradeCase{{name: "empty path and / are one URL", validation: v, facts: root, want: "pass"}})
}

// schemaSet loads a release's schemas once per test binary.
var schemaSets sync.Map

func schemaSet(t *testing.T, release string) *schemas.Set {
	t.Helper()
	dir := shared.File(t, filepath.Join("spec", "schemas", release))
	if s, ok := schemaSets.Load(dir); ok {
		return s.(*schemas.Set)
	}
	s, err := schemas.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	schemaSets.Store(dir, s)
	return s
}

func TestResponseSchema(t *testing.T) {
	set := schemaSet(t, "3.1.19")
	with := func(f check.Facts, task, ref string) check.Facts {
		f.Schemas, f.SchemaRef, f.Obs.Task = set, ref, task
		return f
	}
	const okErr = `{"status":"failed","errors":[{"code":"INVALID_REQUEST","message":"bad"}],"adcp_error":{"code":"INVALID_REQUEST","message":"bad"}}`
	jsonrpc := withError(t, "RATE_LIMITED", "")
	jsonrpc.Obs.ExtractionPath = "jsonrpc_error"
	bare := withError(t, "", "")
	noSchemas := facts(t, `{}`)
	cases := []gradeCase{
		{name: "no schemas", validation: `{check: response_schema}`, facts: noSchemas, want: "na"},
		{name: "error arm with both layers", validation: `{check: response_schema}`, facts: with(withError(t, "INVALID_REQUEST", okErr), "create_media_buy", "media-buy/create-media-buy-response.json"), want: "pass"},
		{name: "error only on the transport layer", validation: `{check: response_schema}`, facts: with(withError(t, "INVALID_REQUEST", `{"adcp_error":{"code":"INVALID_REQUEST","message":"bad","recovery":"correctable"}}`), "create_media_buy", "media-buy/create-media-buy-response.json"), want: "pass"},
		{name: "broken transport-layer error", validation: `{check: response_schema}`, facts: with(withError(t, "INVALID_REQUEST", `{"adcp_error":{"code":"INVALID_REQUEST","message":7}}`), "create_media_buy", "media-buy/create-media-buy-response.json"), want: "fail", pointer: sp("/message")},
		{name: "JSON-RPC error.data adcp_error", validation: `{check: response_schema}`, facts: with(jsonrpc, "create_media_buy", "media-buy/create-media-buy-response.json"), want: "pass"},
		{name: "error without payload or code", validation: `{check: response_schema}`, facts: with(bare, "create_media_buy", "media-buy/create-media-buy-response.json"), want: "na"},
		{name: "success without payload", validation: `{check: response_schema}`, facts: with(facts(t, ""), "get_products", ""), want: "fail", pointer: sp("")},
		{name: "task schema from the manifest", validation: `{check: response_schema}`, facts: with(facts(t, `{"status":"completed","products":[{"product_id":1}]}`), "get_products", ""), want: "fail"},
		{name: "ref with the release prefix", validation: `{check: response_schema}`, facts: with(facts(t, `{"status":"completed","products":[{"product_id":1}]}`), "get_products", "/schemas/3.1.19/media-buy/get-products-response.json"), want: "fail"},
		{name: "ref not in the release", validation: `{check: response_schema}`, facts: with(facts(t, `{}`), "comply_test_controller", "extensions/test/comply-test-controller-response.json"), want: "na"},
		{name: "unresolved ref", validation: `{check: response_schema}`, facts: with(facts(t, `{}`), "x", "$test_kit.schemas.primary_response"), want: "na"},
		{name: "working status against its async variant", validation: `{check: response_schema}`, facts: with(facts(t, `{"status":"working","task_id":"t1"}`), "create_media_buy", "media-buy/create-media-buy-response.json"), want: "pass"},
		{name: "submitted arm of the main schema", validation: `{check: response_schema}`, facts: with(facts(t, `{"status":"submitted","task_id":"t1"}`), "create_media_buy", "media-buy/create-media-buy-response.json"), want: "pass"},
		{name: "unknown task without ref", validation: `{check: response_schema}`, facts: with(facts(t, `{}`), "no_such_task", ""), want: "na"},
	}
	runGrade(t, cases)

	// A failure names the schema and lists the contract's error objects.
	f := with(facts(t, `{"status":"completed","products":[{"product_id":1}]}`), "get_products", "media-buy/get-products-response.json")
	r := check.Grade(val(t, `{check: response_schema, description: d}`), f, "")
	if r.Passed || r.SchemaID != "/schemas/3.1.19/media-buy/get-products-response.json" || r.Expected != r.SchemaID || !strings.HasPrefix(r.SchemaURL, "https://") {
		t.Fatalf("failure identity: %+v", r)
	}
	errs, ok := r.Actual.([]map[string]any)
	if !ok || len(errs) == 0 {
		t.Fatalf("actual is not a list of schema errors: %#v", r.Actual)
	}
	for _, e := range errs {
		for _, k := range []string{"instance_path", "schema_path", "keyword", "message"} {
			if _, ok := e[k]; !ok {
				t.Errorf("schema error without %s: %v", k, e)
			}
		}
	}
}

func TestGradeSeverityPromotionAndForwardCompat(t *testing.T) {
	f := facts(t, `{"status":"completed"}`)
	cases := []struct {
		name, validation, runner string
		wantSeverity             string
		wantPromoted             *bool
		wantVerdict              string
	}{
		{"default severity", `{check: field_present, path: missing}`, "3.2.0", "required", nil, "fail"},
		{"advisory without expiry stays advisory", `{check: field_present, path: missing, severity: advisory, permanent_advisory: {reason: r}}`, "9.9.9", "advisory", nil, "fail"},
		{"promoted at the version", `{check: field_present, path: missing, severity: advisory, expires_after_version: "6.5.0"}`, "6.5.0", "required", ptrBool(true), "fail"},
		{"promoted after", `{check: field_present, path: missing, severity: advisory, expires_after_version: "6.5.0"}`, "7.0.0", "required", ptrBool(true), "fail"},
		{"rc is before the release", `{check: field_present, path: missing, severity: advisory, expires_after_version: "6.5.0"}`, "6.5.0-rc.3", "advisory", ptrBool(false), "fail"},
		{"rc after any pre-release", `{check: field_present, path: missing, severity: advisory, expires_after_version: "6.5.0-0"}`, "6.5.0-rc.3", "required", ptrBool(true), "fail"},
		{"older runner", `{check: field_present, path: missing, severity: advisory, expires_after_version: "6.5.0"}`, "6.4.9", "advisory", ptrBool(false), "fail"},
		{"malformed runner version", `{check: field_present, path: missing, severity: advisory, expires_after_version: "6.5.0"}`, "latest", "advisory", ptrBool(false), "fail"},
		{"unknown kind is not_applicable before promotion", `{check: oauth_metadata_graph_v9, severity: advisory, expires_after_version: "1.0.0"}`, "9.0.0", "advisory", nil, "na"},
		{"advisory pass", `{check: field_present, path: status, severity: advisory, expires_after_version: "6.5.0"}`, "1.0.0", "advisory", ptrBool(false), "pass"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := check.Grade(val(t, c.validation), f, c.runner)
			if verdict(r) != c.wantVerdict || r.Severity != c.wantSeverity || !reflect.DeepEqual(r.SeverityPromoted, c.wantPromoted) {
				t.Fatalf("got %s severity %q promoted %v, want %s %q %v: %+v", verdict(r), r.Severity, r.SeverityPromoted, c.wantVerdict, c.wantSeverity, c.wantPromoted, r)
			}
		})
	}
	r := check.Grade(val(t, `{check: upstream_traffic_v2, description: "future"}`), check.Facts{}, "")
	want := "runner does not implement check type 'upstream_traffic_v2' — graded as not_applicable to preserve forward compatibility"
	if r.Note != want || !r.Passed || !r.NotApplicable || r.Description != "future" {
		t.Errorf("forward compat: %+v", r)
	}
	b, _ := json.Marshal(check.Grade(val(t, `{check: field_present, path: status}`), f, ""))
	if strings.Contains(string(b), "severity_promoted_from_advisory") {
		t.Errorf("promotion field emitted without expires_after_version: %s", b)
	}
	b, _ = json.Marshal(check.Grade(val(t, `{check: field_present, path: status, severity: advisory, expires_after_version: "2.0.0"}`), f, "1.0.0"))
	if !strings.Contains(string(b), `"severity_promoted_from_advisory":false`) {
		t.Errorf("promotion not evaluated reads as absent, not false: %s", b)
	}
}

func ptrBool(b bool) *bool { return &b }

func TestGradeWithoutEvidence(t *testing.T) {
	failed := facts(t, `{}`)
	failed.Obs.Failure = "connection refused"
	for _, k := range []string{"response_schema", "field_present", "field_absent", "field_value", "field_value_or_absent", "field_contains", "field_pattern", "envelope_field_present", "array_length", "field_greater_than", "error_code", "http_status", "http_status_in", "status_code", "on_401_require_header", "resource_equals_agent_url"} {
		src := fmt.Sprintf(`{check: %s, path: "a", value: 1, allowed_values: [1], pattern: "x"}`, k)
		for name, f := range map[string]check.Facts{"nil Obs": {}, "failed call": failed} {
			r := check.Grade(val(t, src), f, "")
			if verdict(r) != "na" || r.Note == "" {
				t.Errorf("%s with %s: %s %+v, want not_applicable with a note", k, name, verdict(r), r)
			}
		}
	}
}

// hostile builds replies a seller nobody here wrote could send.
func hostile() map[string]string {
	deep := strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000)
	deepArr := strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000)
	var b strings.Builder
	b.WriteString(`{"products":[`)
	for i := range 20000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"product_id":"p%d","channels":["x"]}`, i)
	}
	b.WriteString(`],"s":"` + strings.Repeat("a", 1<<20) + `"}`)
	return map[string]string{"deep object": deep, "deep array": deepArr, "huge": b.String(), "scalar": `"just a string"`, "array root": `[1,2,3]`, "null": `null`}
}

func TestGradeHostileRepliesDoNotPanicAndStayBounded(t *testing.T) {
	validations := []string{
		`{check: field_present, path: "a.a.a.a"}`, `{check: field_absent, path: "products[0]"}`,
		`{check: field_value, path: "a", value: {a: {a: 1}}}`, `{check: field_value_or_absent, path: "s", value: x}`,
		`{check: field_contains, path: "products[*].channels", value: y}`, `{check: field_contains, path: "products[*]", value: {product_id: zz}}`,
		`{check: field_pattern, path: s, pattern: "^(a+)+$"}`, `{check: array_length, path: products, value: 3}`,
		`{check: field_greater_than, path: "products.length", value: 1}`, `{check: error_code, value: X}`,
		`{check: resource_equals_agent_url}`, `{check: field_absent, path: ""}`, `{check: field_value, path: "", value: 1}`,
		`{check: response_schema}`,
	}
	for name, payload := range hostile() {
		f := facts(t, payload)
		f.Obs.Task = "get_products"
		for _, src := range validations {
			r := check.Grade(val(t, src), f, "")
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("%s / %s: result does not marshal: %v", name, src, err)
			}
			if len(b) > 64<<10 {
				t.Errorf("%s / %s: result is %d bytes: the echo of the seller is not bounded", name, src, len(b))
			}
		}
	}
}

func TestFieldPatternIsBoundedInTime(t *testing.T) {
	f := facts(t, `{"s":"`+strings.Repeat("a", 64)+`!"}`)
	start := time.Now()
	r := check.Grade(val(t, `{check: field_pattern, path: s, pattern: "^(a+)+$"}`), f, "")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a catastrophic pattern ran %v", d)
	}
	if verdict(r) == "pass" {
		t.Fatalf("a non-matching string passed: %+v", r)
	}
	t.Logf("%s after %v: %s", verdict(r), time.Since(start), r.Note)
}

// TestEverySpecValidationGradesWithoutPanic runs every validation of every
// storyboard of both releases through Grade with empty facts and with a
// plain reply: nothing panics, every result is well formed.
func TestEverySpecValidationGradesWithoutPanic(t *testing.T) {
	for _, release := range []string{"3.1.19", "3.2.0-beta.5"} {
		t.Run(release, func(t *testing.T) {
			rel, err := spec.Load(shared.File(t, filepath.Join("spec/compliance", release)))
			if err != nil {
				t.Fatal(err)
			}
			plain := facts(t, `{"status":"completed","context":{"correlation_id":"x"},"products":[{"product_id":"p"}]}`)
			plain.Schemas = schemaSet(t, release)
			n, kinds := 0, map[string]int{}
			for _, sb := range rel.Storyboards {
				for _, ph := range sb.Phases {
					for _, st := range ph.Steps {
						for _, v := range st.Validations {
							for _, f := range []check.Facts{{}, plain} {
								f.SchemaRef = st.ResponseSchemaRef
								if f.Obs != nil {
									o := *f.Obs
									o.Task = st.Task
									f.Obs = &o
								}
								r := check.Grade(v, f, "3.2.0")
								if r.Check != v.Check || (r.NotApplicable && !r.Passed) || (r.NotApplicable && r.Note == "") {
									t.Errorf("%s %s/%s %s: malformed result %+v", sb.Path, ph.ID, st.ID, v.Check, r)
								}
							}
							n++
							kinds[v.Check]++
						}
					}
				}
			}
			t.Logf("%s: graded %d validations of %d kinds", release, n, len(kinds))
		})
	}
}

// FuzzGrade feeds arbitrary replies to every single-response kind: no
// panic, every not_applicable passes and says why, every failure says what.
func FuzzGrade(f *testing.F) {
	for _, p := range hostile() {
		if len(p) < 4096 {
			f.Add([]byte(p), "products[0].product_id", 401)
		}
	}
	f.Add([]byte(`{"resource":"https://seller.example/mcp","adcp_error":{"code":"X"}}`), "resource", 200)
	f.Add([]byte(`{"a":[{"b":null}],"errors":[{"code":7}]}`), "a[*].b", 0)
	kinds := []string{"field_present", "field_absent", "field_value", "field_value_or_absent", "field_contains", "field_pattern", "envelope_field_absent", "array_length", "field_greater_than", "error_code", "http_status", "http_status_in", "status_code", "on_401_require_header", "resource_equals_agent_url"}
	f.Fuzz(func(t *testing.T, payload []byte, path string, status int) {
		doc, err := spec.DecodeJSON(payload)
		if err != nil {
			return
		}
		o := &spec.Observation{Transport: "mcp", Payload: doc, PayloadRaw: payload, HTTPStatus: status, Header: http.Header{"Www-Authenticate": {path}}}
		if m, ok := doc.(map[string]any); ok {
			if e, ok := m["adcp_error"].(map[string]any); ok {
				o.Error = e
				o.ErrorCode, _ = e["code"].(string)
			}
		}
		fs := check.Facts{Obs: o, AgentURL: "https://seller.example/mcp"}
		for _, k := range kinds {
			b, _ := json.Marshal(map[string]any{"check": k, "path": path, "value": doc, "allowed_values": []any{doc, 1}, "pattern": path, "min": 0})
			var v spec.Validation
			if err := yaml.Unmarshal(b, &v); err != nil {
				continue
			}
			r := check.Grade(v, fs, "1.0.0")
			if r.NotApplicable && (!r.Passed || r.Note == "") {
				t.Fatalf("%s: malformed not_applicable %+v", k, r)
			}
			if !r.Passed && r.Message == "" {
				t.Fatalf("%s: failure without a message %+v", k, r)
			}
		}
	})
}
