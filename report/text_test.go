package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteTextShowsTheTallyAndTheBaseline checks the terminal summary has
// the family × transport table and marks expected failures and stale
// baseline entries.
func TestWriteTextShowsTheTallyAndTheBaseline(t *testing.T) {
	var out bytes.Buffer
	if err := WriteText(&out, summaryRun()); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"  family  transport    passed    failed   skipped     error  disabled\n",
		"  ENV     mcp               1         1         0         0         0\n",
		"  ENV     a2a               0         0         1         0         0\n",
		"  EXPECTED CTX-05",
		"[expected failure (baseline): tracked as SELL-12]",
		"  STALE    CTX-04    should",
		"verdict: non_conformant\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the text output lacks %q:\n%s", want, s)
		}
	}
}
