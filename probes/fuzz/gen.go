package fuzz

import (
	"errors"
	"reflect"
)

// conj is what one value must satisfy: every pos schema and no neg schema.
// hint is the name of the property the value is for (an id pool matches
// it by name), or of the array property whose item it is.
type conj struct {
	pos, neg []*node
	hint     string
}

// plan is a conj with its combinators expanded by random choices: atoms are
// the schemas whose own keywords the value is built from, negs the schemas
// it must fail. check says the value needs the validator's word before it
// is kept, as some choice (a oneOf branch, an else path, a pushed-down not)
// is not guaranteed by construction.
type plan struct {
	atoms   []*node
	negs    []*node
	pending []*node // if/then/else decided by the object's own keys (see genObject)
	anyReq  []*node // anyOf of required-only branches, decided last (see genObject)
	choices int
	check   bool
}

// state generates one value.
type state struct {
	c       *compiler
	r       *rng
	opts    Options
	bytes   int // approximate size of what has been generated so far
	work    int // constructions attempted, bounded by maxWork
	maxWork int
	small   bool                // shrinking: strings and numbers as small as allowed
	names   map[string][]string // Fuzzer.entityNames
}

const triesPerValue = 6

// value generates a value satisfying c at ptr, retrying fresh choices when a
// construction fails the schema; want narrows the JSON types allowed.
func (st *state) value(c conj, ptr string, depth int, want types) (any, error) {
	var last error
	tries := triesPerValue
	if depth == 0 {
		tries *= 2 // a failure here loses the whole value
	}
	for attempt := 0; attempt < tries; attempt++ {
		if st.work++; st.work > st.maxWork {
			return nil, gaveUp(ptr, first(c.pos), "the work budget of one value is spent")
		}
		p, err := st.expand(c, ptr)
		if err == nil {
			var v any
			if v, err = st.construct(p, c.hint, ptr, depth, want); err == nil {
				if (!p.check && len(p.negs) == 0 && depth > 0) || st.accepts(c, v) {
					return v, nil
				}
				err = gaveUp(ptr, first(c.pos), "a generated value failed the schema")
			}
		}
		last = err
		if errors.Is(err, ErrUnsatisfiable) && (p == nil || p.choices == 0) {
			break // no choice of this level to change
		}
	}
	return nil, last
}

func first(ns []*node) *node {
	if len(ns) == 0 {
		return nil
	}
	return ns[0]
}

// accepts reports whether v satisfies c, by the validator.
func (st *state) accepts(c conj, v any) bool {
	for _, n := range c.pos {
		if !st.c.valid(n, v) {
			return false
		}
	}
	for _, n := range c.neg {
		if st.c.valid(n, v) {
			return false
		}
	}
	return true
}

func (st *state) expand(c conj, ptr string) (*plan, error) {
	p := &plan{negs: append([]*node(nil), c.neg...)}
	for _, n := range c.pos {
		if err := st.expandPos(p, n, ptr, 0); err != nil {
			return p, err
		}
	}
	return p, nil
}

// expandPos adds n to the plan: its own keywords as an atom, allOf as more
// atoms, one branch of anyOf and oneOf (the other oneOf branches as
// negatives), and one path of if/then/else.
func (st *state) expandPos(p *plan, n *node, ptr string, depth int) error {
	n = n.resolve()
	if depth > 48 {
		return gaveUp(ptr, n, "combinators nest past 48 levels")
	}
	if n.boolean != nil {
		if !*n.boolean {
			return unsat(ptr, n, "the false schema admits no value")
		}
		return nil
	}
	p.atoms = append(p.atoms, n)
	for _, a := range n.allOf {
		if err := st.expandPos(p, a, ptr, depth+1); err != nil {
			return err
		}
	}
	if len(n.anyOf) > 1 && requiredOnly(n.anyOf) && p.typeMask(tAll) == tObject {
		p.anyReq = append(p.anyReq, n)
		p.check = true
	} else if len(n.anyOf) > 0 {
		i, err := st.pick(p, n.anyOf, ptr, n)
		if err != nil {
			return err
		}
		p.check = p.check || len(n.anyOf) > 1
		if err := st.expandPos(p, n.anyOf[i], ptr, depth+1); err != nil {
			return err
		}
	}
	if len(n.oneOf) > 0 {
		i, err := st.pick(p, n.oneOf, ptr, n)
		if err != nil {
			return err
		}
		for j, b := range n.oneOf {
			if j != i {
				p.negs = append(p.negs, b)
			}
		}
		p.check = true
		if err := st.expandPos(p, n.oneOf[i], ptr, depth+1); err != nil {
			return err
		}
	}
	if n.not != nil {
		p.negs = append(p.negs, n.not)
		p.check = true
	}
	if n.ifS != nil && (n.thenS != nil || n.elsS != nil) {
		p.check = true
		if _, ok := ifKeys(n.ifS); ok && p.typeMask(tAll) == tObject {
			p.pending = append(p.pending, n)
			return nil
		}
		p.choices++
		if st.r.chance(1, 2) {
			if err := st.expandPos(p, n.ifS, ptr, depth+1); err != nil {
				return err
			}
			if n.thenS != nil {
				return st.expandPos(p, n.thenS, ptr, depth+1)
			}
			return nil
		}
		p.negs = append(p.negs, n.ifS)
		if n.elsS != nil {
			return st.expandPos(p, n.elsS, ptr, depth+1)
		}
	}
	return nil
}

// ifKeys returns the properties an if schema reads, when it reads nothing
// else of an object (properties, required, and combinators of those): its
// outcome is then fixed once those properties are.
func ifKeys(n *node) ([]string, bool) {
	seen := map[string]bool{}
	var walk func(n *node, depth int) bool
	walk = func(n *node, depth int) bool {
		n = n.resolve()
		if n.boolean != nil {
			return true
		}
		if depth > 8 || n.hasEnum || n.addl != nil || n.patProps != nil || n.propNames != nil || n.minProps > 0 ||
			n.maxProps >= 0 || n.depOrder != nil || n.ifS != nil {
			return false
		}
		for _, k := range append(append([]string(nil), n.propKeys...), n.required...) {
			seen[k] = true
		}
		for _, alts := range [][]*node{n.allOf, n.anyOf, n.oneOf} {
			for _, b := range alts {
				if !walk(b, depth+1) {
					return false
				}
			}
		}
		return n.not == nil || walk(n.not, depth+1)
	}
	if !walk(n, 0) {
		return nil, false
	}
	return sortedKeys(seen), true
}

// requiredOnly reports whether every branch only requires properties
// ("at least one of these").
func requiredOnly(branches []*node) bool {
	for _, b := range branches {
		b = b.resolve()
		if b.boolean != nil || len(b.required) == 0 || b.props != nil || b.patProps != nil || b.addl != nil ||
			b.propNames != nil || b.hasEnum || len(b.allOf)+len(b.anyOf)+len(b.oneOf) > 0 || b.not != nil ||
			b.ifS != nil || b.depOrder != nil || (b.hasType && b.types != tObject) {
			return false
		}
	}
	return true
}

// pick chooses a branch whose types meet the plan's so far.
func (st *state) pick(p *plan, branches []*node, ptr string, parent *node) (int, error) {
	have := p.typeMask(tAll)
	var ok []int
	for i, b := range branches {
		if staticTypes(b, 0)&have != 0 {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return 0, unsat(ptr, parent, "no branch fits the types the other schemas allow")
	}
	if len(ok) > 1 {
		p.choices++
	}
	return ok[st.r.intn(len(ok))], nil
}

// typeMask is the set of types every atom allows.
func (p *plan) typeMask(want types) types {
	m := want
	for _, a := range p.atoms {
		if a.hasType {
			m &= a.types
		}
		if a.hasEnum {
			m &= enumTypes(a.enum)
		}
	}
	return m
}

func enumTypes(vs []any) types {
	var m types
	for _, v := range vs {
		m |= typeOf(v)
	}
	return m
}

// staticTypes is the set of types a schema can possibly accept, read from
// its type, enum and combinators without generating anything.
func staticTypes(n *node, depth int) types {
	n = n.resolve()
	if n.boolean != nil {
		if *n.boolean {
			return tAll
		}
		return 0
	}
	m := tAll
	if n.hasType {
		m &= n.types
	}
	if n.hasEnum {
		m &= enumTypes(n.enum)
	}
	if depth > 6 {
		return m
	}
	for _, a := range n.allOf {
		m &= staticTypes(a, depth+1)
	}
	for _, alts := range [][]*node{n.anyOf, n.oneOf} {
		if len(alts) > 0 {
			var u types
			for _, b := range alts {
				u |= staticTypes(b, depth+1)
			}
			m &= u
		}
	}
	return m
}

// construct builds one value from a plan's atoms.
func (st *state) construct(p *plan, hint, ptr string, depth int, want types) (any, error) {
	mask := p.typeMask(want)
	if mask == 0 {
		return nil, unsat(ptr, first(p.atoms), "no JSON type satisfies every schema here")
	}
	if depth > st.opts.MaxDepth+32 {
		return nil, gaveUp(ptr, first(p.atoms), "nesting goes past the depth budget")
	}
	for _, a := range p.atoms {
		if a.hasEnum {
			return st.pickEnum(p, mask, ptr)
		}
	}
	switch st.chooseType(p, mask, depth) {
	case tNull:
		st.bytes += 4
		return nil, nil
	case tBool:
		st.bytes += 5
		return st.r.chance(1, 2), nil
	case tString:
		return st.genString(p, hint, ptr)
	case tNumber, tInteger:
		return st.genNumber(p, mask, ptr)
	case tArray:
		return st.genArray(p, hint, ptr, depth)
	default:
		return st.genObject(p, ptr, depth)
	}
}

// minimal reports whether the size budget is spent at this depth: past it
// only what the schema requires is generated.
func (st *state) minimal(depth int) bool {
	return depth >= st.opts.MaxDepth || st.bytes >= st.opts.MaxBytes
}

// chooseType picks one type of mask: the one the atoms' keywords point at
// when they do, otherwise any, null and containers less often.
func (st *state) chooseType(p *plan, mask types, depth int) types {
	var hinted types
	for _, a := range p.atoms {
		if a.hasObjKW {
			hinted |= tObject
		}
		if a.hasArrKW {
			hinted |= tArray
		}
		if a.hasStrKW {
			hinted |= tString
		}
		if a.hasNumKW {
			hinted |= tNumber | tInteger
		}
	}
	if h := hinted & mask; h != 0 && st.r.chance(3, 4) {
		mask = h
	}
	var opts []types
	for _, t := range []types{tString, tInteger, tNumber, tBool, tObject, tArray, tNull} {
		if mask&t == 0 || (t == tNumber && mask&tInteger != 0) {
			continue
		}
		w := 3
		if t == tNull || (t&(tObject|tArray) != 0 && st.minimal(depth)) {
			w = 1
		}
		for i := 0; i < w; i++ {
			opts = append(opts, t)
		}
	}
	t := opts[st.r.intn(len(opts))]
	if t == tInteger && mask&tNumber != 0 {
		return tNumber // genNumber decides between whole and fractional
	}
	return t
}

// pickEnum picks one of the values every enum and const allows that the
// whole plan accepts.
func (st *state) pickEnum(p *plan, mask types, ptr string) (any, error) {
	var cands []any
	seen := false
	for _, a := range p.atoms {
		if !a.hasEnum {
			continue
		}
		if !seen {
			cands, seen = append([]any(nil), a.enum...), true
			continue
		}
		kept := cands[:0]
		for _, v := range cands {
			for _, w := range a.enum {
				if reflect.DeepEqual(v, w) {
					kept = append(kept, v)
					break
				}
			}
		}
		cands = kept
	}
	var ok []any
	for _, v := range cands {
		if typeOf(v)&mask == 0 {
			continue
		}
		if st.plainAccepts(p, v) {
			ok = append(ok, v)
		}
	}
	if len(ok) == 0 {
		return nil, unsat(ptr, first(p.atoms), "no enum or const value satisfies every schema here")
	}
	if len(ok) > 1 {
		p.choices++
	}
	v := ok[st.r.intn(len(ok))]
	st.bytes += len(marshalString(v))
	return v, nil
}

// plainAccepts reports whether a leaf value satisfies every atom and fails
// every negative of the plan, by the validator.
func (st *state) plainAccepts(p *plan, v any) bool {
	for _, a := range p.atoms {
		if !st.c.valid(a, v) {
			return false
		}
	}
	for _, n := range p.negs {
		if st.c.valid(n, v) {
			return false
		}
	}
	return true
}
