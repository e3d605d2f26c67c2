package fetch

import (
	"net/netip"
	"strconv"
	"strings"
)

// IPLiteral parses every IP literal form a URL host can carry: IPv6 (with
// or without brackets, IPv4-mapped forms unmapped) and IPv4 in its
// inet_aton forms (decimal, octal, hex, one to four parts), so
// "http://0x7f.1/" and "http://2130706433/" are the loopback address
// they are (canonicalize_all_ip_literal_forms_before_classification).
func IPLiteral(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return a.Unmap(), true
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base := 10
		switch {
		case strings.HasPrefix(strings.ToLower(p), "0x"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		n, err := strconv.ParseUint(p, base, 32)
		if err != nil && p != "" {
			return netip.Addr{}, false
		}
		vals = append(vals, n)
	}
	var v uint64
	last := len(vals) - 1
	for i, n := range vals[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - uint(i)))
	}
	if vals[last] >= 1<<(8*(4-uint(last))) {
		return netip.Addr{}, false
	}
	v |= vals[last]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// notGlobal are the IANA special-purpose ranges that are not globally
// routable unicast (address_requirement; blocked_network_examples: this
// network, loopback, link-local, private, carrier-grade NAT,
// documentation, benchmarking, multicast, reserved, unspecified, IPv6
// unique-local).
var notGlobal = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
		"::/128", "::1/128", "64:ff9b::/96", "100::/64", "2001::/23", "2001:db8::/32", "fc00::/7", "fe80::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

// Global reports whether a is globally routable unicast: outside every
// special-purpose range above, IPv4-mapped forms judged as the IPv4
// address they carry. An address with an IPv6 zone is never global: a
// zone names a link, and netip.Prefix.Contains matches no zoned address,
// so "[::1%25eth0]" would otherwise slip past every range.
func Global(a netip.Addr) bool {
	if a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	for _, p := range notGlobal {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// Local reports whether a is an address a local development run may
// reach besides the global ones: loopback and private (RFC 1918, IPv6
// unique-local). Never link-local — 169.254.169.254 is the cloud metadata
// service, whose reply would land in the evidence — nor the unspecified
// address or multicast.
func Local(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate()
}
