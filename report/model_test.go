package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/golden"
)

// spec and rule are terse constructors for synthetic models.
func spec(o Outcome, msg string) SpecResult {
	return SpecResult{Name: "judge", Transport: "mcp", Outcome: o, Message: msg}
}

func rule(id string, level Level, specs ...SpecResult) RuleResult {
	return RuleResult{ID: id, Family: strings.SplitN(id, "-", 2)[0], Level: level, Transports: []string{"mcp"},
		Statement: "statement of " + id, Source: "seeds", Specs: specs}
}

func TestAggregateFoldsSpecOutcomesIntoTheRule(t *testing.T) {
	cases := []struct {
		name  string
		specs []SpecResult
		want  Outcome
		msg   string
	}{
		{"no spec is not implemented", nil, Skipped, NotImplemented},
		{"a failure wins over everything", []SpecResult{spec(Passed, ""), spec(Error, "net"), spec(Failed, "bad")}, Failed, "bad"},
		{"an error wins over a pass", []SpecResult{spec(Passed, ""), spec(Error, "timeout")}, Error, "timeout"},
		{"a pass wins over a skip", []SpecResult{spec(Skipped, "not declared"), spec(Passed, "")}, Passed, ""},
		{"skips stay skipped", []SpecResult{spec(Skipped, "not declared"), spec(Disabled, "")}, Skipped, "not declared"},
		{"all disabled", []SpecResult{spec(Disabled, "filtered out")}, Disabled, "filtered out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := Aggregate(tc.specs)
			if got != tc.want || msg != tc.msg {
				t.Fatalf("Aggregate = %s %q, want %s %q", got, msg, tc.want, tc.msg)
			}
		})
	}
}

func TestVerdictAndExitCode(t *testing.T) {
	cases := []struct {
		name    string
		strict  bool
		rules   []RuleResult
		verdict Verdict
		exit    int
	}{
		{"every MUST passed", false, []RuleResult{rule("ENV-01", Must, spec(Passed, "")), rule("ENV-05", Should, spec(Skipped, "x"))}, Conformant, 0},
		{"a MUST failed", false, []RuleResult{rule("ENV-01", Must, spec(Failed, "bad")), rule("ENV-02", Must, spec(Passed, ""))}, NonConformant, 1},
		{"a SHOULD failed", false, []RuleResult{rule("ENV-01", Must, spec(Passed, "")), rule("ENV-05", Should, spec(Failed, "differ"))}, Conformant, 0},
		{"a SHOULD failed, strict", true, []RuleResult{rule("ENV-01", Must, spec(Passed, "")), rule("ENV-05", Should, spec(Failed, "differ"))}, NonConformant, 1},
		{"a MUST errored", false, []RuleResult{rule("ENV-01", Must, spec(Error, "unreachable")), rule("ENV-02", Must, spec(Passed, ""))}, HarnessError, 3},
		{"a failure outranks an error", false, []RuleResult{rule("ENV-01", Must, spec(Error, "unreachable")), rule("ENV-02", Must, spec(Failed, "bad"))}, NonConformant, 1},
		{"all skipped is never a pass", false, []RuleResult{rule("ENV-01", Must, spec(Skipped, "x")), rule("ENV-02", Must)}, Incomplete, 3},
		{"nothing at all", false, nil, Incomplete, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Strict: tc.strict, Rules: tc.rules}
			r.Settle()
			if r.Verdict != tc.verdict || r.ExitCode() != tc.exit {
				t.Fatalf("verdict %s exit %d, want %s %d", r.Verdict, r.ExitCode(), tc.verdict, tc.exit)
			}
		})
	}
}

func TestSettleCountsRulesByOutcome(t *testing.T) {
	r := &Run{Rules: []RuleResult{rule("ENV-01", Must, spec(Passed, "")), rule("ENV-02", Must), rule("ENV-03", Must, spec(Failed, "x"))}}
	r.Settle()
	if r.Counts[Passed] != 1 || r.Counts[Skipped] != 1 || r.Counts[Failed] != 1 || r.Rules[1].Message != NotImplemented {
		t.Fatalf("counts %v, rules %+v", r.Counts, r.Rules)
	}
}

// TestWriteTextIsSafeForATerminal renders a run whose seller-influenced
// strings carry escape sequences, CR/LF, a bidi override and a long line,
// and compares with a golden file.
func TestWriteTextIsSafeForATerminal(t *testing.T) {
	hostile := "\x1b[2J\x1b]0;pwned\x07stack\r\nline\u202Eevil" + strings.Repeat("A", 500)
	r := &Run{Tool: "adcp-conform", Version: "0.1.0", AdcpRelease: "3.1.19", Target: "http://127.0.0.1:1/mcp\x1b[31m",
		StartedAt: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC),
		Rules: []RuleResult{
			rule("ENV-01", Must, spec(Passed, "")),
			rule("EOBJ-07", Must, spec(Failed, "EOBJ-07: mcp/get_products/error_version: /message leaks "+hostile)),
			rule("CTX-03", Must, spec(Skipped, "no call without context")),
			rule("AUTH-01", Must, spec(Error, "mcp/get_products/auth_none: timeout after 10s")),
			rule("TLS-01", Must),
		}}
	r.Settle()
	var got bytes.Buffer
	if err := WriteText(&got, r, TextOptions{Dir: "adcp-conform-report"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x1b", "\r", "\u202E", "\x07"} {
		if strings.Contains(got.String(), bad) {
			t.Errorf("output holds %q", bad)
		}
	}
	golden.Check(t, filepath.Join("testdata", "text.golden"), got.Bytes())
}
