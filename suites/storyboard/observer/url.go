package observer

import (
	"strings"
)

// Reading a URL as the bytes a seller emitted: its parts, percent
// decoding, and the byte checks at a macro position.

// span is a byte range of a URL string.
type span struct{ lo, hi int }

// qpair is one query pair: its key decoded, its value's span.
type qpair struct {
	key string
	val span
}

// urlParts is a URL split for alignment (the kit's step 1 and 2:
// scheme, host, port, path segments, query pairs), with the spans of the
// segments and values in the string as written.
type urlParts struct {
	scheme, host, port string
	segs               []span
	query              []qpair
}

// splitURL splits an absolute http(s) URL the way a WHATWG parser finds
// its components, without normalizing the bytes: leading and trailing C0
// controls and spaces are dropped, a backslash separates like a slash, a
// scheme-relative URL takes the synthetic base's https. A relative URL
// resolves against https://observer.test/ and so can align with no
// template; it is reported false, as is any other scheme.
func splitURL(s string) (urlParts, string, bool) {
	lo, hi := 0, len(s)
	for lo < hi && s[lo] <= ' ' {
		lo++
	}
	for hi > lo && s[hi-1] <= ' ' {
		hi--
	}
	s = s[:hi]
	var p urlParts
	i := lo
	if strings.HasPrefix(s[i:], "//") || strings.HasPrefix(s[i:], `\\`) {
		p.scheme = "https"
	} else {
		j := i
		for j < len(s) && (isAlpha(s[j]) || (j > i && (isDigit(s[j]) || s[j] == '+' || s[j] == '-' || s[j] == '.'))) {
			j++
		}
		if j == i || j >= len(s) || s[j] != ':' {
			return p, s, false
		}
		p.scheme = strings.ToLower(s[i:j])
		i = j + 1
	}
	if p.scheme != "https" && p.scheme != "http" {
		return p, s, false
	}
	for k := 0; k < 2; k++ {
		if i < len(s) && (s[i] == '/' || s[i] == '\\') {
			i++
		}
	}
	j := i
	for j < len(s) && !strings.ContainsRune(`/\?#`, rune(s[j])) {
		j++
	}
	auth := s[i:j]
	if k := strings.LastIndexByte(auth, '@'); k >= 0 {
		auth = auth[k+1:]
	}
	host := auth
	if k := strings.LastIndexByte(auth, ':'); k >= 0 && !strings.Contains(auth[k:], "]") {
		host, p.port = auth[:k], auth[k+1:]
	}
	if (p.scheme == "https" && p.port == "443") || (p.scheme == "http" && p.port == "80") {
		p.port = ""
	}
	p.host = strings.ToLower(host)
	if p.host == "" {
		return p, s, false
	}
	i = j
	pathEnd := i
	for pathEnd < len(s) && s[pathEnd] != '?' && s[pathEnd] != '#' {
		pathEnd++
	}
	if i < pathEnd {
		i++ // the leading slash
		start := i
		for k := i; k <= pathEnd; k++ {
			if k == pathEnd || s[k] == '/' || s[k] == '\\' {
				p.segs = append(p.segs, span{start, k})
				start = k + 1
			}
		}
	} else {
		p.segs = []span{{pathEnd, pathEnd}}
	}
	if pathEnd < len(s) && s[pathEnd] == '?' {
		qEnd := pathEnd + 1
		for qEnd < len(s) && s[qEnd] != '#' {
			qEnd++
		}
		start := pathEnd + 1
		for k := start; k <= qEnd; k++ {
			if k < qEnd && s[k] != '&' {
				continue
			}
			if k > start {
				pair := s[start:k]
				key, vlo := pair, k
				if e := strings.IndexByte(pair, '='); e >= 0 {
					key, vlo = pair[:e], start+e+1
				}
				p.query = append(p.query, qpair{key: formDecode(key), val: span{vlo, k}})
			}
			start = k + 1
		}
	}
	return p, s, true
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// unreserved is RFC 3986 §2.3: ALPHA / DIGIT / "-" / "." / "_" / "~".
func unreserved(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// pctDecode decodes the valid %XX triplets of s and leaves the rest.
func pctDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// formDecode decodes a query key as application/x-www-form-urlencoded.
func formDecode(s string) string { return pctDecode(strings.ReplaceAll(s, "+", " ")) }

// c0OrSpace are the bytes a URL parser strips from both ends of an input.
var c0OrSpace = func() string {
	var b strings.Builder
	for c := byte(0); c <= ' '; c++ {
		b.WriteByte(c)
	}
	return b.String()
}()

// urlScheme is the scheme a URL parser reads at the start of v (RFC 3986:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) then ":"), lowercased, or ""
// when v is relative.
func urlScheme(v string) string {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isAlpha(c):
		case i > 0 && (isDigit(c) || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(v[:i])
		default:
			return ""
		}
	}
	return ""
}

// hexEqual compares an observed value with an expected encoding under the
// kit's hex_case_policy: the two digits of a %XX triplet compare
// case-insensitively, every other byte exactly. It returns the offset of
// the first difference (-1 when equal).
func hexEqual(v, enc string) int {
	for i := 0; i < len(enc); i++ {
		if i >= len(v) {
			return i
		}
		if enc[i] == '%' && i+2 < len(enc) && isHex(enc[i+1]) && isHex(enc[i+2]) {
			if v[i] != '%' {
				return i
			}
			for k := 1; k <= 2; k++ {
				if i+k >= len(v) || !isHex(v[i+k]) || unhex(v[i+k]) != unhex(enc[i+k]) {
					return i + k
				}
			}
			i += 2
			continue
		}
		if v[i] != enc[i] {
			return i
		}
	}
	if len(v) != len(enc) {
		return len(enc)
	}
	return -1
}

// unsafeByte returns the offset of the first byte of v that is neither
// unreserved nor part of a valid %XX triplet (-1 when none).
func unsafeByte(v string) int {
	for i := 0; i < len(v); i++ {
		switch {
		case unreserved(v[i]):
		case v[i] == '%' && i+2 < len(v) && isHex(v[i+1]) && isHex(v[i+2]):
			i += 2
		default:
			return i
		}
	}
	return -1
}

// lowerHex reports whether v has a triplet with a lowercase hex digit.
func lowerHex(v string) bool {
	for i := 0; i+2 < len(v); i++ {
		if v[i] == '%' && isHex(v[i+1]) && isHex(v[i+2]) {
			if (v[i+1] >= 'a' && v[i+1] <= 'f') || (v[i+2] >= 'a' && v[i+2] <= 'f') {
				return true
			}
			i += 2
		}
	}
	return false
}
