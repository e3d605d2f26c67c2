package evidence

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/leakcheck"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

const redactSecret = "ev/Secret+Tok3n-42"

// leakyTexts are the secret as a recorder may hold it: as sent, upper-
// cased, JSON-escaped (PHP's \/ and \u escapes), as HTML references, URL-
// escaped.
var leakyTexts = []string{redactSecret, "EV/SECRET+TOK3N-42", `ev\/Secr\u0065t\u002bTok3n-42`, "ev&#47;Secret&plus;Tok3n-42", "ev%2FSecret%2BTok3n-42"}

// fill sets every string, byte slice and string slice reachable in v (a
// pointer to a struct), through slices, maps and pointers, to texts
// holding the secret: JSON members get a JSON document.
func fill(v reflect.Value, n *int) {
	text := func() string {
		*n++
		return "seen " + leakyTexts[*n%len(leakyTexts)]
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.String:
		v.SetString(text())
	case reflect.Slice:
		switch {
		case v.Type().Elem().Kind() == reflect.Uint8:
			b, _ := json.Marshal(map[string]string{"m": text()})
			v.SetBytes(b)
		default:
			s := reflect.MakeSlice(v.Type(), 2, 2)
			for i := range 2 {
				fill(s.Index(i), n)
			}
			v.Set(s)
		}
	case reflect.Map:
		if v.Type() == reflect.TypeOf(http.Header{}) {
			v.Set(reflect.ValueOf(http.Header{"X-Echo": {text(), text()}, "X-" + redactSecret[:2]: {text()}}))
		}
	}
}

// TestAddRedactsEveryText fills every text of a call (each string field,
// raw JSON member, exchange field, header and event, found by reflection,
// so a field added later is filled too) with the secret in each of its
// forms: the call Add returns and the one the store holds hold it in no
// reading (internal/leakcheck), and its raw members stay valid JSON.
func TestAddRedactsEveryText(t *testing.T) {
	var c Call
	n := 0
	fill(reflect.ValueOf(&c), &n)
	if where := leakcheck.Find(mustJSON(t, c), []string{redactSecret}); where == "" {
		t.Fatal("the filled call holds no secret: the test proves nothing")
	}
	s := NewStore(Target{}, redactSecret)
	got := s.Add(c)
	stored, _ := s.Call(got.ProbeID)
	for what, call := range map[string]Call{"returned": got, "stored": stored} {
		if where := leakcheck.Find(mustJSON(t, call), []string{redactSecret}); where != "" {
			t.Errorf("the %s call holds the secret: %s", what, where)
		}
		for _, m := range rawMembers(&call) {
			if !json.Valid(*m.v) {
				t.Errorf("the %s call's raw member %s is no longer JSON: %s", what, m.name, *m.v)
			}
		}
	}
	if got.HarnessError != "seen "+wire.Redacted || string(got.Arguments) != `{"m":"seen `+wire.Redacted+`"}` {
		t.Errorf("harness error %q, arguments %s: want each text's secret replaced by %s", got.HarnessError, got.Arguments, wire.Redacted)
	}
}

func mustJSON(t *testing.T, c Call) []byte {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
