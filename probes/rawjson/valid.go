package rawjson

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Valid reports whether raw is exactly one JSON text under the grammar of
// JavaScript's JSON.parse (see json.go), at any depth of nesting. Invalid
// UTF-8 inside strings does not make it invalid (a client decoding the bytes
// reads U+FFFD there); CheckText says whether the text is also UTF-8.
// encoding/json's Valid refuses documents nested deeper than 10 000 levels;
// this one reads them, so no reply is left unread for its depth alone.
func Valid(raw []byte) bool {
	_, err := Scan(raw)
	return err == nil
}

// Depth returns the deepest nesting of arrays and objects in the JSON text
// raw (0 for a scalar), and false when raw is not one valid JSON text (as
// Valid). It never recurses, so any depth is measured in linear time.
func Depth(raw []byte) (int, bool) {
	_, depth, err := validateDepth(raw)
	return depth, err == nil
}

// CheckText returns nil when raw is one well-formed JSON text encoded in
// UTF-8 (RFC 8259 §2 and §8.1), whatever its depth; else an error saying
// what is wrong and at which byte.
func CheckText(raw []byte) error {
	if len(bytes.TrimLeft(raw, " \t\r\n")) == 0 {
		return &InputError{Msg: "is empty"}
	}
	if bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")) {
		return &InputError{Msg: "begins with a byte order mark (RFC 8259 §8.1)"}
	}
	if !utf8.Valid(raw) {
		return &InputError{Msg: "is not UTF-8: invalid byte at byte " + strconv.Itoa(invalidUTF8At(raw))}
	}
	if _, err := Scan(raw); err != nil {
		return &InputError{Msg: "is not JSON: " + err.Error()}
	}
	return nil
}

// invalidUTF8At returns the offset of the first byte of b that does not
// start a valid UTF-8 sequence, or -1.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// EachElement calls fn with the index and exact raw bytes of every element
// of the JSON array raw, in order, stopping when fn returns false. It
// returns false, without calling fn, when raw is not one valid JSON array.
func EachElement(raw []byte, fn func(i int, v []byte) bool) bool {
	if !Valid(raw) {
		return false
	}
	v := Trim(raw)
	if KindOf(v) != KindArray {
		return false
	}
	Elements(v, fn)
	return true
}

// Location is where a value is during Walk: the reference tokens from the
// walk's base down to it.
type Location struct {
	base   string
	tokens []string
}

// Base is the pointer the walk started from.
func (p *Location) Base() string { return p.base }

// Tokens are the reference tokens below the base, unescaped. The slice is
// the walk's own: it changes as the walk goes on.
func (p *Location) Tokens() []string { return p.tokens }

// Depth is the number of reference tokens below the base.
func (p *Location) Depth() int { return len(p.tokens) }

// Pointer returns the RFC 6901 pointer of the value. A pointer longer than
// max bytes (max > 0) keeps its base, its first and its last tokens with
// "/…" between them, so a value 100 000 levels deep costs a bounded string.
func (p *Location) Pointer(max int) string {
	full := len(p.base)
	for _, t := range p.tokens {
		full += 1 + len(t)
	}
	if max <= 0 || full <= max {
		return Pointer(p.base, p.tokens...)
	}
	var head, tail []string
	n := len(p.base) + 2
	for i, j := 0, len(p.tokens)-1; i <= j; {
		if len(tail) <= len(head) {
			if n+1+len(p.tokens[j]) > max {
				break
			}
			n += 1 + len(p.tokens[j])
			tail = append(tail, p.tokens[j])
			j--
		} else {
			if n+1+len(p.tokens[i]) > max {
				break
			}
			n += 1 + len(p.tokens[i])
			head = append(head, p.tokens[i])
			i++
		}
	}
	for i, j := 0, len(tail)-1; i < j; i, j = i+1, j-1 {
		tail[i], tail[j] = tail[j], tail[i]
	}
	return Pointer(Pointer(p.base, head...)+"/…", tail...)
}

// Walk calls fn for every scalar value (string, number, boolean, null)
// inside the JSON text raw, in document order, with its location below
// base, the key of the member holding it (for an array element, the key of
// the nearest member above it; "" at the root) and its exact raw bytes.
// A repeated key's earlier values are skipped: JSON.parse keeps the last,
// so no client reads them. It reads the text without recursion, so any
// depth is walked in time linear in its size. It returns false, without
// calling fn, when raw is not one valid JSON text.
func Walk(base string, raw []byte, fn func(at *Location, key string, v []byte)) bool {
	_, depth, err := validateDepth(raw)
	if err != nil {
		return false
	}
	type frame struct {
		obj bool
		n   int    // the index of the current element (arrays)
		key string // the key in effect outside this container
	}
	d := raw
	at := &Location{base: base, tokens: make([]string, 0, depth)}
	stack := make([]frame, 0, depth)
	key := ""
	var lastTok []byte // the token of the last key read, and lastKey its value
	lastKey := ""
	readKey := func(i int) int {
		end := skipString(d, i)
		if tok := d[i:end]; bytes.Equal(tok, lastTok) {
			key = lastKey // a deep document repeats its keys
		} else {
			key, _ = DecodeString(tok)
			lastTok, lastKey = tok, key
		}
		i = skipWS(d, end)
		return skipWS(d, i+1) // ':'
	}
	skip := shadowed(d, depth)
	i := skipWS(d, 0)
	for {
		// A value starts at d[i].
		switch c := d[i]; {
		case skip[i]:
			i = skipValue(d, i) // a repeated key's earlier value: no client reads it
		case c == '{' || c == '[':
			j := skipWS(d, i+1)
			if d[j] == '}' || d[j] == ']' {
				i = j + 1 // an empty container holds no scalar
				break
			}
			stack = append(stack, frame{obj: c == '{', key: key})
			if c == '{' {
				i = readKey(j)
				at.tokens = append(at.tokens, key)
			} else {
				i = j
				at.tokens = append(at.tokens, "0")
			}
			continue
		default:
			end := skipValue(d, i)
			fn(at, key, d[i:end])
			i = end
		}
		// After a value: the next member or element, or close containers.
		for {
			i = skipWS(d, i)
			if len(stack) == 0 {
				return true
			}
			top := &stack[len(stack)-1]
			if d[i] == ',' {
				i = skipWS(d, i+1)
				if top.obj {
					i = readKey(i)
					at.tokens[len(at.tokens)-1] = key
				} else {
					top.n++
					at.tokens[len(at.tokens)-1] = strconv.Itoa(top.n)
				}
				break
			}
			at.tokens = at.tokens[:len(at.tokens)-1]
			key = top.key
			stack = stack[:len(stack)-1]
			i++
		}
	}
}

// StringValue returns the decoded value of a JSON string token (invalid
// UTF-8 and lone surrogate escapes read as U+FFFD), and whether raw is one.
func StringValue(raw []byte) (string, bool) {
	v := Trim(raw)
	if KindOf(v) != KindString || !Valid(v) {
		return "", false
	}
	return stringValue(v)
}

// shadowed returns the offsets in the validated text d of the member values
// that a later member of the same object with the same key hides, or nil
// when no key repeats. depth sizes its stack.
func shadowed(d []byte, depth int) map[int]bool {
	type frame struct {
		obj      bool
		hasFirst bool
		first    string
		firstAt  int
		keys     map[string]int // key → offset of its latest value, from the second distinct key on
	}
	var out map[int]bool
	stack := make([]frame, 0, depth)
	var lastTok []byte
	lastKey := ""
	member := func(i int) int { // reads `"key" :` at d[i], notes the value's offset
		end := skipString(d, i)
		key := lastKey
		if tok := d[i:end]; !bytes.Equal(tok, lastTok) {
			key, _ = DecodeString(tok)
			lastTok, lastKey = tok, key
		}
		i = skipWS(d, skipWS(d, end)+1)
		f := &stack[len(stack)-1]
		switch {
		case !f.hasFirst:
			f.hasFirst, f.first, f.firstAt = true, key, i
			return i
		case f.keys == nil:
			f.keys = map[string]int{f.first: f.firstAt}
		}
		if prev, ok := f.keys[key]; ok {
			if out == nil {
				out = map[int]bool{}
			}
			out[prev] = true
		}
		f.keys[key] = i
		return i
	}
	i := skipWS(d, 0)
	for {
		switch c := d[i]; c {
		case '{', '[':
			j := skipWS(d, i+1)
			if d[j] == '}' || d[j] == ']' {
				i = j + 1
				break
			}
			stack = append(stack, frame{obj: c == '{'})
			i = j
			if c == '{' {
				i = member(j)
			}
			continue
		default:
			i = skipValue(d, i)
		}
		for {
			i = skipWS(d, i)
			if len(stack) == 0 {
				return out
			}
			if d[i] == ',' {
				i = skipWS(d, i+1)
				if stack[len(stack)-1].obj {
					i = member(i)
				}
				break
			}
			stack = stack[:len(stack)-1]
			i++
		}
	}
}

// Fingerprint returns a digest of the JSON value raw that two texts share
// exactly when they hold the same value as a JSON.parse reads it: objects
// compared by key whatever the order (a repeated key's last value counts),
// arrays in order, strings by decoded value, numbers by their float64
// value (a literal too large for one, by its text). It reads the text in
// one pass without recursion, in time linear in its size, so values of any
// depth compare. ok is false when raw is not one valid JSON text.
func Fingerprint(raw []byte) (sum [32]byte, ok bool) {
	if !Valid(raw) {
		return sum, false
	}
	type member struct {
		key string
		sum [32]byte
	}
	type frame struct {
		obj     bool
		key     string // this container's key in its parent object
		members []member
	}
	d := raw
	var stack []frame
	key := ""
	h := sha256.New()
	digest := func(tag byte, parts ...[]byte) [32]byte {
		h.Reset()
		h.Write([]byte{tag})
		for _, p := range parts {
			var n [8]byte
			binary.BigEndian.PutUint64(n[:], uint64(len(p)))
			h.Write(n[:])
			h.Write(p)
		}
		var s [32]byte
		h.Sum(s[:0])
		return s
	}
	scalar := func(v []byte) [32]byte {
		switch KindOf(v) {
		case KindString:
			s, _ := DecodeString(v)
			return digest('s', []byte(s))
		case KindNumber:
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return digest('N', v)
			}
			if f == 0 {
				f = 0 // -0 equals 0
			}
			return digest('n', []byte(strconv.FormatFloat(f, 'g', -1, 64)))
		}
		return digest('l', v) // true, false, null
	}
	closeFrame := func(f frame) [32]byte {
		if !f.obj {
			parts := make([][]byte, len(f.members))
			for i := range f.members {
				parts[i] = f.members[i].sum[:]
			}
			return digest('[', parts...)
		}
		last := map[string][32]byte{}
		for _, m := range f.members {
			last[m.key] = m.sum
		}
		keys := make([]string, 0, len(last))
		for k := range last {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([][]byte, 0, 2*len(keys))
		for _, k := range keys {
			s := last[k]
			parts = append(parts, []byte(k), s[:])
		}
		return digest('{', parts...)
	}
	readKey := func(i int) int {
		end := skipString(d, i)
		key, _ = DecodeString(d[i:end])
		i = skipWS(d, end)
		return skipWS(d, i+1)
	}
	i := skipWS(d, 0)
	var v [32]byte
	for {
		switch c := d[i]; c {
		case '{', '[':
			stack = append(stack, frame{obj: c == '{', key: key})
			j := skipWS(d, i+1)
			if d[j] == '}' || d[j] == ']' {
				i = j + 1
				f := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				v = closeFrame(f)
				key = f.key
				break
			}
			if c == '{' {
				i = readKey(j)
			} else {
				i = j
			}
			continue
		default:
			end := skipValue(d, i)
			v = scalar(d[i:end])
			i = end
		}
		for {
			i = skipWS(d, i)
			if len(stack) == 0 {
				return v, true
			}
			top := &stack[len(stack)-1]
			top.members = append(top.members, member{key, v})
			if d[i] == ',' {
				i = skipWS(d, i+1)
				if top.obj {
					i = readKey(i)
				}
				break
			}
			f := *top
			stack = stack[:len(stack)-1]
			v = closeFrame(f)
			key = f.key
			i++
		}
	}
}

// Truthy is JavaScript truthiness of the JSON value raw, as a client reads
// a flag such as isError; false when raw is not one JSON value.
func Truthy(raw []byte) bool {
	v := Trim(raw)
	return Valid(v) && TruthyValue(v)
}

// Field returns the value of the exact-case key of the JSON object raw
// (the last when the key repeats, as JSON.parse reads it); ok is false when
// raw is not an object or lacks the key.
func Field(raw []byte, key string) (json.RawMessage, bool) {
	o, err := ParseObject(raw)
	if err != nil {
		return nil, false
	}
	return o.Get(key)
}
