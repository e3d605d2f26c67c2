package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// MaxFanOut caps the values one wildcard path resolves to, as the spec's
// refs_resolve text asks ("runners cap terminal fan-out at 10,000 values
// to bound malicious agent responses").
const MaxFanOut = 10_000

// Match is one value a path resolved to, with its RFC 6901 pointer.
type Match struct {
	Pointer string
	Value   any
}

// segment is one step of a path: a key, an index, or [*].
type Segment struct {
	Key   string
	Index int // -1 when the segment is a key or a wildcard
	Wild  bool
}

// parsePath reads the JSONPath-lite the storyboards use: dotted keys,
// [N] indexes, [*] wildcards, an optional "$" or "$." prefix and the
// standalone numeric tokens some SDK paths carry ("items.[0].id"). The
// empty path is the whole document.
func ParsePath(p string) ([]Segment, error) {
	p = strings.TrimPrefix(p, "$")
	p = strings.TrimPrefix(p, ".")
	var segs []Segment
	for p != "" {
		switch {
		case p[0] == '.':
			p = p[1:]
			if p == "" || p[0] == '.' {
				return nil, fmt.Errorf("empty path segment")
			}
		case p[0] == '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [")
			}
			in := p[1:end]
			p = p[end+1:]
			if in == "*" {
				segs = append(segs, Segment{Index: -1, Wild: true})
				continue
			}
			n, err := strconv.Atoi(in)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad index [%s]", in)
			}
			segs = append(segs, Segment{Index: n})
		default:
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			segs = append(segs, Segment{Key: p[:end], Index: -1})
			p = p[end:]
		}
	}
	return segs, nil
}

// Resolve returns the values path names in doc (a decoded JSON value:
// map[string]any, []any, string, float64, bool or nil). A path without
// wildcards resolves to at most one value; "[*]" fans out over arrays, at
// most MaxFanOut values. A key "length" that the object does not hold is
// the length of an array or string, as in JavaScript. A null value is a
// match (present and null); an absent one is not.
func Resolve(doc any, path string) ([]Match, error) {
	segs, err := ParsePath(path)
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", path, err)
	}
	cur := []Match{{Pointer: "", Value: doc}}
	for _, s := range segs {
		var next []Match
		for _, m := range cur {
			switch {
			case s.Wild:
				arr, ok := m.Value.([]any)
				if !ok {
					continue
				}
				for i, v := range arr {
					if len(next) >= MaxFanOut {
						break
					}
					next = append(next, Match{m.Pointer + "/" + strconv.Itoa(i), v})
				}
			case s.Index >= 0:
				if arr, ok := m.Value.([]any); ok && s.Index < len(arr) {
					next = append(next, Match{m.Pointer + "/" + strconv.Itoa(s.Index), arr[s.Index]})
				}
			default:
				switch v := m.Value.(type) {
				case map[string]any:
					if x, ok := v[s.Key]; ok {
						next = append(next, Match{m.Pointer + "/" + rawjson.EscapeToken(s.Key), x})
					}
				case []any:
					if s.Key == "length" {
						next = append(next, Match{m.Pointer + "/length", float64(len(v))})
					} else if n, err := strconv.Atoi(s.Key); err == nil && n >= 0 && n < len(v) {
						next = append(next, Match{m.Pointer + "/" + s.Key, v[n]})
					}
				case string:
					if s.Key == "length" {
						next = append(next, Match{m.Pointer + "/length", float64(len(utf16Units(v)))})
					}
				}
			}
		}
		cur = next
		if len(cur) == 0 {
			return nil, nil
		}
	}
	return cur, nil
}

// Lookup resolves a path without wildcards: the value and its pointer, or
// ok false when the path is absent.
func Lookup(doc any, path string) (v any, pointer string, ok bool) {
	ms, err := Resolve(doc, path)
	if err != nil || len(ms) == 0 {
		return nil, "", false
	}
	return ms[0].Value, ms[0].Pointer, true
}

// Pointer returns the RFC 6901 pointer a wildcard-free path names, whether
// or not it resolves: the place a missing field would be.
func Pointer(path string) string {
	segs, err := ParsePath(path)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		switch {
		case s.Wild:
			b.WriteByte('*')
		case s.Index >= 0:
			b.WriteString(strconv.Itoa(s.Index))
		default:
			b.WriteString(rawjson.EscapeToken(s.Key))
		}
	}
	return b.String()
}

func utf16Units(s string) []uint16 {
	var out []uint16
	for _, r := range s {
		if r >= 0x10000 {
			out = append(out, 0, 0)
			continue
		}
		out = append(out, 0)
	}
	return out
}

// Set writes v at a wildcard-free path in doc, creating objects (and
// extending arrays) on the way; it is how context_inputs inject a value
// into a built request.
func Set(doc map[string]any, path string, v any) error {
	segs, err := ParsePath(path)
	if err != nil {
		return fmt.Errorf("path %q: %w", path, err)
	}
	if len(segs) == 0 {
		return fmt.Errorf("path %q: cannot replace the whole request", path)
	}
	var cur any = doc
	for i, s := range segs {
		last := i == len(segs)-1
		if s.Wild {
			return fmt.Errorf("path %q: a wildcard cannot be written", path)
		}
		var next func() any
		var put func(any)
		switch c := cur.(type) {
		case map[string]any:
			if s.Index >= 0 {
				return fmt.Errorf("path %q: index on an object", path)
			}
			next, put = func() any { return c[s.Key] }, func(x any) { c[s.Key] = x }
		case []any:
			if s.Index < 0 || s.Index >= len(c) {
				return fmt.Errorf("path %q: index out of range", path)
			}
			next, put = func() any { return c[s.Index] }, func(x any) { c[s.Index] = x }
		default:
			return fmt.Errorf("path %q: cannot descend into a %T", path, cur)
		}
		if last {
			put(v)
			return nil
		}
		child := next()
		if child == nil {
			if segs[i+1].Index >= 0 {
				arr := make([]any, segs[i+1].Index+1)
				put(arr)
				child = arr
			} else {
				m := map[string]any{}
				put(m)
				child = m
			}
		}
		cur = child
	}
	return nil
}

// Normalize turns a decoded YAML or JSON value into the JSON data model:
// every number a float64, every map a map[string]any, every list a []any.
func Normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = Normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	}
	return v
}

// Equal is JSON deep equality over normalized values (numbers by value).
// Each side is normalized once; the walk is linear in the values' size.
func Equal(a, b any) bool { return equal(Normalize(a), Normalize(b)) }

func equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || (math.IsNaN(x) && math.IsNaN(y)))
	}
	return a == b
}

// DecodeJSON decodes raw JSON into the data model Resolve reads; nil for
// nil input.
func DecodeJSON(raw []byte) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Subset reports whether want (normalized, from the storyboard) matches
// got (from the seller) as a deep subset: an object's keys are all in got
// with matching values, an array's elements each match some element of
// got, scalars are equal (numbers by value).
func Subset(want, got any) bool { return subset(want, got, 0) }

// subset is Subset; depth bounds the walk by the storyboard's own
// nesting.
func subset(want, got any, depth int) bool {
	if depth > 64 {
		return false
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !subset(wv, gv, depth+1) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		for _, wv := range w {
			found := false
			for i, gv := range g {
				if i >= MaxFanOut {
					break
				}
				if subset(wv, gv, depth+1) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	switch got.(type) {
	case map[string]any, []any:
		return false
	}
	return Equal(want, got)
}

// Clip bounds an untrusted or authored string for a message.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
