package cli

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
)

// dialLog is the network of a run under test: its resolver answers
// hostile.MetadataHost with the cloud metadata service's address and
// localhost with loopback (no other name resolves), and its dialer records
// every connection the harness attempts, connecting for real to loopback
// only (the sellers under test).
type dialLog struct {
	mu        sync.Mutex
	attempted []string
	connected map[string]int
	// since is how many connections the seller had accepted before the
	// run.
	since int64
}

func (d *dialLog) network() fetch.Network {
	return fetch.Network{
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			switch strings.ToLower(strings.TrimSuffix(host, ".")) {
			case hostile.MetadataHost:
				return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
			case "localhost":
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return nil, &net.DNSError{Err: "no such host (the test network)", Name: host, IsNotFound: true}
		},
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			d.mu.Lock()
			d.attempted = append(d.attempted, address)
			d.mu.Unlock()
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !ap.Addr().IsLoopback() {
				return nil, fmt.Errorf("the test network reaches loopback only, not %s", address)
			}
			c, err := (&net.Dialer{}).DialContext(ctx, network, address)
			if err == nil {
				d.mu.Lock()
				if d.connected == nil {
					d.connected = map[string]int{}
				}
				d.connected[address]++
				d.mu.Unlock()
			}
			return c, err
		},
	}
}

// check fails t when the run attempted a connection anywhere but loopback
// — the cloud metadata service (169.254.0.0/16) above all — or when the
// seller m accepted more connections than the run made through the guard
// (a client that connects around it).
func (d *dialLog) check(t *testing.T, m *hostile.MCP) {
	t.Helper()
	d.checkAddresses(t)
	d.mu.Lock()
	defer d.mu.Unlock()
	seller := strings.TrimPrefix(m.Origin(), "http://")
	if got, through := m.Accepted()-d.since, int64(d.connected[seller]); got > through {
		t.Errorf("the seller accepted %d connections, %d of them made through the guard", got, through)
	}
}

// checkAddresses fails the test unless connections were attempted, every
// one of them to loopback: none to the cloud metadata service's range nor
// to any address the run does not allow.
func (d *dialLog) checkAddresses(t *testing.T) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.attempted) == 0 {
		t.Error("no connection went through the run's guard")
	}
	for _, a := range d.attempted {
		ap, err := netip.ParseAddrPort(a)
		switch {
		case err != nil:
			t.Errorf("a connection was attempted to %q", a)
		case netip.MustParsePrefix("169.254.0.0/16").Contains(ap.Addr().Unmap()):
			t.Errorf("a connection was attempted to the cloud metadata service's range: %s", a)
		case !ap.Addr().IsLoopback():
			t.Errorf("a connection was attempted to %s, an address the run does not allow", a)
		}
	}
}
