// Package catalogue is the rule catalogue: every normative rule a seller
// agent must meet, with a stable ID, its level, the transports it applies
// to, its statement and its spec source. Judges are labelled with the IDs
// (see RuleIt), reports cite them, baselines list them.
//
//	r, ok := catalogue.Lookup("ENV-02")
//	fmt.Println(r.ID, r.Level, r.Transports, r.Statement)
//
// The catalogue is embedded from rules.yaml; a test checks it against the
// spec's rule table where that is present, so a rule is never dropped or
// renumbered silently.
package catalogue

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"

	"sigs.k8s.io/yaml"
)

// Level is how binding a rule is.
type Level string

// The levels. A MUST failure makes a run non-conformant; a SHOULD failure is
// a warning unless the run is strict.
const (
	Must   Level = "must"
	Should Level = "should"
)

// Transport is a protocol face a rule applies to.
type Transport string

// The transports.
const (
	MCP Transport = "mcp"
	A2A Transport = "a2a"
)

// Rule is one catalogue entry.
type Rule struct {
	ID         string      `json:"id"`
	Family     string      `json:"family"`
	Level      Level       `json:"level"`
	Transports []Transport `json:"transports"`
	Statement  string      `json:"statement"`
	Probe      string      `json:"probe"`
	Source     string      `json:"source"`
	Since      string      `json:"since"`
	// Project marks a rule the project added beyond the spec's table.
	Project bool `json:"project,omitempty"`
	// Retired marks a rule kept only for its ID.
	Retired bool `json:"retired,omitempty"`
}

// Covers reports whether the rule applies to transport t.
func (r Rule) Covers(t Transport) bool { return slices.Contains(r.Transports, t) }

// Family is a group of rules, in catalogue order.
type Family struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Command is the command that judges the family's rules, when it is
	// not run: "fuzz" for the rules of adcp-conform fuzz, which judge the
	// calls only that command makes. A run judges the families without
	// one, a fuzz run those of "fuzz".
	Command string `json:"command,omitempty"`
}

// CommandFuzz is the Command of the families adcp-conform fuzz judges.
const CommandFuzz = "fuzz"

// CommandOf returns the command that judges rule id: "" for run (and an
// unknown id), else its family's Command.
func CommandOf(id string) string {
	r, ok := Lookup(id)
	if !ok {
		return ""
	}
	for _, f := range loaded.Families {
		if f.ID == r.Family {
			return f.Command
		}
	}
	return ""
}

//go:embed rules.yaml
var rulesYAML []byte

type document struct {
	Families []Family `json:"families"`
	Rules    []Rule   `json:"rules"`
}

var (
	idPattern = regexp.MustCompile(`^[A-Z0-9]+-[0-9]{2}$`)
	loaded    = mustParse(rulesYAML)
)

// All returns every rule, in catalogue order.
func All() []Rule { return slices.Clone(loaded.Rules) }

// Families returns the families, in catalogue order.
func Families() []Family { return slices.Clone(loaded.Families) }

// Lookup returns the rule with the ID.
func Lookup(id string) (Rule, bool) {
	i := slices.IndexFunc(loaded.Rules, func(r Rule) bool { return r.ID == id })
	if i < 0 {
		return Rule{}, false
	}
	return loaded.Rules[i], true
}

// FamilyTitle returns the title of the family with the ID.
func FamilyTitle(id string) string {
	for _, f := range loaded.Families {
		if f.ID == id {
			return f.Title
		}
	}
	return ""
}

// mustParse parses the embedded catalogue. The file ships with the binary
// and a test parses it, so a failure here is a build defect, not input.
func mustParse(b []byte) document {
	d, err := parse(b)
	if err != nil {
		panic("catalogue: rules.yaml: " + err.Error())
	}
	return d
}

// parse reads and validates a catalogue document: unique IDs of the right
// shape, known levels, transports and families.
func parse(b []byte) (document, error) {
	var d document
	if err := yaml.UnmarshalStrict(b, &d); err != nil {
		return d, err
	}
	families := map[string]bool{}
	for _, f := range d.Families {
		if families[f.ID] {
			return d, fmt.Errorf("family %s is listed twice", f.ID)
		}
		if f.Command != "" && f.Command != CommandFuzz {
			return d, fmt.Errorf("family %s: unknown command %q", f.ID, f.Command)
		}
		families[f.ID] = true
	}
	seen := map[string]bool{}
	for _, r := range d.Rules {
		switch {
		case !idPattern.MatchString(r.ID):
			return d, fmt.Errorf("rule ID %q does not match %s", r.ID, idPattern)
		case seen[r.ID]:
			return d, fmt.Errorf("rule %s is listed twice", r.ID)
		case !families[r.Family]:
			return d, fmt.Errorf("rule %s: unknown family %q", r.ID, r.Family)
		case r.Level != Must && r.Level != Should:
			return d, fmt.Errorf("rule %s: unknown level %q", r.ID, r.Level)
		case len(r.Transports) == 0:
			return d, fmt.Errorf("rule %s: no transport", r.ID)
		case r.Statement == "" || r.Source == "" || r.Since == "":
			return d, fmt.Errorf("rule %s: statement, source and since are required", r.ID)
		}
		for _, t := range r.Transports {
			if t != MCP && t != A2A {
				return d, fmt.Errorf("rule %s: unknown transport %q", r.ID, t)
			}
		}
		seen[r.ID] = true
	}
	return d, nil
}
