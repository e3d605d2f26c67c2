package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
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
	if !json.Valid(msg) && rawjson.Valid(msg) {
		return // deeper than the decoder reads (TestDeepReplyIsRead)
	}
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

// A valid reply nested deeper than encoding/json's 10 000 levels is still
// read: split, and matched to its request.
func TestDeepReplyIsRead(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	msg := []byte(`{"jsonrpc":"2.0","id":7,"result":{"structuredContent":{"x":` + deep + `}}}`)
	result, rpcErr, id, err := SplitResponse(msg)
	if err != nil || rpcErr != nil || string(id) != "7" || !strings.HasSuffix(string(result), "]}}") {
		t.Fatalf("SplitResponse: %v (id %s)", err, id)
	}
	if !isResponseTo(msg, json.RawMessage("7")) {
		t.Fatal("isResponseTo does not match the deep reply")
	}
	batch := []byte("[" + `{"jsonrpc":"2.0","method":"x"},` + string(msg) + "]")
	if m, ok := findInBody(batch, json.RawMessage("7")); !ok || len(m) != len(msg) {
		t.Fatal("findInBody does not find the deep reply in a batch")
	}
	if _, _, _, err := SplitResponse([]byte(`{"id":1,`)); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("SplitResponse of a cut reply: %v", err)
	}
}

// A repeated member's last value counts, as JSON.parse reads it: the reply
// is split, not dropped.
func TestSplitResponseRepeatedMember(t *testing.T) {
	result, _, id, err := SplitResponse([]byte(`{"jsonrpc":"2.0","id":1,"result":{"a":1},"result":{"b":2}}`))
	if err != nil || string(result) != `{"b":2}` || string(id) != "1" {
		t.Fatalf("SplitResponse: %s, id %s, %v", result, id, err)
	}
}
