package spec

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Severity says whether a finding breaks a MUST (Error) or a SHOULD (Warning).
type Severity string

// Finding severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Lint rule names. Each is a rule universal/storyboard-schema.yaml states.
const (
	ruleUnknownKey           = "unknown_key"                   // keys the schema and shipped files do not define (exact case)
	ruleRequiredField        = "required_field"                // id, version, title, category, summary, narrative, phases; phase id/title; step id/title/task; validation check; …
	ruleDuplicateID          = "duplicate_id"                  // storyboard ids unique in a release, phase ids in a storyboard, step ids in a phase
	ruleUnknownCheckKind     = "unknown_check_kind"            // check not in runner-output-contract.yaml authored_check_kinds
	ruleDependsOn            = "depends_on"                    // non-empty strings naming earlier phases, never itself
	ruleEmptyGate            = "empty_gate"                    // requires: [] / required_any_of_tools: [] fail-load; requires_all_capabilities minItems 2; tool families minItems 2
	ruleCapabilityMatcher    = "capability_matcher"            // exactly one of equals/contains/not_contains/present (SHOULD)
	ruleContextOutput        = "context_output"                // exactly one of path/generate, a known generator, a name
	ruleContextOutputUnique  = "context_output_unique"         // a context_outputs name is captured once per storyboard run
	ruleContextScalar        = "context_scalar"                // storyboard-root context values are scalars
	ruleBranchSet            = "branch_set"                    // lint:storyboard-branch-sets authoring rules
	ruleOrphanContribution   = "orphan_contribution"           // a contributed flag no assert_contribution any_of grades
	ruleProvidesStateFor     = "provides_state_for"            // same-phase stateful targets, no self-reference, no cycles
	ruleValidationArgs       = "validation_args"               // each check kind's required fields and ranges
	ruleAdvisory             = "advisory_expiry"               // severity values; advisory needs exactly one of expires_after_version / permanent_advisory
	ruleNegativePath         = "negative_path"                 // schema_invalid | payload_well_formed
	ruleScenarioReference    = "unresolved_scenario_reference" // requires_scenarios ids exist in the release
	ruleAuthShape            = "auth_shape"                    // no literal credentials; known auth types
	ruleStepReference        = "step_reference"                // triggered_by / contributes_if / since / {{prior_step.<id>.…}} name an earlier step
	ruleRunnerBounds         = "runner_bounds"                 // parallel_dispatch.count 2..10, retry_trigger 1..10 and its statuses, max_attempts 50..500
	ruleTestKitReference     = "test_kit_reference"            // prerequisites.test_kit names a kit in the release
	ruleTestKitShape         = "test_kit_shape"                // a kit declares auth.api_key, auth.basic or applies_to
	ruleIdentifierPathSyntax = "identifier_path_syntax"        // upstream_traffic identifier_paths portable grammar
	ruleUnknownInvariant     = "unknown_invariant"             // invariants the engine does not define (graded not_applicable)
)

// The invariants a storyboard declares (its `invariants:` list): assertions
// across the steps of one run that no single response shows. The spec
// names them (building/verification/compliance-catalog.mdx, "Cross-resource
// invariants"; the storyboards' own comments) but writes the rules out only
// in prose, so each judge here cites the text it follows and says where it
// reads the spec more carefully than the spec owners' JavaScript runner
// does (docs/storyboards-vs-js-runner.md).
const (
	InvariantConflictNoPayloadLeak = "idempotency.conflict_no_payload_leak"
	InvariantNoSecretEcho          = "context.no_secret_echo"
	InvariantStatusMonotonic       = "status.monotonic"
	InvariantImpairmentCoherence   = "impairment.coherence"
	InvariantGovernanceDenial      = "governance.denial_blocks_mutation"
)

// invariants are the invariants the engine defines (a judge each, in
// package check): lint warns of any other.
var invariants = []string{InvariantConflictNoPayloadLeak, InvariantNoSecretEcho, InvariantStatusMonotonic,
	InvariantImpairmentCoherence, InvariantGovernanceDenial}

// Invariants are the invariants the engine defines.
func Invariants() []string { return slices.Clone(invariants) }

// Finding is one lint result.
type Finding struct {
	Rule     string
	Severity Severity
	File     string // relative to the release folder
	Path     string // YAML path inside the file, e.g. phases[0].steps[2].validations[1].check
	Line     int
	Column   int
	Message  string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d:%d: %s %s: %s: %s", f.File, f.Line, f.Column, f.Severity, f.Rule, f.Path, f.Message)
}

// Lint applies the storyboard-schema.yaml lint rules to a loaded release
// and returns the loader's findings followed by its own, sorted by file
// and line.
func Lint(rel *Release) []Finding {
	l := &linter{rel: rel, byID: map[string][]*Storyboard{}}
	l.out = append(l.out, rel.Findings...)
	for _, sb := range rel.Storyboards {
		l.byID[sb.ID] = append(l.byID[sb.ID], sb)
	}
	l.releaseIDs()
	for _, sb := range rel.Storyboards {
		l.storyboard(sb)
	}
	for _, kit := range rel.TestKits {
		_, key := kit.Auth["api_key"]
		_, basic := kit.Auth["basic"]
		if !key && !basic && kit.AppliesTo == nil {
			l.out = append(l.out, Finding{Rule: ruleTestKitShape, Severity: Error, File: kit.Path, Line: 1, Column: 1,
				Message: "a test kit declares auth.api_key, auth.basic or applies_to"})
		}
	}
	sort.SliceStable(l.out, func(i, j int) bool {
		a, b := l.out[i], l.out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return l.out
}

type linter struct {
	rel  *Release
	byID map[string][]*Storyboard
	out  []Finding
	sb   *Storyboard
}

func (l *linter) add(rule string, sev Severity, at, format string, args ...any) {
	p := l.sb.Position(at)
	for q := at; p == (Position{}) && q != ""; {
		q = parent(q)
		p = l.sb.Position(q)
	}
	l.out = append(l.out, Finding{Rule: rule, Severity: sev, File: l.sb.Path, Path: at, Line: p.Line, Column: p.Column,
		Message: fmt.Sprintf(format, args...)})
}

func parent(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func (l *linter) has(at string) bool { _, ok := l.sb.pos[at]; return ok }

// releaseIDs reports storyboard ids declared by more than one file. The
// 3.1.x domains/ folder mirrors protocols/ file for file, so a domains/X
// file and the protocols/X file it mirrors are one storyboard.
func (l *linter) releaseIDs() {
	ids := make([]string, 0, len(l.byID))
	for id := range l.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		sbs := l.byID[id]
		if id == "" || len(sbs) < 2 {
			continue
		}
		seen := map[string]string{}
		for _, sb := range sbs {
			key := sb.Path
			if sb.Kind == Domains {
				key = string(Protocols) + strings.TrimPrefix(sb.Path, string(Domains))
			}
			if _, ok := seen[key]; !ok || sb.Kind != Domains {
				seen[key] = sb.Path
			}
		}
		if len(seen) < 2 {
			continue
		}
		paths := make([]string, 0, len(seen))
		for _, p := range seen {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths[1:] {
			l.sb = l.storyboardAt(p)
			l.add(ruleDuplicateID, Error, "id", "storyboard id %q is also declared by %s", id, paths[0])
		}
	}
}

func (l *linter) storyboardAt(p string) *Storyboard {
	for _, sb := range l.rel.Storyboards {
		if sb.Path == p {
			return sb
		}
	}
	return nil
}

func (l *linter) storyboard(sb *Storyboard) {
	l.sb = sb
	for _, f := range []struct{ key, val string }{
		{"id", sb.ID}, {"version", sb.Version}, {"title", sb.Title}, {"category", sb.Category},
		{"summary", sb.Summary}, {"narrative", sb.Narrative},
	} {
		if strings.TrimSpace(f.val) == "" {
			l.add(ruleRequiredField, Error, f.key, "a storyboard declares a non-empty %s", f.key)
		}
	}
	// phases: [] is legal: the runner grades such a storyboard no_phases
	// (runner-output-contract.yaml > skip_result), so only the key is required.
	if !l.has("phases") {
		l.add(ruleRequiredField, Error, "phases", "a storyboard declares phases")
	}
	if l.has("requires") && len(sb.Requires) == 0 {
		l.add(ruleEmptyGate, Error, "requires", "requires: [] is a load failure: use requires: [real_wire] for the default behavior, or omit the field entirely")
	}
	if l.has("requires_all_capabilities") && len(sb.RequiresAllCapabilities) < 2 {
		l.add(ruleEmptyGate, Error, "requires_all_capabilities", "requires_all_capabilities holds at least two predicates (use requires_capability for one)")
	}
	if l.has("required_any_of_tools") && len(sb.RequiredAnyOfTools) == 0 {
		l.add(ruleEmptyGate, Error, "required_any_of_tools", "required_any_of_tools: [] is a load failure: omit the field for no requirement")
	}
	for i, fam := range sb.RequiredAnyOfTools {
		if len(fam.Tools) < 2 {
			l.add(ruleEmptyGate, Error, fmt.Sprintf("required_any_of_tools[%d].tools", i), "a tool family names at least two tools (a single tool belongs in required_tools)")
		}
	}
	l.capability("requires_capability", sb.RequiresCapability)
	for i := range sb.RequiresAllCapabilities {
		l.capability(fmt.Sprintf("requires_all_capabilities[%d]", i), &sb.RequiresAllCapabilities[i])
	}
	for k, v := range sb.Context {
		switch v.(type) {
		case map[string]any, []any:
			l.add(ruleContextScalar, Error, "context."+k, "storyboard-root context values are scalars; capture structured values with context_outputs")
		}
	}
	for i, id := range sb.RequiresScenarios {
		if len(l.byID[id]) == 0 {
			l.add(ruleScenarioReference, Error, fmt.Sprintf("requires_scenarios[%d]", i), "requires_scenarios reference %q did not resolve against the source tree", id)
		}
	}
	if sb.Prerequisites != nil && sb.Prerequisites.TestKit != "" && len(l.rel.TestKits) > 0 {
		if !slices.ContainsFunc(l.rel.TestKits, func(k *TestKit) bool { return k.Path == sb.Prerequisites.TestKit }) {
			l.add(ruleTestKitReference, Error, "prerequisites.test_kit", "test kit %q is not in the release", sb.Prerequisites.TestKit)
		}
	}
	for i, id := range sb.Invariants {
		if !slices.Contains(invariants, id) {
			l.add(ruleUnknownInvariant, Warning, fmt.Sprintf("invariants[%d]", i), "invariant %q is not one this engine defines: it grades not_applicable", id)
		}
	}
	l.phases(sb)
	l.contributions(sb)
}

func (l *linter) capability(at string, c *CapabilityPredicate) {
	if c == nil {
		return
	}
	if c.Path == "" {
		l.add(ruleRequiredField, Error, at+".path", "a capability predicate names a path")
	}
	n := 0
	for _, m := range []string{"equals", "contains", "not_contains", "present"} {
		if l.has(at + "." + m) {
			n++
		}
	}
	if n != 1 {
		l.add(ruleCapabilityMatcher, Warning, at, "a capability predicate should declare exactly one of equals, contains, not_contains, present (found %d)", n)
	}
}

func (l *linter) phases(sb *Storyboard) {
	phaseAt := map[string]int{}
	stepAt := map[string]int{} // step id → index of the first phase declaring it
	semantics := map[string]string{}
	captured := map[string]string{} // context output name → YAML path of its first capture
	for pi, ph := range sb.Phases {
		at := fmt.Sprintf("phases[%d]", pi)
		if ph.ID == "" {
			l.add(ruleRequiredField, Error, at+".id", "a phase declares an id")
		} else if _, dup := phaseAt[ph.ID]; dup {
			l.add(ruleDuplicateID, Error, at+".id", "phase id %q is declared twice in the storyboard", ph.ID)
		} else {
			phaseAt[ph.ID] = pi
		}
		if ph.Title == "" {
			l.add(ruleRequiredField, Error, at+".title", "a phase declares a title")
		}
		l.capability(at+".requires_capability", ph.RequiresCapability)
		for di, dep := range ph.DependsOn {
			dat := fmt.Sprintf("%s.depends_on[%d]", at, di)
			j, known := phaseAt[dep]
			switch {
			case dep == "":
				l.add(ruleDependsOn, Error, dat, "depends_on entries are non-empty strings")
			case dep == ph.ID:
				l.add(ruleDependsOn, Error, dat, "phase %q depends on itself", dep)
			case !known || j >= pi:
				l.add(ruleDependsOn, Error, dat, "depends_on %q names no earlier phase of this storyboard", dep)
			}
		}
		if bs := ph.BranchSet; bs != nil {
			if bs.ID == "" {
				l.add(ruleRequiredField, Error, at+".branch_set.id", "a branch_set declares an id")
			}
			if !ph.Optional {
				l.add(ruleBranchSet, Error, at+".branch_set", "a phase with branch_set sets optional: true")
			}
			if bs.Semantics != "any_of" {
				l.add(ruleBranchSet, Error, at+".branch_set.semantics", "branch_set semantics is any_of, not %q", bs.Semantics)
			}
			if s, ok := semantics[bs.ID]; ok && s != bs.Semantics {
				l.add(ruleBranchSet, Error, at+".branch_set.semantics", "phases sharing branch_set %q share its semantics (%q vs %q)", bs.ID, s, bs.Semantics)
			} else if !ok {
				semantics[bs.ID] = bs.Semantics
			}
		}
		steps := map[string]int{}
		for si, st := range ph.Steps {
			sat := fmt.Sprintf("%s.steps[%d]", at, si)
			if st.ID == "" {
				l.add(ruleRequiredField, Error, sat+".id", "a step declares an id")
			} else if _, dup := steps[st.ID]; dup {
				l.add(ruleDuplicateID, Error, sat+".id", "step id %q is declared twice in phase %q", st.ID, ph.ID)
			} else {
				steps[st.ID] = si
			}
			for _, f := range []struct{ key, val string }{{"title", st.Title}, {"task", st.Task}} {
				if f.val == "" {
					l.add(ruleRequiredField, Error, sat+"."+f.key, "a step declares a %s", f.key)
				}
			}
			l.step(sat, ph, st, stepAt)
			for ci, co := range st.ContextOutputs {
				name, cat := co.Variable(), fmt.Sprintf("%s.context_outputs[%d]", sat, ci)
				if first, dup := captured[name]; dup && name != "" {
					l.add(ruleContextOutputUnique, Error, cat, "context output %q is already captured at %s; names are unique within a storyboard run", name, first)
				} else if name != "" {
					captured[name] = cat
				}
			}
			if _, ok := stepAt[st.ID]; !ok && st.ID != "" {
				stepAt[st.ID] = pi
			}
		}
		l.providesState(at, ph)
	}
}

var (
	contributesIf = regexp.MustCompile(`^prior_step\.([A-Za-z0-9_\-]+)\.passed$`)
	priorStepRE   = regexp.MustCompile(`\{\{\s*prior_step\.([A-Za-z0-9_\-]+)\.`)
)

// priorStepRefs returns the step ids named by {{prior_step.<id>.<field>}}
// placeholders in the string values of vs, in order.
func priorStepRefs(vs ...any) []string {
	var out []string
	var visit func(any)
	visit = func(v any) {
		switch v := v.(type) {
		case string:
			for _, m := range priorStepRE.FindAllStringSubmatch(v, -1) {
				out = append(out, m[1])
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				visit(v[k])
			}
		case []any:
			for _, e := range v {
				visit(e)
			}
		}
	}
	for _, v := range vs {
		visit(v)
	}
	return out
}

func (l *linter) step(at string, ph Phase, st Step, earlier map[string]int) {
	l.capability(at+".requires_capability", st.RequiresCapability)
	if st.NegativePath != "" && st.NegativePath != "schema_invalid" && st.NegativePath != "payload_well_formed" {
		l.add(ruleNegativePath, Error, at+".negative_path", "negative_path is schema_invalid or payload_well_formed, not %q", st.NegativePath)
	}
	if a := st.Auth; a != nil && !a.None {
		if l.has(at + ".auth.value") {
			l.add(ruleAuthShape, Error, at+".auth.value", "literal credentials are disallowed (literal_value): use from_test_kit or value_strategy")
		}
		switch a.Type {
		case "api_key", "basic", "oauth_bearer":
		default:
			l.add(ruleAuthShape, Error, at+".auth.type", "auth type is api_key, basic or oauth_bearer, not %q", a.Type)
		}
	}
	if st.Contributes && st.ContributesTo != "" {
		l.add(ruleBranchSet, Error, at, "a step declares contributes or contributes_to, not both")
	}
	if st.Contributes && ph.BranchSet == nil {
		l.add(ruleBranchSet, Error, at+".contributes", "contributes: true is legal only inside a phase that declares branch_set")
	}
	if ph.BranchSet != nil && st.ContributesTo != "" && st.ContributesTo != ph.BranchSet.ID {
		l.add(ruleBranchSet, Error, at+".contributes_to", "a step in branch_set %q contributes to that id, not %q", ph.BranchSet.ID, st.ContributesTo)
	}
	ref := func(key, id string) {
		if _, ok := earlier[id]; !ok {
			l.add(ruleStepReference, Error, at+"."+key, "%s %q names no earlier step of this storyboard", key, id)
		}
	}
	if st.TriggeredBy != "" {
		ref("triggered_by", st.TriggeredBy)
	}
	if st.ContributesIf != "" {
		if m := contributesIf.FindStringSubmatch(st.ContributesIf); m == nil {
			l.add(ruleStepReference, Error, at+".contributes_if", "contributes_if has the form prior_step.<step_id>.passed, not %q", st.ContributesIf)
		} else {
			ref("contributes_if", m[1])
		}
	}
	for _, id := range priorStepRefs(st.SampleRequest, st.Filter) {
		if _, ok := earlier[id]; !ok {
			l.add(ruleStepReference, Error, at+".sample_request", "{{prior_step.%s.…}} names no earlier step of this storyboard", id)
		}
	}
	if pd := st.ParallelDispatch; pd != nil && (pd.Count < 2 || pd.Count > 10) {
		l.add(ruleRunnerBounds, Error, at+".parallel_dispatch.count", "parallel_dispatch.count is an integer 2..10, not %d", pd.Count)
	}
	if rt := st.RetryTrigger; rt != nil {
		if rt.Count < 1 || rt.Count > 10 {
			l.add(ruleRunnerBounds, Error, at+".retry_trigger.count", "retry_trigger.count is 1..10, not %d", rt.Count)
		}
		if l.has(at+".retry_trigger.http_status") && !slices.Contains([]int{429, 500, 502, 503, 504}, rt.HTTPStatus) {
			l.add(ruleRunnerBounds, Error, at+".retry_trigger.http_status", "retry_trigger.http_status is one of 429, 500, 502, 503, 504, not %d", rt.HTTPStatus)
		}
	}
	if rl := st.RateLimitTrip; rl != nil && (rl.MaxAttempts < 50 || rl.MaxAttempts > 500) {
		l.add(ruleRunnerBounds, Error, at+".rate_limit_trip.max_attempts", "rate_limit_trip.max_attempts is 50..500, not %d", rl.MaxAttempts)
	}
	for i, co := range st.ContextOutputs {
		cat := fmt.Sprintf("%s.context_outputs[%d]", at, i)
		if (co.Name == "") == (co.Key == "") {
			l.add(ruleContextOutput, Error, cat, "a context output names its variable once, with name (or key)")
		}
		hasPath, hasGen := l.has(cat+".path"), l.has(cat+".generate")
		if hasPath == hasGen {
			l.add(ruleContextOutput, Error, cat, "a context output sets exactly one of path or generate")
		}
		if hasGen && co.Generate != "uuid_v4" && co.Generate != "opaque_id" {
			l.add(ruleContextOutput, Error, cat+".generate", "generator is uuid_v4 or opaque_id, not %q", co.Generate)
		}
	}
	for i, v := range st.Validations {
		l.validation(fmt.Sprintf("%s.validations[%d]", at, i), v, earlier)
	}
}

func (l *linter) providesState(at string, ph Phase) {
	idx := map[string]int{}
	for i, st := range ph.Steps {
		idx[st.ID] = i
	}
	edges := map[string][]string{}
	for si, st := range ph.Steps {
		sat := fmt.Sprintf("%s.steps[%d].provides_state_for", at, si)
		if len(st.ProvidesStateFor) > 0 && !st.Stateful {
			l.add(ruleProvidesStateFor, Error, sat, "a substitute step declares stateful: true")
		}
		for _, target := range st.ProvidesStateFor {
			j, ok := idx[target]
			switch {
			case target == st.ID:
				l.add(ruleProvidesStateFor, Error, sat, "step %q provides state for itself", target)
			case !ok:
				l.add(ruleProvidesStateFor, Error, sat, "provides_state_for %q names no step of this phase", target)
			case !ph.Steps[j].Stateful:
				l.add(ruleProvidesStateFor, Error, sat, "target step %q declares stateful: true", target)
			default:
				edges[st.ID] = append(edges[st.ID], target)
			}
		}
	}
	// A cycle: some step reaches itself.
	for si, st := range ph.Steps {
		seen := map[string]bool{}
		stack := slices.Clone(edges[st.ID])
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n == st.ID {
				l.add(ruleProvidesStateFor, Error, fmt.Sprintf("%s.steps[%d].provides_state_for", at, si), "provides_state_for forms a cycle through step %q", st.ID)
				break
			}
			if !seen[n] {
				seen[n] = true
				stack = append(stack, edges[n]...)
			}
		}
	}
}

var (
	semverRE    = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
	identSegRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*(\[\*\])?$`)
	purposeVals = []string{"platform_primary", "measurement", "attribution", "creative_serving", "identity", "other"}
)

func (l *linter) validation(at string, v Validation, earlier map[string]int) {
	if v.Check == "" {
		l.add(ruleRequiredField, Error, at+".check", "a validation declares a check")
		return
	}
	if len(l.rel.CheckKinds) > 0 && !slices.Contains(l.rel.CheckKinds, v.Check) {
		l.add(ruleUnknownCheckKind, Error, at+".check", "check %q is not an authored check kind of runner-output-contract.yaml", v.Check)
	}
	switch v.Severity {
	case "", "required":
	case "advisory":
		if v.Has("expires_after_version") == (v.PermanentAdvisory != nil) {
			l.add(ruleAdvisory, Warning, at+".severity", "an advisory validation declares exactly one of expires_after_version or permanent_advisory")
		}
	default:
		l.add(ruleAdvisory, Error, at+".severity", "severity is required or advisory, not %q", v.Severity)
	}
	if v.Has("expires_after_version") && !semverRE.MatchString(v.ExpiresAfterVersion) {
		l.add(ruleAdvisory, Error, at+".expires_after_version", "expires_after_version %q is not a valid semver", v.ExpiresAfterVersion)
	}
	args := func(format string, a ...any) { l.add(ruleValidationArgs, Error, at, format, a...) }
	switch v.Check {
	case "field_value", "field_value_or_absent", "field_contains":
		if !v.Has("value") && !v.Has("allowed_values") {
			args("a %s check declares value or allowed_values", v.Check)
		}
	case "field_greater_than":
		if !v.Has("value") {
			args("a field_greater_than check declares a value threshold")
		}
	case "field_equals_context", "field_in_context_array", "all_fields_in_context_array":
		if v.ContextKey == "" {
			args("a %s check declares context_key", v.Check)
		}
	case "field_less_than":
		if v.ContextKey == "" && !v.Has("value") {
			args("a field_less_than check declares context_key or value")
		}
	case "field_pattern", "envelope_field_pattern":
		// pattern is a JavaScript regular expression source; its syntax is
		// not Go's, so only its presence is checked.
		if v.Pattern == "" {
			args("a %s check declares pattern", v.Check)
		}
	case "array_length":
		hasVal, hasRange := v.Has("value"), v.Has("min") || v.Has("max")
		if hasVal == hasRange {
			args("an array_length check declares value, or min/max, but not both")
		}
		if n, ok := v.Value.(int); hasVal && (!ok || n < 0) {
			args("array_length value is a non-negative integer")
		}
		if (v.Min != nil && *v.Min < 0) || (v.Max != nil && *v.Max < 0) || (v.Min != nil && v.Max != nil && *v.Min > *v.Max) {
			args("array_length bounds are non-negative and min does not exceed max")
		}
	case "refs_resolve":
		for _, side := range []struct {
			key string
			rs  *RefSet
		}{{"source", v.Source}, {"target", v.Target}} {
			if side.rs == nil || side.rs.Path == "" {
				args("a refs_resolve check declares %s.path", side.key)
			} else if side.rs.From != "current_step" && side.rs.From != "context" {
				args("refs_resolve %s.from is current_step or context, not %q", side.key, side.rs.From)
			}
		}
		if len(v.MatchKeys) == 0 {
			args("a refs_resolve check declares match_keys")
		}
		if v.OnOutOfScope != "" && !slices.Contains([]string{"warn", "ignore", "fail"}, v.OnOutOfScope) {
			args("on_out_of_scope is warn, ignore or fail, not %q", v.OnOutOfScope)
		}
	case "cross_response_count_distinct":
		if len(v.AllowedValues) == 0 {
			args("a cross_response_count_distinct check declares allowed_values")
		}
	case "upstream_traffic":
		if v.MinCount != nil && *v.MinCount < 0 {
			args("upstream_traffic min_count is non-negative")
		}
		for i, m := range v.PayloadMustContain {
			if !slices.Contains([]string{"present", "equals", "contains_any"}, m.Match) {
				l.add(ruleValidationArgs, Error, fmt.Sprintf("%s.payload_must_contain[%d].match", at, i), "match is present, equals or contains_any, not %q", m.Match)
			}
		}
		for i, p := range v.IdentifierPaths {
			if !portableIdentifierPath(p) {
				l.add(ruleIdentifierPathSyntax, Error, fmt.Sprintf("%s.identifier_paths[%d]", at, i), "identifier path %q is not a portable request-relative dotted path", p)
			}
		}
		for i, p := range v.PurposeFilter {
			if !slices.Contains(purposeVals, p) {
				l.add(ruleValidationArgs, Error, fmt.Sprintf("%s.purpose_filter[%d]", at, i), "purpose %q is not one of %s", p, strings.Join(purposeVals, ", "))
			}
		}
		if v.AttestationModeRequired != "" && v.AttestationModeRequired != "raw" {
			args("attestation_mode_required is \"raw\" when set, not %q", v.AttestationModeRequired)
		}
		if v.Since != "" {
			if _, ok := earlier[v.Since]; !ok {
				l.add(ruleStepReference, Error, at+".since", "since %q names no earlier step of this storyboard", v.Since)
			}
		}
	}
}

// portableIdentifierPath is the identifier_paths grammar: dotted segments
// of [A-Za-z_][A-Za-z0-9_-]* with an optional [*], no reserved roots.
func portableIdentifierPath(p string) bool {
	segs := strings.Split(p, ".")
	switch strings.TrimSuffix(segs[0], "[*]") {
	case "request", "response", "context":
		return false
	}
	for _, s := range segs {
		if !identSegRE.MatchString(s) {
			return false
		}
	}
	return true
}

// contributions checks branch-set assertion coverage and orphan flags.
func (l *linter) contributions(sb *Storyboard) {
	asserted := map[string]bool{}
	collect := func(s *Storyboard) {
		for _, ph := range s.Phases {
			for _, st := range ph.Steps {
				if st.Task != "assert_contribution" {
					continue
				}
				for _, v := range st.Validations {
					if v.Check == "any_of" {
						for _, a := range v.AllowedValues {
							if s, ok := a.(string); ok {
								asserted[s] = true
							}
						}
					}
				}
			}
		}
	}
	collect(sb)
	for _, id := range sb.RequiresScenarios {
		for _, s := range l.byID[id] {
			collect(s)
		}
	}
	declared := map[string]bool{}
	for _, ph := range sb.Phases {
		if ph.BranchSet != nil {
			declared[ph.BranchSet.ID] = true
		}
	}
	for pi, ph := range sb.Phases {
		at := fmt.Sprintf("phases[%d]", pi)
		if ph.BranchSet != nil && ph.BranchSet.ID != "" && !asserted[ph.BranchSet.ID] {
			l.add(ruleOrphanContribution, Error, at+".branch_set.id", "no assert_contribution any_of step grades branch_set %q", ph.BranchSet.ID)
		}
		for si, st := range ph.Steps {
			flag := st.ContributesTo
			if st.Contributes && ph.BranchSet != nil {
				flag = ph.BranchSet.ID
			}
			if flag == "" {
				continue
			}
			sat := fmt.Sprintf("%s.steps[%d]", at, si)
			if !asserted[flag] && (ph.BranchSet == nil || flag != ph.BranchSet.ID) {
				l.add(ruleOrphanContribution, Error, sat, "contribution %q is graded by no assert_contribution any_of step", flag)
			}
			if declared[flag] && ph.Optional && ph.BranchSet == nil {
				l.add(ruleBranchSet, Error, at, "optional phase contributes to branch_set %q without declaring it (mixed-mode branch set)", flag)
			}
		}
	}
}
