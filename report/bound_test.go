package report

import (
	"encoding/json"
	"strings"
	"testing"
)

// Embed keeps a small, shallow payload as it is and stands an elided
// object, which every JSON reader loads, for one nested past 64 levels
// (10 001 is past encoding/json's own limit), one over 64 KiB, or one that
// is not JSON; each keeps its text (the first 64 KiB), size and hash.
func TestEmbedBoundsDepthAndSize(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		name, payload string
		kept          bool
		depth         int
	}{
		{"small", `{"a":[1,2]}`, true, 0},
		{"64 levels", deep(64), true, 0},
		{"70 levels", deep(70), false, 70},
		{"10 001 levels", deep(10001), false, 10001},
		{"over 64 KiB", `"` + strings.Repeat("x", 70<<10) + `"`, false, 0},
		{"not JSON", `{"a":`, false, 0},
	} {
		got := Embed(json.RawMessage(c.payload))
		if c.kept {
			if string(got) != c.payload {
				t.Errorf("%s: not kept as it is: %.80s", c.name, got)
			}
			continue
		}
		var e map[string]Elided
		if err := json.Unmarshal(got, &e); err != nil {
			t.Fatalf("%s: %v: %.200s", c.name, err, got)
		}
		el := e[ElidedKey]
		if el.Bytes != len(c.payload) || len(el.SHA256) != 64 || (c.depth > 0) != (el.Depth > 64) || el.Note == "" ||
			!strings.HasPrefix(c.payload, el.Excerpt) || len(el.Excerpt)+el.ExcerptElided != len(c.payload) || len(el.Excerpt) > MaxEmbeddedBytes {
			t.Errorf("%s: %+v", c.name, el)
		}
	}
}

// The writers lay out JSON nested at most 64 levels and show anything
// deeper as its text behind a note, in time linear in its size.
func TestWritersShowDeepJSONAsText(t *testing.T) {
	deep := []byte(strings.Repeat("[", 5000) + strings.Repeat("]", 5000))
	if s := indentBounded(deep); !strings.HasPrefix(s, "(nested ") || len(s) > 11000 {
		t.Errorf("junit: %.100s (%d bytes)", s, len(s))
	}
	if s := rawValue(deep); !strings.HasPrefix(s, "(nested ") {
		t.Errorf("junit value: %.100s", s)
	}
	if segs := readable(deep, maxValueText); len(segs) != 1 || !strings.HasPrefix(segs[0].T, "(nested ") {
		t.Errorf("html: %+v", segs)
	}
}
