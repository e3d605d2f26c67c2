package expr_test

import (
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/expr"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

var caps = map[string]any{
	"supported_protocols": []any{"media_buy", "creative"},
	"media_buy": map[string]any{
		"supports_proposals":     true,
		"creative_approval_mode": "auto_approve",
		"nulled":                 nil,
		"count":                  float64(2),
	},
	"adcp": map[string]any{
		"supported_versions": []any{"3.0", "3.1"},
		"governance_enforcement": map[string]any{"tasks": []any{
			map[string]any{"task": "acquire_rights", "modes": []any{"signed_context"}},
			// Modes in the other order, and more than some gates ask for.
			map[string]any{"task": "create_media_buy", "modes": []any{"online_execution_check", "signed_context"}},
		}},
	},
	"account": map[string]any{"timezone": map[string]any{"supported_timezones": []any{"UTC", "Europe/Paris"}}},
}

func TestEvalCapability(t *testing.T) {
	cases := []struct {
		name   string
		p      *spec.CapabilityPredicate
		caps   any
		ok     bool
		detail []string // substrings of detail
	}{
		{name: "no predicate", p: nil, caps: caps, ok: true},
		{name: "equals true", p: &spec.CapabilityPredicate{Path: "media_buy.supports_proposals", Equals: true}, caps: caps, ok: true,
			detail: []string{"media_buy.supports_proposals", "equals true", "is satisfied", "declares true"}},
		{name: "equals a string, YAML-typed", p: &spec.CapabilityPredicate{Path: "media_buy.creative_approval_mode", Equals: "auto_approve"}, caps: caps, ok: true},
		{name: "equals an int against a JSON number", p: &spec.CapabilityPredicate{Path: "media_buy.count", Equals: 2}, caps: caps, ok: true},
		{name: "equals mismatch", p: &spec.CapabilityPredicate{Path: "media_buy.creative_approval_mode", Equals: "buyer_selected"}, caps: caps, ok: false,
			detail: []string{`equals "buyer_selected"`, "is not satisfied", `declares "auto_approve"`}},
		{name: "equals false on an absent path", p: &spec.CapabilityPredicate{Path: "media_buy.nope", Equals: false}, caps: caps, ok: false,
			detail: []string{"does not declare it"}},
		{name: "contains a scalar", p: &spec.CapabilityPredicate{Path: "supported_protocols", Contains: "media_buy"}, caps: caps, ok: true},
		{name: "contains a missing scalar", p: &spec.CapabilityPredicate{Path: "supported_protocols", Contains: "signals"}, caps: caps, ok: false},
		{name: "contains on an indexed path", p: &spec.CapabilityPredicate{Path: "account.timezone.supported_timezones.1", Equals: "Europe/Paris"}, caps: caps, ok: true},
		{name: "contains on a bracket index", p: &spec.CapabilityPredicate{Path: "adcp.supported_versions[1]", Equals: "3.1"}, caps: caps, ok: true},
		{name: "contains an object as a deep subset, any order", p: &spec.CapabilityPredicate{Path: "adcp.governance_enforcement.tasks",
			Contains: map[string]any{"task": "create_media_buy", "modes": []any{"signed_context", "online_execution_check"}}}, caps: caps, ok: true},
		{name: "contains an object asking fewer modes", p: &spec.CapabilityPredicate{Path: "adcp.governance_enforcement.tasks",
			Contains: map[string]any{"task": "create_media_buy", "modes": []any{"signed_context"}}}, caps: caps, ok: true},
		{name: "contains an object asking a mode not declared", p: &spec.CapabilityPredicate{Path: "adcp.governance_enforcement.tasks",
			Contains: map[string]any{"task": "acquire_rights", "modes": []any{"online_execution_check"}}}, caps: caps, ok: false},
		{name: "contains on a non-array", p: &spec.CapabilityPredicate{Path: "media_buy.creative_approval_mode", Contains: "auto"}, caps: caps, ok: false},
		{name: "not_contains holds", p: &spec.CapabilityPredicate{Path: "supported_protocols", NotContains: "signals"}, caps: caps, ok: true},
		{name: "not_contains fails", p: &spec.CapabilityPredicate{Path: "supported_protocols", NotContains: "creative"}, caps: caps, ok: false},
		{name: "not_contains on an absent path does not hold", p: &spec.CapabilityPredicate{Path: "media_buy.nope", NotContains: "x"}, caps: caps, ok: false},
		{name: "not_contains on a non-array does not hold", p: &spec.CapabilityPredicate{Path: "media_buy.count", NotContains: "x"}, caps: caps, ok: false},
		{name: "present true", p: &spec.CapabilityPredicate{Path: "media_buy.supports_proposals", Present: present(true)}, caps: caps, ok: true},
		{name: "present true on null", p: &spec.CapabilityPredicate{Path: "media_buy.nulled", Present: present(true)}, caps: caps, ok: true},
		{name: "present true on absent", p: &spec.CapabilityPredicate{Path: "media_buy.nope", Present: present(true)}, caps: caps, ok: false},
		{name: "present false on absent", p: &spec.CapabilityPredicate{Path: "account.timezone.mode", Present: present(false)}, caps: caps, ok: true,
			detail: []string{"present false", "is satisfied"}},
		{name: "present false on present", p: &spec.CapabilityPredicate{Path: "supported_protocols", Present: present(false)}, caps: caps, ok: false},
		{name: "two matchers, both hold", p: &spec.CapabilityPredicate{Path: "supported_protocols", Contains: "media_buy", NotContains: "signals"}, caps: caps, ok: true,
			detail: []string{`contains "media_buy" and not_contains "signals"`}},
		{name: "two matchers, one fails", p: &spec.CapabilityPredicate{Path: "supported_protocols", Contains: "media_buy", Present: present(false)}, caps: caps, ok: false},
		{name: "no matcher", p: &spec.CapabilityPredicate{Path: "supported_protocols"}, caps: caps, ok: false, detail: []string{"no matcher"}},
		{name: "capabilities unavailable", p: &spec.CapabilityPredicate{Path: "supported_protocols", Present: present(false)}, caps: nil, ok: false, detail: []string{"unavailable"}},
		{name: "bad path", p: &spec.CapabilityPredicate{Path: "a..b", Present: present(false)}, caps: caps, ok: false, detail: []string{"cannot be read"}},
		{name: "capabilities not an object", p: &spec.CapabilityPredicate{Path: "a", Present: present(false)}, caps: "hostile", ok: true},
		{name: "a huge agent value is clipped", p: &spec.CapabilityPredicate{Path: "x", Equals: "y"}, caps: map[string]any{"x": strings.Repeat("z", 10_000)}, ok: false,
			detail: []string{"…"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, detail := expr.EvalCapability(c.p, c.caps)
			if ok != c.ok {
				t.Fatalf("EvalCapability = %v (%s), want %v", ok, detail, c.ok)
			}
			if detail == "" {
				t.Fatal("empty detail")
			}
			if len(detail) > 1000 {
				t.Fatalf("detail is %d bytes, unbounded", len(detail))
			}
			for _, s := range c.detail {
				if !strings.Contains(detail, s) {
					t.Errorf("detail %q lacks %q", detail, s)
				}
			}
		})
	}
}

func TestEvalCapabilities(t *testing.T) {
	one := &spec.CapabilityPredicate{Path: "supported_protocols", Contains: "media_buy"}
	all := []spec.CapabilityPredicate{
		{Path: "media_buy.supports_proposals", Equals: true},
		{Path: "media_buy.creative_approval_mode", Equals: "buyer_selected"},
	}
	if ok, d := expr.EvalCapabilities(one, all[:1], caps); !ok {
		t.Fatalf("all hold, got false: %s", d)
	}
	ok, d := expr.EvalCapabilities(one, all, caps)
	if ok || !strings.Contains(d, "creative_approval_mode") {
		t.Fatalf("EvalCapabilities = %v, %q; want the failing predicate named", ok, d)
	}
	if ok, _ := expr.EvalCapabilities(nil, nil, nil); !ok {
		t.Fatal("no predicates must hold")
	}
}

func TestEvalSkipIf(t *testing.T) {
	vars := &expr.Vars{
		Context: map[string]any{
			"proposal_id_1": "p1", "proposal_id_2": "p2", "same_1": "p1",
			"bills_through_adcp": false, "supports_evaluator": true,
			"build_capability_id": "b", "creative_feature_id": "",
			"zero": float64(0), "one": float64(1), "num_str": "1", "obj": map[string]any{}, "arr": []any{}, "nul": nil,
		},
		TestKit: map[string]any{
			"auth":                    map[string]any{"api_key": "k"},
			"commercial_relationship": "passthrough_only",
			"supports_audio_formats":  false,
		},
	}
	cases := []struct {
		expr string
		want bool
	}{
		// The shipped forms.
		{"!test_kit.auth.api_key", false},
		{"!test_kit.auth.basic", true},
		{"!test_kit.supports_audio_formats", true},
		{"!test_kit.account.unsupported_billing_probe", true},
		{"test_kit.commercial_relationship != 'passthrough_only'", false},
		{"context.bills_through_adcp != false", false},
		{"context.supports_evaluator != true", false},
		{"context.supports_evaluator != true || !context.build_capability_id || !context.creative_feature_id", true},
		{"!context.proposal_id_2 || context.proposal_id_2 == context.proposal_id_1", false},
		{"!context.proposal_id_2 || context.same_1 == context.proposal_id_1", true},
		// Absent values are undefined.
		{"context.absent != false", true},
		{"context.absent == null", true},
		{"context.absent === null", false},
		{"context.absent === undefined", true},
		{"context.nul == undefined", true},
		{"!context.absent", true},
		// JavaScript truthiness and loose equality.
		{"!context.zero", true},
		{"!context.obj", false},
		{"!context.arr", false},
		{"context.one == true", true},
		{"context.num_str == 1", true},
		{"context.num_str === 1", false},
		{"context.zero == ''", true},
		{"context.zero == false", true},
		{"context.nul == false", false},
		{"context.obj == context.obj", true},
		{"!context.zero == true", true},
		{"!(context.zero == true)", true},
		{"context.one && context.zero", false},
		{"context.one && \"x\"", true},
		{"true && !false", true},
		{"'a\\'b' == \"a'b\"", true},
		{"'a\\nb' != 'anb'", true},
		{"'a\\\\' == \"a\\\\\"", true},
		{"-1.5e0 != 1", true},
		{"context.arr.length == 0", true},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			got, err := expr.EvalSkipIf(c.expr, vars)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("EvalSkipIf(%q) = %v, want %v", c.expr, got, c.want)
			}
		})
	}
	for _, bad := range []string{
		"", "context", "context.", "foo.bar", "prior_step.x.passed", "context.a ==", "context.a = 1", "(context.a",
		"context.a == 'x", "context.a[*]", "context.a == context.b == context.c", "context.a | context.b", "1 +", "--1",
		"context.a..b", "context.a-1", "'\\q'", strings.Repeat("(", 100) + "true" + strings.Repeat(")", 100), strings.Repeat("!", 2000) + "true", "context.a #",
	} {
		t.Run("error "+bad[:min(len(bad), 30)], func(t *testing.T) {
			if got, err := expr.EvalSkipIf(bad, vars); err == nil {
				t.Fatalf("EvalSkipIf(%q) = %v, want an error", bad, got)
			}
		})
	}
	if got, err := expr.EvalSkipIf("!context.x", nil); err != nil || !got {
		t.Fatalf("nil vars: %v, %v", got, err)
	}
}

func TestEvalContributesIf(t *testing.T) {
	results := map[string]bool{"probe_api_key": true, "probe_basic": false}
	passed := func(id string) (bool, bool) { ok, known := results[id]; return ok, known }
	cases := []struct {
		expr string
		want bool
		err  bool
	}{
		{expr: "prior_step.probe_api_key.passed", want: true},
		{expr: " prior_step.probe_basic.passed ", want: false},
		{expr: "prior_step.probe_protected_resource.passed", err: true}, // no such step
		{expr: "prior_step.probe_api_key.failed", err: true},
		{expr: "!prior_step.probe_api_key.passed", err: true},
		{expr: "prior_step..passed", err: true},
		{expr: "prior_step.a b.passed", err: true},
		{expr: "", err: true},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			got, err := expr.EvalContributesIf(c.expr, passed)
			if c.err {
				if err == nil {
					t.Fatalf("EvalContributesIf = %v, want an error", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("EvalContributesIf = %v, %v; want %v", got, err, c.want)
			}
		})
	}
	if _, err := expr.EvalContributesIf("prior_step.a.passed", nil); err == nil {
		t.Fatal("nil callback must be an error")
	}
}

func FuzzEvalSkipIf(f *testing.F) {
	for _, s := range []string{"!test_kit.auth.api_key", "context.a != false", "!context.a || context.a == context.b", "test_kit.c != 'x'", "(true && !false)", "context.a[0].b === null"} {
		f.Add(s)
	}
	vars := &expr.Vars{Context: map[string]any{"a": []any{map[string]any{"b": nil}}}, TestKit: "x"}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := expr.EvalSkipIf(s, vars)
		if err != nil && got {
			t.Fatalf("EvalSkipIf(%q) = true with error %v", s, err)
		}
		if err != nil && len(err.Error()) > 400 {
			t.Fatalf("unbounded error: %d bytes", len(err.Error()))
		}
	})
}

// present is a present: matcher's value.
func present(b bool) *bool { return &b }
