package wire

import (
	"bytes"
	"context"
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
