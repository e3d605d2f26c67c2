package rawjson

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestCheckText(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, tc := range []struct {
		name, in string
		want     string // "" for well-formed
	}{
		{"object", `{"a":[1,"x",null]}`, ""},
		{"10 001 levels", deep, ""},
		{"100 000 levels", strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000), ""},
		{"utf-8 text", `{"a":"é"}`, ""},
		{"lone surrogate escape", `{"a":"\ud800"}`, ""},
		{"empty", "  ", "is empty"},
		{"bom", "\xef\xbb\xbf{}", "byte order mark"},
		{"latin-1 byte in a string", "{\"a\":\"caf\xe9\"}", "is not UTF-8: invalid byte at byte 9"},
		{"truncated", `{"a":[1,2`, "is not JSON: unexpected end of input"},
		{"trailing data", `{} {}`, "is not JSON: unexpected data"},
		{"unclosed deep", strings.Repeat("[", 10001), "is not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckText([]byte(tc.in))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckText: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckText: %v, want %q", err, tc.want)
			}
		})
	}
	if json.Valid([]byte(deep)) {
		t.Log("encoding/json now reads 10 001 levels")
	}
}

// walkDecoded is the walk an encoding/json decode gives, for comparison.
func walkDecoded(p, key string, v any, out *[]string) {
	switch t := v.(type) {
	case []any:
		for i, e := range t {
			walkDecoded(p+"/"+strconv.Itoa(i), key, e, out)
		}
	case map[string]any:
		for k, e := range t {
			walkDecoded(Pointer(p, k), k, e, out)
		}
	default:
		b, _ := json.Marshal(t)
		*out = append(*out, p+" "+key+" "+string(b))
	}
}

func TestWalk(t *testing.T) {
	for _, doc := range []string{
		`"s"`, `1`, `{}`, `[]`, `{"a":{}}`, `[[],[[]],{}]`,
		`{"a":1,"b":[true,null,{"c":"x","d":[]}],"e~/f":"y"}`,
		` [ 1 , [ 2 , { "k" : [ "v" , 3 ] } ] , 4 ] `,
		`{"a":{"b":{"c":[{"d":"e"},{}]}},"f":[[["g"]]]}`,
		`{"a":{"u":"x"},"b":1,"a":{"v":"y","v":"z"},"c":[{"k":1,"k":{"deep":[2]}}],"a":[3,{"a":4,"b":5,"a":6}]}`,
		`{"\u0061":1,"a":2}`,
	} {
		var v any
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var want, got []string
		walkDecoded("/r", "", v, &want)
		if !Walk("/r", []byte(doc), func(at *Location, key string, raw []byte) {
			var x any
			d := json.NewDecoder(strings.NewReader(string(raw)))
			d.UseNumber()
			_ = d.Decode(&x)
			b, _ := json.Marshal(x)
			got = append(got, at.Pointer(0)+" "+key+" "+string(b))
		}) {
			t.Fatalf("Walk refused %s", doc)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", doc, got, want)
		}
	}
	if Walk("", []byte(`{"a":`), func(*Location, string, []byte) { t.Error("called on invalid JSON") }) {
		t.Error("Walk accepted invalid JSON")
	}
}

func TestWalkDeep(t *testing.T) {
	const n = 100000
	doc := strings.Repeat(`{"a":[`, n) + `"leak"` + strings.Repeat("]}", n)
	seen := 0
	Walk("", []byte(doc), func(at *Location, key string, v []byte) {
		seen++
		if at.Depth() != 2*n || key != "a" || string(v) != `"leak"` {
			t.Errorf("depth %d key %q value %s", at.Depth(), key, v)
		}
		p := at.Pointer(64)
		if len(p) > 64+len("…") || !strings.HasPrefix(p, "/a/0") || !strings.HasSuffix(p, "/a/0") || !strings.Contains(p, "/…/") {
			t.Errorf("pointer %q", p)
		}
	})
	if seen != 1 {
		t.Fatalf("walked %d values", seen)
	}
}

func TestFingerprint(t *testing.T) {
	same := func(a, b string) bool {
		x, okx := Fingerprint([]byte(a))
		y, oky := Fingerprint([]byte(b))
		return okx && oky && x == y
	}
	for _, tc := range []struct {
		a, b string
		eq   bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true},
		{`{"a":1}`, `{"a":1.0}`, true},
		{`{"a":1e2}`, `{"a":100}`, true},
		{`{"a":-0}`, `{"a":0}`, true},
		{`{"a":"\u00e9"}`, `{"a":"é"}`, true},
		{`{"a":1,"a":2}`, `{"a":2}`, true},
		{`{"a":[{}, []]}`, `{"a":[{},[]]}`, true},
		{`{"a":{"b":{}}}`, `{"a":{"b":{}},"c":1}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":"1"}`, `{"a":1}`, false},
		{`{"a":null}`, `{}`, false},
		{`{"a":[]}`, `{"a":{}}`, false},
		{`{"a":{"b":1}}`, `{"a":{"b":1},"b":1}`, false},
		{`[[1],2]`, `[[1,2]]`, false},
		{`{"ab":"c"}`, `{"a":"bc"}`, false},
		{`{"a":true}`, `{"a":"true"}`, false},
	} {
		if got := same(tc.a, tc.b); got != tc.eq {
			t.Errorf("%s vs %s: equal %v, want %v", tc.a, tc.b, got, tc.eq)
		}
		var x, y any
		if json.Unmarshal([]byte(tc.a), &x) == nil && json.Unmarshal([]byte(tc.b), &y) == nil {
			if reflect.DeepEqual(x, y) != tc.eq {
				t.Errorf("%s vs %s: the table disagrees with encoding/json", tc.a, tc.b)
			}
		}
	}
	deep := strings.Repeat(`{"a":[`, 20000) + "1" + strings.Repeat("]}", 20000)
	deep2 := strings.Repeat(`{ "a" : [ `, 20000) + "1.0" + strings.Repeat(" ] }", 20000)
	if !same(deep, deep2) {
		t.Error("two equal documents 40 000 levels deep differ")
	}
	if same(deep, strings.Replace(deep2, "1.0", "2", 1)) {
		t.Error("two different deep documents are equal")
	}
	if _, ok := Fingerprint([]byte(`{"a":`)); ok {
		t.Error("Fingerprint accepted invalid JSON")
	}
}

func TestDecodeIsExactCase(t *testing.T) {
	type inner struct {
		Name string          `json:"name"`
		Raw  json.RawMessage `json:"raw"`
	}
	var v struct {
		IsError bool     `json:"isError"`
		Status  string   `json:"status"`
		Tools   []inner  `json:"tools"`
		Ptr     *inner   `json:"ptr"`
		N       int64    `json:"n"`
		F       float64  `json:"f"`
		Any     any      `json:"any"`
		List    []string `json:"list"`
	}
	err := Decode([]byte(`{"isError":false,"IsError":true,"Status":"x","status":"a","status":"b","tools":[{"name":"t","NAME":"u","raw":{"k":1}}],"ptr":{"name":"p"},"n":7,"f":1.5,"any":"s","list":["a",1,"c"]}`), &v)
	if err == nil || !strings.Contains(err.Error(), "/list/1") {
		t.Errorf("Decode error %v, want the mismatch at /list/1", err)
	}
	if v.IsError || v.Status != "b" || len(v.Tools) != 1 || v.Tools[0].Name != "t" || string(v.Tools[0].Raw) != `{"k":1}` ||
		v.Ptr == nil || v.Ptr.Name != "p" || v.N != 7 || v.F != 1.5 || v.Any != "s" || len(v.List) != 3 || v.List[2] != "c" {
		t.Errorf("Decode = %+v", v)
	}
	var w struct {
		A string `json:"a"`
	}
	if Decode([]byte(`{"a":`), &w) == nil {
		t.Error("Decode accepted invalid JSON")
	}
	deep := `{"a":"x","b":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
	if err := Decode([]byte(deep), &w); err != nil || w.A != "x" {
		t.Errorf("Decode of a deep document: %v, %q", err, w.A)
	}
}

// FuzzWalkAndFingerprint: on any bytes Walk, Fingerprint, CheckText and
// Decode never panic; on JSON encoding/json reads, Walk visits the scalars
// its decode holds and Fingerprint agrees with its DeepEqual on the
// document re-encoded.
func FuzzWalkAndFingerprint(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",{"b":null}],"c":{}}`, `[[],[{}]]`, `"s"`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `{`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = CheckText(b)
		var v struct {
			A string   `json:"a"`
			B []any    `json:"b"`
			C *float64 `json:"c"`
		}
		_ = Decode(b, &v)
		n := 0
		walked := Walk("", b, func(*Location, string, []byte) { n++ })
		sum, ok := Fingerprint(b)
		if walked != Valid(b) || ok != Valid(b) {
			t.Fatalf("Walk %v, Fingerprint %v, Valid %v", walked, ok, Valid(b))
		}
		var x any
		if !ok || json.Unmarshal(b, &x) != nil {
			return
		}
		if want := scalars(x); n != want {
			t.Fatalf("Walk visited %d scalars of %s, encoding/json reads %d", n, b, want)
		}
		re, err := json.Marshal(x)
		if err != nil {
			return
		}
		if again, _ := Fingerprint(re); again != sum && !exponent.Match(b) {
			// (a number with an exponent may round differently when
			// encoding/json re-encodes it)
			t.Fatalf("Fingerprint of %s differs from its re-encoding %s", b, re)
		}
	})
}

// exponent finds a number written with an exponent.
var exponent = regexp.MustCompile(`[0-9][eE]`)

// scalars counts the scalar values of a decoded JSON value.
func scalars(v any) int {
	switch t := v.(type) {
	case []any:
		n := 0
		for _, e := range t {
			n += scalars(e)
		}
		return n
	case map[string]any:
		n := 0
		for _, e := range t {
			n += scalars(e)
		}
		return n
	}
	return 1
}
