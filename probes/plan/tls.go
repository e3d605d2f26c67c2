package plan

import (
	"context"
	"crypto/tls"
	"net"
	"net/url"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// tlsHandshake records a bare TLS handshake with the target's host: the
// version and cipher it negotiates when the client offers TLS 1.0 to 1.3,
// so an old version is judged (TLS-01) rather than only refused. No
// request and no credential is sent. Over plain HTTP the call is recorded
// as not run.
func tlsHandshake(ctx context.Context, cfg Config, t evidence.Transport, endpoint string) evidence.Call {
	call := evidence.Call{ProbeID: string(t) + "/tls/handshake", Transport: t, Kind: evidence.KindTLSHandshake, Method: "TLS", URL: endpoint, Started: time.Now()}
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "https" {
		call.NotRun = "the target is not HTTPS"
		return call
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	conf := &tls.Config{}
	if cfg.TLS != nil {
		conf = cfg.TLS.Clone()
	}
	conf.MinVersion, conf.MaxVersion, conf.ServerName = tls.VersionTLS10, tls.VersionTLS13, u.Hostname()
	timeout := cfg.MCP.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The handshake connects through the run's guard like every request.
	conn, err := handshake(dctx, cfg.WithGuard(endpoint).Guard, host, conf)
	call.DurationMS = float64(time.Since(call.Started).Microseconds()) / 1000
	x := wire.Exchange{Method: "TLS", URL: endpoint, Started: call.Started, DurationMS: call.DurationMS}
	if err != nil {
		call.HarnessError = "TLS handshake with " + host + ": " + err.Error()
		x.Error = call.HarnessError
		call.Exchanges = []wire.Exchange{x}
		return call
	}
	defer conn.Close()
	st := conn.ConnectionState()
	x.TLSVersion, x.TLSCipher = tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite)
	x.Finished, x.Complete = true, true
	call.Exchanges = []wire.Exchange{x}
	return call
}

// handshake connects to host through g and completes a TLS handshake.
func handshake(ctx context.Context, g *fetch.Guard, host string, conf *tls.Config) (*tls.Conn, error) {
	raw, err := g.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, conf)
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, err
	}
	return conn, nil
}
