package suites

import (
	"net/http"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// tlsStore records a handshake negotiating version and one HTTPS response
// carrying hsts ("" for none) on target.
func tlsStore(target, version, hsts string) *evidence.Store {
	s := evidence.NewStore(evidence.Target{MCP: target})
	s.Add(evidence.Call{ProbeID: "mcp/tls/handshake", Transport: evidence.MCP, Kind: evidence.KindTLSHandshake,
		Exchanges: []wire.Exchange{{Method: "TLS", URL: target, TLSVersion: version}}})
	h := http.Header{}
	if hsts != "" {
		h.Set("Strict-Transport-Security", hsts)
	}
	s.Add(evidence.Call{ProbeID: "mcp/initialize", Transport: evidence.MCP, Kind: evidence.KindInitialize,
		Exchanges: []wire.Exchange{{Method: "POST", URL: target, Status: 200, TLSVersion: version, ResponseHeaders: h}}})
	return s
}

func TestTLSJudges(t *testing.T) {
	const https, http = "https://seller.example.com/mcp", "http://seller.example.com/mcp"
	const year = "max-age=31536000; includeSubDomains"
	for _, tc := range []struct {
		name  string
		store *evidence.Store
		judge func(*evidence.Store, Options) Verdict
		want  Outcome
		msg   string
	}{
		{"TLS 1.3", tlsStore(https, "TLS 1.3", year), judgeTLS01, Pass, ""},
		{"TLS 1.1", tlsStore(https, "TLS 1.1", year), judgeTLS01, Fail, "below TLS 1.2"},
		{"plain HTTP", tlsStore(http, "", ""), judgeTLS01, Skip, "the target is not HTTPS"},
		{"HSTS a year", tlsStore(https, "TLS 1.3", year), judgeTLS02, Pass, ""},
		{"HSTS quoted", tlsStore(https, "TLS 1.3", `max-age="63072000"`), judgeTLS02, Pass, ""},
		{"no HSTS", tlsStore(https, "TLS 1.3", ""), judgeTLS02, Fail, "without Strict-Transport-Security"},
		{"HSTS a day", tlsStore(https, "TLS 1.3", "max-age=86400"), judgeTLS02, Fail, "under a year"},
		{"HSTS without max-age", tlsStore(https, "TLS 1.3", "includeSubDomains"), judgeTLS02, Fail, "without a max-age"},
		{"HSTS over plain HTTP", tlsStore(http, "", ""), judgeTLS02, Skip, "the target is not HTTPS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.judge(tc.store, Options{})
			if v.Outcome != tc.want || !strings.Contains(v.Message, tc.msg) {
				t.Fatalf("got %s %q, want %s containing %q", v.Outcome, v.Message, tc.want, tc.msg)
			}
		})
	}
}
