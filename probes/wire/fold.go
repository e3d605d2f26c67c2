package wire

import "bytes"

// A seller may echo a credential in another letter case (an upper-cased
// header, a normalised id): secrets are matched without regard to ASCII
// case. Non-ASCII bytes match exactly.

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upperASCII(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// equalFoldASCII reports whether a and b are equal under ASCII case folding.
func equalFoldASCII(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

// commonBytes are the bytes most common in what a run writes (indented
// JSON, escaped JSON in strings, report.html, English), the most common
// first; ASCII letters stand for both cases. Any other byte is rarer.
const commonBytes = " e\"satnricopd\\l\n:/u><,m3_4#;&yhb=vfgk-{}0.1q2x96[]w5j78"

// commonness is, for each byte, how common it is (0: rarest).
var commonness = func() (c [256]uint8) {
	for i := range len(commonBytes) {
		b := commonBytes[i]
		n := uint8(len(commonBytes) - i)
		c[b], c[upperASCII(b)] = n, n
	}
	return c
}()

// rarest is the index of f's rarest byte (see commonness), the first of
// the rarest.
func rarest(f []byte) int {
	k := 0
	for i, c := range f {
		if commonness[c] < commonness[f[k]] {
			k = i
		}
	}
	return k
}

// indexFold returns the index of the first match of f in b under ASCII case
// folding, or -1.
func indexFold(b, f []byte) int { return indexFoldAt(b, f, rarest(f)) }

// indexFoldAt is indexFold, k the index of f's rarest byte. Candidates
// are found with bytes.IndexByte (vectorised), once for each case of that
// byte: a secret's first byte is often a letter common in any text.
func indexFoldAt(b, f []byte, k int) int {
	if len(f) == 0 {
		return 0
	}
	lo, up := lowerASCII(f[k]), upperASCII(f[k])
	last := len(b) - len(f) // the last index a match can start at
	// next is the first index from on where a match may start: where
	// its rarest byte, c, is at k.
	next := func(c byte, from int) int {
		if from > last {
			return -1
		}
		if j := bytes.IndexByte(b[from+k:last+k+1], c); j >= 0 {
			return from + j
		}
		return -1
	}
	nl, nu := next(lo, 0), -1
	if up != lo {
		nu = next(up, 0)
	}
	for nl >= 0 || nu >= 0 {
		j := nl
		if j < 0 || (nu >= 0 && nu < j) {
			j = nu
		}
		if equalFoldASCII(b[j:j+len(f)], f) {
			return j
		}
		if j == nl {
			nl = next(lo, j+1)
		} else {
			nu = next(up, j+1)
		}
	}
	return -1
}

// countFold counts the non-overlapping matches of f in b under ASCII case
// folding; k is the index of f's rarest byte.
func countFold(b, f []byte, k int) int {
	n := 0
	for {
		i := indexFoldAt(b, f, k)
		if i < 0 || len(f) == 0 {
			return n
		}
		n++
		b = b[i+len(f):]
	}
}

// replaceFold replaces every match of f in b (ASCII case folding) with
// repl, returning b itself when there is none, and how many it replaced;
// k is the index of f's rarest byte.
func replaceFold(b, f []byte, k int, repl []byte) ([]byte, int) {
	i := indexFoldAt(b, f, k)
	if i < 0 || len(f) == 0 {
		return b, 0
	}
	out := make([]byte, 0, len(b))
	n := 0
	for i >= 0 {
		out = append(out, b[:i]...)
		out = append(out, repl...)
		b = b[i+len(f):]
		n++
		i = indexFoldAt(b, f, k)
	}
	return append(out, b...), n
}

// hasSuffixFold reports whether b ends with f under ASCII case folding.
func hasSuffixFold(b, f []byte) bool {
	return len(b) >= len(f) && equalFoldASCII(b[len(b)-len(f):], f)
}
