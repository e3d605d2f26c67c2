package wire

import (
	"strings"
	"testing"
)

func TestCrossOriginFetchesAreRestricted(t *testing.T) {
	for _, tc := range []struct {
		target, agent string
		want          string // substring of the refusal; "" when allowed
	}{
		{"https://keys.example.com/jwks.json", "https://seller.example.com/mcp", ""},
		{"http://keys.example.com/jwks.json", "https://seller.example.com/mcp", "not https"},
		{"https://169.254.169.254/latest/meta-data", "https://seller.example.com/mcp", "not a public address"},
		{"https://10.0.0.7/jwks.json", "https://seller.example.com/mcp", "not a public address"},
		{"https://[::1]:8443/jwks.json", "https://seller.example.com/mcp", "not a public address"},
		{"https://localhost/jwks.json", "https://seller.example.com/mcp", "not a public address"},
		{"https://127.0.0.1:9443/jwks.json", "https://127.0.0.1:8443/mcp", ""},
		{"file:///etc/passwd", "https://seller.example.com/mcp", "not an absolute URL"},
	} {
		got := CrossOriginRefusal(tc.target, tc.agent)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("CrossOriginRefusal(%s, %s) = %q, want %q", tc.target, tc.agent, got, tc.want)
		}
	}
	if !SameOrigin("https://a.example/x", "HTTPS://A.example/y") || SameOrigin("https://a.example", "https://a.example:8443") {
		t.Error("SameOrigin compares scheme, host and port, without regard to case")
	}
}
