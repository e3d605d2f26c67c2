package rawjson

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the strict JSON view the harness's readers stand on. It follows the
// grammar of JavaScript's JSON.parse (RFC 8259: whitespace is only space, tab,
// LF and CR; no BOM; lone surrogate escapes are accepted), keeps every value
// as a slice of the input, and never recurses: validation uses an explicit
// stack whose size is bounded by the input, so 100 000 levels of nesting are
// accepted (V8's JSON.parse accepts them too) without growing the goroutine
// stack. encoding/json, by contrast, refuses more than 10 000 levels.

// Irregular says what a client's JSON.parse repairs silently in a text it
// accepts, collected while validating strings.
type Irregular uint8

// The irregularities.
const (
	// InvalidUTF8: bytes that are not UTF-8 inside a string (read as
	// U+FFFD, as a TextDecoder gives them).
	InvalidUTF8 Irregular = 1 << iota
	// LoneSurrogate: a \uD800-\uDFFF escape without its pair (read as
	// U+FFFD).
	LoneSurrogate
)

// MaxInputBytes bounds the inputs the measuring readers (StringifyLen,
// StringifyUnits) accept, and every input handed to an extractor.
const MaxInputBytes = 32 << 20

// InputError is returned when the input itself is unusable: not JSON, not
// an object where one is required, or too large.
type InputError struct {
	Pointer string // where, when inside the input ("" for the whole input)
	Msg     string
}

func (e *InputError) Error() string {
	if e.Pointer != "" {
		return e.Pointer + ": " + e.Msg
	}
	return e.Msg
}

// syntaxError is a JSON syntax error at a byte offset.
type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string {
	return e.msg + " at byte " + strconv.Itoa(e.offset)
}

func errAt(offset int, msg string) error { return &syntaxError{offset: offset, msg: msg} }

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(d []byte, i int) int {
	for i < len(d) && isWS(d[i]) {
		i++
	}
	return i
}

// Trim removes JSON whitespace around a value.
func Trim(d []byte) []byte {
	i, j := 0, len(d)
	for i < j && isWS(d[i]) {
		i++
	}
	for j > i && isWS(d[j-1]) {
		j--
	}
	return d[i:j]
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// lowSurrogateAt reports whether d[i:] starts with a \uXXXX escape of a low
// surrogate.
func lowSurrogateAt(d []byte, i int) bool {
	if i+6 > len(d) || d[i] != '\\' || d[i+1] != 'u' {
		return false
	}
	r, ok := hex4(d[i+2 : i+6])
	return ok && r >= 0xDC00 && r <= 0xDFFF
}

// scanString validates the string starting at d[i] == '"' and returns the
// index just after its closing quote.
func scanString(d []byte, i int) (int, Irregular, error) {
	var flags Irregular
	start := i
	i++
	for i < len(d) {
		c := d[i]
		if c >= 0x20 && c < 0x80 && c != '"' && c != '\\' {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, flags, nil
		case c == '\\':
			if i+1 >= len(d) {
				return 0, 0, errAt(start, "unterminated string")
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) {
					return 0, 0, errAt(i, "truncated \\u escape")
				}
				r, ok := hex4(d[i+2 : i+6])
				if !ok {
					return 0, 0, errAt(i, "invalid \\u escape")
				}
				if utf16.IsSurrogate(r) {
					if r < 0xDC00 && lowSurrogateAt(d, i+6) {
						i += 12
						continue
					}
					flags |= LoneSurrogate
				}
				i += 6
			default:
				return 0, 0, errAt(i, "invalid escape in string")
			}
		case c < 0x20:
			return 0, 0, errAt(i, "control character in string")
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				flags |= InvalidUTF8
			}
			i += size
		}
	}
	return 0, 0, errAt(start, "unterminated string")
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber validates -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? at d[i].
func scanNumber(d []byte, i int) (int, error) {
	start := i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return 0, errAt(start, "invalid value")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return 0, errAt(i, "invalid number")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return 0, errAt(i, "invalid number")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	return i, nil
}

func scanLiteral(d []byte, i int, lit string) (int, error) {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return 0, errAt(i, "invalid value")
	}
	return i + len(lit), nil
}

// scanKey validates `"key" ws : ws` at d[i] and returns the index of the
// member value.
func scanKey(d []byte, i int) (int, Irregular, error) {
	if i >= len(d) || d[i] != '"' {
		return 0, 0, errAt(i, "expected object key")
	}
	i, flags, err := scanString(d, i)
	if err != nil {
		return 0, 0, err
	}
	i = skipWS(d, i)
	if i >= len(d) || d[i] != ':' {
		return 0, 0, errAt(i, "expected ':' after object key")
	}
	return skipWS(d, i+1), flags, nil
}

// Scan checks that d is exactly one JSON text. It never recurses;
// its stack holds one byte per open container.
func Scan(d []byte) (Irregular, error) {
	flags, _, err := validateDepth(d)
	return flags, err
}

// stacks recycles validateDepth's stacks: a reply 100 000 levels deep is
// validated by every reader of it, and each would grow its own.
var stacks = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledStack bounds the stacks kept for reuse.
const maxPooledStack = 1 << 20

// validateDepth is Scan that also returns the deepest nesting of
// containers.
func validateDepth(d []byte) (flags Irregular, depth int, err error) {
	sp := stacks.Get().(*[]byte)
	stack := (*sp)[:0]
	defer func() {
		if cap(stack) <= maxPooledStack {
			*sp = stack[:0]
			stacks.Put(sp)
		}
	}()
	var f Irregular
	i := skipWS(d, 0)
value:
	for {
		if i >= len(d) {
			return 0, 0, errAt(i, "unexpected end of input")
		}
		switch c := d[i]; c {
		case '{':
			i = skipWS(d, i+1)
			if i < len(d) && d[i] == '}' {
				i++
				break
			}
			stack = append(stack, '{')
			depth = max(depth, len(stack))
			if i, f, err = scanKey(d, i); err != nil {
				return 0, 0, err
			}
			flags |= f
			continue value
		case '[':
			i = skipWS(d, i+1)
			if i < len(d) && d[i] == ']' {
				i++
				break
			}
			stack = append(stack, '[')
			depth = max(depth, len(stack))
			continue value
		case '"':
			if i, f, err = scanString(d, i); err != nil {
				return 0, 0, err
			}
			flags |= f
		case 't':
			if i, err = scanLiteral(d, i, "true"); err != nil {
				return 0, 0, err
			}
		case 'f':
			if i, err = scanLiteral(d, i, "false"); err != nil {
				return 0, 0, err
			}
		case 'n':
			if i, err = scanLiteral(d, i, "null"); err != nil {
				return 0, 0, err
			}
		default:
			if i, err = scanNumber(d, i); err != nil {
				return 0, 0, err
			}
		}
		// After a value: close containers or move to the next member.
		for {
			i = skipWS(d, i)
			if len(stack) == 0 {
				if i != len(d) {
					return 0, 0, errAt(i, "unexpected data after the top-level value")
				}
				return flags, depth, nil
			}
			if i >= len(d) {
				return 0, 0, errAt(i, "unexpected end of input")
			}
			top := stack[len(stack)-1]
			switch c := d[i]; {
			case c == ',':
				i = skipWS(d, i+1)
				if top == '{' {
					if i, f, err = scanKey(d, i); err != nil {
						return 0, 0, err
					}
					flags |= f
				}
				continue value
			case c == '}' && top == '{', c == ']' && top == '[':
				stack = stack[:len(stack)-1]
				i++
			default:
				return 0, 0, errAt(i, "expected ',' or a closing bracket")
			}
		}
	}
}

// skipString returns the index after the string at d[i] (validated input).
func skipString(d []byte, i int) int {
	i++
	for i < len(d) {
		switch d[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return len(d)
}

// skipValue returns the index after the value at d[i] (validated input).
func skipValue(d []byte, i int) int {
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				i = skipString(d, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(d)
	default:
		for i < len(d) && !isWS(d[i]) && d[i] != ',' && d[i] != '}' && d[i] != ']' {
			i++
		}
		return i
	}
}

// Kind is the JSON type of a raw value.
type Kind uint8

// The JSON kinds, told from the first byte of a validated value.
const (
	KindInvalid Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// KindOf returns the kind of a JSON value told from its first byte after
// JSON whitespace, without reading further: the kind of a value cut from a
// validated text, and KindInvalid for bytes that cannot start one.
func KindOf(raw []byte) Kind {
	i := skipWS(raw, 0)
	if i == len(raw) {
		return KindInvalid
	}
	switch raw[i] {
	case 'n':
		return KindNull
	case 't', 'f':
		return KindBool
	case '"':
		return KindString
	case '[':
		return KindArray
	case '{':
		return KindObject
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return KindNumber
	}
	return KindInvalid
}

// Phrase names the kind for a message: "null", "a boolean", "a number",
// "a string", "an array", "an object"; "empty" for KindInvalid.
func (k Kind) Phrase() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "a boolean"
	case KindNumber:
		return "a number"
	case KindString:
		return "a string"
	case KindArray:
		return "an array"
	case KindObject:
		return "an object"
	}
	return "empty"
}

// TruthyValue mirrors JavaScript truthiness of a JSON.parse'd value cut
// from a validated text, told from its bytes without checking them again
// (Truthy checks): null, false, "" and numeric zero (including -0 and
// values that underflow to 0) are falsy; everything else, every object and
// array included, is truthy.
func TruthyValue(raw []byte) bool {
	raw = Trim(raw)
	switch KindOf(raw) {
	case KindBool:
		return raw[0] == 't'
	case KindString:
		return len(raw) > 2
	case KindNumber:
		f, _ := strconv.ParseFloat(string(raw), 64) // ±Inf on overflow: truthy, as in JS
		return f != 0
	case KindArray, KindObject:
		return true
	}
	return false // null, and bytes that are no JSON value
}

// Member is one member of a JSON object, in source order.
type Member struct {
	Key   string          // decoded key (invalid UTF-8 and lone surrogates become U+FFFD)
	Value json.RawMessage // the member's value exactly as received
}

// Object is a strict, read-only view of a JSON object. It keeps members in
// source order with their raw values. Lookups are case-sensitive and, like
// JavaScript's JSON.parse, the last of duplicate keys wins; duplicates are
// recorded so rules can report them.
type Object struct {
	raw        json.RawMessage
	members    []Member
	distinct   int
	duplicates []string
	flags      Irregular
}

// ParseObject validates raw as one JSON text and returns it as an Object. It
// returns an *InputError when raw is not JSON or not an object.
func ParseObject(raw []byte) (*Object, error) {
	flags, err := Scan(raw)
	if err != nil {
		return nil, &InputError{Msg: "input is not JSON: " + err.Error()}
	}
	v := Trim(raw)
	if KindOf(v) != KindObject {
		return nil, &InputError{Msg: "input is " + KindOf(v).Phrase() + ", not a JSON object"}
	}
	o := ObjectOf(v)
	o.flags = flags
	return o, nil
}

// ObjectOf builds the view of a validated, trimmed object.
func ObjectOf(raw []byte) *Object {
	o := &Object{raw: raw}
	i := skipWS(raw, 1)
	for i < len(raw) && raw[i] == '"' {
		end := skipString(raw, i)
		key, _ := DecodeString(raw[i:end])
		i = skipWS(raw, end)
		i = skipWS(raw, i+1) // ':'
		vend := skipValue(raw, i)
		o.members = append(o.members, Member{Key: key, Value: raw[i:vend]})
		i = skipWS(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	o.countDistinct()
	return o
}

func (o *Object) countDistinct() {
	n := len(o.members)
	if n <= 16 {
		for i := range n {
			dup := false
			for j := range i {
				if o.members[j].Key == o.members[i].Key {
					dup = true
					break
				}
			}
			if dup {
				o.noteDuplicate(o.members[i].Key)
			} else {
				o.distinct++
			}
		}
		return
	}
	seen := make(map[string]struct{}, n)
	for _, m := range o.members {
		if _, ok := seen[m.Key]; ok {
			o.noteDuplicate(m.Key)
			continue
		}
		seen[m.Key] = struct{}{}
		o.distinct++
	}
}

func (o *Object) noteDuplicate(key string) {
	for _, d := range o.duplicates {
		if d == key {
			return
		}
	}
	o.duplicates = append(o.duplicates, key)
}

// Get returns the value of key (the last occurrence when the key repeats)
// and whether the key is present. A present null is returned as "null".
func (o *Object) Get(key string) (json.RawMessage, bool) {
	if o == nil {
		return nil, false
	}
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].Key == key {
			return o.members[i].Value, true
		}
	}
	return nil, false
}

// Len is the number of distinct keys (JavaScript's Object.keys(o).length).
func (o *Object) Len() int { return o.distinct }

// Members returns every member in source order, duplicates included.
func (o *Object) Members() []Member {
	if o == nil {
		return nil
	}
	return o.members
}

// Duplicates returns the keys that occur more than once, in order of their
// second occurrence.
func (o *Object) Duplicates() []string { return o.duplicates }

// Raw returns the object's bytes exactly as received.
func (o *Object) Raw() json.RawMessage { return o.raw }

// Irregularities says what a client reading the text ParseObject read
// repairs silently (none for a view ObjectOf made).
func (o *Object) Irregularities() Irregular { return o.flags }

// SoleKey reports whether the validated, trimmed object raw has exactly one
// distinct key and returns it. It stops at the first differing key, so it
// does not walk a large object.
func SoleKey(raw []byte) (string, bool) {
	i := skipWS(raw, 1)
	var first string
	n := 0
	for i < len(raw) && raw[i] == '"' {
		end := skipString(raw, i)
		key, _ := DecodeString(raw[i:end])
		if n == 0 {
			first = key
		} else if key != first {
			return "", false
		}
		n++
		i = skipWS(raw, end)
		i = skipWS(raw, i+1)
		i = skipWS(raw, skipValue(raw, i))
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	return first, n > 0
}

// Elements calls fn for every element of a validated, trimmed array,
// stopping when fn returns false.
func Elements(raw []byte, fn func(i int, v []byte) bool) {
	i := skipWS(raw, 1)
	for n := 0; i < len(raw) && raw[i] != ']'; n++ {
		end := skipValue(raw, i)
		if !fn(n, raw[i:end]) {
			return
		}
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
}

// DecodeString decodes a validated string token (quotes included). Lone
// surrogate escapes and invalid UTF-8 bytes become U+FFFD, as a JavaScript
// TextDecoder would produce for the bytes; the flags say which happened.
func DecodeString(tok []byte) (string, Irregular) {
	body := tok[1 : len(tok)-1]
	plain := true
	for _, c := range body {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(body), 0
	}
	var flags Irregular
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			switch body[i+1] {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, _ := hex4(body[i+2 : i+6])
				if utf16.IsSurrogate(r) {
					if r < 0xDC00 && lowSurrogateAt(body, i+6) {
						r2, _ := hex4(body[i+8 : i+12])
						b.WriteRune(utf16.DecodeRune(r, r2))
						i += 12
						continue
					}
					flags |= LoneSurrogate
					r = utf8.RuneError
				}
				b.WriteRune(r)
				i += 6
				continue
			default: // '"', '\\', '/'
				b.WriteByte(body[i+1])
			}
			i += 2
		case c < 0x80:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				flags |= InvalidUTF8
			}
			b.WriteRune(r)
			i += size
		}
	}
	return b.String(), flags
}

// UTF16Len returns JavaScript's .length of a validated string token: UTF-16
// code units of the decoded string (an invalid UTF-8 byte counts as one
// U+FFFD unit). It does not allocate.
func UTF16Len(tok []byte) int {
	body := tok[1 : len(tok)-1]
	n := 0
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			if body[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
			n++
		case c < 0x80:
			i++
			n++
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r > 0xFFFF {
				n += 2
			} else {
				n++
			}
			i += size
		}
	}
	return n
}

// stringValue returns the decoded value of raw when it is a JSON string.
func stringValue(raw []byte) (string, bool) {
	if KindOf(raw) != KindString {
		return "", false
	}
	s, _ := DecodeString(raw)
	return s, true
}
