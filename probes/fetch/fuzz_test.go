package fetch

import (
	"net/netip"
	"testing"
)

// FuzzRefusal: any string a seller names is classified without a panic,
// and an IP literal the parser accepts is the address it prints — so an
// address accepted as routable is the one later dialled.
func FuzzRefusal(f *testing.F) {
	for _, s := range []string{"https://as.example.net/x?y=1", "https://0x7f.1/", "https://[::ffff:10.0.0.1]:8443/",
		"http://2130706433/", "https://u:p@h/#f", "https://1.2.3.4.5/", "https://%31%32%37.0.0.1/", "https://[fe80::1%25eth0]/", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = Policy{}.Refusal(s)
		_ = Policy{Local: true, NoIPLiterals: true, DenyHosts: []string{"metadata"}}.Refusal(s)
		_ = RedactURL(s)
		if a, ok := IPLiteral(s); ok {
			b, err := netip.ParseAddr(a.String())
			if err != nil || b != a {
				t.Fatalf("IPLiteral(%q) = %v, which does not read back (%v)", s, a, err)
			}
			if Global(a) && (a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast()) {
				t.Fatalf("IPLiteral(%q) = %v is classified globally routable", s, a)
			}
		}
	})
}
