package cli

import (
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

func TestDiffPrintsRegressionsAndFailsOnThem(t *testing.T) {
	code, out, errOut := run(t, nil, "", "diff", "testdata/diff/old.json", "testdata/diff/new.json")
	if code != ExitNonConformant {
		t.Fatalf("exit %d, want %d: %s", code, ExitNonConformant, errOut)
	}
	golden.Check(t, "testdata/diff/regressions.golden", []byte(out))
}

func TestDiffWithoutRegressionsExitsZero(t *testing.T) {
	code, out, errOut := run(t, nil, "", "diff", "testdata/diff/old.json", "testdata/diff/old.json")
	if code != ExitOK {
		t.Fatalf("exit %d, want %d: %s", code, ExitOK, errOut)
	}
	golden.Check(t, "testdata/diff/unchanged.golden", []byte(out))
}
