package certify

import (
	"fmt"
	"os"
	"regexp"
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
type baselineFile struct {
	ExpectedFailures []report.BaselineEntry `json:"expected_failures"`
}

// storyboardID is the shape of a storyboard id in a baseline entry.
var storyboardID = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// ParseBaseline reads a baseline strictly: unknown fields, a missing or
// empty rule or reason, a rule listed twice, and a rule known rejects are
// errors. An entry "storyboard:<id>" names a compliance storyboard rather
// than a rule: its id must be a plain identifier, and known is not asked
// (which storyboards a run has is only known once it runs; one that did
// not run is marked unjudged).
func ParseBaseline(b []byte, known func(id string) bool) ([]report.BaselineEntry, error) {
	var f baselineFile
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		return nil, err
	}
	if f.ExpectedFailures == nil {
		return nil, fmt.Errorf("no expected_failures list")
	}
	seen := map[string]bool{}
	for i, e := range f.ExpectedFailures {
		switch {
		case strings.TrimSpace(e.Rule) == "":
			return nil, fmt.Errorf("expected_failures[%d]: no rule", i)
		case strings.TrimSpace(e.Reason) == "":
			return nil, fmt.Errorf("expected_failures[%d] (%s): no reason", i, e.Rule)
		case seen[e.Rule]:
			return nil, fmt.Errorf("expected_failures[%d]: %s is listed twice", i, e.Rule)
		case strings.HasPrefix(e.Rule, report.StoryboardBaselinePrefix):
			if !storyboardID.MatchString(strings.TrimPrefix(e.Rule, report.StoryboardBaselinePrefix)) {
				return nil, fmt.Errorf("expected_failures[%d]: %q is not storyboard:<id>", i, e.Rule)
			}
		case known != nil && !known(e.Rule):
			return nil, fmt.Errorf("expected_failures[%d]: unknown rule %q", i, e.Rule)
		}
		seen[e.Rule] = true
	}
	return f.ExpectedFailures, nil
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
