package rawjson

import (
	"strconv"
	"strings"
)

// This file is the harness's one RFC 6901 JSON pointer: building one from
// reference tokens, splitting one into them, and resolving one in a decoded
// value.

// EscapeToken escapes a reference token: "~" as "~0", "/" as "~1"
// (RFC 6901 §3).
func EscapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// UnescapeToken reads an escaped reference token: "~1" as "/", then "~0"
// as "~" (RFC 6901 §4, in that order, so "~01" is "~1").
func UnescapeToken(t string) string {
	if !strings.Contains(t, "~") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}

// Pointer appends reference tokens, escaped, to the pointer base.
func Pointer(base string, tokens ...string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(EscapeToken(t))
	}
	return b.String()
}

// Tokens splits a pointer into its reference tokens, unescaped: none for
// "" (the whole document); ok is false when a non-empty pointer does not
// start with "/".
func Tokens(pointer string) (tokens []string, ok bool) {
	if pointer == "" {
		return nil, true
	}
	if pointer[0] != '/' {
		return nil, false
	}
	tokens = strings.Split(pointer[1:], "/")
	for i, t := range tokens {
		tokens[i] = UnescapeToken(t)
	}
	return tokens, true
}

// Index reads a reference token as an array index of an array of n
// elements: "0" or digits without a leading zero, below n (RFC 6901 §4).
func Index(token string, n int) (int, bool) {
	if token == "" || len(token) > 1 && token[0] == '0' || strings.Trim(token, "0123456789") != "" {
		return 0, false
	}
	i, err := strconv.Atoi(token)
	if err != nil || i >= n {
		return 0, false
	}
	return i, true
}

// Resolve returns the value the pointer names in a decoded JSON value
// (map[string]any, []any and scalars, as encoding/json decodes into any);
// ok is false when it names nothing there.
func Resolve(doc any, pointer string) (v any, ok bool) {
	tokens, ok := Tokens(pointer)
	if !ok {
		return nil, false
	}
	cur := doc
	for _, tok := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := Index(tok, len(c))
			if !ok {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
