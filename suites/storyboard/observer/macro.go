package observer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// The macro template: where each macro sits in a URL, and the values a
// tracker URL carries at those positions.

// macroPos is one macro position of the template: a path segment (index)
// or the n-th query pair of a key, with the fixed text around the macro,
// or the whole attribute value.
type macroPos struct {
	macro     string
	path      bool
	whole     bool
	index     int
	key       string
	n         int
	pre, post string
}

// macroTemplate is the step's macro_template, split.
type macroTemplate struct {
	parts urlParts
	raw   string
	segs  []string // the fixed path segments ("" at a macro segment)
	pos   []macroPos
	// whole is the macro when it is the whole template (an
	// href-whole-value binding, <a href="{CLICK}">): every attribute
	// value of the set is a candidate, and the kit's url_scheme_preserved
	// check applies.
	whole string
}

// parseMacroTemplate splits the template and finds the bound macros'
// positions: each in a path segment or a query value, once per
// component. A macro elsewhere (host, key, fragment) is not aligned by
// the kit's algorithm and is refused, as is a binding whose macro the
// template lacks.
func parseMacroTemplate(t string, bs []binding) (*macroTemplate, error) {
	p, s, ok := splitURL(t)
	if !ok {
		whole := strings.TrimSpace(t)
		for _, b := range bs {
			if b.Macro != whole {
				if slices.ContainsFunc(bs, func(b binding) bool { return b.Macro == whole }) {
					return nil, fmt.Errorf("a binding's macro %s is not in %q, a whole-value template", b.Macro, spec.Clip(t, 200))
				}
				return nil, fmt.Errorf("%q is not an absolute http(s) URL", spec.Clip(t, 200))
			}
		}
		return &macroTemplate{raw: t, whole: whole, pos: []macroPos{{macro: whole, whole: true}}}, nil
	}
	mt := &macroTemplate{parts: p, raw: s}
	macros := map[string]bool{}
	for _, b := range bs {
		macros[b.Macro] = true
	}
	find := func(comp string) (string, string, string, error) {
		var hit string
		for m := range macros {
			switch c := strings.Count(comp, m); {
			case c > 1:
				return "", "", "", fmt.Errorf("%s appears twice in one component %q", m, spec.Clip(comp, 80))
			case c == 1 && hit != "":
				return "", "", "", fmt.Errorf("two macros in one component %q", spec.Clip(comp, 80))
			case c == 1:
				hit = m
			}
		}
		if hit == "" {
			return "", "", "", nil
		}
		pre, post, _ := strings.Cut(comp, hit)
		return hit, pre, post, nil
	}
	for i, sp := range p.segs {
		seg := s[sp.lo:sp.hi]
		m, pre, post, err := find(seg)
		if err != nil {
			return nil, err
		}
		if m == "" {
			mt.segs = append(mt.segs, seg)
			continue
		}
		mt.segs = append(mt.segs, "")
		mt.pos = append(mt.pos, macroPos{macro: m, path: true, index: i, pre: pre, post: post})
	}
	seen := map[string]int{}
	for _, q := range p.query {
		n := seen[q.key]
		seen[q.key]++
		m, pre, post, err := find(s[q.val.lo:q.val.hi])
		if err != nil {
			return nil, err
		}
		if m != "" {
			mt.pos = append(mt.pos, macroPos{macro: m, key: q.key, n: n, pre: pre, post: post})
		}
	}
	placed := map[string]bool{}
	for _, mp := range mt.pos {
		placed[mp.macro] = true
	}
	for m := range macros {
		if !placed[m] {
			if strings.Contains(t, m) {
				return nil, fmt.Errorf("%s sits outside a path segment or query value, which the kit's alignment does not cover", m)
			}
			return nil, fmt.Errorf("a binding's macro %s is not in %q", m, spec.Clip(t, 200))
		}
	}
	return mt, nil
}

// observed is a value at a macro position of an aligned URL; rest is the
// URL from the value's start (for a raw leak cut short by a delimiter).
type observed struct {
	pos         macroPos
	url, attr   string
	value, rest string
}

// align returns the values at the template's macro positions in u, when
// u's scheme, host, port and fixed path segments are the template's. A
// whole-value template's position is the whole value, read as a browser's
// URL parser reads it: leading and trailing C0 controls and spaces
// stripped, tabs and newlines removed ("java\nscript:" is javascript:).
func (mt *macroTemplate) align(u trackerURL) []observed {
	if mt.whole != "" {
		v := strings.Trim(u.URL, c0OrSpace)
		v = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, v)
		return []observed{{pos: mt.pos[0], url: u.URL, attr: u.Tag + "@" + u.Attr, value: v, rest: v}}
	}
	p, s, ok := splitURL(u.URL)
	tp := mt.parts
	if !ok || p.scheme != tp.scheme || p.host != tp.host || p.port != tp.port || len(p.segs) != len(tp.segs) {
		return nil
	}
	for i, seg := range mt.segs {
		if seg != "" && s[p.segs[i].lo:p.segs[i].hi] != seg {
			return nil
		}
	}
	var out []observed
	add := func(mp macroPos, sp span, restEnd int) {
		v := s[sp.lo:sp.hi]
		if !strings.HasPrefix(v, mp.pre) || !strings.HasSuffix(v[len(mp.pre):], mp.post) {
			return
		}
		lo := sp.lo + len(mp.pre)
		out = append(out, observed{pos: mp, url: s, attr: u.Tag + "@" + u.Attr, value: s[lo : sp.hi-len(mp.post)], rest: s[lo:restEnd]})
	}
	for _, mp := range mt.pos {
		if mp.path {
			add(mp, p.segs[mp.index], p.segs[mp.index].hi)
			continue
		}
		n := 0
		for _, q := range p.query {
			if q.key != mp.key {
				continue
			}
			if n == mp.n {
				end := len(s)
				if h := strings.IndexByte(s[q.val.lo:], '#'); h >= 0 {
					end = q.val.lo + h
				}
				add(mp, q.val, end)
				break
			}
			n++
		}
	}
	return out
}
