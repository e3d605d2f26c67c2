package cli

import "testing"

func TestModuleVersionPrefersLdflagsThenTheModule(t *testing.T) {
	for _, tc := range []struct{ set, module, want string }{
		{devVersion, "v1.2.3", "1.2.3"},                   // go install …@v1.2.3
		{devVersion, "(devel)", devVersion},               // go build in a checkout
		{devVersion, "", devVersion},                      // no build info
		{"1.2.4", "v1.2.3", "1.2.4"},                      // a release build's ldflags win
		{devVersion, "v0.0.0-2026-abc", "0.0.0-2026-abc"}, // a pseudo-version
	} {
		if got := moduleVersion(tc.set, tc.module); got != tc.want {
			t.Errorf("moduleVersion(%q, %q) = %q, want %q", tc.set, tc.module, got, tc.want)
		}
	}
}
