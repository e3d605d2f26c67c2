package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

func TestHTMLMatchesItsGoldenFile(t *testing.T) {
	var got bytes.Buffer
	if err := WriteHTML(&got, syntheticRun()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "report.golden.html"), got.Bytes())
}

// TestHTMLEscapesSellerStrings puts markup, attribute-breaking quotes and a
// javascript: URL where a seller controls the text, and checks none of it
// survives as markup.
func TestHTMLEscapesSellerStrings(t *testing.T) {
	r := syntheticRun()
	r.Target = `javascript:alert(1)//"><img src=x onerror=alert(2)>`
	r.Rules[1].Specs[0].Message = `"><script>alert(3)</script><a href="javascript:alert(4)">x</a>` + "\u202Egnp.exe\x1b[31m"
	r.Settle()
	var out bytes.Buffer
	if err := WriteHTML(&out, r); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	if strings.Contains(html, "X-Secret-Breadcrumb") {
		t.Error("a response header outside the allowlist reached the page")
	}
	for _, bad := range []string{"<script>alert", "<img src=x", `href="javascript:`, "onerror=alert(2)>", "\u202E", "\x1b"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if !strings.Contains(html, "&lt;script&gt;alert(3)&lt;/script&gt;") {
		t.Error("the seller's message is not shown escaped")
	}
}

func TestHTMLLoadsNothingFromTheNetwork(t *testing.T) {
	var out bytes.Buffer
	if err := WriteHTML(&out, syntheticRun()); err != nil {
		t.Fatal(err)
	}
	z := html.NewTokenizer(&out)
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch tok.Data {
			case "script", "link", "img", "iframe", "object", "embed":
				t.Errorf("the page has a <%s> element", tok.Data)
			}
			for _, a := range tok.Attr {
				if a.Key == "src" || a.Key == "href" || strings.HasPrefix(a.Key, "on") {
					t.Errorf("<%s> has a %s attribute", tok.Data, a.Key)
				}
			}
		}
	}
}
