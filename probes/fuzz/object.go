package fuzz

import (
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"sort"
)

// objPlan merges the object keywords of a plan's atoms.
type objPlan struct {
	atoms    []*node
	reqSet   map[string]bool
	declared []string // every property any atom declares, sorted
	forbid   map[string]bool
	must     map[string]bool    // included so a pushed-down negative applies
	childNeg map[string][]*node // negatives pushed down to a property's value
	minP     int
	maxP     int // -1: no bound
}

// genObject builds an object. An if/then/else whose if reads only some of
// the object's properties (a discriminator like "scenario") is decided by
// generating those properties first and evaluating the if on them; its
// then or else joins the plan, and the rest of the object follows, the
// properties read kept as they are.
func (st *state) genObject(p *plan, ptr string, depth int) (any, error) {
	fixed := map[string]any{}   // properties generated ahead
	absent := map[string]bool{} // properties decided absent ahead
	triggered := map[*node]bool{}
	for round := 0; round < 64; round++ {
		if len(p.pending) > 0 {
			// one conditional at a time, in a random order, but first those
			// whose if reads only required or settled properties (their
			// outcome barely depends on choices): a then may constrain what
			// a later if reads
			i := st.nextPending(p, fixed, absent)
			pend := []*node{p.pending[i]}
			p.pending = append(p.pending[:i:i], p.pending[i+1:]...)
			p.choices++
			only := map[string]bool{}
			for _, n := range pend {
				keys, _ := ifKeys(n.ifS)
				for _, k := range keys {
					if _, done := fixed[k]; !done && !absent[k] {
						only[k] = true
					}
				}
			}
			o := st.planObject(p, absent)
			inc, err := st.chooseKeys(p, o, ptr, depth, only, fixed)
			if err != nil {
				return nil, err
			}
			part, err := st.fillObject(o, inc, ptr, depth, fixed)
			if err != nil {
				return nil, err
			}
			for k := range only {
				if _, ok := part[k]; !ok {
					absent[k] = true
				}
			}
			for k, v := range part {
				fixed[k] = v
			}
			for _, n := range pend {
				branch := n.elsS
				if st.c.valid(n.ifS, fixed) {
					branch = n.thenS
				}
				if branch != nil {
					if err := st.expandPos(p, branch, ptr, 0); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		o := st.planObject(p, absent)
		if err := st.settleAnyReq(p, o, fixed, ptr); err != nil {
			return nil, err
		}
		inc, err := st.chooseKeys(p, o, ptr, depth, nil, fixed)
		if err != nil {
			return nil, err
		}
		// A schema dependency of an included property applies to the whole
		// object: add it to the plan and plan again.
		var more []*node
		for _, a := range o.atoms {
			for _, k := range a.depOrder {
				if s := a.depSchemas[k]; s != nil && inc[k] && !triggered[s] {
					triggered[s] = true
					more = append(more, s)
				}
			}
		}
		if len(more) == 0 {
			return st.fillObject(o, inc, ptr, depth, fixed)
		}
		p.check = true
		for _, s := range more {
			if err := st.expandPos(p, s, ptr, 0); err != nil {
				return nil, err
			}
		}
	}
	return nil, gaveUp(ptr, first(p.atoms), "conditionals and dependencies keep adding schemas")
}

// settleAnyReq meets each "at least one of these properties" anyOf once
// the conditionals have said what may not appear: one already present is
// enough, else a branch whose properties may all appear becomes required.
func (st *state) settleAnyReq(p *plan, o *objPlan, fixed map[string]any, ptr string) error {
	for _, n := range p.anyReq {
		var fits [][]string
		met := false
		for _, b := range n.anyOf {
			keys := b.resolve().required
			have, ok := true, true
			for _, k := range keys {
				_, done := fixed[k]
				have = have && (done || o.reqSet[k])
				ok = ok && st.allowed(o, k)
			}
			met = met || have
			if ok {
				fits = append(fits, keys)
			}
		}
		if met {
			continue
		}
		if len(fits) == 0 {
			return gaveUp(ptr, n, "no branch of anyOf has properties that may all appear")
		}
		p.choices++
		for _, k := range fits[st.r.intn(len(fits))] {
			o.reqSet[k] = true
		}
	}
	return nil
}

// nextPending picks the index of the pending conditional to decide next:
// first one whose if reads only required or settled properties (its outcome
// barely depends on choices), then one whose then or else requires a
// property another pending if reads (deciding it first keeps that if from
// being decided on a property about to change), else any.
func (st *state) nextPending(p *plan, fixed map[string]any, absent map[string]bool) int {
	req := map[string]bool{}
	for _, a := range p.atoms {
		for _, k := range a.required {
			req[k] = true
		}
	}
	reads := make([][]string, len(p.pending))
	for i, n := range p.pending {
		reads[i], _ = ifKeys(n.ifS)
	}
	best, picks := -1, []int(nil)
	for i, n := range p.pending {
		score := 0
		settled := true
		for _, k := range reads[i] {
			_, done := fixed[k]
			settled = settled && (req[k] || done || absent[k])
		}
		if settled {
			score += 2
		}
	feeds:
		for _, b := range []*node{n.thenS, n.elsS} {
			if b == nil {
				continue
			}
			for _, k := range b.resolve().required {
				for j := range p.pending {
					if j != i && contains(reads[j], k) {
						score++
						break feeds
					}
				}
			}
		}
		if score > best {
			best, picks = score, nil
		}
		if score == best {
			picks = append(picks, i)
		}
	}
	return picks[st.r.intn(len(picks))]
}

func (st *state) planObject(p *plan, absent map[string]bool) *objPlan {
	o := &objPlan{atoms: p.atoms, reqSet: map[string]bool{}, forbid: map[string]bool{}, must: map[string]bool{},
		childNeg: map[string][]*node{}, maxP: -1}
	for k := range absent {
		o.forbid[k] = true
	}
	seen := map[string]bool{}
	for _, a := range p.atoms {
		for _, k := range a.required {
			o.reqSet[k] = true
		}
		for _, k := range a.propKeys {
			if !seen[k] {
				seen[k] = true
				o.declared = append(o.declared, k)
			}
		}
		o.minP = max(o.minP, a.minProps)
		if a.maxProps >= 0 && (o.maxP < 0 || a.maxProps < o.maxP) {
			o.maxP = a.maxProps
		}
	}
	sort.Strings(o.declared)
	for _, n := range p.negs {
		st.pushNeg(p, o, n, 0)
	}
	return o
}

// allowed reports whether property k may appear: every closed atom
// (additionalProperties false) declares it or matches it by a pattern,
// every propertyNames accepts it, and no pushed-down negative forbids it.
func (st *state) allowed(o *objPlan, k string) bool {
	if o.forbid[k] {
		return false
	}
	for _, a := range o.atoms {
		if a.propNames != nil && !st.c.valid(a.propNames, k) {
			return false
		}
		if a.addl == nil {
			continue
		}
		if ad := a.addl.resolve(); ad.boolean == nil || *ad.boolean {
			continue
		}
		if _, ok := a.props[k]; ok || matchesPattern(a, k) {
			continue
		}
		return false
	}
	return true
}

func matchesPattern(a *node, k string) bool {
	for _, pp := range a.patProps {
		if pp.pat.match(k) {
			return true
		}
	}
	return false
}

// open reports whether no atom closes the object to undeclared names.
func (o *objPlan) open() bool {
	for _, a := range o.atoms {
		if a.addl != nil {
			if ad := a.addl.resolve(); ad.boolean != nil && !*ad.boolean {
				return false
			}
		}
	}
	return true
}

// pushNeg makes the object fail the negative n by a choice made now, where
// n's shape allows: leaving out a property n requires, failing every branch
// of n's anyOf, or giving a property a value n's subschema rejects. It
// reports whether it did; the validator checks the object either way.
func (st *state) pushNeg(p *plan, o *objPlan, n *node, depth int) bool {
	n = n.resolve()
	if n.boolean != nil {
		return !*n.boolean
	}
	if n.hasType && n.types&tObject == 0 {
		return true
	}
	if depth > 8 {
		return false
	}
	var free []string
	for _, k := range n.required {
		if !o.reqSet[k] && !o.must[k] {
			free = append(free, k)
		}
	}
	if len(free) > 0 {
		if len(free) > 1 {
			p.choices++
		}
		o.forbid[free[st.r.intn(len(free))]] = true
		return true
	}
	if len(n.anyOf) > 0 {
		all := true
		for _, b := range n.anyOf {
			all = st.pushNeg(p, o, b, depth+1) && all
		}
		if all {
			return true
		}
	}
	// a property to give a value the negative's subschema rejects: one the
	// object has anyway, an enum or const first (a discriminator)
	var cands, enums []string
	for _, k := range n.propKeys {
		if o.forbid[k] || !st.allowed(o, k) {
			continue
		}
		if !o.reqSet[k] && !o.must[k] && !contains(n.required, k) && len(n.required) > 0 {
			continue
		}
		cands = append(cands, k)
		if n.props[k].resolve().hasEnum {
			enums = append(enums, k)
		}
	}
	if len(enums) > 0 {
		cands = enums
	}
	if len(cands) == 0 {
		return false
	}
	k := cands[st.r.intn(len(cands))]
	p.choices++
	o.must[k] = true
	o.childNeg[k] = append(o.childNeg[k], n.props[k])
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// chooseKeys decides which properties the object gets: those generated
// ahead (fixed), the required ones, a random share of the optional ones
// (none, all, or about half; none past the size budget), what dependencies
// pull in, enough for minProperties, and sometimes one undeclared name
// where the schema is open. With only, it decides among those names alone.
func (st *state) chooseKeys(p *plan, o *objPlan, ptr string, depth int, only map[string]bool, fixed map[string]any) (map[string]bool, error) {
	inc := map[string]bool{}
	for k := range fixed {
		inc[k] = true
	}
	for _, k := range sortedKeys(o.reqSet) {
		if inc[k] || (only != nil && !only[k]) {
			continue
		}
		if !st.allowed(o, k) {
			if o.forbid[k] {
				return nil, gaveUp(ptr+"/"+rawjson.EscapeToken(k), first(o.atoms), "a negative schema's choice forbids required property %q", k)
			}
			return nil, unsat(ptr+"/"+rawjson.EscapeToken(k), first(o.atoms), "required property %q may not appear", k)
		}
		inc[k] = true
	}
	for _, k := range sortedKeys(o.must) {
		if st.allowed(o, k) && (only == nil || only[k]) {
			inc[k] = true
		}
	}
	if !st.minimal(depth) {
		mode := st.r.intn(8)
		for _, k := range o.declared {
			if inc[k] || !st.allowed(o, k) || (only != nil && !only[k]) {
				continue
			}
			if mode == 1 || (mode > 1 && st.r.chance(1, 2)) {
				inc[k] = true
			}
		}
		if only == nil && o.open() && st.r.chance(1, 10) {
			if k, ok := st.extraKey(o, inc, ptr, depth); ok {
				inc[k] = true
			}
		}
	}
	if err := st.closeDeps(o, inc, ptr); err != nil {
		return nil, err
	}
	if only != nil {
		return inc, nil
	}
	for len(inc) < o.minP {
		var opt []string
		for _, k := range o.declared {
			if !inc[k] && st.allowed(o, k) {
				opt = append(opt, k)
			}
		}
		k := ""
		if len(opt) > 0 {
			k = opt[st.r.intn(len(opt))]
		} else if x, ok := st.extraKey(o, inc, ptr, depth); ok {
			k = x
		} else {
			return nil, gaveUp(ptr, first(o.atoms), "found no property name toward minProperties %d", o.minP)
		}
		inc[k] = true
		if err := st.closeDeps(o, inc, ptr); err != nil {
			return nil, err
		}
	}
	for o.maxP >= 0 && len(inc) > o.maxP {
		var opt []string
		targets := o.depTargets(inc)
		for _, k := range sortedKeys(inc) {
			if _, ok := fixed[k]; o.optional(k) && !targets[k] && !ok {
				opt = append(opt, k)
			}
		}
		if len(opt) == 0 {
			return nil, unsat(ptr, first(o.atoms), "the properties the schema requires exceed maxProperties %d", o.maxP)
		}
		delete(inc, opt[st.r.intn(len(opt))])
	}
	return inc, nil
}

func (o *objPlan) optional(k string) bool { return !o.reqSet[k] && !o.must[k] }

// depTargets are the properties an included property's dependencies name.
func (o *objPlan) depTargets(inc map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, a := range o.atoms {
		for k, deps := range a.depKeys {
			if inc[k] {
				for _, d := range deps {
					out[d] = true
				}
			}
		}
	}
	return out
}

// closeDeps adds what the included properties' dependencies name, dropping
// an optional property whose dependency may not appear.
func (st *state) closeDeps(o *objPlan, inc map[string]bool, ptr string) error {
	for changed := true; changed; {
		changed = false
	scan:
		for _, k := range sortedKeys(inc) {
			for _, a := range o.atoms {
				for _, d := range a.depKeys[k] {
					if inc[d] {
						continue
					}
					if st.allowed(o, d) {
						inc[d], changed = true, true
						continue
					}
					if !o.optional(k) {
						return unsat(ptr+"/"+rawjson.EscapeToken(k), a, "property %q depends on %q, which may not appear", k, d)
					}
					delete(inc, k)
					changed = true
					break scan
				}
			}
		}
	}
	return nil
}

// extraNames are undeclared property names for open objects: a buyer may
// send them, and a seller must tolerate them.
var extraNames = []string{"x_conformance_probe", "ext_unknown", "zz_extra", "_debug", "unknown-field"}

// extraKey finds an undeclared property name the object allows.
func (st *state) extraKey(o *objPlan, inc map[string]bool, ptr string, depth int) (string, bool) {
	var pats []*pattern
	var names []*node
	for _, a := range o.atoms {
		for _, pp := range a.patProps {
			pats = append(pats, pp.pat)
		}
		if a.propNames != nil {
			names = append(names, a.propNames)
		}
	}
	for try := 0; try < 8; try++ {
		var k string
		switch {
		case len(pats) > 0 && (try%2 == 0 || !o.open()):
			k, _ = st.patternString(pats[st.r.intn(len(pats))], 1, 40, try)
		case len(names) > 0:
			v, err := st.value(conj{pos: names}, ptr, depth+1, tString)
			if err != nil {
				continue
			}
			k, _ = v.(string)
		default:
			k = extraNames[st.r.intn(len(extraNames))]
		}
		if k != "" && !inc[k] && !contains(o.declared, k) && st.allowed(o, k) {
			return k, true
		}
	}
	return "", false
}

// fillObject generates each included property's value; an optional one
// that cannot be generated is left out.
func (st *state) fillObject(o *objPlan, inc map[string]bool, ptr string, depth int, fixed map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(inc))
	targets := o.depTargets(inc)
	n := len(inc)
	for _, k := range sortedKeys(inc) {
		if v, ok := fixed[k]; ok {
			out[k] = v
			continue
		}
		c := conj{neg: o.childNeg[k], hint: k}
		for _, a := range o.atoms {
			matched := false
			if s, ok := a.props[k]; ok {
				c.pos, matched = append(c.pos, s), true
			}
			for _, pp := range a.patProps {
				if pp.pat.match(k) {
					c.pos, matched = append(c.pos, pp.n), true
				}
			}
			if !matched && a.addl != nil {
				c.pos = append(c.pos, a.addl)
			}
		}
		st.bytes += len(k) + 4
		v, err := st.value(c, ptr+"/"+rawjson.EscapeToken(k), depth+1, tAll)
		if err != nil {
			if o.optional(k) && !targets[k] && n > o.minP {
				n--
				continue
			}
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
