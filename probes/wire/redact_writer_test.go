package wire

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// streamed is what r's Writer writes for the pieces written to it in turn.
func streamed(r *Redactor, pieces ...string) string {
	var out bytes.Buffer
	w := r.Writer(&out)
	for _, p := range pieces {
		w.Write([]byte(p))
	}
	w.Close()
	return out.String()
}

// TestTheWriterCutsASecretSplitAcrossTwoWrites writes each document in two
// pieces, split at every offset: the secret as it is, in another case,
// JSON-escaped in a string (and in a text item, escaped again), as HTML
// references and URL-escaped. The stream is what Text makes of the whole
// document, and holds no secret.
func TestTheWriterCutsASecretSplitAcrossTwoWrites(t *testing.T) {
	r := NewRedactor([]string{escapedSecret, testToken}, nil)
	for _, doc := range []string{
		`{"id":"mb~sb/Leak+Tok3n-7d1c","n":1}`,
		`{"id":"SB/LEAK+TOK3N-7D1C"} then tok-3f9a1c2b7e-canary.`,
		`{"id":"mb~sb\/Leak\u002bTok3n-7d1c"}`,
		`{"text":"{\"media_buy_id\":\"\\u0073b\\/Leak+Tok3n-7d1c\"}"}`,
		`<td>&#34;sb&#47;Leak&#43;Tok3n-7d1c&#34;</td>`,
		`?q=sb%2FLeak%2BTok3n-7d1c&x=1`,
		`sb/Leak+Tok3n-7d1`, // a prefix only: kept
	} {
		whole, _ := r.Text([]byte(doc), false)
		if doc != `sb/Leak+Tok3n-7d1` && bytes.Equal(whole, []byte(doc)) {
			t.Fatalf("Text(%s) cuts nothing", doc)
		}
		for i := 0; i <= len(doc); i++ {
			if got := streamed(r, doc[:i], doc[i:]); got != string(whole) {
				t.Errorf("%s split at %d:\n got %s\nwant %s", doc, i, got, whole)
			}
		}
	}
}

// TestTheWriterRemembersNoPartOverASecretItLearns writes the same
// escaped part many times, before and after the live set learns the
// secret it spells: what the writer found clean before must not keep the
// secret from being cut after.
func TestTheWriterRemembersNoPartOverASecretItLearns(t *testing.T) {
	var live SecretSet
	r := NewLiveRedactor([]string{"fixed-1"}, &live, nil)
	line := `{\"id\":\"pending_activation\",\"x\":\"learnt\u002dSecret-42\"}` + "\n"
	var out bytes.Buffer
	w := r.Writer(&out)
	for range 50 {
		w.Write([]byte(line))
	}
	live.Add("learnt-Secret-42")
	for range 3 {
		w.Write([]byte(line))
	}
	w.Close()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 53 || lines[0]+"\n" != line {
		t.Fatalf("before the set learns it, the value is not a secret: %q", lines[0])
	}
	for _, l := range lines[50:] {
		if strings.Contains(l, "Secret") || !strings.Contains(l, Redacted) {
			t.Errorf("after the set learns it, the secret stays: %s", l)
		}
	}
}

// TestWritersOfOneRedactorRunAtOnce writes four streams through writers
// of one Redactor from four goroutines, as a run writes its reports, while
// its live set learns a secret: none holds the configured secret, and
// each cuts the secret learnt from then on (under the race detector, the
// writers also prove they share no state unguarded). Written again, a
// stream is what Text makes of it.
func TestWritersOfOneRedactorRunAtOnce(t *testing.T) {
	var live SecretSet
	r := NewLiveRedactor([]string{escapedSecret}, &live, nil)
	doc := strings.Repeat(`{"a":"sb\/Leak+Tok3n-7d1c","b":"&#34;pending\u005factivation&#34;","c":"tok-3f9a1c2b7e-canary"} `, 200)
	var wg sync.WaitGroup
	got := make([]string, 4)
	for i := range got {
		wg.Go(func() {
			var pieces []string
			for rest := doc; rest != ""; rest = rest[min(7+i, len(rest)):] {
				pieces = append(pieces, rest[:min(7+i, len(rest))])
			}
			got[i] = streamed(r, pieces...)
		})
	}
	live.Add(testToken)
	wg.Wait()
	for i, g := range got {
		if strings.Contains(g, "Leak") || strings.Count(g, Redacted) < 200 || strings.HasSuffix(g, testToken+`"} `) {
			t.Errorf("writer %d left a secret: …%s", i, g[max(0, len(g)-200):])
		}
	}
	want, _ := r.Text([]byte(doc), false)
	if s := streamed(r, doc); s != string(want) || strings.Contains(s, "canary") {
		t.Errorf("streamed after learning:\n got %.200s\nwant %.200s", s, want)
	}
}
