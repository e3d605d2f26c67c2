package schemas

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// widgetSet is a release of one list response: widgets of a string id, at
// most 100 of them.
func widgetSet(t *testing.T) *Set {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "9.2.0")
	for rel, body := range map[string]string{
		"core/error.json": `{"$id":"/schemas/9.2.0/core/error.json","type":"object","required":["code"],"properties":{"code":{"type":"string"}}}`,
		"media-buy/get-widgets-response.json": `{"$id":"/schemas/9.2.0/media-buy/get-widgets-response.json","type":"object","required":["widgets"],
			"properties":{"widgets":{"type":"array","maxItems":100,"items":{"type":"object","required":["widget_id","name","size"],"additionalProperties":false,
			"properties":{"widget_id":{"type":"string"},"name":{"type":"string"},"size":{"type":"integer"}}}},
			"tags":{"type":"array","items":{"type":"string"}}}}`,
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// widgets is a reply of n widgets, those bad(i) breaking the schema in
// four places each.
func widgets(n int, bad func(i int) bool) []byte {
	var b strings.Builder
	b.WriteString(`{"widgets":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if bad(i) {
			b.WriteString(`{"widget_id":7,"name":false,"x":1,"y":2}`)
		} else {
			fmt.Fprintf(&b, `{"widget_id":"w%d","name":"n","size":1}`, i)
		}
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// A reply of ten thousand items that each break the schema is validated
// in full for its verdict, and in detail for its first DetailItems items
// only: at most MaxViolations listed, the last one counting those beyond
// and saying which items were not listed; a few megabytes allocated, not
// the hundreds the validator's error tree would take.
func TestASchemaBombIsJudgedWholeAndListedBounded(t *testing.T) {
	s := widgetSet(t)
	doc := widgets(10000, func(int) bool { return true })
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	vs, err := s.Response("get_widgets", doc)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("%d violations listed, %d in all; %.1f MB allocated", len(vs), Total(vs), float64(alloc)/(1<<20))
	if len(vs) != MaxViolations {
		t.Fatalf("%d violations listed, want %d", len(vs), MaxViolations)
	}
	last := vs[len(vs)-1]
	if last.More == 0 || !strings.Contains(last.Unlisted, "/widgets holds 10000") {
		t.Errorf("the last violation says nothing of the rest: More %d, Unlisted %q", last.More, last.Unlisted)
	}
	if Total(vs) <= MaxViolations {
		t.Errorf("Total %d", Total(vs))
	}
	if alloc > 64<<20 {
		t.Errorf("%d MB allocated to validate the bomb", alloc>>20)
	}
}

// The verdict covers every item: a list whose only broken item is past
// the detailed ones, or that is too long as a whole, still breaks its
// schema, with one violation at the list saying so (or, when several
// lists were cut, at the member holding them, naming them); a sound list
// of the same length has none.
func TestAListBrokenPastItsDetailedItemsStillFails(t *testing.T) {
	s := widgetSet(t)
	withTags := func(doc []byte, bad int) []byte {
		tags := make([]string, 40)
		for i := range tags {
			tags[i] = fmt.Sprintf("%q", fmt.Sprint("t", i))
		}
		if bad >= 0 {
			tags[bad] = "7"
		}
		return []byte(strings.TrimSuffix(string(doc), "}") + `,"tags":[` + strings.Join(tags, ",") + `]}`)
	}
	past := fmt.Sprintf("past its first %d items", DetailItems)
	for _, c := range []struct {
		name string
		doc  []byte
		ptr  string // "" with msg "": no violation
		msg  string
	}{
		{"sound", widgets(90, func(int) bool { return false }), "", ""},
		{"sound, two long lists", withTags(widgets(90, func(int) bool { return false }), -1), "", ""},
		{"item 60 broken", widgets(90, func(i int) bool { return i == 60 }), "/widgets", "the list breaks the schema " + past + ", or as a whole: it holds 90 items"},
		{"too many items", widgets(150, func(int) bool { return false }), "/widgets", "it holds 150 items"},
		{"item 3 broken", widgets(90, func(i int) bool { return i == 3 }), "/widgets/3", ""},
		{"tag 30 broken beside a long list", withTags(widgets(90, func(int) bool { return false }), 30), "",
			"one of the 2 lists longer than 16 items breaks the schema " + past + ", or as a whole: /tags (40 items), /widgets (90 items)"},
	} {
		vs, err := s.Response("get_widgets", c.doc)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.ptr == "" && c.msg == "" {
			if len(vs) > 0 {
				t.Errorf("%s: violations %+v, want none", c.name, vs)
			}
			continue
		}
		if len(vs) == 0 {
			t.Errorf("%s: no violation: the document passed", c.name)
			continue
		}
		if vs[0].Pointer != c.ptr || !strings.Contains(vs[0].Message, c.msg) || vs[len(vs)-1].Unlisted == "" {
			t.Errorf("%s: %+v\nwant at %q a message holding %q, and Unlisted set", c.name, vs, c.ptr, c.msg)
		}
	}
}
