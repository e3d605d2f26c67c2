package spec

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
)

// knownFinding is a lint finding the spec's own files carry. It is kept
// here, with the reason, rather than hidden; the test fails when it stops
// occurring so the list cannot go stale.
type knownFinding struct {
	file, rule, path, reason string
}

const (
	negativePathReason = "storyboard-schema.yaml defines negative_path as \"schema_invalid\" | \"payload_well_formed\"; this file uses it for the rejection cause"
	narrativeReason    = "storyboard-schema.yaml lists narrative as a non-optional storyboard field; this file has none"
	recaptureReason    = "storyboard-schema.yaml: a context_outputs name MUST be unique within the storyboard run; a later phase captures the same name again (an overwrite)"
	familyReason       = "storyboard-schema.yaml: a context_outputs name MUST be unique within the storyboard run; two requires_capability-gated phase families capture the same names, and their predicates (supported_timezones present: false vs account_selection equals buyer_selected) are not exclusive on their face"
)

func uniqueOutputs(file, reason string, paths ...string) []knownFinding {
	var out []knownFinding
	for _, p := range paths {
		out = append(out, knownFinding{file, ruleContextOutputUnique, p, reason})
	}
	return out
}

// recaptures are the governance and sponsored-intelligence files that
// capture a name again in a later phase, under protocols/ (and its 3.1
// domains/ mirror).
func recaptures(folder string) []knownFinding {
	return append(
		uniqueOutputs(folder+"/governance/index.yaml", recaptureReason, "phases[5].steps[0].context_outputs[0]"),
		uniqueOutputs(folder+"/sponsored-intelligence/sponsored-context-accountability.yaml", recaptureReason,
			"phases[0].steps[1].context_outputs[0]", "phases[1].steps[0].context_outputs[0]", "phases[2].steps[0].context_outputs[0]")...)
}

func availableActions(folder string) []knownFinding {
	var out []knownFinding
	for _, step := range []int{1, 2, 3, 4} {
		out = append(out, knownFinding{folder + "/media-buy/scenarios/available_actions.yaml", ruleNegativePath,
			fmt.Sprintf("phases[3].steps[%d].negative_path", step), negativePathReason})
	}
	return out
}

var knownFindings = map[string][]knownFinding{
	"3.1.19": slices.Concat(availableActions("domains"), availableActions("protocols"), recaptures("domains"), recaptures("protocols")),
	"3.2.0-beta.5": slices.Concat(availableActions("protocols"), recaptures("protocols"),
		uniqueOutputs("protocols/media-buy/index.yaml", familyReason,
			"phases[8].steps[0].context_outputs[0]", "phases[8].steps[0].context_outputs[1]",
			"phases[8].steps[0].context_outputs[2]", "phases[9].steps[0].context_outputs[0]"),
		[]knownFinding{{"protocols/media-buy/scenarios/total_budget_redistribution.yaml", ruleRequiredField, "narrative", narrativeReason}}),
}

func TestSpecReleasesLoadAndLintClean(t *testing.T) {
	for _, release := range []string{"3.1.19", "3.2.0-beta.5"} {
		t.Run(release, func(t *testing.T) {
			dir := shared.File(t, filepath.Join("spec/compliance", release))
			rel, err := Load(dir)
			if err != nil {
				t.Fatalf("Load(%s): %v", release, err)
			}
			known := map[knownFinding]bool{}
			for _, k := range knownFindings[release] {
				known[knownFinding{k.file, k.rule, k.path, ""}] = false
			}
			for _, f := range Lint(rel) {
				key := knownFinding{f.File, f.Rule, f.Path, ""}
				if _, ok := known[key]; ok {
					known[key] = true
					continue
				}
				t.Errorf("%s", f)
			}
			for _, k := range knownFindings[release] {
				if !known[knownFinding{k.file, k.rule, k.path, ""}] {
					t.Errorf("known finding no longer occurs (drop it from knownFindings): %s %s %s", k.file, k.rule, k.path)
				}
			}
			c := Count(rel)
			t.Logf("%s: %d storyboards (%d universal, %d protocols, %d specialisms, %d domains), %d phases, %d steps, %d validations; %d test kits, %d documents, %d vector files; %d known findings",
				release, c.Storyboards, c.ByCategory[Universal], c.ByCategory[Protocols],
				c.ByCategory[Specialisms], c.ByCategory[Domains],
				c.Phases, c.Steps, c.Validations, len(rel.TestKits), len(rel.Documents), len(rel.Vectors), len(knownFindings[release]))
			t.Logf("%s: documents loaded as non-storyboards: %v", release, rel.Documents)
		})
	}
}
