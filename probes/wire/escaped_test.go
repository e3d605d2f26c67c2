package wire

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/adcp-conform/adcp-conform/internal/leakcheck"
)

const escapedSecret = "sb/Leak+Tok3n-7d1c"

func TestEscapedSecretsAreRedacted(t *testing.T) {
	r := NewRedactor([]string{escapedSecret}, nil)
	for _, tc := range []struct{ name, in, want string }{
		{"PHP's slash", `{"id":"mb~sb\/Leak+Tok3n-7d1c"}`, `{"id":"mb~[redacted]"}`},
		{"letters as \\u", `{"id":"\u0073b\/\u004Ceak\u002bTok3n-7d1c"}`, `{"id":"[redacted]"}`},
		{"upper case, escaped", `{"id":"SB\/LEAK\u002BTOK3N-7D1C"}`, `{"id":"[redacted]"}`},
		{"in a text item", `{"content":[{"type":"text","text":"{\"media_buy_id\":\"mb~\\u0073b\\/Leak+Tok3n-7d1c\"}"}]}`,
			`{"content":[{"type":"text","text":"{\"media_buy_id\":\"mb~[redacted]\"}"}]}`},
		{"HTML references", `<td>sb&#47;Leak&plus;Tok3n&#x2D;7d1c</td>`, `<td>[redacted]</td>`},
		{"a reference without its semicolon", `sb&#47Leak&#43Tok3n-7d1c!`, `[redacted]!`},
		{"an escaped reference", `sb&amp;#47;Leak+Tok3n-7d1c`, `[redacted]`},
		{"URL escapes", `?q=sb%2fLeak%2BTok3n-7d1c&x=1`, `?q=[redacted]&x=1`},
		{"a JSON escape in a URL escape", `sb%5Cu002fLeak+Tok3n-7d1c`, `[redacted]`},
		{"an SSE id", "id: sb\\/Leak+Tok3n-7d1c\ndata: {}\n\n", "id: [redacted]\ndata: {}\n\n"},
		{"a lone surrogate", `{"m":"\ud800sb\/Leak+Tok3n-7d1c"}`, "{\"m\":\"\uFFFD[redacted]\"}"},
		{"escapes, no secret", `{"m":"a\/b \u0041 &amp; %41"}`, `{"m":"a\/b \u0041 &amp; %41"}`},
		{"too deep", `sb\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\/Leak+Tok3n-7d1c`, `sb\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\/Leak+Tok3n-7d1c`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, hits := r.Body([]byte(tc.in), false)
			if string(got) != tc.want {
				t.Errorf("Body(%s)\n got %s\nwant %s", tc.in, got, tc.want)
			}
			if (hits > 0) != (tc.want != tc.in) {
				t.Errorf("Body(%s): %d hits", tc.in, hits)
			}
			if json.Valid([]byte(tc.in)) && !json.Valid(got) {
				t.Errorf("Body(%s) is not valid JSON: %s", tc.in, got)
			}
		})
	}
}

func TestATruncatedEscapedSecretLosesItsPrefix(t *testing.T) {
	r := NewRedactor([]string{escapedSecret}, nil)
	got, _ := r.Text([]byte(`{"id":"mb~sb\/Le`), true)
	if want := `{"id":"mb~[redacted]`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// FuzzEscapedSecretRedacted writes a secret escaped at random (see
// leakcheck.Escape) into a JSON document, an SSE stream or plain text, and
// redacts it as a body and as a text: no reading of the output by any
// JSON, HTML or URL decoder, or several in turn, holds the secret (see
// internal/leakcheck), a valid JSON document stays valid, and the
// streaming Writer writes what Text returns, in whatever pieces it is fed.
func FuzzEscapedSecretRedacted(f *testing.F) {
	f.Add([]byte{0, 4, 4, 4}, uint8(0), "mb~", "")
	f.Add([]byte{1, 2, 3, 5, 6, 7, 8, 9, 10}, uint8(1), "", " tail")
	f.Add([]byte{2, 1, 2, 3, 4, 5, 6, 0, 2, 1}, uint8(2), "id: ", "")
	f.Add([]byte{0x55, 9, 9, 8, 7, 3, 2}, uint8(3), "&", "9")
	f.Fuzz(func(t *testing.T, pick []byte, container uint8, before, after string) {
		if len(before) > 64 || len(after) > 64 || len(pick) > 256 {
			return
		}
		esc := leakcheck.Escape(escapedSecret, pick)
		var doc string
		switch container % 4 {
		case 0: // written into a JSON string as it is (valid when esc is a string's content)
			doc = `{"id":"` + before + esc + after + `"}`
		case 1: // a string value of a JSON document, escaped once more
			q, _ := json.Marshal(before + esc + after)
			doc = `{"content":[{"type":"text","text":` + string(q) + `}]}`
		case 2:
			doc = "id: " + before + esc + after + "\ndata: {}\n\n"
		default:
			doc = before + esc + after
		}
		r := NewRedactor([]string{escapedSecret}, nil)
		for _, cut := range []bool{false, true} {
			body, _ := r.Body([]byte(doc), cut)
			text, _ := r.Text([]byte(doc), cut)
			for what, out := range map[string][]byte{"Body": body, "Text": text} {
				if where := leakcheck.Find(out, []string{escapedSecret}); where != "" {
					t.Fatalf("%s (cut %v) of %q\n= %q\nholds the secret: %s", what, cut, doc, out, where)
				}
				if len(out) > 4*len(doc)+64 {
					t.Fatalf("%s: output %d bytes for input %d", what, len(out), len(doc))
				}
			}
			if !cut && json.Valid([]byte(doc)) && !json.Valid(body) {
				t.Fatalf("valid input, invalid output:\n in %q\nout %q", doc, body)
			}
			if !cut && utf8.ValidString(doc) && !utf8.Valid(text) {
				t.Fatalf("valid UTF-8 in, invalid out:\n in %q\nout %q", doc, text)
			}
			if !cut {
				// Streamed in pieces of any size, the same bytes.
				var streamed bytes.Buffer
				w := r.Writer(&streamed)
				for rest, n := []byte(doc), 1+len(before)%7; len(rest) > 0; rest = rest[min(n, len(rest)):] {
					w.Write(rest[:min(n, len(rest))])
				}
				w.Close()
				if !bytes.Equal(streamed.Bytes(), text) {
					t.Fatalf("streamed %q\n=  %q\nText %q", doc, streamed.Bytes(), text)
				}
			}
		}
	})
}

// FuzzReadingsAsTheStandardLibrary checks that each reading decodes a
// text as the standard library's decoder does: HTML exactly as
// html.UnescapeString, JSON as encoding/json decodes a string's content,
// URL as url.PathUnescape (where those accept the text, in UTF-8).
func FuzzReadingsAsTheStandardLibrary(f *testing.F) {
	for _, s := range []string{"&#1", "&#1;", "&#x;", "&#12", "&amp", "&ampx;", "&notin;", "&#x80;", "&#99999999999;",
		"a&#9z", "&fjlig;", "&#0000065", `\u0041\/\\`, `\ud83d\ude00`, `\ud800x`, "%41%2f%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if l := decodeEscapes([]byte(s), escHTML, true, nil, nil); string(l.out) != html.UnescapeString(s) || len(l.start) != len(l.out) {
			t.Fatalf("HTML %q: decoded %q, html.UnescapeString %q", s, l.out, html.UnescapeString(s))
		}
		var want string
		if utf8.ValidString(s) && json.Unmarshal([]byte(`"`+s+`"`), &want) == nil { // encoding/json also mends bad UTF-8
			if l := decodeEscapes([]byte(s), escJSON, false, nil, nil); string(l.out) != want {
				t.Fatalf("JSON %q: decoded %q, encoding/json %q", s, l.out, want)
			}
		}
		if want, err := url.PathUnescape(s); err == nil {
			if l := decodeEscapes([]byte(s), escURL, false, nil, nil); string(l.out) != want {
				t.Fatalf("URL %q: decoded %q, url.PathUnescape %q", s, l.out, want)
			}
		}
	})
}
