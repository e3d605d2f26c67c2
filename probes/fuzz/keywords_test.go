package fuzz

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/adcp-conform/adcp-conform/probes/schemas"
)

// inline opens a hand-written schema (t.json) beside optional other files
// of a release named "test".
func inline(t testing.TB, schema string, files ...string) (*Task, *schemas.Set) {
	t.Helper()
	fsys := fstest.MapFS{"t.json": {Data: []byte(schema)}}
	for i := 0; i+1 < len(files); i += 2 {
		fsys[files[i]] = &fstest.MapFile{Data: []byte(files[i+1])}
	}
	set, err := schemas.LoadFS(fsys, "test")
	if err != nil {
		t.Fatal(err)
	}
	task, err := New(set).Schema("t.json")
	if err != nil {
		t.Fatal(err)
	}
	return task, set
}

// generateValid generates n values, failing the test on an error or on a
// value the validator rejects.
func generateValid(t *testing.T, task *Task, set *schemas.Set, opts Options, n int) []any {
	t.Helper()
	var out []any
	for i := 0; i < n; i++ {
		v, err := task.Generate(opts, uint64(i))
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		b, _ := Marshal(v)
		if vs, err := set.Validate(task.Schema, b); err != nil || len(vs) > 0 {
			t.Fatalf("value %d is invalid: %s\n%+v %v", i, b, vs, err)
		}
		out = append(out, v)
	}
	return out
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func arr(v any) []any          { a, _ := v.([]any); return a }
func str(v any) string         { s, _ := v.(string); return s }

func num(v any) float64 {
	n, _ := v.(json.Number)
	f, _ := n.Float64()
	return f
}

// TestEachKeywordGeneratesValidValuesAndReachesItsEdges: for each keyword
// the AdCP request schemas use, a small schema gets 200 values, all valid,
// and among them the edge the case names (a bound, a branch, an absent
// optional property…).
func TestEachKeywordGeneratesValidValuesAndReachesItsEdges(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		files  []string
		edge   string
		reach  func(v any) bool
	}{
		{"$ref to another file and to a local definition",
			`{"$id":"/schemas/test/t.json","type":"object","required":["a","b"],"properties":{"a":{"$ref":"/schemas/test/core/a.json"},"b":{"$ref":"#/definitions/b"}},"definitions":{"b":{"const":"bee"}}}`,
			[]string{"core/a.json", `{"$id":"/schemas/test/core/a.json","type":"integer","minimum":7,"maximum":7}`},
			"both referenced schemas apply", func(v any) bool { return num(obj(v)["a"]) == 7 && obj(v)["b"] == "bee" }},
		{"allOf", `{"allOf":[{"type":"string"},{"minLength":3},{"maxLength":3}]}`, nil,
			"every member applies", func(v any) bool { return utf8.RuneCountInString(str(v)) == 3 }},
		{"anyOf", `{"anyOf":[{"type":"string","const":"s"},{"type":"integer","minimum":10,"maximum":10}]}`, nil,
			"the second branch", func(v any) bool { return num(v) == 10 }},
		{"oneOf with overlapping branches", `{"oneOf":[{"type":"integer"},{"type":"number","minimum":0}]}`, nil,
			"a non-integer ≥ 0 (only the second branch)", func(v any) bool { n := num(v); return n >= 0 && n != float64(int64(n)) }},
		{"not", `{"type":"string","enum":["a","b","c"],"not":{"const":"b"}}`, nil,
			"a value other than the excluded one", func(v any) bool { return v == "c" }},
		{"if/then/else", `{"type":"object","required":["kind"],"properties":{"kind":{"enum":["a","b"]},"x":{"type":"integer"}},"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["x"]},"else":{"not":{"required":["x"]}}}`, nil,
			"the else path (kind b, no x)", func(v any) bool { _, hasX := obj(v)["x"]; return obj(v)["kind"] == "b" && !hasX }},
		{"const", `{"const":{"a":[1,"x"]}}`, nil, "the constant", func(v any) bool { return len(arr(obj(v)["a"])) == 2 }},
		{"enum", `{"enum":["x",2,null,true]}`, nil, "null among the values", func(v any) bool { return v == nil }},
		{"type union", `{"type":["string","null"],"minLength":2}`, nil, "null", func(v any) bool { return v == nil }},
		{"properties, required, additionalProperties false", `{"type":"object","required":["r"],"properties":{"r":{"type":"boolean"},"o":{"type":"boolean"}},"additionalProperties":false}`, nil,
			"the optional property absent", func(v any) bool { _, ok := obj(v)["o"]; return !ok }},
		{"additionalProperties as a schema", `{"type":"object","minProperties":3,"properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}}`, nil,
			"an undeclared property with an integer", func(v any) bool {
				for k, x := range obj(v) {
					if k != "a" && typeOf(x) == tInteger {
						return true
					}
				}
				return false
			}},
		{"patternProperties", `{"type":"object","minProperties":1,"patternProperties":{"^x-[a-z]{2}$":{"type":"string","maxLength":1}},"additionalProperties":false}`, nil,
			"a property named by the pattern", func(v any) bool { return len(obj(v)) > 0 }},
		{"propertyNames", `{"type":"object","minProperties":2,"propertyNames":{"enum":["monday","tuesday","wednesday"]},"additionalProperties":{"type":"boolean"}}`, nil,
			"two weekday names", func(v any) bool { return len(obj(v)) >= 2 }},
		{"dependencies as names", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"dependencies":{"a":["b"]}}`, nil,
			"a with b", func(v any) bool { _, a := obj(v)["a"]; _, b := obj(v)["b"]; return a && b }},
		{"dependencies as a schema", `{"type":"object","properties":{"a":{"type":"string"},"n":{"type":"integer"}},"dependencies":{"a":{"required":["n"],"properties":{"n":{"minimum":100}}}}}`, nil,
			"a with n ≥ 100", func(v any) bool { _, a := obj(v)["a"]; return a && num(obj(v)["n"]) >= 100 }},
		{"minProperties and maxProperties", `{"type":"object","minProperties":2,"maxProperties":2,"properties":{"a":{},"b":{},"c":{}}}`, nil,
			"exactly two", func(v any) bool { return len(obj(v)) == 2 }},
		{"items, minItems, maxItems", `{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":5}`, nil,
			"the maximal array", func(v any) bool { return len(arr(v)) == 5 }},
		{"items as a tuple closed by additionalItems", `{"type":"array","items":[{"const":"a"},{"type":"integer"}],"additionalItems":false}`, nil,
			"both positions", func(v any) bool { return len(arr(v)) == 2 }},
		{"an empty array", `{"type":"array","items":{"type":"string"}}`, nil, "the empty array", func(v any) bool { return v != nil && len(arr(v)) == 0 }},
		{"uniqueItems", `{"type":"array","items":{"enum":[1,2,3]},"minItems":3,"uniqueItems":true}`, nil,
			"all three values", func(v any) bool { return len(arr(v)) == 3 }},
		{"contains", `{"type":"array","items":{"type":"integer","minimum":0,"maximum":50},"contains":{"const":42}}`, nil,
			"an item equal to 42", func(v any) bool {
				for _, x := range arr(v) {
					if num(x) == 42 {
						return true
					}
				}
				return false
			}},
		{"minLength and maxLength", `{"type":"string","minLength":4,"maxLength":6}`, nil,
			"the maximal length", func(v any) bool { return utf8.RuneCountInString(str(v)) == 6 }},
		{"unicode strings", `{"type":"string","minLength":8}`, nil,
			"a non-ASCII rune", func(v any) bool { return strings.IndexFunc(str(v), func(r rune) bool { return r > 127 }) >= 0 }},
		{"format date-time", `{"type":"string","format":"date-time"}`, nil, "an offset", func(v any) bool { return !strings.HasSuffix(str(v), "Z") }},
		{"format date", `{"type":"string","format":"date"}`, nil, "a leap day", func(v any) bool { return str(v) == "2024-02-29" }},
		{"format uri with an https pattern", `{"type":"string","format":"uri","pattern":"^https://"}`, nil,
			"a query string", func(v any) bool { return strings.Contains(str(v), "?") }},
		{"format uri with a host-only pattern", `{"type":"string","format":"uri","pattern":"^https://[^/?#@]+$"}`, nil, "a host", func(v any) bool { return strings.HasPrefix(str(v), "https://") }},
		{"format email", `{"type":"string","format":"email"}`, nil, "plus-addressing", func(v any) bool { return strings.Contains(str(v), "+") }},
		{"format uuid", `{"type":"string","format":"uuid"}`, nil, "a version-4 uuid", func(v any) bool { return len(str(v)) == 36 && str(v)[14] == '4' }},
		{"format hostname, ipv4, ipv6, uri-template", `{"type":"array","minItems":4,"items":[{"format":"hostname","type":"string"},{"format":"ipv4","type":"string"},{"format":"ipv6","type":"string"},{"format":"uri-template","type":"string"}]}`, nil,
			"all four", func(v any) bool { return len(arr(v)) >= 4 }},
		{"pattern", `{"type":"string","pattern":"^[A-Z]{2}(-[A-Z0-9]{1,3})?$"}`, nil, "the optional group", func(v any) bool { return strings.Contains(str(v), "-") }},
		{"pattern with a lookahead", `{"type":"string","pattern":"^P(?!$)(\\d+Y)?(\\d+M)?(\\d+D)?(T(\\d+H)?(\\d+M)?(\\d+S)?)?$"}`, nil,
			"a duration", func(v any) bool { return len(str(v)) > 1 }},
		{"pattern with \\u escapes", `{"type":"string","pattern":"^[^\\u0000-\\u001F\\u007F]+$"}`, nil,
			"a non-ASCII rune", func(v any) bool { return strings.IndexFunc(str(v), func(r rune) bool { return r > 127 }) >= 0 }},
		{"an unanchored pattern", `{"type":"string","pattern":"\\S"}`, nil, "text around the match", func(v any) bool { return len(str(v)) > 1 }},
		{"minimum and maximum", `{"type":"integer","minimum":-3,"maximum":3}`, nil, "the lower bound", func(v any) bool { return num(v) == -3 }},
		{"exclusiveMinimum and exclusiveMaximum", `{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`, nil,
			"a value just above 0", func(v any) bool { return num(v) > 0 && num(v) <= 0.01 }},
		{"multipleOf a fraction", `{"type":"number","multipleOf":0.01,"minimum":0.05,"maximum":0.5}`, nil,
			"the upper bound", func(v any) bool { return string(v.(json.Number)) == "0.5" }},
		{"multipleOf on integers", `{"type":"integer","multipleOf":7,"exclusiveMinimum":0}`, nil, "7", func(v any) bool { return num(v) == 7 }},
		{"boolean schemas", `{"type":"object","required":["any"],"properties":{"any":true,"never":false}}`, nil,
			"never absent, any present", func(v any) bool { _, n := obj(v)["never"]; _, a := obj(v)["any"]; return a && !n }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task, set := inline(t, c.schema, c.files...)
			reached := false
			for _, v := range generateValid(t, task, set, Options{Seed: 7}, 200) {
				reached = reached || c.reach(v)
			}
			if !reached {
				t.Errorf("200 values never reached %s", c.edge)
			}
		})
	}
}

// TestAnUnsatisfiableSchemaIsATypedErrorNamingItsPointer: where no value
// exists, the generator says where, and never returns a value.
func TestAnUnsatisfiableSchemaIsATypedErrorNamingItsPointer(t *testing.T) {
	for _, c := range []struct{ schema, pointer string }{
		{`{"type":"string","minLength":5,"maxLength":2}`, ""},
		{`{"allOf":[{"type":"string"},{"type":"integer"}]}`, ""},
		{`{"type":"integer","minimum":1.2,"maximum":1.8}`, ""},
		{`{"type":"array","minItems":3,"maxItems":1}`, ""},
		{`{"type":"object","required":["a"],"properties":{"a":{"type":"object","required":["b"],"properties":{"b":false}}}}`, "/a/b"},
		{`{"type":"object","required":["x"],"additionalProperties":false}`, "/x"},
		{`{"type":"object","required":["p"],"properties":{"p":{"type":"integer","enum":["a","b"]}}}`, "/p"},
		{`{"type":"object","required":["q"],"properties":{"q":{"type":"array","items":{"not":{}},"minItems":1}}}`, "/q/0"},
	} {
		task, _ := inline(t, c.schema)
		v, err := task.Generate(Options{Seed: 1}, 0)
		var ge *Error
		if !errors.As(err, &ge) {
			t.Errorf("%s: value %v, error %v; want an *Error", c.schema, v, err)
			continue
		}
		if ge.Pointer != c.pointer || !(errors.Is(err, ErrUnsatisfiable) || errors.Is(err, ErrGaveUp)) || ge.Schema == "" {
			t.Errorf("%s: %v; want pointer %q", c.schema, err, c.pointer)
		}
	}
}
