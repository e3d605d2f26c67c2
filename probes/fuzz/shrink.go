package fuzz

import (
	"encoding/json"
	"errors"
	"math/big"
	"sort"
	"strings"
)

// ShrinkOptions bound a shrink.
type ShrinkOptions struct {
	// MaxCalls bounds the calls of the predicate. Default 400.
	MaxCalls int
}

// ShrinkStats says what a shrink cost.
type ShrinkStats struct {
	Calls int // predicate calls, the first (on the value given) included
	Steps int // replacements kept
}

// Shrink reduces a failing value: while the predicate still fails and the
// budget lasts, it tries simpler values, each schema-valid, and keeps the
// first that still fails — dropping a property, shortening an array to its
// first half, its minimum or one item less, shortening a string, moving a
// number toward 0 or its bound, and regenerating a part as the smallest
// value its schema admits (several seeds, so a simpler oneOf branch gets
// its turn). "Simpler" is shorter JSON, then the lexicographically smaller
// encoding, so a shrink always ends. The same value and predicate give the
// same result. fails must be deterministic.
func (t *Task) Shrink(v any, fails func(any) bool, opts ShrinkOptions) (any, ShrinkStats, error) {
	if opts.MaxCalls <= 0 {
		opts.MaxCalls = 400
	}
	var stats ShrinkStats
	if !t.Valid(v) {
		return v, stats, errors.New("shrink: the value is not valid against the request schema")
	}
	stats.Calls++
	if !fails(v) {
		return v, stats, errors.New("shrink: the predicate does not fail on the value")
	}
	cur, curKey := v, sizeKey(v)
	validations, maxValidations := 0, 40*opts.MaxCalls
	// Passes over every position; after a kept replacement the next pass
	// starts where it happened (positions before it were just tried), and
	// the shrink ends after a full pass keeps nothing.
	start := 0
	for improved := true; improved && stats.Calls < opts.MaxCalls && validations < maxValidations; {
		improved = false
		ps := paths(cur)
	scan:
		for j := range ps {
			at := (start + j) % len(ps)
			for _, cand := range t.candidates(cur, ps[at]) {
				next := setAt(cur, ps[at], cand)
				key := sizeKey(next)
				if !key.less(curKey) {
					continue
				}
				if validations++; validations > maxValidations {
					break scan
				}
				if !t.Valid(next) {
					continue
				}
				stats.Calls++
				if fails(next) {
					cur, curKey, improved, start = next, key, true, at
					stats.Steps++
					break scan
				}
				if stats.Calls >= opts.MaxCalls {
					break scan
				}
			}
		}
	}
	return cur, stats, nil
}

type key struct {
	n int
	s string
}

func sizeKey(v any) key { s := marshalString(v); return key{len(s), s} }

func (a key) less(b key) bool { return a.n < b.n || (a.n == b.n && a.s < b.s) }

// step is one move into a value: a property name or an array index.
type step struct {
	k     string
	i     int
	index bool
}

// paths lists every position of v, the root first, parents before
// children, properties in name order.
func paths(v any) [][]step {
	var out [][]step
	var walk func(v any, at []step)
	walk = func(v any, at []step) {
		out = append(out, append([]step(nil), at...))
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				walk(x[k], append(at, step{k: k}))
			}
		case []any:
			for i, c := range x {
				walk(c, append(at, step{i: i, index: true}))
			}
		}
	}
	walk(v, nil)
	return out
}

func getAt(v any, path []step) any {
	for _, s := range path {
		if s.index {
			v = v.([]any)[s.i]
		} else {
			v = v.(map[string]any)[s.k]
		}
	}
	return v
}

// setAt returns v with the value at path replaced, copying only the
// containers on the way; x of type deleted removes the property instead.
func setAt(v any, path []step, x any) any {
	if len(path) == 0 {
		return x
	}
	s := path[0]
	if s.index {
		a := append([]any(nil), v.([]any)...)
		a[s.i] = setAt(a[s.i], path[1:], x)
		return a
	}
	m := make(map[string]any, len(v.(map[string]any)))
	for k, c := range v.(map[string]any) {
		m[k] = c
	}
	if _, del := x.(deleted); del && len(path) == 1 {
		delete(m, s.k)
		return m
	}
	m[s.k] = setAt(m[s.k], path[1:], x)
	return m
}

// deleted marks a property removal for setAt.
type deleted struct{}

// candidates lists the simpler values tried at path, simplest first.
func (t *Task) candidates(root any, path []step) []any {
	x := getAt(root, path)
	var out []any
	if len(path) > 0 && !path[len(path)-1].index {
		out = append(out, deleted{})
	}
	switch v := x.(type) {
	case map[string]any:
		out = append(out, map[string]any{})
	case []any:
		out = append(out, []any{})
		if len(v) > 1 {
			out = append(out, v[:len(v)/2], v[:len(v)-1], v[1:])
		}
	case string:
		r := []rune(v)
		out = append(out, "", string(r[:len(r)/2]))
		if len(r) > 0 {
			out = append(out, string(r[:len(r)-1]), strings.Repeat("a", len(r)))
		}
	case bool:
		out = append(out, false)
	}
	out = append(out, numberSteps(x)...)
	// the smallest values the schema admits here, from a few seeds
	if pos := t.schemaAt(root, path); len(pos) > 0 {
		var mins []any
		for seed := uint64(0); seed < 4; seed++ {
			// MaxDepth 0: only what the schema requires, everywhere
			st := &state{c: t.f.c, r: newRNG(seed), opts: Options{MaxDepth: 0, MaxBytes: 1}, maxWork: maxWork / 10, small: true}
			if m, err := st.value(conj{pos: pos}, "", 1, tAll); err == nil {
				mins = append(mins, m)
			}
		}
		sort.SliceStable(mins, func(i, j int) bool { return sizeKey(mins[i]).less(sizeKey(mins[j])) })
		out = append(out, mins...)
	}
	return out
}

// numberSteps moves a number toward 0: 0, 1, its whole part, half of
// that, one closer to 0.
func numberSteps(x any) []any {
	n, ok := x.(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	whole := truncRat(r)
	closer := new(big.Int).Sub(whole, big.NewInt(int64(whole.Sign())))
	var out []any
	for _, c := range []*big.Int{big.NewInt(0), big.NewInt(1), whole, new(big.Int).Quo(whole, big.NewInt(2)), closer} {
		out = append(out, jsonNumber(new(big.Rat).SetInt(c)))
	}
	return out
}

func truncRat(r *big.Rat) *big.Int { return new(big.Int).Quo(r.Num(), r.Denom()) }

// schemaAt returns the schemas the value at path answers to, following the
// branches of the value's ancestors that the ancestors satisfy.
func (t *Task) schemaAt(root any, path []step) []*node {
	pos := []*node{t.root}
	v := root
	for _, s := range path {
		atoms := t.f.c.annotate(pos, v)
		var next []*node
		for _, a := range atoms {
			if s.index {
				switch {
				case a.tuple != nil && s.i < len(a.tuple):
					next = append(next, a.tuple[s.i])
				case a.tuple != nil && a.addItems != nil:
					next = append(next, a.addItems)
				case a.items != nil:
					next = append(next, a.items)
				}
				continue
			}
			matched := false
			if c, ok := a.props[s.k]; ok {
				next, matched = append(next, c), true
			}
			for _, pp := range a.patProps {
				if pp.pat.match(s.k) {
					next, matched = append(next, pp.n), true
				}
			}
			if !matched && a.addl != nil {
				next = append(next, a.addl)
			}
		}
		pos, v = next, getAt(v, []step{s})
	}
	return pos
}

// annotate expands combinators the way v satisfies them: every allOf, the
// anyOf and oneOf branches v is valid against, then or else as v meets the
// if.
func (c *compiler) annotate(pos []*node, v any) []*node {
	var atoms []*node
	var add func(n *node, depth int)
	add = func(n *node, depth int) {
		n = n.resolve()
		if n.boolean != nil || depth > 48 {
			return
		}
		atoms = append(atoms, n)
		for _, a := range n.allOf {
			add(a, depth+1)
		}
		for _, alts := range [][]*node{n.anyOf, n.oneOf} {
			for _, b := range alts {
				if c.valid(b, v) {
					add(b, depth+1)
				}
			}
		}
		if n.ifS != nil {
			if c.valid(n.ifS, v) {
				if n.thenS != nil {
					add(n.thenS, depth+1)
				}
			} else if n.elsS != nil {
				add(n.elsS, depth+1)
			}
		}
	}
	for _, n := range pos {
		add(n, 0)
	}
	return atoms
}

func jsonNumber(r *big.Rat) any { return json.Number(decimal(r)) }
