package wire

import (
	"net/netip"
	"net/url"
	"strings"
)

// SameOrigin reports whether two URLs share scheme, host and port.
func SameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

// CrossOriginRefusal says why the harness refuses a fetch of target, a URL
// a seller named on another origin than agent's, or "" when it may go: it
// must be https, and it must not name a loopback, private, link-local or
// unspecified address unless the agent itself is on one (a seller on a
// public host cannot use the harness to read the user's own network).
// Names are not resolved here: the fetch itself dials through
// probes/fetch's checked dialer (mcp.Get), which refuses a public name
// that resolves to a private address.
func CrossOriginRefusal(target, agent string) string {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return "refused a fetch the seller named: not an absolute URL"
	}
	if !strings.EqualFold(u.Scheme, "https") {
		return "refused a fetch the seller named on another origin: " + Sanitize(u.Scheme, 20) + " is not https"
	}
	if why := AddressRefusal(u, agent); why != "" {
		return "refused a fetch the seller named on another origin: " + why
	}
	return ""
}

// AddressRefusal says why target's host may not be reached from a run of
// agent — it is localhost or a literal loopback, private, link-local or
// unspecified address and the agent is not on one — or "".
func AddressRefusal(target *url.URL, agent string) string {
	if !Internal(target.Hostname()) {
		return ""
	}
	if a, err := url.Parse(agent); err == nil && Internal(a.Hostname()) {
		return ""
	}
	return Sanitize(target.Hostname(), 100) + " is not a public address"
}

// Internal reports whether host is localhost or a literal loopback,
// private, link-local or unspecified address.
func Internal(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified()
}
