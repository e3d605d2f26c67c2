package observer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

func TestHexEqual(t *testing.T) {
	for _, c := range []struct {
		v, enc string
		want   int
	}{
		{"caf%C3%A9", "caf%C3%A9", -1},
		{"caf%c3%a9", "caf%C3%A9", -1},
		{"caf%C3%A9x", "caf%C3%A9", 9},
		{"caf%C3", "caf%C3%A9", 6},
		{"caf%G3%A9", "caf%C3%A9", 4},
		{"caf%C3%A", "caf%C3%A9", 8},
		{"CAF%C3%A9", "caf%C3%A9", 0},
		{"", "", -1},
	} {
		if got := hexEqual(c.v, c.enc); got != c.want {
			t.Errorf("hexEqual(%q, %q) = %d, want %d", c.v, c.enc, got, c.want)
		}
	}
}

func TestSrcsetURLs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"a.jpg 1x, b.jpg 2x", "a.jpg|b.jpg"},
		{"a.jpg,b.jpg", "a.jpg,b.jpg"},
		{"a.jpg, b.jpg", "a.jpg|b.jpg"},
		{" a.jpg 100w (x, y), b.jpg", "a.jpg|b.jpg"},
		{"https://t.example/i?a=1,2 1x", "https://t.example/i?a=1,2"},
		{"", ""},
		{",,,", ""},
	} {
		if got := strings.Join(srcsetURLs(c.in), "|"); got != c.want {
			t.Errorf("srcsetURLs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Each vector of the fixture encodes its value as the unreserved
// whitelist with uppercase hex.
func TestMacroVectorsEncodeUnreserved(t *testing.T) {
	for _, rel := range []string{"3.1.19", "3.2.0-beta.5"} {
		dir := filepath.Dir(filepath.Dir(shared.File(t, "spec/compliance/"+rel+"/"+MacroVectorFile)))
		vs, err := LoadMacroVectors(dir)
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range vs {
			if unsafeByte(v.Encoded) >= 0 || lowerHex(v.Encoded) {
				t.Errorf("%s %s: %q is not uppercase unreserved-or-triplet", rel, name, v.Encoded)
			}
		}
	}
}

func TestParseMacroVectorsRejects(t *testing.T) {
	_, err := parseMacroVectors([]byte(`{"vectors":[{"name":"x","macro":"{A}","value":"v","template":"https://t/?a={A}","expected":"https://t/?b=v"}]}`))
	if err == nil || !strings.Contains(err.Error(), `vector "x"`) {
		t.Errorf("err = %v", err)
	}
	if _, err := parseMacroVectors([]byte(`[`)); err == nil {
		t.Error("a broken fixture parsed")
	}
}

// The observer grades any preview and any template without panicking,
// and a verdict's message opens with one of the kit's codes.
func FuzzSubstitutionObserver(f *testing.F) {
	f.Add(`<img src="https://track.example/imp?sku=00013%26cmd%3Ddrop"><a href="https://track.example/imp?sku=vacancy-%7BDEVICE_ID%7D-42">x</a>`, "https://track.example/imp?sku={SKU}")
	f.Add(`<img srcset=", ,x 1x,(,">`+"<a href='\\\\track.example\\imp?sku=%'>", "https://track.example/{SKU}/x?sku={SKU}")
	f.Add("<meta content=\"0;url=\"><img src=\"https://track.example:/imp?=&&sku\">\x00\xff", "http://u@track.example:80/a/pre{SKU}post?k=1")
	f.Add("<a href=\" java\nscript:00013&cmd=drop\">x</a><img src=\"00013%26cmd%3Ddrop\">", " {SKU} ")
	f.Fuzz(func(t *testing.T, doc, template string) {
		bs := []binding{
			{CatalogBinding: spec.CatalogBinding{Macro: "{SKU}", VectorName: "reserved-character-breakout"}, raw: "00013&cmd=drop", enc: "00013%26cmd%3Ddrop"},
			{CatalogBinding: spec.CatalogBinding{Macro: "{SKU}", VectorName: "nested-expansion-preserved-as-literal"}, raw: "vacancy-{DEVICE_ID}-42", enc: "vacancy-%7BDEVICE_ID%7D-42"},
		}
		mt, err := parseMacroTemplate(template, bs)
		if err != nil {
			return
		}
		urls, _ := extractTrackerURLs(doc)
		for _, every := range []bool{true, false} {
			r := gradeSubstitution(mt, bs, urls, every, "/preview_html")
			if r.Passed {
				continue
			}
			code, _, _ := strings.Cut(r.Message, ":")
			if code != codeEncoding && code != codeNested && code != codeBindingMissing && code != codeScheme {
				t.Fatalf("message %q opens with no kit code", r.Message)
			}
			if strings.ContainsAny(r.Message, "\r\n\u202e") {
				t.Fatalf("unsanitized message %q", r.Message)
			}
		}
	})
}
