package expr

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Gates: the capability predicates (requires_capability,
// requires_all_capabilities), the phase skip_if expressions and the step
// contributes_if expressions.

// maxDetailValue bounds an agent value quoted in a detail.
const maxDetailValue = 200

// EvalCapability evaluates a capability predicate against the decoded
// get_adcp_capabilities payload (storyboard-schema.yaml,
// requires_capability). detail names the path, the matcher with its
// declared value and the agent's value, for skip_result.detail
// (runner-output-contract.yaml, skip_result.reasons.not_applicable: "detail
// MUST cite the failed gate and the agent's relevant declared ...
// capability value").
//
// Matchers:
//   - equals: the value at path is deep-equal to the declared value.
//   - contains: the value at path is an array with an element that matches
//     the declared value: a scalar by equality; an object or array as a deep
//     subset (every declared key present and matching, every declared array
//     element matched by some element). Decision: the schema says "an array
//     containing this value" without saying how objects match; the shipped
//     gates declare objects ({task: create_media_buy, modes:
//     [signed_context]}) against adcp.governance_enforcement.tasks, whose
//     items carry every mode the agent supports, in any order
//     (schemas/*/protocol/get-adcp-capabilities-response.json). Whole-object
//     equality would skip an agent that supports more than the gate asks;
//     the deep-subset reading is the one storyboard-schema.yaml gives
//     field_contains ("object/array expectations are matched as deep
//     subsets").
//   - not_contains: the value at path is an array with no matching element;
//     an absent or non-array value does not satisfy it (as the schema says).
//   - present: true when the path resolves (a null value is present);
//     false when it does not.
//
// Several matchers on one predicate must all hold (the schema says exactly
// one SHOULD be declared and that runners MAY fail-load more; reading them
// as AND never widens applicability). A predicate with no matcher, an
// unparsable path, or a nil payload (capabilities unavailable: "Compound
// gates fail closed") does not hold. A YAML `equals: null` reads as no
// equals matcher: the typed model cannot tell it from an absent key, and
// no shipped gate declares it.
func EvalCapability(p *spec.CapabilityPredicate, caps any) (ok bool, detail string) {
	if p == nil {
		return true, "no capability predicate"
	}
	gate := "requires_capability " + spec.Clip(p.Path, 200)
	if _, err := spec.ParsePath(p.Path); err != nil || p.Path == "" {
		return false, gate + ": the predicate path cannot be read"
	}
	if caps == nil {
		return false, gate + ": the agent's get_adcp_capabilities payload is unavailable"
	}
	v, _, present := spec.Lookup(caps, p.Path)
	agent := "the agent does not declare it"
	if present {
		agent = "the agent declares " + quoteValue(v)
	}
	var parts []string
	ok = true
	matchers := 0
	if p.Equals != nil {
		matchers++
		want := spec.Normalize(p.Equals)
		parts = append(parts, "equals "+quoteValue(want))
		ok = ok && present && spec.Equal(v, want)
	}
	if p.Contains != nil {
		matchers++
		want := spec.Normalize(p.Contains)
		parts = append(parts, "contains "+quoteValue(want))
		arr, isArr := v.([]any)
		ok = ok && present && isArr && anyMatch(arr, want)
	}
	if p.NotContains != nil {
		matchers++
		want := spec.Normalize(p.NotContains)
		parts = append(parts, "not_contains "+quoteValue(want))
		arr, isArr := v.([]any)
		ok = ok && present && isArr && !anyMatch(arr, want)
	}
	if p.Present != nil {
		matchers++
		parts = append(parts, "present "+strconv.FormatBool(*p.Present))
		ok = ok && present == *p.Present
	}
	if matchers == 0 {
		return false, gate + ": the predicate declares no matcher (equals, contains, not_contains or present)"
	}
	verdict := "is satisfied"
	if !ok {
		verdict = "is not satisfied"
	}
	return ok, fmt.Sprintf("%s %s %s; %s", gate, strings.Join(parts, " and "), verdict, agent)
}

// EvalCapabilities evaluates a storyboard's requires_capability and
// requires_all_capabilities together: every predicate must hold. detail is
// the first failing predicate's, or the last satisfied one's.
func EvalCapabilities(one *spec.CapabilityPredicate, all []spec.CapabilityPredicate, caps any) (bool, string) {
	preds := make([]*spec.CapabilityPredicate, 0, 1+len(all))
	if one != nil {
		preds = append(preds, one)
	}
	for i := range all {
		preds = append(preds, &all[i])
	}
	detail := "no capability predicate"
	for _, p := range preds {
		ok, d := EvalCapability(p, caps)
		if !ok {
			return false, d
		}
		detail = d
	}
	return true, detail
}

func anyMatch(arr []any, want any) bool {
	for _, e := range arr {
		if spec.Subset(want, e) {
			return true
		}
	}
	return false
}

// quoteValue renders a value for a detail: compact JSON, bounded.
func quoteValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("a %s", rawjson.KindOfDecoded(v).String())
	}
	return spec.Clip(string(b), maxDetailValue)
}

// Expressions.
//
// skip_if grammar (storyboard-schema.yaml, Phase skip_if; every expression
// of the shipped storyboards parses: subst_spec_test.go):
//
//	expr    = or
//	or      = and { "||" and }
//	and     = compare { "&&" compare }
//	compare = unary [ ("==" | "!=" | "===" | "!==") unary ]
//	unary   = "!" unary | operand
//	operand = ref | literal | "(" expr ")"
//	ref     = ("context" | "test_kit") { "." key | "[" digits "]" }
//	literal = "true" | "false" | "null" | "undefined" | number
//	        | "'" chars "'" | `"` chars `"`
//
// with JavaScript semantics, the language the expressions are written in:
// an absent ref is undefined; ! and the operands of || and && use
// JavaScript truthiness (undefined, null, false, 0, NaN and "" are falsy;
// every object and array is truthy); == and != are JavaScript's loose
// equality over the JSON values (undefined == null, a number equals a
// numeric string, a boolean compares as 0 or 1), === and !== strict.
// Decision: objects and arrays compare by deep equality rather than
// JavaScript's identity (two captures of equal objects are equal here); no
// shipped expression compares objects. Anything outside the grammar is an
// error, never a guess.

// Limits on an expression.
const (
	maxExprLen   = 1024
	maxExprDepth = 32
)

// EvalSkipIf evaluates a phase's skip_if: true means skip the phase. The
// refs read vars.Context (context.<path>) and vars.TestKit
// (test_kit.<path>). An expression outside the grammar is an error: the
// engine grades the phase as not run with the reason.
func EvalSkipIf(expr string, vars *Vars) (bool, error) {
	if vars == nil {
		vars = &Vars{}
	}
	n, err := parseExpr(expr)
	if err != nil {
		return false, err
	}
	return truthy(n.eval(vars)), nil
}

// parseExpr parses a skip_if expression (for lint and preflight).
func parseExpr(expr string) (*node, error) {
	if len(expr) > maxExprLen {
		return nil, fmt.Errorf("skip_if: expression longer than %d bytes", maxExprLen)
	}
	toks, err := lex(expr)
	if err != nil {
		return nil, fmt.Errorf("skip_if %q: %w", spec.Clip(expr, 80), err)
	}
	p := &parser{toks: toks}
	n, err := p.or(0)
	if err == nil && p.i < len(p.toks) {
		err = fmt.Errorf("unexpected %q", p.toks[p.i].text)
	}
	if err != nil {
		return nil, fmt.Errorf("skip_if %q: %w", spec.Clip(expr, 80), err)
	}
	return n, nil
}

// node is a parsed skip_if expression.
type node struct {
	op          string // "||", "&&", "!", "==", "!=", "===", "!==", "ref", "lit"
	left, right *node
	root, path  string // ref: "context" or "test_kit", and the path under it
	lit         any    // lit: the value; undef for undefined
}

// undef is JavaScript's undefined: an absent ref.
type undefined struct{}

var undef = undefined{}

func (e *node) eval(vars *Vars) any {
	switch e.op {
	case "||":
		l := e.left.eval(vars)
		if truthy(l) {
			return l
		}
		return e.right.eval(vars)
	case "&&":
		l := e.left.eval(vars)
		if !truthy(l) {
			return l
		}
		return e.right.eval(vars)
	case "!":
		return !truthy(e.left.eval(vars))
	case "==":
		return looseEqual(e.left.eval(vars), e.right.eval(vars), 0)
	case "!=":
		return !looseEqual(e.left.eval(vars), e.right.eval(vars), 0)
	case "===":
		return strictEqual(e.left.eval(vars), e.right.eval(vars))
	case "!==":
		return !strictEqual(e.left.eval(vars), e.right.eval(vars))
	case "ref":
		var doc any
		if e.root == "context" {
			if vars.Context != nil {
				doc = vars.Context
			}
		} else {
			doc = vars.TestKit
		}
		v, _, ok := spec.Lookup(doc, e.path)
		if !ok {
			return undef
		}
		return v
	case "lit":
		return e.lit
	}
	return undef
}

// truthy is JavaScript truthiness, undefined included (falsy).
func truthy(v any) bool {
	if _, ok := v.(undefined); ok {
		return false
	}
	return rawjson.TruthyDecoded(v)
}

func strictEqual(a, b any) bool {
	if _, ok := a.(undefined); ok {
		_, ok2 := b.(undefined)
		return ok2
	}
	if _, ok := b.(undefined); ok {
		return false
	}
	return spec.Equal(a, b)
}

// looseEqual is JavaScript's == over JSON values and undefined.
func looseEqual(a, b any, depth int) bool {
	if depth > 4 {
		return false
	}
	nullish := func(v any) bool {
		_, u := v.(undefined)
		return u || v == nil
	}
	if nullish(a) || nullish(b) {
		return nullish(a) && nullish(b)
	}
	switch x := a.(type) {
	case bool:
		return looseEqual(boolNumber(x), b, depth+1)
	case float64:
		switch y := b.(type) {
		case string:
			return x == jsNumber(y)
		case bool:
			return x == boolNumber(y)
		}
	case string:
		switch y := b.(type) {
		case float64:
			return jsNumber(x) == y
		case bool:
			return looseEqual(x, boolNumber(y), depth+1)
		}
	}
	if y, ok := b.(bool); ok {
		return looseEqual(a, boolNumber(y), depth+1)
	}
	// Same types (or object against object); an object against a scalar is
	// unequal here (JavaScript would convert the object to a primitive; no
	// shipped expression does that).
	return spec.Equal(a, b)
}

func boolNumber(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// jsNumber is JavaScript's Number(string): trimmed, "" is 0, not a number NaN.
func jsNumber(s string) float64 {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		n, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return math.NaN()
		}
		return float64(n)
	}
	switch s {
	case "Infinity", "+Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	if strings.ContainsAny(s, "_xXpPnN") { // Go syntax JavaScript rejects (incl. "NaN", "inf")
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

type token struct {
	kind string // "op", "ident", "str", "num", "(", ")"
	text string
	val  any
}

func lex(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')':
			toks = append(toks, token{kind: string(c), text: string(c)})
			i++
		case strings.HasPrefix(s[i:], "==="), strings.HasPrefix(s[i:], "!=="):
			toks = append(toks, token{kind: "op", text: s[i : i+3]})
			i += 3
		case strings.HasPrefix(s[i:], "=="), strings.HasPrefix(s[i:], "!="),
			strings.HasPrefix(s[i:], "||"), strings.HasPrefix(s[i:], "&&"):
			toks = append(toks, token{kind: "op", text: s[i : i+2]})
			i += 2
		case c == '!':
			toks = append(toks, token{kind: "op", text: "!"})
			i++
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == '\\' && j+1 < len(s) {
					switch e := s[j+1]; e {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					case 'r':
						b.WriteByte('\r')
					case '\\', '\'', '"':
						b.WriteByte(e)
					default:
						return nil, fmt.Errorf("unsupported escape \\%c at %d", e, j)
					}
					j += 2
					continue
				}
				if s[j] == c {
					closed = true
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			toks = append(toks, token{kind: "str", text: s[i : j+1], val: b.String()})
			i = j + 1
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E' ||
				(s[j] == '-' || s[j] == '+') && (s[j-1] == 'e' || s[j-1] == 'E')) {
				j++
			}
			f, err := strconv.ParseFloat(s[i:j], 64)
			if err != nil {
				return nil, fmt.Errorf("bad number %q", spec.Clip(s[i:j], 40))
			}
			toks = append(toks, token{kind: "num", text: s[i:j], val: f})
			i = j
		case isWord(c):
			j := i
			for j < len(s) && (isWord(s[j]) || s[j] == '.' || s[j] == '[' || s[j] == ']') {
				j++
			}
			toks = append(toks, token{kind: "ident", text: s[i:j]})
			i = j
		default:
			return nil, fmt.Errorf("unexpected character %q at %d", c, i)
		}
		if len(toks) > maxExprLen {
			return nil, fmt.Errorf("too many tokens")
		}
	}
	return toks, nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() *token {
	if p.i < len(p.toks) {
		return &p.toks[p.i]
	}
	return nil
}

func (p *parser) or(depth int) (*node, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t != nil && t.kind == "op" && t.text == "||"; t = p.peek() {
		p.i++
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = &node{op: "||", left: l, right: r}
	}
	return l, nil
}

func (p *parser) and(depth int) (*node, error) {
	l, err := p.compare(depth)
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t != nil && t.kind == "op" && t.text == "&&"; t = p.peek() {
		p.i++
		r, err := p.compare(depth)
		if err != nil {
			return nil, err
		}
		l = &node{op: "&&", left: l, right: r}
	}
	return l, nil
}

// compare: equality binds looser than "!", as in JavaScript (!a == b is
// (!a) == b).
func (p *parser) compare(depth int) (*node, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t != nil && t.kind == "op" && (t.text == "==" || t.text == "!=" || t.text == "===" || t.text == "!==") {
		p.i++
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		return &node{op: t.text, left: l, right: r}, nil
	}
	return l, nil
}

func (p *parser) unary(depth int) (*node, error) {
	if depth > maxExprDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxExprDepth)
	}
	if t := p.peek(); t != nil && t.kind == "op" && t.text == "!" {
		p.i++
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &node{op: "!", left: x}, nil
	}
	return p.operand(depth)
}

func (p *parser) operand(depth int) (*node, error) {
	t := p.peek()
	if t == nil {
		return nil, fmt.Errorf("unexpected end of expression")
	}
	p.i++
	switch t.kind {
	case "(":
		x, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if c := p.peek(); c == nil || c.kind != ")" {
			return nil, fmt.Errorf("missing )")
		}
		p.i++
		return x, nil
	case "str", "num":
		return &node{op: "lit", lit: t.val}, nil
	case "ident":
		switch t.text {
		case "true":
			return &node{op: "lit", lit: true}, nil
		case "false":
			return &node{op: "lit", lit: false}, nil
		case "null":
			return &node{op: "lit", lit: nil}, nil
		case "undefined":
			return &node{op: "lit", lit: undef}, nil
		}
		root, path, _ := strings.Cut(t.text, ".")
		if root != "context" && root != "test_kit" {
			return nil, fmt.Errorf("unknown name %q (context.<path> and test_kit.<path> are defined)", spec.Clip(t.text, 80))
		}
		if path == "" {
			return nil, fmt.Errorf("%s needs a path", root)
		}
		segs, err := spec.ParsePath(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec.Clip(t.text, 80), err)
		}
		for _, s := range segs {
			if s.Wild {
				return nil, fmt.Errorf("%s: a wildcard is not a value", spec.Clip(t.text, 80))
			}
		}
		return &node{op: "ref", root: root, path: path}, nil
	}
	return nil, fmt.Errorf("unexpected %q", spec.Clip(t.text, 40))
}

// EvalContributesIf evaluates a step's contributes_if (storyboard-schema.yaml:
// "Supported grammar (single form; not a general-purpose DSL):
// prior_step.<step_id>.passed"). passed reports whether the named step of
// this storyboard run passed, and whether such a step is known; a step that
// ran and did not pass (or was skipped) is false. A step the storyboard
// does not have, or any other form, is an error.
func EvalContributesIf(expr string, passed func(stepID string) (ok, known bool)) (bool, error) {
	id, err := parseContributesIf(expr)
	if err != nil {
		return false, err
	}
	if passed == nil {
		return false, fmt.Errorf("contributes_if %q: no step results to read", spec.Clip(expr, 80))
	}
	ok, known := passed(id)
	if !known {
		return false, fmt.Errorf("contributes_if %q: no step %q in this storyboard", spec.Clip(expr, 80), spec.Clip(id, 80))
	}
	return ok, nil
}

// parseContributesIf returns the step id of a contributes_if expression.
func parseContributesIf(expr string) (string, error) {
	e := strings.TrimSpace(expr)
	rest, ok := strings.CutPrefix(e, "prior_step.")
	if ok {
		id, ok2 := strings.CutSuffix(rest, ".passed")
		if ok2 && ValidStepID(id) {
			return id, nil
		}
	}
	return "", fmt.Errorf("contributes_if %q: only prior_step.<step_id>.passed is defined", spec.Clip(expr, 80))
}
