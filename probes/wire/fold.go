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

// indexFold returns the index of the first match of f in b under ASCII case
// folding, or -1.
func indexFold(b, f []byte) int {
	if len(f) == 0 {
		return 0
	}
	first := string([]byte{lowerASCII(f[0]), upperASCII(f[0])})
	for i := 0; i+len(f) <= len(b); {
		j := bytes.IndexAny(b[i:len(b)-len(f)+1], first)
		if j < 0 {
			return -1
		}
		if equalFoldASCII(b[i+j:i+j+len(f)], f) {
			return i + j
		}
		i += j + 1
	}
	return -1
}

// countFold counts the non-overlapping matches of f in b under ASCII case
// folding.
func countFold(b, f []byte) int {
	n := 0
	for {
		i := indexFold(b, f)
		if i < 0 || len(f) == 0 {
			return n
		}
		n++
		b = b[i+len(f):]
	}
}

// replaceFold replaces every match of f in b (ASCII case folding) with
// repl, returning b itself when there is none, and how many it replaced.
func replaceFold(b, f, repl []byte) ([]byte, int) {
	i := indexFold(b, f)
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
		i = indexFold(b, f)
	}
	return append(out, b...), n
}

// hasSuffixFold reports whether b ends with f under ASCII case folding.
func hasSuffixFold(b, f []byte) bool {
	return len(b) >= len(f) && equalFoldASCII(b[len(b)-len(f):], f)
}
