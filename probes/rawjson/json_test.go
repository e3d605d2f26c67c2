package rawjson

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestObjectView(t *testing.T) {
	o, err := ParseObject([]byte(` {"a":null,"b":false,"c":"","d":0,"a":{"x":1},"A":2} `))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"a": `{"x":1}`, "b": `false`, "c": `""`, "d": `0`, "A": `2`} {
		v, ok := o.Get(key)
		if !ok || string(v) != want {
			t.Errorf("Get(%q) = %s, %v; want %s", key, v, ok, want)
		}
	}
	if v, ok := o.Get("e"); ok || v != nil {
		t.Errorf("Get(absent) = %s, %v", v, ok)
	}
	if o.Len() != 5 {
		t.Errorf("Len = %d, want 5 distinct keys", o.Len())
	}
	if !reflect.DeepEqual(o.Duplicates(), []string{"a"}) {
		t.Errorf("Duplicates = %v", o.Duplicates())
	}
	if len(o.Members()) != 6 || o.Members()[0].Key != "a" || string(o.Members()[0].Value) != "null" {
		t.Errorf("Members = %+v", o.Members())
	}
	if string(o.Raw()) != `{"a":null,"b":false,"c":"","d":0,"a":{"x":1},"A":2}` {
		t.Errorf("Raw = %s", o.Raw())
	}
	// Many keys take the map path of the duplicate count.
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		b.WriteString(`"k` + strconv.Itoa(i%30) + `":1,`)
	}
	b.WriteString(`"z":1}`)
	o, err = ParseObject([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if o.Len() != 31 || len(o.Duplicates()) != 10 {
		t.Errorf("Len = %d, duplicates = %d; want 31, 10", o.Len(), len(o.Duplicates()))
	}
}

func TestDecodeString(t *testing.T) {
	cases := []struct {
		in, want string
		flags    Irregular
	}{
		{`"plain"`, "plain", 0},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t", 0},
		{`"\u00e9\ud83d\ude00"`, "é😀", 0},
		{`"\ud800x"`, "\uFFFDx", LoneSurrogate},
		{`"\udc00\ud800"`, "\uFFFD\uFFFD", LoneSurrogate},
		{"\"a\xffb\"", "a\uFFFDb", InvalidUTF8},
	}
	for _, c := range cases {
		got, flags := DecodeString([]byte(c.in))
		if got != c.want || flags != c.flags {
			t.Errorf("DecodeString(%s) = %q, %b; want %q, %b", c.in, got, flags, c.want, c.flags)
		}
		if _, vf, err := scanString([]byte(c.in), 0); err != nil || vf != c.flags {
			t.Errorf("scanString(%s) flags = %b, %v; want %b", c.in, vf, err, c.flags)
		}
	}
}

// TestValidatorAgreesWithStdlib checks the strict grammar against
// encoding/json on a few edge cases (below encoding/json's depth limit).
func TestValidatorAgreesWithStdlib(t *testing.T) {
	for _, in := range strictCorpus {
		_, err := Scan([]byte(in))
		if got, want := err == nil, json.Valid([]byte(in)); got != want {
			t.Errorf("Scan(%q) valid = %v, encoding/json says %v (%v)", in, got, want, err)
		}
	}
}

var strictCorpus = []string{
	`{}`, `[]`, `0`, `-0`, `-`, `01`, `1.`, `.5`, `1e`, `1e+`, `1E-2`, `"\u00"`, `"\u00zz"`, "\"\t\"", `"\'"`,
	` {"a" : [ 1 , 2 ] } `, `{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{a:1}`, `tru`, `truex`, `nul`, `null null`,
	"\ufeff{}", "{}\x00", `"\ud800"`, "\"\xff\"", `[[[]]]`, `[[]`, `[]]`, `{"a":[}`, `{"a":{"b":[1,{"c":null}]}}`,
}
