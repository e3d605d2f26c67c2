package plan

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// tlsServer starts an HTTPS server negotiating at most maxVersion and a
// client configuration trusting it.
func tlsServer(t *testing.T, maxVersion uint16) (*httptest.Server, *tls.Config) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: maxVersion}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, &tls.Config{RootCAs: pool}
}

// TestTLSHandshake records the version the server negotiates, TLS 1.1
// included (the bare handshake offers 1.0 to 1.3), and does not dial a
// plain-HTTP target.
func TestTLSHandshake(t *testing.T) {
	for _, tc := range []struct {
		max  uint16
		want string
	}{{tls.VersionTLS13, "TLS 1.3"}, {tls.VersionTLS12, "TLS 1.2"}, {tls.VersionTLS11, "TLS 1.1"}} {
		srv, conf := tlsServer(t, tc.max)
		c := tlsHandshake(t.Context(), Config{TLS: conf}, evidence.MCP, srv.URL+"/mcp")
		if c.HarnessError != "" || c.NotRun != "" || len(c.Exchanges) != 1 {
			t.Fatalf("max %s: %+v", tc.want, c)
		}
		if x := c.Exchanges[0]; x.TLSVersion != tc.want || x.TLSCipher == "" || c.Kind != evidence.KindTLSHandshake {
			t.Errorf("max %s: negotiated %q cipher %q", tc.want, x.TLSVersion, x.TLSCipher)
		}
	}
	if c := tlsHandshake(t.Context(), Config{}, evidence.MCP, "http://127.0.0.1:1/mcp"); c.NotRun != "the target is not HTTPS" {
		t.Errorf("plain HTTP: NotRun %q", c.NotRun)
	}
	srv, _ := tlsServer(t, tls.VersionTLS13)
	if c := tlsHandshake(t.Context(), Config{}, evidence.MCP, srv.URL); c.HarnessError == "" {
		t.Error("an untrusted certificate is not a harness error")
	}
}
