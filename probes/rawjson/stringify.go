package rawjson

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file measures JSON.stringify(JSON.parse(raw)) without building it:
// the measure of the spec's error-size limits.

// stringifyLen returns the UTF-8 byte length of
// JSON.stringify(JSON.parse(raw)) for a validated, trimmed value.
func stringifyLen(raw []byte) int { return stringifyMeasure(raw, false) }

// stringifyUnits returns JSON.stringify(JSON.parse(raw)).length, in UTF-16
// code units, for a validated, trimmed value.
func stringifyUnits(raw []byte) int { return stringifyMeasure(raw, true) }

// stringifyMeasure measures JSON.stringify(JSON.parse(raw)) in UTF-8 bytes,
// or in UTF-16 code units when units is set. It walks the value once,
// iteratively (no recursion, one frame per open container), and collapses
// duplicate keys the way JSON.parse does: only the last value of a key
// counts.
func stringifyMeasure(raw []byte, units bool) int {
	type frame struct {
		object  bool
		wantKey bool
		key     string
		keyLen  int
		n       int            // array: sum of element lengths
		count   int            // array: elements
		small   []keyed        // object: distinct keys while few
		big     map[string]int // object: distinct keys once many
	}
	var stack []*frame
	result := 0
	emit := func(l int) {
		if len(stack) == 0 {
			result = l
			return
		}
		top := stack[len(stack)-1]
		if !top.object {
			top.n += l
			top.count++
			return
		}
		l += top.keyLen + 1
		if top.big != nil {
			top.big[top.key] = l
			return
		}
		for i := range top.small {
			if top.small[i].key == top.key {
				top.small[i].n = l
				return
			}
		}
		top.small = append(top.small, keyed{top.key, l})
		if len(top.small) > 16 {
			top.big = make(map[string]int, 32)
			for _, k := range top.small {
				top.big[k.key] = k.n
			}
			top.small = nil
		}
	}
	for i := 0; i < len(raw); {
		i = skipWS(raw, i)
		if i >= len(raw) {
			break
		}
		switch c := raw[i]; c {
		case '{', '[':
			stack = append(stack, &frame{object: c == '{', wantKey: c == '{'})
			i++
		case ',':
			if top := stack[len(stack)-1]; top.object {
				top.wantKey = true
			}
			i++
		case ':':
			i++
		case '}', ']':
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			l := 2
			if top.object {
				keys := len(top.small)
				for _, k := range top.small {
					l += k.n
				}
				if top.big != nil {
					keys = len(top.big)
					for _, v := range top.big {
						l += v
					}
				}
				if keys > 1 {
					l += keys - 1
				}
			} else {
				l += top.n
				if top.count > 1 {
					l += top.count - 1
				}
			}
			i++
			emit(l)
		case '"':
			end := skipString(raw, i)
			if len(stack) > 0 && stack[len(stack)-1].wantKey {
				top := stack[len(stack)-1]
				top.key, _ = DecodeString(raw[i:end])
				top.keyLen = stringifyStringLen(raw[i:end], units)
				top.wantKey = false
			} else {
				emit(stringifyStringLen(raw[i:end], units))
			}
			i = end
		case 't':
			emit(4)
			i += 4
		case 'f':
			emit(5)
			i += 5
		case 'n':
			emit(4)
			i += 4
		default:
			end := skipValue(raw, i)
			emit(jsNumberLen(raw[i:end]))
			i = end
		}
	}
	return result
}

type keyed struct {
	key string
	n   int
}

// stringifyStringLen is the length of JSON.stringify of the string token's
// value, in UTF-8 bytes or (units) UTF-16 code units, computed from the raw
// token so lone surrogates are counted as JSON.stringify writes them
// (\udxxx, six of either).
func stringifyStringLen(tok []byte, units bool) int {
	body := tok[1 : len(tok)-1]
	n := 2
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			switch body[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				n += 2
				i += 2
			case '/':
				n++
				i += 2
			default: // 'u'
				r, _ := hex4(body[i+2 : i+6])
				if utf16.IsSurrogate(r) {
					if r < 0xDC00 && lowSurrogateAt(body, i+6) {
						if units {
							n += 2
						} else {
							n += 4
						}
						i += 12
						continue
					}
					n += 6
				} else {
					n += runeStringifyUnits(r, units)
				}
				i += 6
			}
		case c < 0x80:
			n += runeStringifyLen(rune(c))
			i++
		default:
			r, size := utf8.DecodeRune(body[i:]) // invalid bytes read as U+FFFD
			n += runeStringifyUnits(r, units)
			i += size
		}
	}
	return n
}

// runeStringifyUnits is runeStringifyLen in UTF-8 bytes, or in UTF-16
// code units when units is set.
func runeStringifyUnits(r rune, units bool) int {
	if !units || r < 0x80 {
		return runeStringifyLen(r)
	}
	return utf16.RuneLen(r)
}

func runeStringifyLen(r rune) int {
	switch {
	case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20:
		return 6
	}
	return utf8.RuneLen(r)
}

// jsNumberLen is the length of JavaScript's Number::toString of the parsed
// number token (ECMA-262 §6.1.6.1.20); JSON.stringify writes non-finite
// values (an overflowing literal such as 1e400) as null.
func jsNumberLen(tok []byte) int {
	f, _ := strconv.ParseFloat(string(tok), 64)
	if math.IsInf(f, 0) {
		return 4
	}
	if f == 0 {
		return 1 // 0 and -0 both print as "0"
	}
	sign := 0
	if f < 0 {
		sign = 1
		f = -f
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d[.ddd]e±XX, shortest round-trip digits
	e := 0
	for i := 0; i < len(s); i++ {
		if s[i] == 'e' {
			e, _ = strconv.Atoi(s[i+1:])
			s = s[:i]
			break
		}
	}
	k := len(s) // digits
	if k > 1 {
		k-- // the decimal point
	}
	n := e + 1 // position of the decimal point
	switch {
	case k <= n && n <= 21:
		return sign + n
	case 0 < n && n <= 21:
		return sign + k + 1
	case -6 < n && n <= 0:
		return sign + 2 - n + k
	}
	exp := len(strconv.Itoa(abs(n - 1)))
	if k == 1 {
		return sign + 1 + 2 + exp
	}
	return sign + k + 1 + 2 + exp
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// StringifyLen returns the UTF-8 byte length of
// JSON.stringify(JSON.parse(raw)), the measure of transport-errors.mdx's details size
// guidance ("in UTF-8"), or an *InputError when raw is not JSON.
func StringifyLen(raw []byte) (int, error) {
	if err := checkInput(raw); err != nil {
		return 0, err
	}
	return stringifyLen(Trim(raw)), nil
}

// StringifyUnits returns JSON.stringify(JSON.parse(raw)).length in UTF-16
// code units, the measure of transport-errors.mdx's validate() and of MaxErrorLength,
// or an *InputError when raw is not JSON.
func StringifyUnits(raw []byte) (int, error) {
	if err := checkInput(raw); err != nil {
		return 0, err
	}
	return stringifyUnits(Trim(raw)), nil
}

func checkInput(raw []byte) error {
	if len(raw) > MaxInputBytes {
		return &InputError{Msg: "input is over the size limit"}
	}
	if _, err := Scan(raw); err != nil {
		return &InputError{Msg: "input is not JSON: " + err.Error()}
	}
	return nil
}
