package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// errNotObject: the message is not one valid JSON object.
var errNotObject = errors.New("wire: not a single valid JSON object")

// eachMember calls fn with the key (unescaped) and the exact raw bytes of
// the value of each member of the JSON object msg, in order, duplicates
// included. It returns errNotObject, without calling fn, when msg is not
// one valid JSON object (surrounding whitespace allowed), at any depth of
// nesting (rawjson.Valid: encoding/json's refuses more than 10 000 levels,
// and a reply it cannot match is left unread); on valid JSON
// the redaction's token scanners (redact.go) find each end. It decodes
// nothing but escaped keys: matching a reply to its request reads "id" and
// "method" of every message of every call, and a map decode of the whole
// message cost more than the rest of the capture.
func eachMember(msg []byte, fn func(key string, val []byte)) error {
	if !rawjson.Valid(msg) {
		return errNotObject
	}
	i := skipWS(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return errNotObject
	}
	i = skipWS(msg, i+1)
	for i < len(msg) && msg[i] != '}' {
		end := scanString(msg, i)
		rawKey := msg[i:end]
		key := string(rawKey[1 : len(rawKey)-1])
		if bytes.IndexByte(rawKey, '\\') >= 0 || !utf8.Valid(rawKey) {
			_ = json.Unmarshal(rawKey, &key) // escapes, and U+FFFD for bad bytes, as a decoder reads them
		}
		i = skipWS(msg, end)
		i = skipWS(msg, i+1) // the colon
		start := i
		i = skipValue(msg, i)
		fn(key, msg[start:i])
		i = skipWS(msg, i)
		if i < len(msg) && msg[i] == ',' {
			i = skipWS(msg, i+1)
		}
	}
	return nil
}
