package certify

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/adcp-conform/adcp-conform/report"
)

// baselineFile is the on-disk form of a baseline, YAML or JSON:
//
//	expected_failures:
//	  - rule: CTX-01
//	    reason: the seller drops context on errors until release 4 (TICKET-12)
//	  - rule: storyboard:media_buy_seller
//	    reason: pending activation lands in release 5 (TICKET-31)
//	  - rule: storyboard:media_buy_seller/pricing_currency_filter
//	    step: discover_usd_products/get_products_usd_pricing
//	    checks: [field_absent, field_value]
//	    reason: the storyboard expects its seeded product alone in the feed
//	    spec: "…"                      # optional: the spec text behind the reason
//	    upstream: https://…            # optional: where it is reported
//	    releases: [3.1.19]             # optional: the compliance releases it applies to
//	    sandbox: true                  # optional: only runs with (or without) --sandbox
type baselineFile struct {
	ExpectedFailures []report.BaselineEntry `json:"expected_failures"`
}

// The shapes of a storyboard id, of a step ("<phase_id>/<step_id>", as
// the runner output contract names them) and of a check kind in a
// baseline entry.
var (
	storyboardID = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`)
	stepID       = regexp.MustCompile(`^[A-Za-z0-9_.:-]+/[A-Za-z0-9_.:-]+$`)
	checkKind    = regexp.MustCompile(`^[a-z0-9_]+(\(advisory\))?$`)
)

// ParseBaseline reads a baseline strictly: unknown fields, a missing or
// empty rule or reason, a rule listed twice, and a rule known rejects are
// errors. An entry "storyboard:<id>" names a compliance storyboard rather
// than a rule: its id must be a plain identifier, and known is not asked
// (which storyboards a run has is only known once it runs; one that did
// not run is marked unjudged). Such an entry may name one step of the
// storyboard and the check kinds it fails; a storyboard is listed whole
// or step by step, each step once. Two entries whose scopes (releases,
// sandbox) do not meet may list the same rule or step.
func ParseBaseline(b []byte, known func(id string) bool) ([]report.BaselineEntry, error) {
	var f baselineFile
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		return nil, err
	}
	if f.ExpectedFailures == nil {
		return nil, fmt.Errorf("no expected_failures list")
	}
	for i, e := range f.ExpectedFailures {
		if err := checkEntry(e, known); err != nil {
			return nil, fmt.Errorf("expected_failures[%d]: %w", i, err)
		}
		for j, prev := range f.ExpectedFailures[:i] {
			if prev.Rule == e.Rule && (prev.Step == e.Step || prev.Step == "" || e.Step == "") && scopesMeet(prev, e) {
				what := e.Rule
				if e.Step != "" {
					what += " step " + e.Step
				}
				return nil, fmt.Errorf("expected_failures[%d]: %s is listed twice (also expected_failures[%d])", i, what, j)
			}
		}
	}
	return f.ExpectedFailures, nil
}

// checkEntry checks one entry's fields.
func checkEntry(e report.BaselineEntry, known func(id string) bool) error {
	storyboard := strings.HasPrefix(e.Rule, report.StoryboardBaselinePrefix)
	switch {
	case strings.TrimSpace(e.Rule) == "":
		return fmt.Errorf("no rule")
	case strings.TrimSpace(e.Reason) == "":
		return fmt.Errorf("%s: no reason", e.Rule)
	case storyboard && !storyboardID.MatchString(strings.TrimPrefix(e.Rule, report.StoryboardBaselinePrefix)):
		return fmt.Errorf("%q is not storyboard:<id>", e.Rule)
	case !storyboard && known != nil && !known(e.Rule):
		return fmt.Errorf("unknown rule %q", e.Rule)
	case !storyboard && (e.Step != "" || len(e.Checks) > 0):
		return fmt.Errorf("%s: step and checks name a storyboard's step, not a rule's", e.Rule)
	case e.Step == "" && len(e.Checks) > 0:
		return fmt.Errorf("%s: checks without the step that fails them", e.Rule)
	case e.Step != "" && !stepID.MatchString(e.Step):
		return fmt.Errorf("%s: step %q is not <phase_id>/<step_id>", e.Rule, e.Step)
	}
	for _, c := range e.Checks {
		if !checkKind.MatchString(c) {
			return fmt.Errorf("%s: check %q is not a check kind (field_value, field_present(advisory), error)", e.Rule, c)
		}
	}
	for _, r := range e.Releases {
		if strings.TrimSpace(r) == "" {
			return fmt.Errorf("%s: an empty release", e.Rule)
		}
	}
	return nil
}

// scopesMeet reports whether some run is in both entries' scopes.
func scopesMeet(a, b report.BaselineEntry) bool {
	if a.Sandbox != nil && b.Sandbox != nil && *a.Sandbox != *b.Sandbox {
		return false
	}
	if len(a.Releases) == 0 || len(b.Releases) == 0 {
		return true
	}
	return slices.ContainsFunc(a.Releases, func(r string) bool { return slices.Contains(b.Releases, r) })
}

// LoadBaseline reads the baseline file at path (see ParseBaseline).
func LoadBaseline(path string, known func(id string) bool) ([]report.BaselineEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	entries, err := ParseBaseline(b, known)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}
