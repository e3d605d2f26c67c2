package golden

import (
	"strings"
	"testing"
)

// A drifted golden file shows what changed, not both files whole.
func TestDiffShowsOnlyTheChangedLinesAndTheirContext(t *testing.T) {
	var want, got strings.Builder
	for i := range 200 {
		line := "line " + strings.Repeat("x", i%7) + "\n"
		want.WriteString(line)
		if i == 100 {
			line = "changed\n"
		}
		got.WriteString(line)
	}
	d := Diff(want.String(), got.String())
	if !strings.Contains(d, "changed") || !strings.Contains(d, "-") || !strings.Contains(d, "+") {
		t.Fatalf("the diff does not show the change:\n%s", d)
	}
	if n := strings.Count(d, "\n"); n > 40 {
		t.Fatalf("the diff has %d lines for one changed line of 200:\n%s", n, d)
	}
}
