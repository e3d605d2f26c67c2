package catalogue

import (
	"fmt"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"
)

// The label keys a judge carries. A label is "key:value"; values never
// contain the characters Ginkgo's label filter reserves.
const (
	LabelRule      = "rule"
	LabelTransport = "transport"
	LabelLevel     = "level"
	LabelFamily    = "family"
)

// ID is the typed decorator naming the rule a judge checks.
type ID string

// On is the typed decorator naming the transport a judge checks.
type On Transport

// Labels returns the Ginkgo labels of a judge of rule id on transport t:
// rule:ENV-02, transport:mcp, level:must, family:env. The level and family
// come from the catalogue, never from the judge. It fails for an unknown ID
// or a transport the rule does not cover.
func Labels(id string, t Transport) (ginkgo.Labels, error) {
	r, ok := Lookup(id)
	if !ok {
		return nil, fmt.Errorf("unknown rule ID %q", id)
	}
	if !r.Covers(t) {
		return nil, fmt.Errorf("rule %s does not apply to transport %q", id, t)
	}
	return ginkgo.Labels{
		LabelRule + ":" + r.ID,
		LabelTransport + ":" + string(t),
		LabelLevel + ":" + string(r.Level),
		LabelFamily + ":" + strings.ToLower(r.Family),
	}, nil
}

// RuleIt declares a judge: an It whose labels come from its typed
// decorators. args holds exactly one ID and one On, then any other Ginkgo
// decorators and the body:
//
//	catalogue.RuleIt("echoes the request's context unchanged",
//		catalogue.ID("CTX-01"), catalogue.On(catalogue.MCP),
//		func(ctx SpecContext) { ... })
//
// A missing or unknown ID, a transport the rule does not cover, and a full
// spec name used twice are recorded as suite bugs (see Bugs) while the tree
// is built; the judge is still declared, labelled rule:INVALID, so the bug
// surfaces instead of silently dropping a rule.
func RuleIt(text string, args ...any) bool {
	var (
		ids  []ID
		ons  []On
		rest []any
	)
	for _, a := range args {
		switch v := a.(type) {
		case ID:
			ids = append(ids, v)
		case On:
			ons = append(ons, v)
		default:
			rest = append(rest, v)
		}
	}
	labels, err := judgeLabels(text, ids, ons)
	if err != nil {
		recordBug(err)
		labels = ginkgo.Labels{LabelRule + ":INVALID"}
	}
	return ginkgo.It(text, append([]any{labels}, rest...)...)
}

func judgeLabels(text string, ids []ID, ons []On) (ginkgo.Labels, error) {
	if len(ids) != 1 || len(ons) != 1 {
		return nil, fmt.Errorf("judge %q: want exactly one ID and one On, got %d and %d", text, len(ids), len(ons))
	}
	labels, err := Labels(string(ids[0]), Transport(ons[0]))
	if err != nil {
		return nil, fmt.Errorf("judge %q: %w", text, err)
	}
	key := string(ons[0]) + "\x00" + text
	bugs.Lock()
	defer bugs.Unlock()
	if bugs.names[key] {
		return nil, fmt.Errorf("judge %q on %s is declared twice", text, ons[0])
	}
	bugs.names[key] = true
	return labels, nil
}

var bugs = struct {
	sync.Mutex
	found []error
	names map[string]bool
}{names: map[string]bool{}}

func recordBug(err error) {
	bugs.Lock()
	defer bugs.Unlock()
	bugs.found = append(bugs.found, err)
}

// Bugs returns the suite bugs recorded while the tree was built. A runner
// fails the run when there is any.
func Bugs() []error {
	bugs.Lock()
	defer bugs.Unlock()
	return append([]error(nil), bugs.found...)
}

// ResetBugs forgets the recorded bugs and names, before a spec tree is built
// again (after Ginkgo's globals.Reset).
func ResetBugs() {
	bugs.Lock()
	defer bugs.Unlock()
	bugs.found, bugs.names = nil, map[string]bool{}
}

// LabelValue returns the value of the first label "key:value" in labels.
func LabelValue(labels []string, key string) (string, bool) {
	for _, l := range labels {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return v, true
		}
	}
	return "", false
}
