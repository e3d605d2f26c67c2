package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// errNotObject: the message is not one valid JSON object.
var errNotObject = errors.New("wire: not a single valid JSON object")

// eachMember calls fn with the key (unescaped) and the exact raw bytes of
// the value of each member of the JSON object msg, in order, duplicates
// included. It returns errNotObject, without calling fn, when msg is not
// one valid JSON object (surrounding whitespace allowed). It decodes
// nothing but escaped keys: matching a reply to its request reads "id" and
// "method" of every message of every call, and a map decode of the whole
// message cost more than the rest of the capture.
func eachMember(msg []byte, fn func(key string, val []byte)) error {
	if !json.Valid(msg) {
		return errNotObject
	}
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return errNotObject
	}
	i = skipSpace(msg, i+1)
	for i < len(msg) && msg[i] != '}' {
		end := stringEnd(msg, i)
		rawKey := msg[i:end]
		key := string(rawKey[1 : len(rawKey)-1])
		if bytes.IndexByte(rawKey, '\\') >= 0 || !utf8.Valid(rawKey) {
			_ = json.Unmarshal(rawKey, &key) // escapes, and U+FFFD for bad bytes, as a decoder reads them
		}
		i = skipSpace(msg, end)
		i = skipSpace(msg, i+1) // the colon
		start := i
		i = valueEnd(msg, i)
		fn(key, msg[start:i])
		i = skipSpace(msg, i)
		if i < len(msg) && msg[i] == ',' {
			i = skipSpace(msg, i+1)
		}
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the string that
// opens at b[i] (b is valid JSON).
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index after the value that starts at b[i] (b is
// valid JSON).
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}
