package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

// decodedMembers is the reference eachMember is held to: the members a
// json.Decoder reads, keys unescaped, values as raw bytes; ok is false
// when msg is not one valid JSON object.
func decodedMembers(msg []byte) (keys []string, vals [][]byte, ok bool) {
	if !json.Valid(msg) {
		return nil, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, false
		}
		keys, vals = append(keys, tok.(string)), append(vals, raw)
	}
	return keys, vals, true
}

func checkMembers(t *testing.T, msg []byte) {
	wantKeys, wantVals, wantOK := decodedMembers(msg)
	var keys []string
	var vals [][]byte
	err := eachMember(msg, func(k string, v []byte) { keys, vals = append(keys, k), append(vals, v) })
	if (err == nil) != wantOK {
		t.Fatalf("%q: eachMember error %v, want ok=%v", msg, err, wantOK)
	}
	if len(keys) != len(wantKeys) {
		t.Fatalf("%q: keys %q, want %q", msg, keys, wantKeys)
	}
	for i := range keys {
		if keys[i] != wantKeys[i] || !bytes.Equal(vals[i], wantVals[i]) {
			t.Fatalf("%q: member %d is %q=%s, want %q=%s", msg, i, keys[i], vals[i], wantKeys[i], wantVals[i])
		}
	}
}

var memberCases = []string{
	`{}`, ` { } `, `{"id":1,"method":"x"}`, `{"id":"a\"b","result":{"x":[1,{"y":"}"}]},"error":null}`,
	`{"res\u0075lt":true,"id":-1.5e3}`, `{"a":1,"a":2}`, "{\n\t\"k\" :\r\n [ ] , \"l\":\"\\\\\"}",
	`[]`, `"x"`, `{"a":1} x`, `{"a":}`, `{"a":1,}`, `null`, ``, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
}

// TestEachMemberMatchesADecoder: on valid objects, invalid JSON and other
// values, eachMember reads the members a json.Decoder reads.
func TestEachMemberMatchesADecoder(t *testing.T) {
	for _, c := range memberCases {
		checkMembers(t, []byte(c))
	}
}

// FuzzEachMember holds eachMember to the decoder on any bytes.
func FuzzEachMember(f *testing.F) {
	for _, c := range memberCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, msg []byte) { checkMembers(t, msg) })
}
