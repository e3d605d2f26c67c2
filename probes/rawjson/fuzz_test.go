package rawjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzStrictJSON compares the strict grammar with encoding/json's (below
// its nesting limit) and checks that a valid object's view re-finds every
// member.
func FuzzStrictJSON(f *testing.F) {
	for _, s := range strictCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		_, err := Scan(in)
		if bytes.Count(in, []byte("["))+bytes.Count(in, []byte("{")) < 9000 {
			if got, want := err == nil, json.Valid(in); got != want {
				t.Fatalf("Scan valid = %v (%v), encoding/json says %v", got, err, want)
			}
		}
		if err != nil {
			return
		}
		v := Trim(in)
		_ = stringifyLen(v)
		if KindOf(v) == KindObject {
			o := ObjectOf(v)
			for _, m := range o.Members() {
				if _, ok := o.Get(m.Key); !ok {
					t.Fatalf("member %q not found", m.Key)
				}
			}
		}
	})
}
