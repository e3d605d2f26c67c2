package conform

import (
	"bytes"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

func TestProgressPrintsOneLinePerFamilyInOrder(t *testing.T) {
	res := func(id string, o report.Outcome) runner.Result {
		return runner.Result{Check: suites.Check{ID: id, Transport: catalogue.MCP}, Outcome: o}
	}
	var out bytes.Buffer
	printProgress(&out, []runner.Result{
		res("ENV-01", report.Passed), res("ENV-02", report.Failed), res("ENV-03", report.Skipped),
		res("CTX-01", report.Passed), res("CTX-02", report.Passed),
		res("AUTH-01", report.Error),
	})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, one per family, got %d:\n%s", len(lines), out.String())
	}
	for i, want := range []struct{ mark, family, counts string }{
		{"FAIL", "ENV", "1 passed, 1 failed, 1 skipped"},
		{"ok", "CTX", "2 passed"},
		{"ERROR", "AUTH", "1 error"},
	} {
		f := strings.Fields(lines[i])
		if len(f) < 2 || f[0] != want.mark || f[1] != want.family || !strings.HasSuffix(lines[i], ": "+want.counts) {
			t.Errorf("line %d = %q, want mark %s, family %s, counts %q", i, lines[i], want.mark, want.family, want.counts)
		}
	}
}

func TestProgressOfNothingPrintsNothing(t *testing.T) {
	var out bytes.Buffer
	printProgress(&out, nil)
	if out.Len() != 0 {
		t.Fatalf("printed %q", out.String())
	}
}
