package rawjson

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

func TestPointerEscapesEachToken(t *testing.T) {
	for _, tc := range []struct {
		base   string
		tokens []string
		want   string
	}{
		{"", nil, ""},
		{"", []string{""}, "/"},
		{"/result", []string{"a/b", "m~n", "0"}, "/result/a~1b/m~0n/0"},
		{"#", []string{"~1"}, "#/~01"},
	} {
		if got := Pointer(tc.base, tc.tokens...); got != tc.want {
			t.Errorf("Pointer(%q, %q) = %q, want %q", tc.base, tc.tokens, got, tc.want)
		}
	}
}

func TestTokensUnescapeInOrder(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"", nil, true},
		{"/", []string{""}, true},
		{"/a~1b/m~0n/~01", []string{"a/b", "m~n", "~1"}, true},
		{"a/b", nil, false},
	} {
		got, ok := Tokens(tc.in)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("Tokens(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	for _, tok := range []string{"", "a", "~", "/", "~0", "~1", "a/~b~/"} {
		if got := UnescapeToken(EscapeToken(tok)); got != tok {
			t.Errorf("UnescapeToken(EscapeToken(%q)) = %q", tok, got)
		}
	}
}

func TestIndexIsRFC6901ArrayIndex(t *testing.T) {
	for tok, want := range map[string]bool{"0": true, "2": true, "3": false, "01": false, "-1": false, "+1": false, "1x": false, "": false, "99999999999999999999": false} {
		if _, ok := Index(tok, 3); ok != want {
			t.Errorf("Index(%q, 3) ok = %v, want %v", tok, ok, want)
		}
	}
}

func TestResolve(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"a":[{"b/c":1},{"~":null}],"":"empty"}`), &doc); err != nil {
		t.Fatal(err)
	}
	for ptr, want := range map[string]string{"/a/0/b~1c": "1", "/a/1/~0": "null", "/": `"empty"`, "/a/1": `{"~":null}`} {
		v, ok := Resolve(doc, ptr)
		got, _ := json.Marshal(v)
		if !ok || string(got) != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", ptr, got, ok, want)
		}
	}
	for _, ptr := range []string{"/b", "/a/2", "/a/01", "/a/0/b~1c/x", "a", "/a/-0", "/a/+1", "/a/"} {
		if v, ok := Resolve(doc, ptr); ok {
			t.Errorf("Resolve(%q) = %v, want nothing", ptr, v)
		}
	}
	if v, ok := Resolve(doc, ""); !ok || v == nil {
		t.Error("Resolve(\"\") is not the document")
	}
}

func TestKindOfAndTruthiness(t *testing.T) {
	for in, want := range map[string]Kind{
		`null`: KindNull, ` true`: KindBool, "\n\"s\"": KindString, `-1`: KindNumber, `7`: KindNumber,
		`[`: KindArray, `{}`: KindObject, ``: KindInvalid, `  `: KindInvalid, `x`: KindInvalid, `+1`: KindInvalid,
	} {
		if got := KindOf([]byte(in)); got != want {
			t.Errorf("KindOf(%q) = %v, want %v", in, got, want)
		}
	}
	for in, want := range map[string]bool{
		`null`: false, `false`: false, `true`: true, `""`: false, `" "`: true, `0`: false, `-0`: false, `1e-400`: false,
		`1e400`: true, `0.5`: true, `[]`: true, `{}`: true, ``: false, ` 1 `: true,
	} {
		if got := TruthyValue([]byte(in)); got != want {
			t.Errorf("TruthyValue(%q) = %v, want %v", in, got, want)
		}
		if got := Truthy([]byte(in)); got != want {
			t.Errorf("Truthy(%q) = %v, want %v", in, got, want)
		}
	}
	if Truthy([]byte(`tru`)) {
		t.Error("Truthy accepted bytes that are no JSON value")
	}
	if KindInvalid.Phrase() != "empty" || KindArray.Phrase() != "an array" {
		t.Errorf("Phrase: %q, %q", KindInvalid.Phrase(), KindArray.Phrase())
	}
}

func TestDecodedKindsAndTruthiness(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`[null,true,0,"",[],{}]`), &doc); err != nil {
		t.Fatal(err)
	}
	want := []Kind{KindNull, KindBool, KindNumber, KindString, KindArray, KindObject}
	names := []string{"null", "boolean", "number", "string", "array", "object"}
	truthy := []bool{false, true, false, false, true, true}
	for i, v := range doc.([]any) {
		if k := KindOfDecoded(v); k != want[i] || k.String() != names[i] {
			t.Errorf("KindOfDecoded(%v) = %v (%s), want %v", v, k, k, want[i])
		}
		if got := TruthyDecoded(v); got != truthy[i] {
			t.Errorf("TruthyDecoded(%#v) = %v", v, got)
		}
	}
	if KindOfDecoded(json.Number("1")) != KindNumber || KindOfDecoded(3) != KindInvalid || KindInvalid.String() != "invalid" {
		t.Error("KindOfDecoded of a json.Number or a Go int")
	}
	for v, want := range map[any]bool{json.Number("0"): false, json.Number("-0.0"): false, json.Number("1e400"): true, math.NaN(): false, "x": true, 1.5: true} {
		if got := TruthyDecoded(v); got != want {
			t.Errorf("TruthyDecoded(%#v) = %v, want %v", v, got, want)
		}
	}
}
