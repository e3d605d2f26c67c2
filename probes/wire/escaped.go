package wire

import (
	"bytes"
	"cmp"
	"hash/maphash"
	"html"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// A seller may send a credential escaped: JSON-escaped inside a string
// (`\/` as PHP writes "/", letters as `\u0073`), as HTML character
// references (`&#47;`, `&#x2B;`, `&plus;`), URL-escaped (`%2F`), and an
// escape inside an escape (JSON text in an MCP text item, whose own
// escapes are escaped again). A harness that decodes such a reply
// (the storyboard engine reads the text item, captures an id, prints a
// message) holds the credential itself; a report that prints the escaped
// form holds what any JSON or HTML decoder turns back into it. The
// redaction therefore looks for each secret in the text as each decoder
// reads it, and cuts the bytes those decoded bytes came from.

// MaxEscapeDepth is how many decoders in turn a text is read through: an
// escape written inside an escape inside an escape inside an escape (the
// token JSON-escaped in a text item, that item in a JSON body, that body
// in a JSON report, the report quoted in an HTML page) is decoded; one
// level more is not.
const MaxEscapeDepth = 4

// escape kinds: what one decoding pass reads.
const (
	escJSON = 1 << iota // \" \\ \/ \b \f \n \r \t \uXXXX (surrogate pairs joined)
	escHTML             // character references, as html.UnescapeString reads them
	escURL              // %XX
)

// hasEscapes reports whether b holds a byte that opens an escape.
func hasEscapes(b []byte) bool {
	return bytes.IndexByte(b, '\\') >= 0 || bytes.IndexByte(b, '&') >= 0 || bytes.IndexByte(b, '%') >= 0
}

// layer is one decoding of a text: out, and for each byte of out the span
// of the original text it came from (nil when not asked for).
type layer struct {
	out        []byte
	start, end []int32
	decoded    bool // an escape was decoded
}

// decodeEscapes decodes every escape of one kind in b, leniently (an
// escape it cannot read is kept as it is). With mapped, the layer gives
// each output byte's span in the original text: through from and to when
// b is itself a reading (its bytes' spans), else b's own offsets.
func decodeEscapes(b []byte, kind int, mapped bool, from, to []int32) layer {
	var l layer
	l.out = make([]byte, 0, len(b))
	span := func(i, j int) (int32, int32) {
		if from != nil {
			return from[i], to[j-1]
		}
		return int32(i), int32(j)
	}
	raw := func(i, j int) {
		l.out = append(l.out, b[i:j]...)
		if mapped {
			for k := i; k < j; k++ {
				lo, hi := span(k, k+1)
				l.start, l.end = append(l.start, lo), append(l.end, hi)
			}
		}
	}
	opens := opener(kind)
	var buf [8]byte
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], opens)
		if j < 0 {
			raw(i, len(b))
			break
		}
		raw(i, i+j)
		i += j
		var dec []byte
		n := 0
		switch kind {
		case escJSON:
			dec, n = jsonEscapeAt(b, i, buf[:0])
		case escHTML:
			dec, n = htmlRefAt(b, i)
		case escURL:
			if i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]) {
				buf[0] = unhex(b[i+1])<<4 | unhex(b[i+2])
				dec, n = buf[:1], 3
			}
		}
		if n == 0 {
			raw(i, i+1)
			i++
			continue
		}
		l.decoded = true
		l.out = append(l.out, dec...)
		if mapped {
			lo, hi := span(i, i+n)
			for range dec {
				l.start, l.end = append(l.start, lo), append(l.end, hi)
			}
		}
		i += n
	}
	return l
}

// opener is the byte that opens an escape of kind.
func opener(kind int) byte {
	switch kind {
	case escJSON:
		return '\\'
	case escHTML:
		return '&'
	}
	return '%'
}

// jsonEscapeAt reads the JSON escape at b[i] (a backslash) into buf: the
// decoded bytes and the escape's length, or 0 when it is no valid escape.
// A lone surrogate decodes to U+FFFD, as encoding/json does.
func jsonEscapeAt(b []byte, i int, buf []byte) ([]byte, int) {
	if i+1 >= len(b) {
		return nil, 0
	}
	switch c := b[i+1]; c {
	case '"', '\\', '/':
		return append(buf, c), 2
	case 'b':
		return append(buf, '\b'), 2
	case 'f':
		return append(buf, '\f'), 2
	case 'n':
		return append(buf, '\n'), 2
	case 'r':
		return append(buf, '\r'), 2
	case 't':
		return append(buf, '\t'), 2
	case 'u':
		r, ok := hex4(b, i+2)
		if !ok {
			return nil, 0
		}
		n := 6
		if utf16.IsSurrogate(r) {
			r2, ok := rune(0), false
			if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				r2, ok = hex4(b, i+8)
			}
			if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
				r, n = d, 12
			} else {
				r = utf8.RuneError
			}
		}
		return utf8.AppendRune(buf, r), n
	}
	return nil, 0
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		if !isHex(c) {
			return 0, false
		}
		r = r<<4 | rune(unhex(c))
	}
	return r, true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// maxRefName bounds the name of a character reference read: longer than
// any name html.UnescapeString knows.
const maxRefName = 64

// htmlRefAt reads the character reference at b[i] (an ampersand) as
// html.UnescapeString does: "&#" and decimal digits, "&#x" and hex
// digits, or "&" and a name, each with an optional ";". html.UnescapeString
// decodes such a run as it would inside any text (a named reference may
// take a prefix of the name and leave the rest), so the run's decoding is
// the text's. It returns the decoded bytes and the run's length, or 0 when
// no reference starts there.
func htmlRefAt(b []byte, i int) ([]byte, int) {
	if i+1 < len(b) && b[i+1] == '#' {
		return numericRefAt(b, i)
	}
	j := i + 1
	for j < len(b) && j-i <= maxRefName && isAlnum(b[j]) {
		j++
	}
	if j == i+1 {
		return nil, 0
	}
	if j < len(b) && b[j] == ';' {
		j++
	}
	dec, ok := htmlRefs.get(b[i:j])
	if !ok {
		return nil, 0
	}
	return dec, j - i
}

// numericRefAt reads "&#…" at b[i] as html.UnescapeString does, quirks
// included: a text ending within 3 bytes of the ampersand, and a single
// decimal digit with no ";", are no reference; "&#x;" is U+FFFD; the value
// wraps as a rune.
func numericRefAt(b []byte, i int) ([]byte, int) {
	if len(b)-i <= 3 {
		return nil, 0
	}
	j := i + 2
	hex := b[j] == 'x' || b[j] == 'X'
	if hex {
		j++
	}
	var x rune
	for ; j < len(b); j++ {
		c := b[j]
		switch {
		case hex && isHex(c):
			x = 16*x + rune(unhex(c))
		case !hex && c >= '0' && c <= '9':
			x = 10*x + rune(c-'0')
		default:
			goto done
		}
	}
done:
	if j < len(b) && b[j] == ';' {
		j++
	}
	if j-i <= 3 {
		return nil, 0
	}
	switch {
	case x >= 0x80 && x <= 0x9f: // Windows-1252: html's own table
		return []byte(html.UnescapeString(string(b[i:j]))), j - i
	case x == 0 || x >= 0xd800 && x <= 0xdfff || x > 0x10ffff || x < 0:
		x = utf8.RuneError
	}
	return utf8.AppendRune(nil, x), j - i
}

// htmlRefs caches what html.UnescapeString makes of a reference: a page
// repeats a few (&amp; &#34;) thousands of times.
var htmlRefs = refCache{m: map[string][]byte{}}

type refCache struct {
	mu sync.RWMutex
	m  map[string][]byte // nil: no reference
}

// maxCachedRefs bounds the cache; past it, references are decoded each time.
const maxCachedRefs = 4096

func (c *refCache) get(run []byte) ([]byte, bool) {
	c.mu.RLock()
	dec, ok := c.m[string(run)]
	c.mu.RUnlock()
	if !ok {
		s := html.UnescapeString(string(run))
		if s != string(run) {
			dec = []byte(s)
		}
		c.mu.Lock()
		if len(c.m) < maxCachedRefs {
			c.m[string(run)] = dec
		}
		c.mu.Unlock()
	}
	return dec, dec != nil
}

// span is a part of a text to redact: b[lo:hi].
type span struct{ lo, hi int }

// needles are what a decoded text must not hold (each secret, and with
// "+" for its spaces), and the bytes a run holding one may be made of:
// a needle's own bytes (either case), letters, digits and the bytes of
// escapes (\ & % # ; " /). Any other byte (a space, a brace, a comma…)
// ends every run that could spell a needle in any reading.
type needles struct {
	list [][]byte
	// class is, for each byte, 0 when no run that may spell a needle
	// holds it, partByte when one may, escapeByte when it also opens an
	// escape (\ & %).
	class    [256]uint8
	shortest int
}

// The classes of a byte in needles.
const (
	partByte   = 1
	escapeByte = 2 | partByte
)

func newNeedles(list [][]byte) needles {
	n := needles{list: list, shortest: math.MaxInt}
	for _, x := range list {
		n.shortest = min(n.shortest, len(x))
		for _, c := range x {
			n.class[c], n.class[lowerASCII(c)], n.class[upperASCII(c)] = partByte, partByte, partByte
		}
	}
	for c := range 256 {
		if isAlnum(byte(c)) || strings.IndexByte(`#;"/`, byte(c)) >= 0 {
			n.class[c] = partByte
		}
	}
	for _, c := range []byte(`\&%`) {
		n.class[c] = escapeByte
	}
	return n
}

// escapedSpans returns the spans of b that decode to one of the needles
// (any ASCII letter case) when read by up to MaxEscapeDepth decoders in
// turn, each a JSON, HTML or URL decoder (see eachReading). With
// truncated, a decoded text that ends in a prefix (4 bytes or more) of a
// needle loses it too.
//
// b is cut at the bytes no needle's run holds (see needles) into parts
// read on their own: a part shorter than every needle, or without an
// escape, cannot hold one, so a JSON text cut into short words costs no
// decoding at all.
//
// known (nil: none) remembers the parts found to hold no needle, across
// calls: a report repeats the same escaped keys and values thousands of
// times.
func escapedSpans(b []byte, ns *needles, truncated bool, known *cleanParts) []span {
	var spans []span
	// Only the parts holding an escape are read: from each escape's
	// opening byte (found by bytes.IndexByte, vectorised), back and on to
	// the bytes that end its part. pos is where the next part may start
	// (just after a byte that ends one).
	next := [3]int{-1, -1, -1} // the next \, & and % at pos or after; len(b) when none
	for pos := 0; pos < len(b); {
		e := len(b)
		for k, c := range [3]byte{'\\', '&', '%'} {
			if next[k] < pos {
				next[k] = len(b)
				if j := bytes.IndexByte(b[pos:], c); j >= 0 {
					next[k] = pos + j
				}
			}
			e = min(e, next[k])
		}
		if e == len(b) {
			break
		}
		lo, hi := e, e+1
		for lo > pos && ns.class[b[lo-1]] != 0 {
			lo--
		}
		for hi < len(b) && ns.class[b[hi]] != 0 {
			hi++
		}
		last := truncated && hi == len(b)
		if part := b[lo:hi]; (len(part) >= ns.shortest || last && len(part) >= 4) && (last || !known.has(ns, part)) {
			found := partSpans(part, ns.list, last)
			for _, s := range found {
				spans = append(spans, span{lo + s.lo, lo + s.hi})
			}
			if len(found) == 0 && !last {
				known.add(ns, part)
			}
		}
		pos = hi + 1
	}
	return spans
}

// cleanParts is a set of parts (see escapedSpans) that hold no needle of
// one needles in any reading, bounded: parts up to maxCleanPart bytes,
// emptied when it holds maxCleanParts. A nil *cleanParts holds nothing;
// the zero value is ready to use, not safe for concurrent use.
type cleanParts struct {
	of *needles
	m  map[string]struct{}
}

const (
	maxCleanPart  = 256
	maxCleanParts = 4096
)

func (c *cleanParts) has(ns *needles, part []byte) bool {
	if c == nil || c.of != ns {
		return false
	}
	_, ok := c.m[string(part)]
	return ok
}

func (c *cleanParts) add(ns *needles, part []byte) {
	if c == nil || len(part) > maxCleanPart {
		return
	}
	if c.of != ns || len(c.m) >= maxCleanParts {
		c.of, c.m = ns, make(map[string]struct{})
	}
	c.m[string(part)] = struct{}{}
}

// partSpans is escapedSpans for one part.
func partSpans(b []byte, needles [][]byte, truncated bool) []span {
	// Most parts hold no secret in any reading: look first without maps,
	// then decode again with them only when something is found.
	found := false
	eachReading(b, false, func(l layer) bool {
		found = matchAny(l.out, needles, truncated)
		return found
	})
	if !found {
		return nil
	}
	var spans []span
	eachReading(b, true, func(l layer) bool {
		spans = appendMatches(spans, l, needles, truncated)
		return false
	})
	return spans
}

// readingSeed hashes the readings eachReading has met.
var readingSeed = maphash.MakeSeed()

// eachReading calls visit with each reading of b by a sequence of up to
// MaxEscapeDepth decoders (JSON, HTML, URL, in any order, each as often
// as it decodes something), depth first, until visit returns true. A
// reading met before by another sequence is not visited again: a text
// holding no escape of one kind is read by the other kinds only, and one
// holding every kind is read at most 3 + 9 + 27 + 81 times.
func eachReading(b []byte, mapped bool, visit func(layer) bool) {
	var seen []uint64 // the readings' hashes (at most 120)
	var walk func(cur []byte, from, to []int32, depth int) bool
	walk = func(cur []byte, from, to []int32, depth int) bool {
		if depth == MaxEscapeDepth {
			return false
		}
		for _, k := range []struct {
			kind  int
			opens byte
		}{{escJSON, '\\'}, {escHTML, '&'}, {escURL, '%'}} {
			if bytes.IndexByte(cur, k.opens) < 0 {
				continue
			}
			l := decodeEscapes(cur, k.kind, mapped, from, to)
			if !l.decoded {
				continue
			}
			if h := maphash.Bytes(readingSeed, l.out); slices.Contains(seen, h) {
				continue
			} else {
				seen = append(seen, h)
			}
			if visit(l) || walk(l.out, l.start, l.end, depth+1) {
				return true
			}
		}
		return false
	}
	walk(b, nil, nil, 0)
}

func matchAny(b []byte, needles [][]byte, truncated bool) bool {
	for _, n := range needles {
		if indexFold(b, n) >= 0 || truncated && secretSuffix(b, n) > 0 {
			return true
		}
	}
	return false
}

// secretSuffix is the length of the longest prefix of n (4 bytes or more,
// shorter than n) that b ends with, or 0.
func secretSuffix(b, n []byte) int {
	for k := len(n) - 1; k >= 4; k-- {
		if hasSuffixFold(b, n[:k]) {
			return k
		}
	}
	return 0
}

// appendMatches adds the original spans of every match of a needle in
// the layer's text.
func appendMatches(spans []span, l layer, needles [][]byte, truncated bool) []span {
	add := func(i, j int) {
		spans = append(spans, span{int(l.start[i]), int(l.end[j-1])})
	}
	for _, n := range needles {
		for off := 0; off < len(l.out); {
			i := indexFold(l.out[off:], n)
			if i < 0 {
				break
			}
			add(off+i, off+i+len(n))
			off += i + len(n)
		}
		if truncated {
			if k := secretSuffix(l.out, n); k > 0 {
				add(len(l.out)-k, len(l.out))
			}
		}
	}
	return spans
}

// cutSpans replaces each span of b (merged where they overlap) with
// Redacted, and says how many it replaced.
func cutSpans(b []byte, spans []span) ([]byte, int) {
	if len(spans) == 0 {
		return b, 0
	}
	slices.SortFunc(spans, func(x, y span) int { return cmp.Or(cmp.Compare(x.lo, y.lo), cmp.Compare(y.hi, x.hi)) })
	out := make([]byte, 0, len(b))
	pos, n := 0, 0
	for i := 0; i < len(spans); {
		lo, hi := spans[i].lo, spans[i].hi
		for i++; i < len(spans) && spans[i].lo < hi; i++ {
			hi = max(hi, spans[i].hi)
		}
		out = append(append(out, b[pos:lo]...), Redacted...)
		pos, n = hi, n+1
	}
	return append(out, b[pos:]...), n
}
