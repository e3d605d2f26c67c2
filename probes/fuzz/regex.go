package fuzz

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// pattern is a schema's ECMA-262 regular expression: matched by regexp2 in
// ECMAScript mode (as the validator does), and generated from from a Go
// regexp/syntax tree of the same expression with its lookaround groups
// dropped (RE2 has none): a generated string is kept only if the ECMA
// matcher accepts it, so a dropped lookaround only costs retries.
type pattern struct {
	src    string
	re     *regexp2.Regexp
	ast    *syntax.Regexp // nil when the expression has no RE2 form
	astErr error
	// begin, end: the expression is anchored there; elsewhere a match may
	// sit inside a longer string.
	begin, end bool
}

func compilePattern(src string) (*pattern, error) {
	re, err := regexp2.Compile(src, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = time.Second
	p := &pattern{src: src, re: re}
	goSrc, err := ecmaToRE2(src)
	if err == nil {
		var ast *syntax.Regexp
		if ast, err = syntax.Parse(goSrc, syntax.Perl); err == nil {
			p.ast = ast.Simplify()
			p.begin, p.end = anchored(p.ast)
		}
	}
	p.astErr = err
	return p, nil
}

func (p *pattern) match(s string) bool {
	ok, err := p.re.MatchString(s)
	return ok && err == nil
}

func anchored(re *syntax.Regexp) (begin, end bool) {
	first, last := re, re
	for first.Op == syntax.OpConcat || first.Op == syntax.OpCapture {
		if len(first.Sub) == 0 {
			break
		}
		first = first.Sub[0]
	}
	for last.Op == syntax.OpConcat || last.Op == syntax.OpCapture {
		if len(last.Sub) == 0 {
			break
		}
		last = last.Sub[len(last.Sub)-1]
	}
	return first.Op == syntax.OpBeginText || first.Op == syntax.OpBeginLine,
		last.Op == syntax.OpEndText || last.Op == syntax.OpEndLine
}

// ecmaToRE2 rewrites the ECMA-262 syntax RE2 spells differently: \uXXXX and
// \u{…} escapes, \cX, \0, [^] (any character), and lookaround groups, which
// it drops (the ECMA matcher still applies them).
func ecmaToRE2(src string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			n := src[i+1]
			switch {
			case n == 'u' && i+2 < len(src) && src[i+2] == '{':
				end := strings.IndexByte(src[i:], '}')
				if end < 0 {
					return "", fmt.Errorf("unterminated \\u{ escape")
				}
				fmt.Fprintf(&b, `\x{%s}`, src[i+3:i+end])
				i += end
			case n == 'u' && i+5 < len(src) && isHex(src[i+2:i+6]):
				fmt.Fprintf(&b, `\x{%s}`, src[i+2:i+6])
				i += 5
			case n == 'c' && i+2 < len(src) && isLetter(src[i+2]):
				fmt.Fprintf(&b, `\x{%x}`, src[i+2]%32)
				i += 2
			case n == '0' && (i+2 >= len(src) || src[i+2] < '0' || src[i+2] > '9'):
				b.WriteString(`\x{0}`)
				i++
			case n == '/' || n == '-' && !inClass:
				b.WriteByte(n)
				i++
			default:
				b.WriteByte(c)
				b.WriteByte(n)
				i++
			}
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			if strings.HasPrefix(src[i:], "[^]") {
				b.WriteString(`[\x{0}-\x{10FFFF}]`)
				i += 2
				continue
			}
			inClass = true
			b.WriteByte(c)
			if i+1 < len(src) && src[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(src) && src[i+1] == ']' { // a literal ] first in a class
				b.WriteString(`\]`)
				i++
			}
		case c == '(' && (strings.HasPrefix(src[i:], "(?=") || strings.HasPrefix(src[i:], "(?!") ||
			strings.HasPrefix(src[i:], "(?<=") || strings.HasPrefix(src[i:], "(?<!")):
			end, err := groupEnd(src, i)
			if err != nil {
				return "", err
			}
			i = end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// groupEnd returns the index of the ) closing the group opened at src[i].
func groupEnd(src string, i int) (int, error) {
	depth, inClass := 0, false
	for ; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(':
			depth++
		case c == ')':
			if depth--; depth == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced group")
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// regexGen writes one string the syntax tree matches. stretch bounds how
// far past its minimum an unbounded repetition (*, +, {n,}) goes, and
// room how many more runes the string may take.
type regexGen struct {
	r       *rng
	b       strings.Builder
	stretch int
	room    int
}

func (g *regexGen) gen(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && g.r.chance(1, 2) {
				if u := unicode.SimpleFold(c); u != c {
					c = u
				}
			}
			g.put(c)
		}
	case syntax.OpCharClass:
		g.put(pickRune(g.r, re.Rune))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		g.put(pickRune(g.r, []rune{0x20, 0x7e, 0xa1, 0xd7ff}))
	case syntax.OpCapture:
		g.gen(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			g.gen(s)
		}
	case syntax.OpAlternate:
		g.gen(re.Sub[g.r.intn(len(re.Sub))])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		}
		for i, n := 0, g.count(lo, hi); i < n; i++ {
			g.gen(re.Sub[0])
		}
	}
	// Empty-width assertions (^, $, \b) and OpEmptyMatch write nothing; the
	// ECMA matcher judges the result.
}

func (g *regexGen) put(c rune) {
	g.b.WriteRune(c)
	g.room--
}

// count picks a repetition count in [lo, hi] (hi < 0: unbounded), biased
// to the bounds, and kept short once the string has no room left.
func (g *regexGen) count(lo, hi int) int {
	if hi < 0 {
		hi = lo + g.stretch
	}
	if g.room <= 0 {
		return lo
	}
	switch g.r.intn(4) {
	case 0:
		return lo
	case 1:
		return hi
	}
	return g.r.between(lo, hi)
}

// interesting are runes a generator reaches for to find encoding bugs: a
// Latin-1 letter, a non-breaking space, CJK, a right-to-left letter, a
// zero-width joiner, an astral emoji.
var interesting = []rune{'é', 'ß', 0xa0, '日', '本', 'א', 0x200d, '🙂', 'Ω', '€'}

// pickRune picks a rune from a class given as [lo, hi] pairs: mostly
// printable ASCII when the class has any, sometimes an interesting rune of
// the class, never a surrogate or a non-character.
func pickRune(r *rng, class []rune) rune {
	in := func(c rune) bool {
		for i := 0; i+1 < len(class); i += 2 {
			if c >= class[i] && c <= class[i+1] {
				return true
			}
		}
		return false
	}
	if r.chance(1, 6) {
		start := r.intn(len(interesting))
		for i := range interesting {
			if c := interesting[(start+i)%len(interesting)]; in(c) {
				return c
			}
		}
	}
	// printable ASCII in the class, with space rarer than the rest
	var ascii []rune
	for c := rune(0x21); c <= 0x7e; c++ {
		if in(c) {
			ascii = append(ascii, c)
		}
	}
	if in(' ') && (len(ascii) == 0 || r.chance(1, 20)) {
		return ' '
	}
	if len(ascii) > 0 {
		return ascii[r.intn(len(ascii))]
	}
	// anything else: a uniform pick over the class's valid runes
	total := 0
	for i := 0; i+1 < len(class); i += 2 {
		total += int(class[i+1]-class[i]) + 1
	}
	for tries := 0; tries < 16 && total > 0; tries++ {
		k := r.intn(total)
		for i := 0; i+1 < len(class); i += 2 {
			size := int(class[i+1]-class[i]) + 1
			if k < size {
				c := class[i] + rune(k)
				if utf8.ValidRune(c) && !(c >= 0xfdd0 && c <= 0xfdef) && c&0xfffe != 0xfffe {
					return c
				}
				break
			}
			k -= size
		}
	}
	if len(class) > 0 {
		return class[0]
	}
	return 'a'
}
