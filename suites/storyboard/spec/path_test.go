package spec_test

import (
	"testing"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

func TestAtPointer(t *testing.T) {
	doc := spec.Normalize(map[string]any{"a": []any{"x", map[string]any{"b/c": "y", "d~e": "z"}}, "": "empty"})
	for _, c := range []struct {
		ptr  string
		want any
		ok   bool
	}{
		{"/a/0", "x", true},
		{"/a/1/b~1c", "y", true},
		{"/a/1/d~0e", "z", true},
		{"/", "empty", true},
		{"/a/2", nil, false},
		{"/a/01", nil, false},
		{"/a/-0", nil, false},
		{"/a/+1", nil, false},
		{"/a/", nil, false},
		{"a", nil, false},
		{"/a/0/x", nil, false},
	} {
		got, ok := spec.AtPointer(doc, c.ptr)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("AtPointer(%q) = %v, %v; want %v, %v", c.ptr, got, ok, c.want, c.ok)
		}
	}
}
