package fuzz

import (
	"fmt"
)

// genArray builds an array: a length biased to minItems and maxItems,
// each item from the items/tuple schemas of every atom, one item (within
// the first minItems) also from contains, and items redrawn while
// uniqueItems finds a duplicate.
func (st *state) genArray(p *plan, hint, ptr string, depth int) (any, error) {
	minI, maxI, unique := 0, -1, false
	var contains []*node
	for _, a := range p.atoms {
		minI = max(minI, a.minItems)
		if a.maxItems >= 0 && (maxI < 0 || a.maxItems < maxI) {
			maxI = a.maxItems
		}
		// a tuple closed by additionalItems: false bounds the length
		if a.tuple != nil && a.addItems != nil {
			if ad := a.addItems.resolve(); ad.boolean != nil && !*ad.boolean && (maxI < 0 || len(a.tuple) < maxI) {
				maxI = len(a.tuple)
			}
		}
		unique = unique || a.unique
		if a.contains != nil {
			contains = append(contains, a.contains)
		}
	}
	if len(contains) > 0 {
		minI = max(minI, 1)
		p.check = true
	}
	if maxI >= 0 && minI > maxI {
		return nil, unsat(ptr, first(p.atoms), "minItems %d exceeds maxItems %d", minI, maxI)
	}
	n := st.arrayLen(minI, maxI, depth)
	at := -1
	if len(contains) > 0 {
		at = st.r.intn(max(minI, 1))
	}
	out := make([]any, 0, n)
	seen := map[string]bool{}
	st.bytes += 2
	for i := 0; i < n; i++ {
		c := conj{hint: hint}
		for _, a := range p.atoms {
			switch {
			case a.tuple != nil && i < len(a.tuple):
				c.pos = append(c.pos, a.tuple[i])
			case a.tuple != nil:
				if a.addItems != nil {
					c.pos = append(c.pos, a.addItems)
				}
			case a.items != nil:
				c.pos = append(c.pos, a.items)
			}
		}
		if i == at {
			c.pos = append(c.pos, contains...)
		}
		iptr := fmt.Sprintf("%s/%d", ptr, i)
		var v any
		var err error
		for redraw := 0; redraw < 6; redraw++ {
			if v, err = st.value(c, iptr, depth+1, tAll); err != nil || !unique || !seen[marshalString(v)] {
				break
			}
			err = gaveUp(iptr, first(p.atoms), "uniqueItems: every redraw repeated an earlier item")
		}
		if err != nil {
			if i >= minI && i != at {
				break // a shorter array is still valid
			}
			return nil, err
		}
		if unique {
			seen[marshalString(v)] = true
		}
		out = append(out, v)
		st.bytes++
	}
	return out, nil
}

// arrayLen picks a length in [minI, maxI] (maxI < 0: unbounded): the
// minimum past the size budget, otherwise the bounds or a few over the
// minimum.
func (st *state) arrayLen(minI, maxI, depth int) int {
	if st.minimal(depth) {
		return minI
	}
	hi := minI + 4
	if maxI >= 0 && maxI < hi {
		hi = maxI
	}
	switch st.r.intn(8) {
	case 0, 1:
		return minI
	case 2:
		if maxI >= 0 && maxI <= minI+32 {
			return maxI
		}
		return min(minI+8, hi+4)
	}
	return st.r.between(minI, hi)
}
