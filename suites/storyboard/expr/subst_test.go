package expr

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// counter mints predictable UUIDs: uuid-1, uuid-2, …
func counter() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("uuid-%d", n) }
}

// testVars is a run with every source populated.
func testVars() *Vars {
	return &Vars{
		Context: map[string]any{
			"media_buy_id": "mb-1",
			"count":        float64(3),
			"ratio":        1.5,
			"flag":         true,
			"nothing":      nil,
			"format_id":    map[string]any{"agent_url": "https://c.example", "id": "banner"},
			"ids":          []any{"a", "b"},
		},
		TestKit: map[string]any{
			"auth":    map[string]any{"probe_task": "list_creatives", "api_key": "k"},
			"account": map[string]any{"unsupported_billing_probe": "agent", "nulled": nil},
		},
		AgentURL: "https://agent.example/mcp",
		WebhookURL: func(id string) (string, bool) {
			if id == "unknown_step" {
				return "", false
			}
			return "https://hooks.example/step/" + id + "/cap-1", true
		},
		WebhookBase: "https://hooks.example",
		Prior: map[string]any{
			"search": map[string]any{"id": "s-9", "task_id": "t-7", "n": float64(4), "obj": map[string]any{"k": "v"}},
		},
		NewUUID: counter(),
	}
}

func TestSubstitute(t *testing.T) {
	cases := []struct {
		name     string
		template any
		want     any
		// unresolved is the token of the expected *UnresolvedError, and
		// pointer where it sits.
		unresolved, pointer string
	}{
		{name: "whole-string context keeps a string", template: "$context.media_buy_id", want: "mb-1"},
		{name: "whole-string context keeps a number", template: "$context.count", want: float64(3)},
		{name: "whole-string context keeps a boolean", template: "$context.flag", want: true},
		{name: "whole-string context keeps null", template: "$context.nothing", want: nil},
		{name: "whole-string context keeps an object", template: map[string]any{"format_id": "$context.format_id"},
			want: map[string]any{"format_id": map[string]any{"agent_url": "https://c.example", "id": "banner"}}},
		{name: "whole-string context keeps an array", template: []any{"$context.ids"}, want: []any{[]any{"a", "b"}}},
		{name: "context inside array elements", template: map[string]any{"media_buy_ids": []any{"$context.media_buy_id", "x"}},
			want: map[string]any{"media_buy_ids": []any{"mb-1", "x"}}},
		{name: "embedded context is interpolated", template: "buy-$context.media_buy_id-end", want: "buy-mb-1-end"},
		{name: "embedded integer spells without a fraction", template: "n=$context.count", want: "n=3"},
		{name: "embedded fraction", template: "r=$context.ratio", want: "r=1.5"},
		{name: "embedded boolean and null", template: "$context.flag/$context.nothing", want: "true/null"},
		{name: "a trailing dot ends the name", template: "$context.media_buy_id.", want: "mb-1."},
		{name: "embedded object cannot be spelled", template: map[string]any{"a": "x $context.format_id"}, unresolved: "$context.format_id", pointer: "/a"},
		{name: "missing context nested in objects and arrays", template: map[string]any{"a": []any{map[string]any{"b": "$context.missing"}}},
			unresolved: "$context.missing", pointer: "/a/0/b"},
		{name: "missing context embedded", template: "x-$context.missing", unresolved: "$context.missing", pointer: ""},
		{name: "context prefix with no name", template: "$context.", unresolved: "$context."},
		{name: "first unresolved in sorted key order", template: map[string]any{"b": "$context.b_missing", "a": "$context.a_missing"},
			unresolved: "$context.a_missing", pointer: "/a"},

		{name: "aliased generate", template: "$generate:uuid_v4#key_a", want: "uuid-1"},
		{name: "aliased generate is reused", template: []any{"$generate:uuid_v4#key_a", "$generate:uuid_v4#key_b", "$generate:opaque_id#key_a"},
			want: []any{"uuid-1", "uuid-2", "uuid-1"}},
		{name: "bare generate is fresh each time", template: []any{"$generate:uuid_v4", "$generate:uuid_v4"}, want: []any{"uuid-1", "uuid-2"}},
		{name: "alias with hyphens", template: "$generate:uuid_v4#error-negative-budget", want: "uuid-1"},
		{name: "embedded generate", template: "k:$generate:uuid_v4#a.", want: "k:uuid-1."},
		{name: "unknown generator", template: "$generate:uuid_v7#a", unresolved: "$generate:uuid_v7#a"},
		{name: "empty alias", template: "$generate:uuid_v4#", unresolved: "$generate:uuid_v4#"},

		{name: "test kit value", template: map[string]any{"billing": "$test_kit.account.unsupported_billing_probe"}, want: map[string]any{"billing": "agent"}},
		{name: "test kit object keeps its type", template: "$test_kit.auth", want: map[string]any{"probe_task": "list_creatives", "api_key": "k"}},
		{name: "test kit absent", template: "$test_kit.account.nope", unresolved: "$test_kit.account.nope"},
		{name: "test kit null", template: "$test_kit.account.nulled", unresolved: "$test_kit.account.nulled"},

		{name: "agent url", template: map[string]any{"equals": "$agent_url"}, want: map[string]any{"equals": "https://agent.example/mcp"}},
		{name: "agent url embedded", template: "$agent_url/x", want: "https://agent.example/mcp/x"},
		{name: "a longer word is not the agent url", template: "$agent_urls", want: "$agent_urls"},

		{name: "webhook url", template: map[string]any{"url": "{{runner.webhook_url:trigger_op}}"}, want: map[string]any{"url": "https://hooks.example/step/trigger_op/cap-1"}},
		{name: "webhook url for a step the receiver does not know", template: "{{runner.webhook_url:unknown_step}}", unresolved: "{{runner.webhook_url:unknown_step}}"},
		{name: "webhook url without a step", template: "{{runner.webhook_url:}}", unresolved: "{{runner.webhook_url:}}"},
		{name: "webhook base embedded", template: "{{runner.webhook_base}}/step/x", want: "https://hooks.example/step/x"},
		{name: "mustache with spaces", template: "{{ runner.webhook_base }}", want: "https://hooks.example"},
		{name: "unknown runner variable", template: "{{runner.nope}}", unresolved: "{{runner.nope}}"},

		{name: "prior step field", template: "{{prior_step.search.id}}", want: "s-9"},
		{name: "prior step number keeps its type", template: "{{prior_step.search.n}}", want: float64(4)},
		{name: "prior step embedded", template: "op-{{prior_step.search.task_id}}", want: "op-t-7"},
		{name: "prior step nested field", template: "{{prior_step.search.obj.k}}", want: "v"},
		{name: "prior step that did not run", template: "{{prior_step.other.id}}", unresolved: "{{prior_step.other.id}}"},
		{name: "prior step field absent", template: "{{prior_step.search.nope}}", unresolved: "{{prior_step.search.nope}}"},
		{name: "prior step without a field", template: "{{prior_step.search}}", unresolved: "{{prior_step.search}}"},

		{name: "other double-brace text is payload", template: "Visit {{store.name}} today", want: "Visit {{store.name}} today"},
		{name: "macro syntaxes pass through", template: "a=%%TOKEN%%&b={{token}}&c=${token}&d=[TOKEN]", want: "a=%%TOKEN%%&b={{token}}&c=${token}&d=[TOKEN]"},
		{name: "unclosed braces", template: "{{runner.webhook_base", want: "{{runner.webhook_base"},
		{name: "dollar amounts", template: "$5 and $", want: "$5 and $"},
		{name: "yaml integers become JSON numbers", template: map[string]any{"n": 3, "u": uint8(2)}, want: map[string]any{"n": float64(3), "u": float64(2)}},
		{name: "yaml any-keyed maps become objects", template: map[any]any{"a": "$context.media_buy_id", 1: true}, want: map[string]any{"a": "mb-1", "1": true}},
		{name: "keys are not substituted", template: map[string]any{"$context.media_buy_id": "x"}, want: map[string]any{"$context.media_buy_id": "x"}},
		{name: "build-assets directive keeps its key", template: map[string]any{"assets": map[string]any{"$build_assets_from_format": "$context.format_id"}},
			want: map[string]any{"assets": map[string]any{"$build_assets_from_format": map[string]any{"agent_url": "https://c.example", "id": "banner"}}}},
		{name: "nil template", template: nil, want: nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Substitute(c.template, testVars())
			if c.unresolved != "" {
				var ue *UnresolvedError
				if !errors.As(err, &ue) {
					t.Fatalf("Substitute = %#v, %v; want an *UnresolvedError for %q", got, err, c.unresolved)
				}
				if ue.Token != c.unresolved || ue.Pointer != c.pointer {
					t.Fatalf("unresolved %q at %q, want %q at %q (%v)", ue.Token, ue.Pointer, c.unresolved, c.pointer, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Substitute: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Substitute = %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestSubstituteWithoutReceiverOrAgentURL(t *testing.T) {
	for _, tmpl := range []string{"{{runner.webhook_url:a}}", "{{runner.webhook_base}}", "$agent_url", "$context.x", "$test_kit.auth.api_key", "{{prior_step.a.b}}"} {
		t.Run(tmpl, func(t *testing.T) {
			_, err := Substitute(tmpl, nil)
			var ue *UnresolvedError
			if !errors.As(err, &ue) || ue.Token != tmpl {
				t.Fatalf("Substitute(%q, nil) = %v, want unresolved %q", tmpl, err, tmpl)
			}
			r := ue.Result()
			if r.Check != "unresolved_substitution" || r.Passed || r.Expected != tmpl || r.Actual != nil || r.JSONPointer != nil {
				t.Fatalf("Result = %+v", r)
			}
		})
	}
}

func TestSubstituteAliasesPersistAcrossSteps(t *testing.T) {
	vars := &Vars{NewUUID: counter()}
	first, err := Substitute(map[string]any{"idempotency_key": "$generate:uuid_v4#replay_a"}, vars)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Substitute(map[string]any{"idempotency_key": "$generate:uuid_v4#replay_a", "other": "$generate:uuid_v4#replay_b"}, vars)
	if err != nil {
		t.Fatal(err)
	}
	a, b := first.(map[string]any), second.(map[string]any)
	if a["idempotency_key"] != b["idempotency_key"] || a["idempotency_key"] == b["other"] {
		t.Fatalf("alias not reused across steps: %v then %v", a, b)
	}
	if vars.Generated["replay_a"] != a["idempotency_key"] || len(vars.Generated) != 2 {
		t.Fatalf("Generated = %v", vars.Generated)
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewUUIDv4(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		u := newUUIDv4()
		if !uuidV4.MatchString(u) {
			t.Fatalf("%q is not an RFC 4122 v4 UUID", u)
		}
		if seen[u] {
			t.Fatalf("%q minted twice", u)
		}
		seen[u] = true
	}
	got, err := Substitute("$generate:uuid_v4#x", &Vars{})
	if err != nil || !uuidV4.MatchString(got.(string)) {
		t.Fatalf("default generator gave %v, %v", got, err)
	}
}

func TestSubstituteCopiesValues(t *testing.T) {
	vars := testVars()
	got, err := Substitute(map[string]any{"f": "$context.format_id"}, vars)
	if err != nil {
		t.Fatal(err)
	}
	got.(map[string]any)["f"].(map[string]any)["id"] = "changed"
	if vars.Context["format_id"].(map[string]any)["id"] != "banner" {
		t.Fatal("the substituted request aliases the context")
	}
	tmpl := map[string]any{"a": []any{"x"}}
	out, _ := Substitute(tmpl, vars)
	out.(map[string]any)["a"].([]any)[0] = "y"
	if tmpl["a"].([]any)[0] != "x" {
		t.Fatal("the substituted request aliases the template")
	}
}

func TestSubstituteHostile(t *testing.T) {
	deep := func(n int) any {
		var v any = "$context.media_buy_id"
		for range n {
			v = []any{v}
		}
		return v
	}
	t.Run("template nested beyond the bound", func(t *testing.T) {
		if _, err := Substitute(deep(maxSubstDepth+5), testVars()); err == nil {
			t.Fatal("no error for a template nested beyond MaxSubstDepth")
		}
	})
	t.Run("captured value nested beyond the bound", func(t *testing.T) {
		vars := testVars()
		vars.Context["deep"] = deep(maxSubstDepth + 5)
		if _, err := Substitute("$context.deep", vars); err == nil {
			t.Fatal("no error for a captured value nested beyond MaxSubstDepth")
		}
	})
	t.Run("interpolation beyond the string bound", func(t *testing.T) {
		vars := testVars()
		vars.Context["big"] = strings.Repeat("x", 1<<20)
		if _, err := Substitute(strings.Repeat("$context.big ", 8), vars); err == nil {
			t.Fatal("no error for an interpolated string beyond MaxSubstString")
		}
	})
	t.Run("a captured value holding a token is not expanded again", func(t *testing.T) {
		vars := testVars()
		vars.Context["evil"] = "$context.media_buy_id {{runner.webhook_base}}"
		got, err := Substitute("$context.evil", vars)
		if err != nil || got != "$context.media_buy_id {{runner.webhook_base}}" {
			t.Fatalf("Substitute = %v, %v", got, err)
		}
	})
	t.Run("many unclosed braces", func(t *testing.T) {
		in := strings.Repeat("{{", 200_000)
		got, err := Substitute(in, testVars())
		if err != nil || got != in {
			t.Fatalf("Substitute changed unclosed braces: %v", err)
		}
	})
	t.Run("weird tokens", func(t *testing.T) {
		for _, s := range []string{"$context.\x00", "{{prior_step..}}", "{{prior_step.a.[}}", "{{runner.webhook_url:a b}}", "$generate:#", "$test_kit.", "{{}}", "{{{{runner.webhook_base}}}}", "$context.é", "\xff$context.media_buy_id\xfe"} {
			if _, err := Substitute(s, testVars()); err != nil {
				var ue *UnresolvedError
				if !errors.As(err, &ue) {
					t.Errorf("Substitute(%q): %v is not an *UnresolvedError", s, err)
				}
			}
		}
	})
}

func TestRefs(t *testing.T) {
	tmpl := map[string]any{
		"account":                  map[string]any{"account_id": "$context.account_id"},
		"idempotency_key":          "$generate:uuid_v4#k1",
		"billing":                  "$test_kit.account.unsupported_billing_probe",
		"push_notification_config": map[string]any{"url": "{{runner.webhook_url:step_one}}"},
		"notes":                    []any{"{{runner.webhook_base}}/x", "{{prior_step.search.id}}", "$agent_url", "{{store.name}}"},
		"assets":                   map[string]any{"$build_assets_from_format": "$context.format_ref"},
	}
	refs, err := tokenRefs(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, fmt.Sprintf("%s %s %s|%s|%s @%s", r.Kind, r.Token, r.Name, r.Alias, r.Field, r.Pointer))
	}
	want := []string{
		"context $context.account_id account_id|| @/account/account_id",
		"build_assets_from_format $build_assets_from_format || @/assets/$build_assets_from_format",
		"context $context.format_ref format_ref|| @/assets/$build_assets_from_format",
		"test_kit $test_kit.account.unsupported_billing_probe account.unsupported_billing_probe|| @/billing",
		"generate $generate:uuid_v4#k1 uuid_v4|k1| @/idempotency_key",
		"webhook_base {{runner.webhook_base}} || @/notes/0",
		"prior_step {{prior_step.search.id}} search||id @/notes/1",
		"agent_url $agent_url || @/notes/2",
		"webhook_url {{runner.webhook_url:step_one}} step_one|| @/push_notification_config/url",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Refs =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	_, err = tokenRefs([]any{"$generate:bogus", "{{runner.nope}}", "ok"})
	var ue *UnresolvedError
	if !errors.As(err, &ue) || ue.Token != "$generate:bogus" || !strings.Contains(err.Error(), "{{runner.nope}}") {
		t.Fatalf("Refs of malformed tokens: %v", err)
	}
}

func TestPreflight(t *testing.T) {
	refs, err := tokenRefs(map[string]any{"u": "{{runner.webhook_url:s}}", "a": "$agent_url", "c": "$context.x"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		vars *Vars
		want string // unresolved token, "" for none
	}{
		{"nothing available", nil, "$agent_url"},
		{"agent url but no receiver", &Vars{AgentURL: "https://a.example"}, "{{runner.webhook_url:s}}"},
		{"everything the run provides", testVars(), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ue := Preflight(refs, c.vars)
			switch {
			case c.want == "" && ue != nil:
				t.Fatalf("Preflight = %v, want nil", ue)
			case c.want != "" && (ue == nil || ue.Token != c.want):
				t.Fatalf("Preflight = %v, want %q", ue, c.want)
			}
		})
	}
}

func TestResolveTask(t *testing.T) {
	kit := map[string]any{"auth": map[string]any{"probe_task": "list_creatives"}, "operations": map[string]any{"n": float64(1), "none": nil}}
	cases := []struct {
		task, def string
		kit       any
		want      string
		err       bool
	}{
		{task: "get_products", want: "get_products"},
		{task: "$test_kit.auth.probe_task", kit: kit, want: "list_creatives"},
		{task: "$test_kit.operations.primary_webhook_emitter", def: "create_media_buy", kit: kit, want: "create_media_buy"},
		{task: "$test_kit.operations.none", def: "create_media_buy", kit: kit, want: "create_media_buy"},
		{task: "$test_kit.operations.primary_webhook_emitter", kit: kit, err: true},
		{task: "$test_kit.operations.n", def: "x", kit: kit, err: true},
		{task: "$test_kit.auth.probe_task", def: "x", kit: nil, want: "x"},
	}
	for _, c := range cases {
		t.Run(c.task+"|"+c.def, func(t *testing.T) {
			got, err := ResolveTask(c.task, c.def, c.kit)
			if c.err {
				var ue *UnresolvedError
				if !errors.As(err, &ue) {
					t.Fatalf("ResolveTask = %q, %v; want an *UnresolvedError", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ResolveTask = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestInjectInputs(t *testing.T) {
	ctx := map[string]any{
		"fmt":   map[string]any{"agent_url": "https://c.example", "id": "banner"},
		"n":     float64(2),
		"empty": "",
	}
	cases := []struct {
		name    string
		req     map[string]any
		inputs  []spec.ContextInput
		want    map[string]any
		missing []string
		err     bool
	}{
		{name: "object keeps its type inside a new array", req: map[string]any{},
			inputs: []spec.ContextInput{{Key: "fmt", InjectAt: "format_ids[0]"}},
			want:   map[string]any{"format_ids": []any{map[string]any{"agent_url": "https://c.example", "id": "banner"}}}},
		{name: "number overwrites", req: map[string]any{"a": map[string]any{"b": "x"}},
			inputs: []spec.ContextInput{{Key: "n", InjectAt: "a.b"}},
			want:   map[string]any{"a": map[string]any{"b": float64(2)}}},
		{name: "missing key is a no-op, reported", req: map[string]any{"a": "x"},
			inputs:  []spec.ContextInput{{Key: "typo", InjectAt: "a"}, {Key: "empty", InjectAt: "e"}},
			want:    map[string]any{"a": "x", "e": ""},
			missing: []string{"typo"}},
		{name: "bad path", req: map[string]any{"a": "x"},
			inputs: []spec.ContextInput{{Key: "n", InjectAt: "a.b"}}, err: true},
		{name: "wildcard path", req: map[string]any{},
			inputs: []spec.ContextInput{{Key: "n", InjectAt: "a[*]"}}, err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			missing, err := InjectInputs(c.req, c.inputs, ctx)
			if c.err {
				if err == nil {
					t.Fatalf("InjectInputs = nil error, want one; req %v", c.req)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.req, c.want) || !reflect.DeepEqual(missing, c.missing) {
				t.Fatalf("InjectInputs: req %#v missing %v; want %#v missing %v", c.req, missing, c.want, c.missing)
			}
		})
	}
	// The injected value is a copy.
	req := map[string]any{}
	if _, err := InjectInputs(req, []spec.ContextInput{{Key: "fmt", InjectAt: "f"}}, ctx); err != nil {
		t.Fatal(err)
	}
	req["f"].(map[string]any)["id"] = "changed"
	if ctx["fmt"].(map[string]any)["id"] != "banner" {
		t.Fatal("the request aliases the context")
	}
}

func TestCapture(t *testing.T) {
	payload := map[string]any{
		"media_buy_id": "mb-1",
		"budget":       float64(100),
		"packages":     []any{map[string]any{"package_id": "p1"}, map[string]any{"package_id": "p2"}},
		"nulled":       nil,
		"blank":        "",
		"signals":      []any{},
		"obj":          map[string]any{"k": "v"},
	}
	failure := func(name, path string, present bool, actual any) CaptureFailure {
		return CaptureFailure{Name: name, Path: path, Present: present, Actual: actual, Pointer: spec.Pointer(path)}
	}
	cases := []struct {
		name     string
		outputs  []spec.ContextOutput
		values   map[string]any
		deferred int
		failures []CaptureFailure
		err      bool
	}{
		{name: "paths keep their types",
			outputs: []spec.ContextOutput{{Name: "id", Path: "media_buy_id"}, {Key: "budget", Path: "budget"}, {Name: "pkg", Path: "packages[1].package_id"}, {Name: "o", Path: "obj"}},
			values:  map[string]any{"id": "mb-1", "budget": float64(100), "pkg": "p2", "o": map[string]any{"k": "v"}}},
		{name: "a wildcard path captures the first value",
			outputs: []spec.ContextOutput{{Name: "first", Path: "packages[*].package_id"}},
			values:  map[string]any{"first": "p1"}},
		{name: "absent, null and empty are failures, and nothing is captured",
			outputs: []spec.ContextOutput{{Name: "id", Path: "media_buy_id"}, {Name: "a", Path: "signals[0].id"}, {Name: "n", Path: "nulled"}, {Name: "b", Path: "blank"}},
			failures: []CaptureFailure{
				failure("a", "signals[0].id", false, nil), failure("n", "nulled", true, nil), failure("b", "blank", true, ""),
			}},
		{name: "generate mints once per run",
			outputs: []spec.ContextOutput{{Name: "forced_task_id", Generate: "uuid_v4"}, {Name: "corr", Generate: "opaque_id"}},
			values:  map[string]any{"forced_task_id": "uuid-1", "corr": "uuid-2"}},
		{name: "task_completion paths are left to the engine",
			outputs:  []spec.ContextOutput{{Name: "id", Path: "media_buy_id"}, {Name: "late", Path: "task_completion.media_buy_id"}},
			values:   map[string]any{"id": "mb-1"},
			deferred: 1},
		{name: "authoring errors are errors, not failures",
			outputs: []spec.ContextOutput{{Path: "media_buy_id"}, {Name: "x", Path: "a", Generate: "uuid_v4"}, {Name: "y"}, {Name: "z", Generate: "uuid_v9"}, {Name: "w", Path: "a..b"}},
			err:     true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Capture(c.outputs, payload, &Vars{NewUUID: counter()})
			if c.err {
				if res.Err == nil || res.Values != nil {
					t.Fatalf("Capture = %+v, want an authoring error and no values", res)
				}
				return
			}
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if !reflect.DeepEqual(res.Values, c.values) || len(res.Deferred) != c.deferred || !reflect.DeepEqual(res.Failures, c.failures) {
				t.Fatalf("Capture = values %#v deferred %v failures %#v\nwant %#v deferred %d failures %#v", res.Values, res.Deferred, res.Failures, c.values, c.deferred, c.failures)
			}
		})
	}
}

func TestCaptureGenerateAgreesWithInlineAlias(t *testing.T) {
	vars := &Vars{NewUUID: counter()}
	inline, err := Substitute("$generate:uuid_v4#forced_task_id", vars)
	if err != nil {
		t.Fatal(err)
	}
	res := Capture([]spec.ContextOutput{{Name: "forced_task_id", Generate: "uuid_v4"}}, nil, vars)
	if res.Values["forced_task_id"] != inline {
		t.Fatalf("capture %v, inline %v", res.Values, inline)
	}
	again := Capture([]spec.ContextOutput{{Name: "forced_task_id", Generate: "uuid_v4"}}, nil, vars)
	if again.Values["forced_task_id"] != inline {
		t.Fatal("a second capture minted a new value")
	}
}

func TestCaptureFailureResult(t *testing.T) {
	cases := []struct {
		f       CaptureFailure
		message string
	}{
		{CaptureFailure{Name: "a", Path: "signals[0].id", Pointer: "/signals/0/id"}, "signals[0].id is absent in the response"},
		{CaptureFailure{Name: "n", Path: "x", Present: true, Pointer: "/x"}, "x is null in the response"},
		{CaptureFailure{Name: "b", Path: "x", Present: true, Actual: "", Pointer: "/x"}, "x is the empty string in the response"},
	}
	for _, c := range cases {
		r := c.f.Result()
		if r.Check != "capture_path_not_resolvable" || r.Passed || r.Expected != c.f.Path || r.Actual != c.f.Actual ||
			r.JSONPointer == nil || *r.JSONPointer != c.f.Pointer || r.Message != c.message {
			t.Errorf("Result = %+v, want message %q", r, c.message)
		}
	}
}

func TestTaskCompletionInner(t *testing.T) {
	if in, ok := TaskCompletionInner("task_completion.media_buy_id"); !ok || in != "media_buy_id" {
		t.Fatalf("TaskCompletionInner = %q, %v", in, ok)
	}
	if _, ok := TaskCompletionInner("media_buy_id"); ok {
		t.Fatal("a plain path read as task_completion")
	}
}

func FuzzSubstitute(f *testing.F) {
	for _, s := range []string{"$context.media_buy_id", "x $context.count y", "$generate:uuid_v4#a", "{{runner.webhook_url:a}}", "{{prior_step.search.obj.k}}",
		"$test_kit.auth.probe_task", "$agent_url", "{{store.name}}", "{{", "$", "$context.", "{{prior_step.a.[0]}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Substitute(map[string]any{"a": []any{s}}, testVars())
		if err != nil {
			return
		}
		out := got.(map[string]any)["a"].([]any)[0]
		str, ok := out.(string)
		if !ok {
			return
		}
		// No runner token survives a successful substitution; a token may
		// only come back inside a value the run supplied (none here holds one).
		refs, rerr := tokenRefs(str)
		if rerr == nil && len(refs) > 0 && str != s {
			for _, r := range refs {
				if strings.Contains(s, r.Token) {
					t.Fatalf("Substitute(%q) = %q still holds %q", s, str, r.Token)
				}
			}
		}
	})
}

func TestStoryboardRefs(t *testing.T) {
	sb := &spec.Storyboard{
		Context: map[string]any{"governance_agent_url": "https://g.example"},
		Phases: []spec.Phase{{Steps: []spec.Step{
			{Task: "$test_kit.auth.probe_task", SampleRequest: map[string]any{"id": "$context.id"}},
			{Task: "get_products",
				Filter:        map[string]any{"body": map[string]any{"operation_id": "{{prior_step.s.operation_id}}"}},
				RateLimitTrip: &spec.RateLimitTrip{TripTargetSampleRequest: map[string]any{"k": "$generate:uuid_v4#t"}},
				Validations: []spec.Validation{
					{Check: "field_value", Value: "$context.id"},
					{Check: "refs_resolve", Scope: &spec.RefScope{Key: "agent_url", Equals: "$agent_url"}},
					{Check: "upstream_traffic", PayloadMustContain: []spec.MatchSpec{{Path: "a", AllowedValues: []any{"$context.x"}}}},
				}},
			{SampleRequest: map[string]any{"url": "{{runner.nope}}"}},
		}}},
	}
	refs, err := StoryboardRefs(sb)
	var got []string
	for _, r := range refs {
		got = append(got, r.Site+" "+r.Token)
	}
	want := []string{
		"phases[0].steps[0].task $test_kit.auth.probe_task",
		"phases[0].steps[0].sample_request $context.id",
		"phases[0].steps[1].rate_limit_trip.trip_target_sample_request $generate:uuid_v4#t",
		"phases[0].steps[1].filter {{prior_step.s.operation_id}}",
		"phases[0].steps[1].validations[0].value $context.id",
		"phases[0].steps[1].validations[1].scope.equals $agent_url",
		"phases[0].steps[1].validations[2].payload_must_contain[0].allowed_values $context.x",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("StoryboardRefs =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err == nil || !strings.Contains(err.Error(), "phases[0].steps[2].sample_request") {
		t.Fatalf("the malformed token's site is not named: %v", err)
	}
	if refs, err := StoryboardRefs(nil); refs != nil || err != nil {
		t.Fatalf("StoryboardRefs(nil) = %v, %v", refs, err)
	}
}
