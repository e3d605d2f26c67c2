package fuzz

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"unicode/utf8"
)

// genString builds a string: from an id pool when the schema names an
// entity (x-entity) or the property is named after one, else from a
// format, a pattern, or a plain alphabet, and keeps the first candidate
// the whole plan accepts.
func (st *state) genString(p *plan, hint, ptr string) (any, error) {
	minL, maxL := 0, -1
	var pats []*pattern
	var formats []string
	entity := ""
	for _, a := range p.atoms {
		minL = max(minL, a.minLen)
		if a.maxLen >= 0 && (maxL < 0 || a.maxLen < maxL) {
			maxL = a.maxLen
		}
		if a.pattern != nil {
			pats = append(pats, a.pattern)
		}
		if a.format != "" && formatGens[a.format] != nil {
			formats = append(formats, a.format)
		}
		if entity == "" {
			entity = a.entity
		}
	}
	if maxL >= 0 && minL > maxL {
		return nil, unsat(ptr, first(p.atoms), "minLength %d exceeds maxLength %d", minL, maxL)
	}
	pool := st.pool(entity, hint)
	for try := 0; try < 40; try++ {
		var s string
		ok := true
		switch {
		case len(pool) > 0 && try < 8:
			s = pool[st.r.intn(len(pool))]
		case len(formats) > 0 && (len(pats) == 0 || try%2 == 0):
			s, ok = formatGens[formats[try%len(formats)]](st.r)
		case len(pats) > 0:
			s, ok = st.patternString(pats[try%len(pats)], minL, maxL, try)
		default:
			s = st.plainString(minL, maxL, try)
		}
		if !ok || !lengthOK(s, minL, maxL) {
			continue
		}
		matched := true
		for _, pt := range pats {
			if !pt.match(s) {
				matched = false
				break
			}
		}
		if matched && st.plainAccepts(p, s) {
			st.bytes += len(s) + 2
			return s, nil
		}
	}
	return nil, gaveUp(ptr, first(p.atoms), "no generated string satisfied its length, pattern and format together")
}

func lengthOK(s string, minL, maxL int) bool {
	n := utf8.RuneCountInString(s)
	return n >= minL && (maxL < 0 || n <= maxL)
}

// stretches is how far unbounded repetitions may run, tried in turn.
var stretches = []int{2, 6, 1, 16}

// patternString generates a string matching p (by its RE2 tree; the
// caller checks the ECMA match), padded where the pattern is unanchored
// toward minL, sometimes with text around it.
func (st *state) patternString(p *pattern, minL, maxL, try int) (string, bool) {
	if p.ast == nil {
		return st.plainString(minL, maxL, try), true
	}
	stretch := stretches[try%len(stretches)]
	if try >= len(stretches) && minL > stretch {
		stretch = minL
	}
	room := 64
	if maxL >= 0 {
		room = maxL
	}
	g := &regexGen{r: st.r, stretch: stretch, room: room}
	g.gen(p.ast)
	s := g.b.String()
	if !p.begin && st.r.chance(1, 6) {
		s = st.plainString(1, 4, try) + s
	}
	if !p.end && st.r.chance(1, 6) {
		s += st.plainString(1, 4, try)
	}
	if short := minL - utf8.RuneCountInString(s); short > 0 {
		switch {
		case !p.end:
			s += st.plainString(short, short, 0)
		case !p.begin:
			s = st.plainString(short, short, 0) + s
		}
	}
	return s, true
}

// alphabets plain strings are drawn from: identifiers, printable ASCII,
// and text mixing in non-ASCII letters, a non-breaking space, a zero-width
// joiner and an astral emoji.
var alphabets = [][]rune{
	[]rune("abcdefghijklmnopqrstuvwxyz0123456789_"),
	[]rune(" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"),
	append([]rune("abcdefg XYZ"), interesting...),
}

// plainString draws a string of rune length in [minL, maxL]: the bounds
// themselves often, else a short one.
func (st *state) plainString(minL, maxL, try int) string {
	if st.small && try == 0 {
		return strings.Repeat("a", minL)
	}
	hi := minL + 12
	if maxL >= 0 && maxL < hi {
		hi = maxL
	}
	n := st.r.between(minL, hi)
	switch st.r.intn(8) {
	case 0:
		n = minL
	case 1:
		if maxL >= 0 && maxL <= 512 {
			n = maxL
		}
	}
	alpha := alphabets[0]
	if try > 0 || st.r.chance(1, 3) {
		alpha = alphabets[st.r.intn(len(alphabets))]
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(alpha[st.r.intn(len(alpha))])
	}
	return b.String()
}

// genNumber builds a number within every bound and a multiple of every
// multipleOf (of 1 for integers): a bound, 0, ±1, a big value, or a random
// one, as an exact decimal.
func (st *state) genNumber(p *plan, mask types, ptr string) (any, error) {
	var lo, hi, mult *big.Rat
	exLo, exHi := false, false
	for _, a := range p.atoms {
		if a.min != nil && (lo == nil || a.min.Cmp(lo) > 0 || (a.min.Cmp(lo) == 0 && a.exMin)) {
			lo, exLo = a.min, a.exMin
		}
		if a.max != nil && (hi == nil || a.max.Cmp(hi) < 0 || (a.max.Cmp(hi) == 0 && a.exMax)) {
			hi, exHi = a.max, a.exMax
		}
		if a.multiple != nil {
			mult = lcm(mult, a.multiple)
		}
	}
	// whole numbers, fractions, or (where fractions are allowed) both in
	// a random order
	modes := []bool{true}
	if mask&tNumber != 0 {
		modes = []bool{false, true}
		if st.r.chance(1, 2) {
			modes = []bool{true, false}
		}
	}
	inside := false // some candidate met the bounds: the schema is not empty
	for _, integer := range modes {
		m := mult
		if integer {
			m = lcm(m, big.NewRat(1, 1))
		}
		for try := 0; try < 24; try++ {
			v := st.numberCandidate(lo, hi, exLo, exHi, m, try)
			if v == nil || !inRange(v, lo, hi, exLo, exHi) {
				continue
			}
			if m != nil && !new(big.Rat).Quo(v, m).IsInt() {
				continue
			}
			inside = true
			num := json.Number(decimal(v))
			if st.plainAccepts(p, num) {
				st.bytes += len(num)
				return num, nil
			}
		}
	}
	if inside {
		return nil, gaveUp(ptr, first(p.atoms), "no generated number satisfied every schema here")
	}
	return nil, unsat(ptr, first(p.atoms), "no number satisfies the bounds and multipleOf here")
}

var (
	// edges: values sellers' number handling tends to break on
	edges = []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(-1, 1), big.NewRat(2147483647, 1),
		big.NewRat(9007199254740991, 1), big.NewRat(1, 100), big.NewRat(-2147483648, 1)}
)

func (st *state) numberCandidate(lo, hi *big.Rat, exLo, exHi bool, mult *big.Rat, try int) *big.Rat {
	// the span random draws come from: the bounds, or 10⁴ past the one there is
	span := big.NewRat(10000, 1)
	L, H := lo, hi
	switch {
	case L == nil && H == nil:
		L, H = new(big.Rat).Neg(span), span
	case L == nil:
		L = new(big.Rat).Sub(H, span)
	case H == nil:
		H = new(big.Rat).Add(L, span)
	}
	if st.small && try < 2 {
		// shrinking: 0 where allowed, else the bound nearest it
		switch {
		case lo != nil && lo.Sign() > 0:
			L = lo
		case hi != nil && hi.Sign() < 0:
			L = hi
		default:
			return new(big.Rat)
		}
		if mult != nil {
			k := ceilRat(new(big.Rat).Quo(L, mult))
			if L == hi {
				k = floorRat(new(big.Rat).Quo(L, mult))
			}
			L = new(big.Rat).Mul(new(big.Rat).SetInt(k), mult)
		}
		if try == 1 { // an exclusive bound: a step inside
			L = new(big.Rat).Add(L, big.NewRat(int64(L.Sign()), 100))
		}
		return L
	}
	if mult != nil {
		// k·mult for k between the bounds' quotients
		kLo := ceilRat(new(big.Rat).Quo(L, mult))
		kHi := floorRat(new(big.Rat).Quo(H, mult))
		if lo != nil && exLo && new(big.Rat).SetInt(kLo).Mul(new(big.Rat).SetInt(kLo), mult).Cmp(lo) == 0 {
			kLo.Add(kLo, big.NewInt(1))
		}
		if hi != nil && exHi && new(big.Rat).SetInt(kHi).Mul(new(big.Rat).SetInt(kHi), mult).Cmp(hi) == 0 {
			kHi.Sub(kHi, big.NewInt(1))
		}
		if kLo.Cmp(kHi) > 0 {
			return nil
		}
		var k *big.Int
		switch r := st.r.intn(8); {
		case r == 0 && lo != nil:
			k = kLo
		case r == 1 && hi != nil:
			k = kHi
		case r == 2:
			e := edges[st.r.intn(len(edges))]
			k = floorRat(new(big.Rat).Quo(e, mult))
		default:
			width := new(big.Int).Sub(kHi, kLo)
			if width.IsInt64() && width.Int64() < 1<<62 {
				k = new(big.Int).Add(kLo, big.NewInt(int64(st.r.intn(int(min(width.Int64(), 1<<30))+1))))
			} else {
				k = new(big.Int).Add(kLo, big.NewInt(int64(st.r.intn(1<<30))))
			}
		}
		return new(big.Rat).Mul(new(big.Rat).SetInt(k), mult)
	}
	switch r := st.r.intn(8); {
	case r == 0 && lo != nil && !exLo:
		return lo
	case r == 1 && hi != nil && !exHi:
		return hi
	case r == 2 && lo != nil:
		return new(big.Rat).Add(lo, big.NewRat(1, 100)) // just above
	case r == 3:
		return edges[st.r.intn(len(edges))]
	case r == 4:
		// the midpoint: inside even an open interval
		return new(big.Rat).Quo(new(big.Rat).Add(L, H), big.NewRat(2, 1))
	}
	// L + (H-L)·u for u a random multiple of 1/1000 in (0, 1)
	u := big.NewRat(int64(st.r.between(1, 999)), 1000)
	return new(big.Rat).Add(L, new(big.Rat).Mul(new(big.Rat).Sub(H, L), u))
}

func inRange(v, lo, hi *big.Rat, exLo, exHi bool) bool {
	if lo != nil {
		if c := v.Cmp(lo); c < 0 || (c == 0 && exLo) {
			return false
		}
	}
	if hi != nil {
		if c := v.Cmp(hi); c > 0 || (c == 0 && exHi) {
			return false
		}
	}
	return true
}

func floorRat(r *big.Rat) *big.Int {
	q, _ := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	return q // DivMod is Euclidean: for a positive denominator it floors
}

func ceilRat(r *big.Rat) *big.Int {
	q := floorRat(r)
	if !r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// lcm of two positive rationals: lcm of numerators over gcd of denominators.
func lcm(a, b *big.Rat) *big.Rat {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	gn := new(big.Int).GCD(nil, nil, a.Num(), b.Num())
	ln := new(big.Int).Mul(a.Num(), b.Num())
	ln.Quo(ln, gn)
	gd := new(big.Int).GCD(nil, nil, a.Denom(), b.Denom())
	return new(big.Rat).SetFrac(ln, gd)
}

// decimal writes r exactly when its expansion ends (every number the
// generator makes is a finite decimal), without trailing zeros.
func decimal(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	d := 1
	for t := new(big.Rat).Set(r); d < 60; d++ {
		if t.Mul(t, big.NewRat(10, 1)); t.IsInt() {
			break
		}
	}
	s := r.FloatString(d)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Marshal writes a generated value as JSON: object keys sorted, no HTML
// escaping, numbers as generated, so a value has one encoding.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func marshalString(v any) string {
	b, _ := Marshal(v)
	return string(b)
}
