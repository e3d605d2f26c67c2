package suites

import "testing"

// The release a pin should be served in, as reference/versioning.mdx
// resolves it.
func TestDownshifted(t *testing.T) {
	for _, tc := range []struct {
		supported []string
		pin, want string
	}{
		{[]string{"3.0", "3.1"}, "3.1", "3.1"},
		{[]string{"3.0", "3.1"}, "3.99", "3.1"},
		{[]string{"3.0", "3.2"}, "3.1", "3.0"},      // a gap: the highest below
		{[]string{"3.1-beta", "3.1"}, "3.1", "3.1"}, // the release, never the pre-release
		{[]string{"3.0", "3.1"}, "3.1-beta", ""},    // pre-releases match exactly
		{[]string{"3.1", "3.2"}, "3.0", ""},         // below every release
		{[]string{"3.0", "3.1"}, "4.0", ""},         // another major
		{[]string{"3.0", "3.1-rc.1"}, "3.1", "3.0"}, // pre-releases are not downshifted onto
	} {
		if got := downshifted(tc.supported, tc.pin); got != tc.want {
			t.Errorf("%v pinned %s: %q, want %q", tc.supported, tc.pin, got, tc.want)
		}
	}
}
