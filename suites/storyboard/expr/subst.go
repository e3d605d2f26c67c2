package expr

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Substitution of the storyboard tokens into a step's request
// (universal/storyboard-schema.yaml, "Context accumulator and
// substitution", "Unresolved substitution behavior", "Substitution
// variables (webhook-receiver enabled)", context_outputs and
// context_inputs). The token forms, all of them found in the shipped
// storyboards of 3.1.19 and 3.2.0-beta.5 (subst_spec_test.go checks that):
//
//	$context.<name>                  a context accumulator value
//	$generate:uuid_v4[#<alias>]      a fresh UUID v4; with an alias, one per run
//	$generate:opaque_id[#<alias>]    the same (context_outputs generate names)
//	$test_kit.<path>                 a value of the storyboard's test kit
//	$agent_url                       the URL of the agent under test
//	{{runner.webhook_base}}          the webhook receiver's base URL
//	{{runner.webhook_url:<step_id>}} the receiver URL for one step
//	{{prior_step.<id>.<field>}}      a field of an earlier step's response
//
// A string that is exactly one token takes the token's value with its JSON
// type ("Captured values are typed as the JSON path resolved against the
// response; numeric and object captures are preserved"). A token inside a
// longer string is interpolated: strings as they are, numbers, booleans and
// null in their JSON spelling. An object or array cannot be spelled into a
// string, so it is an UnresolvedError rather than a guessed text.
//
// Decision (storyboard-schema.yaml, "Unresolved substitution behavior"
// asks that no `{{...}}` token reach the wire): only the runner's own
// namespaces `{{runner.…}}` and `{{prior_step.…}}` are tokens; any other
// double-brace text is payload data and is sent as written. The macro
// safety vectors (test-vectors/catalog-macro-substitution.json,
// "{{store.name}}") make double-brace text a legitimate value the agent is
// expected to neutralize, so treating it as a runner token would both
// fail a correct storyboard and hide the probe.
//
// Map keys are never substituted. The `$build_assets_from_format` key of an
// assets object is a runner directive the engine expands; Substitute
// resolves its value (the captured format) and leaves the key in place.

// Limits on what substitution builds. Captured values come from sellers.
const (
	// maxSubstDepth bounds the nesting of a request template and of any
	// value copied into it (encoding/json decodes at most 10,000 levels).
	maxSubstDepth = 10_000
	// maxSubstString bounds one interpolated string, in bytes.
	maxSubstString = 4 << 20
	// maxMustache bounds the inside of one {{…}} token.
	maxMustache = 512
)

// Vars are what substitution reads. One Vars lives for one storyboard run;
// Generated fills as aliases are first used, so a Vars is not safe for
// concurrent use (a parallel_dispatch step substitutes once and sends the
// same body N times, as test-kits/parallel-dispatch-runner.yaml asks).
type Vars struct {
	// Context is the context accumulator: context_outputs captures over the
	// storyboard's root context block.
	Context map[string]any
	// Generated maps a $generate alias (and a context_outputs generate
	// name) to its UUID, minted once per storyboard run.
	Generated map[string]string
	// TestKit is the storyboard's test kit, decoded (nil when none).
	TestKit any
	// AgentURL is the URL of the agent under test ("" when unknown).
	AgentURL string
	// WebhookURL returns the receiver URL for a step; nil when the run has
	// no webhook receiver.
	WebhookURL func(stepID string) (string, bool)
	// WebhookBase is the receiver's base URL ("" when none).
	WebhookBase string
	// Prior maps an earlier step's id to what {{prior_step.<id>.<field>}}
	// resolves <field> against: that step's response payload, into which
	// the engine may merge runner-allocated fields of the step (such as the
	// operation_id it sent). A step that failed or did not run is absent,
	// and its tokens are unresolved.
	//
	// Decision: <field> is a path (storyboard-schema.yaml: "Resolves
	// against the named prior step's captured response fields"; the
	// runner-output-contract example is "{{prior_step.search.id}}").
	Prior map[string]any
	// NewUUID mints a UUID; nil uses a random RFC 4122 version 4 UUID.
	NewUUID func() string
}

// RefKind names a token form.
type RefKind string

// The token forms.
const (
	RefContext     RefKind = "context"      // $context.<name>
	RefGenerate    RefKind = "generate"     // $generate:<generator>[#<alias>]
	RefTestKit     RefKind = "test_kit"     // $test_kit.<path>
	RefAgentURL    RefKind = "agent_url"    // $agent_url
	RefWebhookBase RefKind = "webhook_base" // {{runner.webhook_base}}
	RefWebhookURL  RefKind = "webhook_url"  // {{runner.webhook_url:<step_id>}}
	RefPriorStep   RefKind = "prior_step"   // {{prior_step.<id>.<field>}}
	// RefBuildAssets is the `$build_assets_from_format` key of an assets
	// object: not a token, a directive the engine expands.
	RefBuildAssets RefKind = "build_assets_from_format"
)

// Ref is one token a template references.
type Ref struct {
	Kind RefKind
	// Token is the token as written.
	Token string
	// Name is the context name, the generator, the test-kit path, or the
	// step id (webhook_url, prior_step).
	Name string
	// Alias is the $generate alias; Field the prior_step field.
	Alias, Field string
	// Pointer is where the token sits in the template (RFC 6901).
	Pointer string
}

// UnresolvedError is a token substitution could not resolve: the
// unresolved_substitution grading code (storyboard-schema.yaml, "Runner
// grading codes"), with the token as its expected value.
type UnresolvedError struct {
	Token string
	// Pointer is where the token sits in the template (RFC 6901).
	Pointer string
	// Reason says why, for the note.
	Reason string
}

func (e *UnresolvedError) Error() string {
	at := e.Pointer
	if at == "" {
		at = "/"
	}
	return fmt.Sprintf("unresolved substitution %q at %s: %s", spec.Clip(e.Token, 200), at, e.Reason)
}

// Result is the unresolved_substitution validation_result the spec asks
// for: expected the token, actual null, no json_pointer (pre-wire).
func (e *UnresolvedError) Result() spec.Result {
	return spec.Result{
		Check:       "unresolved_substitution",
		Passed:      false,
		Description: "every substitution token of the request resolves before dispatch",
		Expected:    e.Token,
		Message:     e.Error(),
	}
}

// errLimit is a template or value that breaks a bound.
var errLimit = errors.New("substitution limit exceeded")

// Substitute returns a deep copy of v, in the JSON data model, with every
// token replaced, or the first token (in sorted-key order) it cannot
// resolve as an *UnresolvedError. Aliases minted on the way are kept in
// vars.Generated even when it fails, so a retry reuses them.
func Substitute(v any, vars *Vars) (any, error) {
	if vars == nil {
		vars = &Vars{}
	}
	s := substituter{vars: vars}
	return s.walk(v, "", 0)
}

type substituter struct {
	vars *Vars
}

func (s *substituter) walk(v any, ptr string, depth int) (any, error) {
	if depth > maxSubstDepth {
		return nil, fmt.Errorf("%w: template nested deeper than %d at %s", errLimit, maxSubstDepth, ptr)
	}
	switch x := v.(type) {
	case string:
		return s.str(x, ptr)
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			e, err := s.walk(x[k], ptr+"/"+rawjson.EscapeToken(k), depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = e
		}
		return s.walk(m, ptr, depth)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := s.walk(e, ptr+"/"+strconv.Itoa(i), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return spec.Normalize(v), nil
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// str substitutes one string.
func (s *substituter) str(in, ptr string) (any, error) {
	if !strings.ContainsAny(in, "${") {
		return in, nil
	}
	if t, n := scanToken(in); n == len(in) && t != nil {
		t.Pointer = ptr
		return s.resolve(t)
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(in); {
		if in[i] != '$' && in[i] != '{' {
			i++
			continue
		}
		t, n := scanToken(in[i:])
		if t == nil {
			i++
			continue
		}
		t.Pointer = ptr
		v, err := s.resolve(t)
		if err != nil {
			return nil, err
		}
		text, ok := spell(v)
		if !ok {
			return nil, &UnresolvedError{Token: t.Token, Pointer: ptr, Reason: "an object or array value cannot be interpolated into a longer string"}
		}
		b.WriteString(in[last:i])
		b.WriteString(text)
		if b.Len() > maxSubstString {
			return nil, fmt.Errorf("%w: interpolated string at %s longer than %d bytes", errLimit, ptr, maxSubstString)
		}
		i += n
		last = i
	}
	b.WriteString(in[last:])
	return b.String(), nil
}

// spell writes a scalar the way JSON (and JavaScript's String()) does.
func spell(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case nil:
		return "null", true
	case float64:
		return formatNumber(x), true
	}
	return "", false
}

func formatNumber(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// scanToken reads the token at the start of s: nil when s does not start
// with one. A malformed token in a known namespace ("$context." with no
// name, an unknown generator, "{{runner.nope}}") is returned with a
// reason, so it is reported rather than sent.
func scanToken(s string) (*Ref, int) {
	switch {
	case strings.HasPrefix(s, "$context."):
		n := len("$context.")
		name := wordRun(s[n:])
		t := &Ref{Kind: RefContext, Token: s[:n+len(name)], Name: name}
		return t, len(t.Token)
	case strings.HasPrefix(s, "$generate:"):
		n := len("$generate:")
		gen := wordRun(s[n:])
		end := n + len(gen)
		alias := ""
		if end < len(s) && s[end] == '#' {
			alias = aliasRun(s[end+1:])
			end += 1 + len(alias)
		}
		t := &Ref{Kind: RefGenerate, Token: s[:end], Name: gen, Alias: alias}
		return t, end
	case strings.HasPrefix(s, "$test_kit."):
		n := len("$test_kit.")
		p := dottedRun(s[n:])
		t := &Ref{Kind: RefTestKit, Token: s[:n+len(p)], Name: p}
		return t, len(t.Token)
	case strings.HasPrefix(s, "$agent_url"):
		n := len("$agent_url")
		if n < len(s) && isWord(s[n]) {
			return nil, 0
		}
		return &Ref{Kind: RefAgentURL, Token: s[:n]}, n
	case strings.HasPrefix(s, "{{"):
		win := s
		if len(win) > maxMustache+2 {
			win = win[:maxMustache+2]
		}
		end := strings.Index(win, "}}")
		if end < 0 {
			return nil, 0
		}
		inner := s[2:end]
		if strings.ContainsAny(inner, "{}") {
			return nil, 0
		}
		inner = strings.TrimSpace(inner)
		tok := s[:end+2]
		switch {
		case inner == "runner.webhook_base":
			return &Ref{Kind: RefWebhookBase, Token: tok}, len(tok)
		case strings.HasPrefix(inner, "runner.webhook_url:"):
			return &Ref{Kind: RefWebhookURL, Token: tok, Name: strings.TrimPrefix(inner, "runner.webhook_url:")}, len(tok)
		case strings.HasPrefix(inner, "runner."):
			return &Ref{Kind: RefWebhookBase, Token: tok, Name: inner}, len(tok) // unknown runner variable
		case strings.HasPrefix(inner, "prior_step."):
			rest := strings.TrimPrefix(inner, "prior_step.")
			id, field, _ := strings.Cut(rest, ".")
			return &Ref{Kind: RefPriorStep, Token: tok, Name: id, Field: field}, len(tok)
		}
	}
	return nil, 0
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// wordRun is the leading run of [A-Za-z0-9_].
func wordRun(s string) string {
	i := 0
	for i < len(s) && isWord(s[i]) {
		i++
	}
	return s[:i]
}

// aliasRun is the leading alias: [A-Za-z0-9_-] and dots between them (the
// shipped aliases use letters, digits, "_" and "-"); a trailing dot is
// punctuation, not alias.
func aliasRun(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if isWord(c) || c == '-' {
			i++
			continue
		}
		if c == '.' && i+1 < len(s) && (isWord(s[i+1]) || s[i+1] == '-') && i > 0 {
			i++
			continue
		}
		break
	}
	return s[:i]
}

// dottedRun is the leading dotted word path ("auth.probe_task"); a
// trailing dot is punctuation.
func dottedRun(s string) string {
	i := 0
	for i < len(s) {
		if isWord(s[i]) {
			i++
			continue
		}
		if s[i] == '.' && i > 0 && i+1 < len(s) && isWord(s[i+1]) {
			i++
			continue
		}
		break
	}
	return s[:i]
}

// ValidStepID reports the step-id shape the webhook and prior_step tokens carry.
func ValidStepID(id string) bool {
	if id == "" || len(id) > 200 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !isWord(id[i]) && id[i] != '-' {
			return false
		}
	}
	return true
}

// check says what is wrong with a token's shape, "" when nothing.
func (t *Ref) check() string {
	switch t.Kind {
	case RefContext:
		if t.Name == "" {
			return "no context name after $context."
		}
	case RefGenerate:
		if t.Name != "uuid_v4" && t.Name != "opaque_id" {
			return fmt.Sprintf("unknown generator %q (uuid_v4 and opaque_id are defined)", spec.Clip(t.Name, 40))
		}
		if strings.HasSuffix(t.Token, "#") {
			return "empty alias after #"
		}
	case RefTestKit:
		if t.Name == "" {
			return "no test-kit path after $test_kit."
		}
	case RefWebhookBase:
		if t.Name != "" {
			return "unknown runner variable (runner.webhook_base and runner.webhook_url:<step_id> are defined)"
		}
	case RefWebhookURL:
		if !ValidStepID(t.Name) {
			return "runner.webhook_url needs a step id"
		}
	case RefPriorStep:
		if !ValidStepID(t.Name) || t.Field == "" {
			return "prior_step needs <step_id>.<field>"
		}
		if _, err := spec.ParsePath(t.Field); err != nil {
			return "prior_step field: " + err.Error()
		}
	}
	return ""
}

func (s *substituter) resolve(t *Ref) (any, error) {
	fail := func(reason string) (any, error) {
		return nil, &UnresolvedError{Token: t.Token, Pointer: t.Pointer, Reason: reason}
	}
	if why := t.check(); why != "" {
		return fail(why)
	}
	v := s.vars
	switch t.Kind {
	case RefContext:
		x, ok := v.Context[t.Name]
		if !ok {
			return fail("no context value " + spec.Clip(t.Name, 80) + " (its capturing step failed, was skipped or never ran)")
		}
		return copyValue(x, 0)
	case RefGenerate:
		if t.Alias == "" {
			return v.UUID(), nil
		}
		return v.generated(t.Alias), nil
	case RefTestKit:
		x, _, ok := spec.Lookup(v.TestKit, t.Name)
		if !ok || x == nil {
			return fail("the test kit has no value at " + spec.Clip(t.Name, 80))
		}
		return copyValue(x, 0)
	case RefAgentURL:
		if v.AgentURL == "" {
			return fail("the agent URL is unknown")
		}
		return v.AgentURL, nil
	case RefWebhookBase:
		if v.WebhookBase == "" {
			return fail("the run has no webhook receiver")
		}
		return v.WebhookBase, nil
	case RefWebhookURL:
		if v.WebhookURL == nil {
			return fail("the run has no webhook receiver")
		}
		u, ok := v.WebhookURL(t.Name)
		if !ok || u == "" {
			return fail("the webhook receiver has no URL for step " + spec.Clip(t.Name, 80))
		}
		return u, nil
	case RefPriorStep:
		doc, ok := v.Prior[t.Name]
		if !ok {
			return fail("step " + spec.Clip(t.Name, 80) + " has not run (or did not pass) in this storyboard run")
		}
		x, _, ok := spec.Lookup(doc, t.Field)
		if !ok || x == nil {
			return fail("step " + spec.Clip(t.Name, 80) + " has no value at " + spec.Clip(t.Field, 80))
		}
		return copyValue(x, 0)
	}
	return fail("unknown token")
}

// UUID mints a fresh UUID: NewUUID's, else a random version 4 one.
func (v *Vars) UUID() string {
	if v.NewUUID != nil {
		return v.NewUUID()
	}
	return newUUIDv4()
}

// generated returns the alias's UUID, minting it on first use.
func (v *Vars) generated(alias string) string {
	if u, ok := v.Generated[alias]; ok {
		return u
	}
	if v.Generated == nil {
		v.Generated = map[string]string{}
	}
	u := v.UUID()
	v.Generated[alias] = u
	return u
}

// newUUIDv4 returns a random RFC 4122 version 4 UUID.
func newUUIDv4() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// copyValue deep-copies a decoded value into the JSON data model, so a
// request never aliases the context or a prior response.
func copyValue(v any, depth int) (any, error) {
	if depth > maxSubstDepth {
		return nil, fmt.Errorf("%w: value nested deeper than %d", errLimit, maxSubstDepth)
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := copyValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := copyValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k)] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := copyValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return spec.Normalize(v), nil
}

// tokenRefs lists the tokens a template references, in sorted-key order, with
// the malformed ones (an unknown generator, "{{runner.nope}}") reported in
// the error (all of them, joined). The engine's preflight reads it: a
// webhook_url or webhook_base ref means the storyboard needs the webhook
// receiver; an agent_url ref needs the agent URL.
func tokenRefs(v any) ([]Ref, error) {
	var refs []Ref
	var errs []error
	collectRefs(v, "", 0, &refs, &errs)
	return refs, errors.Join(errs...)
}

func collectRefs(v any, ptr string, depth int, refs *[]Ref, errs *[]error) {
	if depth > maxSubstDepth || len(*refs) > spec.MaxFanOut {
		if len(*errs) == 0 || !errors.Is((*errs)[len(*errs)-1], errLimit) {
			*errs = append(*errs, fmt.Errorf("%w at %s", errLimit, ptr))
		}
		return
	}
	switch x := v.(type) {
	case string:
		for i := 0; i < len(x); {
			if x[i] != '$' && x[i] != '{' {
				i++
				continue
			}
			t, n := scanToken(x[i:])
			if t == nil {
				i++
				continue
			}
			t.Pointer = ptr
			if why := t.check(); why != "" {
				*errs = append(*errs, &UnresolvedError{Token: t.Token, Pointer: ptr, Reason: why})
			} else {
				*refs = append(*refs, *t)
			}
			i += n
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := ptr + "/" + rawjson.EscapeToken(k)
			if k == "$build_assets_from_format" {
				*refs = append(*refs, Ref{Kind: RefBuildAssets, Token: k, Pointer: p})
			}
			collectRefs(x[k], p, depth+1, refs, errs)
		}
	case map[any]any:
		collectRefs(spec.Normalize(x), ptr, depth, refs, errs)
	case []any:
		for i, e := range x {
			collectRefs(e, ptr+"/"+strconv.Itoa(i), depth+1, refs, errs)
		}
	}
}

// Preflight reports the first ref the run can never resolve, whatever
// earlier steps do: a webhook token on a run without a receiver, $agent_url
// without an agent URL. The spec grades the whole storyboard not_applicable
// with unresolved_substitution as the reason in that case, before any step
// runs ("Unresolved substitution behavior", preflight point 1). Context,
// prior_step and test-kit refs depend on the run (and a test-kit phase may
// be skipped by skip_if), so they are left to the step.
func Preflight(refs []Ref, vars *Vars) *UnresolvedError {
	if vars == nil {
		vars = &Vars{}
	}
	for _, r := range refs {
		switch r.Kind {
		case RefWebhookBase:
			if vars.WebhookBase == "" {
				return &UnresolvedError{Token: r.Token, Pointer: r.Pointer, Reason: "the run has no webhook receiver"}
			}
		case RefWebhookURL:
			if vars.WebhookURL == nil {
				return &UnresolvedError{Token: r.Token, Pointer: r.Pointer, Reason: "the run has no webhook receiver"}
			}
		case RefAgentURL:
			if vars.AgentURL == "" {
				return &UnresolvedError{Token: r.Token, Pointer: r.Pointer, Reason: "the agent URL is unknown"}
			}
		}
	}
	return nil
}

// ResolveTask resolves a step's task (and likewise schema_ref and
// response_schema_ref): a literal name as is; a "$test_kit.<path>" reference
// from the test kit, falling back on def (task_default) when the kit value
// is absent or null (storyboard-schema.yaml, Step `task_default`). A
// reference with no value and no default, or a kit value that is not a
// non-empty string, is an *UnresolvedError.
func ResolveTask(task, def string, testKit any) (string, error) {
	t, n := scanToken(task)
	if t == nil || n != len(task) || t.Kind != RefTestKit {
		return task, nil
	}
	if why := t.check(); why != "" {
		return "", &UnresolvedError{Token: task, Reason: why}
	}
	x, _, ok := spec.Lookup(testKit, t.Name)
	if !ok || x == nil {
		if def != "" {
			return def, nil
		}
		return "", &UnresolvedError{Token: task, Reason: "the test kit has no value at " + spec.Clip(t.Name, 80) + " and the step has no task_default"}
	}
	s, isStr := x.(string)
	if !isStr || s == "" {
		return "", &UnresolvedError{Token: task, Reason: fmt.Sprintf("the test kit value at %s is a %s, not a task name", spec.Clip(t.Name, 80), rawjson.KindOfDecoded(x).String())}
	}
	return s, nil
}

// InjectInputs applies a step's context_inputs to the built request: each
// key present in ctx is written, as a copy keeping its JSON type, at
// inject_at. A key missing from ctx is a no-op, as the spec's runner does
// ("`context_inputs` is silently a no-op on a missing `key`"); it is
// returned in missing so the engine can note it. A bad inject_at path is an
// error.
func InjectInputs(req map[string]any, inputs []spec.ContextInput, ctx map[string]any) (missing []string, err error) {
	for _, in := range inputs {
		x, ok := ctx[in.Key]
		if !ok {
			missing = append(missing, in.Key)
			continue
		}
		c, err := copyValue(x, 0)
		if err != nil {
			return missing, err
		}
		if err := spec.Set(req, in.InjectAt, c); err != nil {
			return missing, fmt.Errorf("context_inputs %s: %w", spec.Clip(in.Key, 80), err)
		}
	}
	return missing, nil
}

// taskCompletionPrefix marks a capture resolved against the polled task
// completion result rather than the immediate response.
const taskCompletionPrefix = "task_completion."

// TaskCompletionInner returns the inner path of a `task_completion.<inner>`
// capture path.
func TaskCompletionInner(path string) (string, bool) {
	if !strings.HasPrefix(path, taskCompletionPrefix) {
		return "", false
	}
	return strings.TrimPrefix(path, taskCompletionPrefix), true
}

// CaptureFailure is one context_outputs path that did not resolve to a
// usable value: capture_path_not_resolvable on the capturing step.
type CaptureFailure struct {
	Name string
	Path string
	// Present says the path resolved (to null or ""); Actual is that value,
	// nil when absent.
	Present bool
	Actual  any
	// Pointer is the path's RFC 6901 form.
	Pointer string
}

// Result is the capture_path_not_resolvable validation_result
// (storyboard-schema.yaml, "Runner grading codes"): expected the declared
// path, actual the resolved value or null, json_pointer the path's pointer.
func (f CaptureFailure) Result() spec.Result {
	p := f.Pointer
	what := "is absent"
	switch {
	case f.Present && f.Actual == nil:
		what = "is null"
	case f.Present:
		what = "is the empty string"
	}
	return spec.Result{
		Check:       "capture_path_not_resolvable",
		Passed:      false,
		Description: "context_outputs " + spec.Clip(f.Name, 80) + " captures a usable value at " + spec.Clip(f.Path, 200),
		JSONPointer: &p,
		Expected:    f.Path,
		Actual:      f.Actual,
		Message:     fmt.Sprintf("%s %s in the response", spec.Clip(f.Path, 200), what),
	}
}

// CaptureResult is what a step's context_outputs produced.
type CaptureResult struct {
	// Values are the captured and generated values by context name; nil
	// when any capture failed (a failed step populates nothing).
	Values map[string]any
	// Deferred are the `task_completion.` entries: the engine polls the
	// task to a terminal state and captures their inner path (see
	// TaskCompletionInner) from the completion result.
	Deferred []spec.ContextOutput
	// Failures are the paths that did not resolve to a usable value, one
	// per entry.
	Failures []CaptureFailure
	// Err is an authoring error of the entries (no name, both or neither
	// of path and generate, an unknown generator, a bad path): the
	// storyboard's fault, not the agent's.
	Err error
}

// Capture applies a step's context_outputs to its response payload
// (storyboard-schema.yaml, context_outputs). A path entry captures the
// value at its path (the first, for a wildcard path); absent, null and ""
// are failures. A generate entry takes the run's value for its name,
// minting it once per run in vars.Generated (so an inline
// `$generate:uuid_v4#<name>` and the capture agree). The engine merges
// Values into the context only after the step's validations pass.
func Capture(outputs []spec.ContextOutput, payload any, vars *Vars) CaptureResult {
	if vars == nil {
		vars = &Vars{}
	}
	var res CaptureResult
	vals := map[string]any{}
	var errs []error
	for i, o := range outputs {
		name := o.Variable()
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("context_outputs[%d]: no name", i))
		case o.Path != "" && o.Generate != "":
			errs = append(errs, fmt.Errorf("context_outputs[%d] %s: both path and generate", i, spec.Clip(name, 80)))
		case o.Generate != "":
			if o.Generate != "uuid_v4" && o.Generate != "opaque_id" {
				errs = append(errs, fmt.Errorf("context_outputs[%d] %s: unknown generator %q", i, spec.Clip(name, 80), spec.Clip(o.Generate, 40)))
				continue
			}
			vals[name] = vars.generated(name)
		case o.Path == "":
			errs = append(errs, fmt.Errorf("context_outputs[%d] %s: neither path nor generate", i, spec.Clip(name, 80)))
		case strings.HasPrefix(o.Path, taskCompletionPrefix):
			res.Deferred = append(res.Deferred, o)
		default:
			if _, err := spec.ParsePath(o.Path); err != nil {
				errs = append(errs, fmt.Errorf("context_outputs[%d] %s: path %q: %w", i, spec.Clip(name, 80), spec.Clip(o.Path, 200), err))
				continue
			}
			x, _, ok := spec.Lookup(payload, o.Path)
			if !ok || x == nil || x == "" {
				f := CaptureFailure{Name: name, Path: o.Path, Pointer: spec.Pointer(o.Path)}
				if ok {
					f.Present, f.Actual = true, x
				}
				res.Failures = append(res.Failures, f)
				continue
			}
			vals[name] = x
		}
	}
	res.Err = errors.Join(errs...)
	if len(res.Failures) == 0 && res.Err == nil {
		res.Values = vals
	}
	return res
}

// SiteRef is a ref with the storyboard field it sits in.
type SiteRef struct {
	Ref
	// Site is the YAML path of the field: "phases[0].steps[1].sample_request",
	// "phases[2].steps[0].validations[3].value", "phases[0].steps[0].task".
	Site string
}

// StoryboardRefs lists the tokens of every field the engine substitutes,
// for the preflight of "Unresolved substitution behavior" point 1: the
// storyboard root context, each step's task, schema_ref and
// response_schema_ref ($test_kit references), sample_request,
// rate_limit_trip.trip_target_sample_request, filter, and the expected
// values of its validations (value, allowed_values, scope.equals,
// payload_must_contain). Malformed tokens are in the error, each naming its
// site.
func StoryboardRefs(sb *spec.Storyboard) ([]SiteRef, error) {
	var out []SiteRef
	var errs []error
	add := func(site string, v any) {
		if v == nil {
			return
		}
		refs, err := tokenRefs(v)
		for _, r := range refs {
			out = append(out, SiteRef{Ref: r, Site: site})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", site, err))
		}
	}
	if sb == nil {
		return nil, nil
	}
	if len(sb.Context) > 0 {
		add("context", sb.Context)
	}
	for pi, ph := range sb.Phases {
		for si, st := range ph.Steps {
			at := fmt.Sprintf("phases[%d].steps[%d]", pi, si)
			for _, f := range []struct {
				name, v string
			}{{"task", st.Task}, {"schema_ref", st.SchemaRef}, {"response_schema_ref", st.ResponseSchemaRef}} {
				if f.v != "" {
					add(at+"."+f.name, f.v)
				}
			}
			add(at+".sample_request", st.SampleRequest)
			if st.RateLimitTrip != nil {
				add(at+".rate_limit_trip.trip_target_sample_request", st.RateLimitTrip.TripTargetSampleRequest)
			}
			if len(st.Filter) > 0 {
				add(at+".filter", st.Filter)
			}
			for vi, v := range st.Validations {
				vat := fmt.Sprintf("%s.validations[%d]", at, vi)
				add(vat+".value", v.Value)
				if len(v.AllowedValues) > 0 {
					add(vat+".allowed_values", v.AllowedValues)
				}
				if v.Scope != nil && v.Scope.Equals != "" {
					add(vat+".scope.equals", v.Scope.Equals)
				}
				for mi, m := range v.PayloadMustContain {
					add(fmt.Sprintf("%s.payload_must_contain[%d].value", vat, mi), m.Value)
					if len(m.AllowedValues) > 0 {
						add(fmt.Sprintf("%s.payload_must_contain[%d].allowed_values", vat, mi), m.AllowedValues)
					}
				}
			}
		}
	}
	return out, errors.Join(errs...)
}
