package wire

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkRoundTrip compares a loopback JSON-RPC call over a bare
// http.Transport with the same call through Transport (capture, redaction,
// bearer token), for a 1.1 KB reply and one just under the default
// --max-body (8 MiB): the bytes allocated per call show what capturing a
// large body costs.
func BenchmarkRoundTrip(b *testing.B) {
	small := []byte(`{"jsonrpc":"2.0","id":1,"result":{"products":[` + strings.Repeat(`{"product_id":"p","name":"Product name","pricing_options":[{"model":"cpm","rate":12.5}]},`, 12) + `{}]}}`)
	large := []byte(`{"jsonrpc":"2.0","id":1,"result":{"padding":"` + strings.Repeat("p", int(DefaultMaxBodyBytes)-64<<10) + `"}}`)
	for _, r := range []struct {
		name  string
		reply []byte
	}{{"1KB", small}, {"8MiB", large}} {
		b.Run(r.name, func(b *testing.B) { benchRoundTrip(b, r.reply) })
	}
}

func benchRoundTrip(b *testing.B, reply []byte) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	}))
	defer srv.Close()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"shoes"}}}`)
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.DisableCompression = true
	defer base.CloseIdleConnections()

	run := func(b *testing.B, hc *http.Client, capture bool) {
		b.ReportAllocs()
		b.SetBytes(int64(len(reply)))
		for b.Loop() {
			ctx := context.Background()
			if capture {
				ctx, _ = WithCapture(ctx, "bench")
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n != int64(len(reply)) {
				b.Fatalf("read %d bytes", n)
			}
		}
	}
	b.Run("bare", func(b *testing.B) {
		run(b, &http.Client{Transport: base}, false)
	})
	b.Run("wire", func(b *testing.B) {
		tr := &Transport{Base: base, BearerToken: testToken, Recorder: &Recorder{Max: 1}}
		run(b, tr.client(), true)
	})
}

// BenchmarkRedactBody redacts a 1 MB MCP reply whose text item is JSON
// (every quote escaped, as a seller's reply holds its data twice), with no
// secret in it (the common case) and with the secret JSON-escaped in it;
// and, the worst case, a 1 MB string of escapes of every kind escaped
// again, with no byte that splits it.
func BenchmarkRedactBody(b *testing.B) {
	item := strings.Repeat(`{\"product_id\":\"p-1\",\"name\":\"Product \\u00e9 name\",\"url\":\"https:\/\/x.example\/a?b=1&c=%20\"},`, 9000)
	clean := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"[` + item + `{}]"}]}}`)
	leaked := bytes.Replace(clean, []byte(`p-1`), []byte(`sb\\\/Leak+Tok3n-7d1c`), 1)
	r := NewRedactor([]string{escapedSecret}, nil)
	worst := []byte(`{"m":"` + strings.Repeat(`a\\u0041\u0026amp;%2541`, 50000) + `"}`)
	for name, body := range map[string][]byte{"clean": clean, "leaked": leaked, "worst": worst} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r.Body(body, false)
			}
		})
	}
}

// BenchmarkRedactingWriter streams a run's reports through Writer with
// three secrets configured (a bearer token, an API key, and a token the
// seller echoes JSON-escaped inside a string, as real runs have): about
// 3 MB of results.json-like JSON whose replies carry MCP text items
// (JSON escaped again), and the same text as report.html shows it (HTML
// character references everywhere); each in 64 KB writes (a buffered
// writer's) and in 16-byte writes (a template's, unbuffered).
func BenchmarkRedactingWriter(b *testing.B) {
	const bearer, apiKey = "sk-live-4f9a2c7e1b8d3a6f", "ak_91c3e7d2b5a84f60"
	r := NewRedactor(append(Secrets(bearer, http.Header{"X-Api-Key": {apiKey}}), escapedSecret), nil)
	jsonText := reportLikeJSON(3 << 20)
	htmlText := []byte(html.EscapeString(string(jsonText)))
	for _, tc := range []struct {
		name string
		text []byte
	}{{"json", jsonText}, {"html", htmlText}} {
		for _, size := range []int{64 << 10, 16} {
			b.Run(fmt.Sprintf("%s/%dB", tc.name, size), func(b *testing.B) {
				var out bytes.Buffer
				streamRedacted(r, &out, tc.text, size)
				if bytes.Contains(out.Bytes(), []byte("Tok3n")) || bytes.Contains(out.Bytes(), []byte(bearer)) || out.Len() >= len(tc.text) {
					b.Fatal("a secret is left in the output")
				}
				b.SetBytes(int64(len(tc.text)))
				b.ReportAllocs()
				for b.Loop() {
					streamRedacted(r, io.Discard, tc.text, size)
				}
			})
		}
	}
}

// streamRedacted writes text through r's Writer to w in writes of size
// bytes.
func streamRedacted(r *Redactor, w io.Writer, text []byte, size int) {
	rw := r.Writer(w)
	for rest := text; len(rest) > 0; rest = rest[min(size, len(rest)):] {
		rw.Write(rest[:min(size, len(rest))])
	}
	rw.Close()
}

// reportLikeJSON is about n bytes of indented JSON in the shape of
// results.json and evidence.json: steps with a request, the headers, and a
// reply whose text item is JSON (escaped again); one reply in fifty
// echoes escapedSecret JSON-escaped, one in seventy the bearer token.
func reportLikeJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"steps\": [\n")
	for i := 0; b.Len() < n; i++ {
		id := fmt.Sprintf("mb-%d", i)
		switch {
		case i%50 == 7:
			id = `sb\\\/Leak+Tok3n-7d1c`
		case i%70 == 11:
			id = "sk-live-4f9a2c7e1b8d3a6f"
		}
		inner := fmt.Sprintf(`{\"media_buy_id\":\"%s\",\"status\":\"pending_activation\",\"packages\":[{\"package_id\":\"pkg-%d\",\"product_id\":\"prod-%d\",\"budget\":%d.5,\"pricing_option_id\":\"cpm-1\"}],\"note\":\"Caf\\u00e9 & co \\/ 50%% off\",\"url\":\"https:\/\/ads.example\/c?id=%d&s=%%2F\"}`, id, i, i%9, 1000+i, i)
		fmt.Fprintf(&b, `    {
      "storyboard_id": "media_buy_seller",
      "step_id": "create_media_buy_%d",
      "passed": %t,
      "duration_ms": %d.25,
      "request": {"transport": "mcp", "operation": "create_media_buy", "url": "http://127.0.0.1:40653/mcp",
        "payload": {"buyer_ref": "b-%d", "packages": [{"product_id": "prod-%d", "budget": 1000}], "brand": {"name": "Acme"}}},
      "response": {"transport": "mcp", "status": 200, "headers": {"Content-Type": ["application/json"], "X-Request-Id": ["req-%d"]},
        "payload": {"content": [{"type": "text", "text": "%s"}], "structuredContent": {"media_buy_id": "mb-%d", "status": "pending_activation"}}}
    },
`, i, i%3 == 0, 10+i%90, i, i%9, i, inner, i)
	}
	b.WriteString("    {}\n  ]\n}\n")
	return b.Bytes()
}
