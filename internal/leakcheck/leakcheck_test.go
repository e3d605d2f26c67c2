package leakcheck

import (
	"strings"
	"testing"
)

func TestFindReadsEveryDecoderInTurn(t *testing.T) {
	const secret = "lc/Secret+Tok3n"
	for _, tc := range []struct {
		name, text string
		found      bool
	}{
		{"as written", "x lc/Secret+Tok3n y", true},
		{"upper case", "LC/SECRET+TOK3N", true},
		{"a JSON string", `{"a":"lc\/Secret\u002bTok3n"}`, true},
		{"JSON in JSON", `{"text":"{\"id\":\"lc\\\/Secr\\u0065t+Tok3n\"}"}`, true},
		{"HTML", "<td>lc&#47;Secret&plus;Tok3n</td>", true},
		{"HTML of a JSON escape", `lc&#92;/Secret+Tok3n`, true},
		{"URL", "q=lc%2FSecret%2BTok3n", true},
		{"a JSON escape in an HTML page", "<pre>lc\\/Secret+Tok3n</pre>", true},
		{"cut", "lc/Secret+Tok", false},
		{"another", `{"a":"lc\/Secret\u002bTok4n"}`, false},
		{"five layers", "lc" + strings.Repeat(`\`, 31) + "/Secret+Tok3n", false},
	} {
		if where := Find([]byte(tc.text), []string{secret}); (where != "") != tc.found {
			t.Errorf("%s: Find(%q) = %q, want found %v", tc.name, tc.text, where, tc.found)
		}
	}
}

func TestEscapeHidesTheBytesNotTheSecret(t *testing.T) {
	const secret = "lc/Secret+Tok3n"
	for _, pick := range [][]byte{{0, 2, 3, 4, 5, 6, 9, 2, 3, 5, 6, 9, 2, 3, 5, 6}, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 2}, {1, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 2}} {
		esc := Escape(secret, pick)
		if strings.Contains(strings.ToLower(esc), strings.ToLower(secret)) {
			t.Errorf("Escape(%v) = %q keeps the secret's bytes", pick, esc)
		}
		if Find([]byte(esc), []string{secret}) == "" {
			t.Errorf("Escape(%v) = %q: no reading holds the secret", pick, esc)
		}
	}
}
