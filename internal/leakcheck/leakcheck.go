// Package leakcheck looks for a credential in what the harness wrote, the
// way a reader of the output could find it: as written, in any ASCII
// letter case, and after any JSON, HTML or URL decoder, or several in
// turn, has read the text. It is the tests' proof that no output holds a
// credential in any escaped form; it decodes with the standard library's
// decoders (encoding/json, html, net/url), not with the redaction's own.
//
//	if where := leakcheck.Find(b, []string{token}); where != "" {
//		t.Errorf("results.json holds the token: %s", where)
//	}
package leakcheck

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
)

// Depth is how many decoders in turn a text is read through: as deep as
// the redaction looks (wire.MaxEscapeDepth).
const Depth = 4

// maxViews bounds the texts looked at for one input.
const maxViews = 4096

// Find returns where the first of the secrets (6 bytes or more) shows in
// b or in one of its decoded readings, with some context, or "" when none
// does.
func Find(b []byte, secrets []string) string {
	var lower []string
	for _, s := range secrets {
		if len(s) >= 6 {
			lower = append(lower, strings.ToLower(s))
		}
	}
	if len(lower) == 0 {
		return ""
	}
	f := finder{secrets: lower, seen: map[[32]byte]bool{}}
	return f.find(string(b), "as written", 0)
}

type finder struct {
	secrets []string
	seen    map[[32]byte]bool // the readings looked at already
}

// find looks at one reading of the text, then at its decodings, depth
// first (one reading of each depth in memory at a time).
func (f *finder) find(text, how string, depth int) string {
	sum := sha256.Sum256([]byte(text))
	if f.seen[sum] || len(f.seen) >= maxViews {
		return ""
	}
	f.seen[sum] = true
	low := strings.ToLower(text)
	for _, s := range f.secrets {
		if i := strings.Index(low, s); i >= 0 {
			return fmt.Sprintf("%s: …%q…", how, text[max(0, i-60):min(len(text), i+len(s)+20)])
		}
	}
	if depth == Depth {
		return ""
	}
	for _, d := range decoders {
		for _, out := range d.decode(text) {
			if out == text {
				continue
			}
			if where := f.find(out, how+" → "+d.name, depth+1); where != "" {
				return where
			}
		}
	}
	return ""
}

type decoder struct {
	name   string
	decode func(string) []string
}

var decoders = []decoder{
	{"JSON strings", jsonStrings},
	{"JSON escapes", when(`\`, jsonUnescape)},
	{"HTML", when("&", html.UnescapeString)},
	{"URL", when("%", urlUnescape)},
}

// when is decode for a text that holds opens (an escape's first byte),
// nothing for another: it would decode nothing.
func when(opens string, decode func(string) string) func(string) []string {
	return func(s string) []string {
		if !strings.Contains(s, opens) {
			return nil
		}
		return []string{decode(s)}
	}
}

// jsonStrings decodes a JSON document (or each line of a JSON-lines or
// event-stream text) and returns every string in it, keys too, joined.
func jsonStrings(s string) []string {
	if !strings.ContainsAny(s, "{[") {
		return nil
	}
	docs := []string{s}
	if !json.Valid([]byte(s)) {
		docs = strings.Split(s, "\n")
	}
	var out []string
	for _, doc := range docs {
		doc = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(doc), "data:"))
		if !strings.ContainsAny(doc, "{[") || !json.Valid([]byte(doc)) {
			continue
		}
		var strs []string
		dec := json.NewDecoder(strings.NewReader(doc))
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if str, ok := tok.(string); ok {
				strs = append(strs, str)
			}
		}
		if len(strs) > 0 {
			out = append(out, strings.Join(strs, "\n"))
		}
	}
	return out
}

var jsonEscapeRE = regexp.MustCompile(`\\(u[0-9a-fA-F]{4}(?:\\u[0-9a-fA-F]{4})?|["\\/bfnrt])`)

// jsonUnescape decodes every JSON escape in s, inside a string or not, as
// encoding/json decodes it in a string (a text with JSON in it that is no
// JSON document: an HTML page, a log line).
func jsonUnescape(s string) string {
	return jsonEscapeRE.ReplaceAllStringFunc(s, func(esc string) string {
		var out string
		if json.Unmarshal([]byte(`"`+esc+`"`), &out) != nil {
			// a high surrogate and a \u that is not its pair: one at a time
			var a, b string
			if json.Unmarshal([]byte(`"`+esc[:6]+`"`), &a) == nil && json.Unmarshal([]byte(`"`+esc[6:]+`"`), &b) == nil {
				return a + b
			}
			return esc
		}
		return out
	})
}

var percentRE = regexp.MustCompile(`%[0-9a-fA-F]{2}`)

// urlUnescape decodes every %XX in s, as url.PathUnescape does.
func urlUnescape(s string) string {
	return percentRE.ReplaceAllStringFunc(s, func(esc string) string {
		out, err := url.PathUnescape(esc)
		if err != nil {
			return esc
		}
		return out
	})
}

// Escape writes s escaped as pick directs, for a fuzz target: each byte
// of pick after the first chooses how one character is written (as it
// is, in the other case, \uXXXX in either case, \/, a decimal,
// hexadecimal or named HTML reference with or without its semicolon,
// %XX), and the first how many more layers (up to Depth in all) escape
// the whole again, and with which encoders (a JSON string's, PHP's,
// HTML's, a URL query's); the rest of pick chooses those.
func Escape(s string, pick []byte) string {
	next := func() byte {
		if len(pick) == 0 {
			return 0
		}
		c := pick[0]
		pick = pick[1:]
		return c
	}
	layers := next()
	var b strings.Builder
	for _, r := range s {
		switch next() % 11 {
		case 0:
			b.WriteRune(r)
		case 1:
			b.WriteString(otherCase(r))
		case 2:
			fmt.Fprintf(&b, `\u%04x`, r)
		case 3:
			fmt.Fprintf(&b, `\u%04X`, r)
		case 4:
			if r == '/' {
				b.WriteString(`\/`)
			} else {
				b.WriteRune(r)
			}
		case 5:
			fmt.Fprintf(&b, "&#%d;", r)
		case 6:
			fmt.Fprintf(&b, "&#x%x;", r)
		case 7:
			fmt.Fprintf(&b, "&#%d", r)
		case 8:
			if name, ok := namedRefs[r]; ok {
				b.WriteString(name)
			} else {
				b.WriteRune(r)
			}
		case 9:
			for _, c := range []byte(string(r)) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		case 10:
			fmt.Fprintf(&b, "&#X%X", r)
		}
	}
	out := b.String()
	for range int(layers % Depth) {
		switch next() % 4 {
		case 0: // a JSON string's content
			q, _ := json.Marshal(out)
			out = string(q[1 : len(q)-1])
		case 1: // the same, PHP's way
			q, _ := json.Marshal(out)
			out = strings.ReplaceAll(string(q[1:len(q)-1]), "/", `\/`)
		case 2:
			out = html.EscapeString(out)
		case 3:
			out = url.QueryEscape(out)
		}
	}
	return out
}

var namedRefs = map[rune]string{'/': "&sol;", '+': "&plus;", '-': "&hyphen;", 'k': "&kappa;", '.': "&period;", 'L': "&Lscr;"}

// otherCase is r in the other ASCII letter case.
func otherCase(r rune) string {
	switch {
	case r >= 'a' && r <= 'z':
		return string(r - 32)
	case r >= 'A' && r <= 'Z':
		return string(r + 32)
	}
	return string(r)
}
