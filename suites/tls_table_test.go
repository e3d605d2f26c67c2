package suites

import (
	"net/http"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The TLS tables. Shapes: §4.76 (TLS 1.2 or newer; HSTS with a max-age of
// a year) and RFC 6797 §6.1 (directive names case-insensitive, a quoted
// max-age value allowed).

// tlsHandshake records the bare handshake probe on t negotiating version.
func tlsHandshake(t evidence.Transport, url, version string) evidence.Call {
	return evidence.Call{ProbeID: string(t) + "/tls/handshake", Transport: t, Kind: evidence.KindTLSHandshake, Method: "TLS", URL: url,
		Exchanges: []wire.Exchange{{Method: "TLS", URL: url, TLSVersion: version}}}
}

// tlsResponse records an HTTPS exchange of kind on t negotiating version,
// answered 200 with the Strict-Transport-Security header hsts ("" for
// none).
func tlsResponse(probeID string, t evidence.Transport, kind evidence.Kind, url, version, hsts string) evidence.Call {
	h := http.Header{}
	if hsts != "" {
		h.Set("Strict-Transport-Security", hsts)
	}
	return evidence.Call{ProbeID: probeID, Transport: t, Kind: kind,
		Exchanges: []wire.Exchange{{Method: "POST", URL: url, Status: 200, TLSVersion: version, ResponseHeaders: h}}}
}

func TestTLS01Table(t *testing.T) {
	const mcpURL, a2aURL = "https://seller.example.com/mcp", "https://seller.example.com/a2a"
	plain := &evidence.Target{MCP: "http://seller.example.com/mcp", A2A: "http://seller.example.com/a2a"}
	for _, on := range []struct {
		tr  catalogue.Transport
		et  evidence.Transport
		url string
	}{{catalogue.MCP, evidence.MCP, mcpURL}, {catalogue.A2A, evidence.A2A, a2aURL}} {
		init := string(on.et) + "/initialize"
		runJudgeTable(t, "TLS-01", on.tr, []judgeCase{
			{name: "TLS 1.3 passes", calls: []evidence.Call{tlsHandshake(on.et, on.url, "TLS 1.3")}, want: Pass},
			{name: "TLS 1.2 passes", calls: []evidence.Call{tlsHandshake(on.et, on.url, "TLS 1.2"), tlsResponse(init, on.et, evidence.KindToolCall, on.url, "TLS 1.2", "")}, want: Pass},
			{name: "TLS 1.1 in the handshake fails", calls: []evidence.Call{tlsHandshake(on.et, on.url, "TLS 1.1")}, want: Fail, msg: "negotiated TLS 1.1, below TLS 1.2"},
			{name: "TLS 1.0 on a call of the run fails", calls: []evidence.Call{tlsHandshake(on.et, on.url, "TLS 1.3"), tlsResponse(init, on.et, evidence.KindToolCall, on.url, "TLS 1.0", "")},
				want: Fail, msg: "negotiated TLS 1.0"},
			{name: "a plain-HTTP target skips", target: plain, calls: []evidence.Call{tlsResponse(init, on.et, evidence.KindToolCall, on.url, "", "")}, want: Skip, msg: "the target is not HTTPS"},
			{name: "no handshake recorded skips", want: Skip, msg: "no TLS handshake was recorded"},
			{name: "a handshake the harness failed is the harness's", calls: []evidence.Call{harnessFailed(string(on.et)+"/tls/handshake", on.et, evidence.KindTLSHandshake, "dial tcp: i/o timeout")},
				want: HarnessError, msg: "i/o timeout"},
		})
	}
}

func TestTLS02Table(t *testing.T) {
	const year = "max-age=31536000; includeSubDomains"
	for _, on := range []struct {
		tr  catalogue.Transport
		et  evidence.Transport
		url string
	}{{catalogue.MCP, evidence.MCP, "https://seller.example.com/mcp"}, {catalogue.A2A, evidence.A2A, "https://seller.example.com/a2a"}} {
		call := func(hsts string) evidence.Call {
			return tlsResponse(string(on.et)+"/get_products/valid", on.et, evidence.KindToolCall, on.url, "TLS 1.3", hsts)
		}
		runJudgeTable(t, "TLS-02", on.tr, []judgeCase{
			{name: "a year passes", calls: []evidence.Call{call(year)}, want: Pass},
			{name: "two years with preload passes", calls: []evidence.Call{call("max-age=63072000; includeSubDomains; preload")}, want: Pass},
			{name: "a quoted max-age passes (RFC 6797 §6.1)", calls: []evidence.Call{call(`max-age="31536000"`)}, want: Pass},
			{name: "an upper-case directive name passes (RFC 6797 §6.1)", calls: []evidence.Call{call("includeSubDomains; Max-Age=31536000")}, want: Pass},
			{name: "no header fails", calls: []evidence.Call{call("")}, want: Fail, msg: "without Strict-Transport-Security"},
			{name: "a day fails", calls: []evidence.Call{call("max-age=86400")}, want: Fail, msg: "max-age 86400, under a year"},
			{name: "no max-age fails", calls: []evidence.Call{call("includeSubDomains")}, want: Fail, msg: "without a max-age"},
			{name: "one response without HSTS among good ones fails", calls: []evidence.Call{call(year), call("")}, want: Fail},
			{name: "a GET of a key host the seller does not run is not judged",
				calls: []evidence.Call{call(year), tlsResponse(string(on.et)+"/hook/jwks", on.et, evidence.KindHTTPGet, "https://keys.example-cdn.net/jwks.json", "TLS 1.3", "")}, want: Pass},
			{name: "a GET on the target's host is judged",
				calls: []evidence.Call{call(year), tlsResponse(string(on.et)+"/hook/jwks", on.et, evidence.KindHTTPGet, "https://seller.example.com/.well-known/jwks.json", "TLS 1.3", "")}, want: Fail},
			{name: "a plain-HTTP target skips", target: &evidence.Target{MCP: "http://seller.example.com/mcp", A2A: "http://seller.example.com/a2a"}, want: Skip, msg: "the target is not HTTPS"},
			{name: "no HTTPS response skips", calls: []evidence.Call{tlsHandshake(on.et, on.url, "TLS 1.3")}, want: Skip, msg: "no HTTPS response was recorded"},
		})
	}
}
