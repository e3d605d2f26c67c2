package check

import (
	"fmt"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// refs_resolve (universal/storyboard-schema.yaml "Cross-step integrity").

// refDoc is the document one side of refs_resolve reads: the step's task
// result (current_step) or the context accumulator (context). For context
// the first path segment names the captured key; when that key is absent
// the capturing step did not run, reported in absentKey.
func refDoc(side *spec.RefSet, f Facts) (doc any, absentKey string, err error) {
	switch side.From {
	case "current_step":
		if f.Obs == nil {
			return nil, "", fmt.Errorf("the step sent nothing, so there is no current_step response")
		}
		return f.Obs.Payload, "", nil
	case "context":
		segs, err := spec.ParsePath(side.Path)
		if err != nil {
			return nil, "", err
		}
		if len(segs) == 0 || segs[0].Key == "" {
			return nil, "", fmt.Errorf("a context path must start with the captured key name")
		}
		if _, ok := f.Context[segs[0].Key]; !ok {
			return nil, segs[0].Key, nil
		}
		ctx := make(map[string]any, len(f.Context))
		for k, v := range f.Context {
			ctx[k] = v
		}
		return ctx, "", nil
	}
	return nil, "", fmt.Errorf("unknown from %q (want current_step or context)", side.From)
}

// normURL is the scope comparison's normalisation of keys ending in
// "url": trailing slashes dropped, case folded.
func normURL(s string) string { return strings.ToLower(strings.TrimRight(s, "/")) }

// project returns ref's values at keys, or ok false when ref is not an
// object or lacks one of them (such a ref never matches). Values of keys
// ending in "url" are normalised as scope compares them (decision: the
// schema states the normalisation for scope only; applying it to matching
// as well keeps "https://a.example" and "https://a.example/" — one agent —
// from failing each other; it can only make more refs resolve).
func project(ref any, keys []string) (tuple map[string]any, ok bool) {
	obj, isObj := ref.(map[string]any)
	tuple = map[string]any{}
	ok = isObj
	for _, k := range keys {
		if !isObj {
			break
		}
		v, has := obj[k]
		if !has || v == nil {
			ok = false
			continue
		}
		if s, isStr := v.(string); isStr && strings.HasSuffix(k, "url") {
			v = normURL(s)
		}
		tuple[k] = v
	}
	return tuple, ok
}

func checkRefsResolve(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	if v.Source == nil || v.Target == nil || v.Source.Path == "" || v.Target.Path == "" {
		return r.NA("refs_resolve needs source and target, each with from and path (an authoring error)")
	}
	if len(v.MatchKeys) == 0 {
		return r.NA("refs_resolve declares no match_keys (an authoring error): nothing to match refs on")
	}
	mode := v.OnOutOfScope
	if mode == "" {
		mode = "warn"
	}
	if mode != "warn" && mode != "ignore" && mode != "fail" {
		return r.NA("on_out_of_scope %q is not warn, ignore or fail (an authoring error)", mode)
	}
	var scopeWant string
	if v.Scope != nil {
		if v.Scope.Key == "" {
			return r.NA("refs_resolve scope has no key (an authoring error)")
		}
		scopeWant = v.Scope.Equals
		if scopeWant == "$agent_url" {
			if f.AgentURL == "" {
				return r.NA("scope compares with $agent_url but the run has no agent URL")
			}
			scopeWant = f.AgentURL
		}
		if strings.HasSuffix(v.Scope.Key, "url") {
			scopeWant = normURL(scopeWant)
		}
	}
	if f.Obs != nil && (v.Source.From == "current_step" || v.Target.From == "current_step") {
		if f.Obs.Failure != "" {
			return r.NA("the call proves nothing about the agent: %s", f.Obs.Failure)
		}
		if f.Obs.IsError || f.Obs.Error != nil {
			// The error itself is graded by the step's other validations;
			// an error reply holds no refs to resolve or to resolve into.
			return r.NA("the step's reply is an error (%s): there are no task results to resolve refs against", codeOr(f.Obs))
		}
	}
	srcDoc, srcAbsent, err := refDoc(v.Source, f)
	if err != nil {
		return r.NA("source: %v", err)
	}
	tgtDoc, tgtAbsent, err := refDoc(v.Target, f)
	if err != nil {
		return r.NA("target: %v", err)
	}
	if k := srcAbsent + tgtAbsent; k != "" {
		// As for context_key_absent: the capturing step was skipped on
		// this path, which is not the agent's failure.
		return r.NA("context_key_absent: %q is not in the context (the capturing step did not run on this path)", k)
	}
	srcs, err := spec.Resolve(srcDoc, v.Source.Path)
	if err != nil {
		return r.NA("source: %v (an authoring error)", err)
	}
	tgts, err := spec.Resolve(tgtDoc, v.Target.Path)
	if err != nil {
		return r.NA("target: %v (an authoring error)", err)
	}
	if len(srcs) == 0 {
		return r.Pass().Observe("source %s resolved no refs: nothing to resolve", v.Source.Path)
	}
	targets := map[string]bool{}
	for _, t := range tgts {
		if tuple, ok := project(t.Value, v.MatchKeys); ok {
			targets[key(tuple)] = true
		}
	}
	var missing []any
	seenMissing := map[string]bool{}
	var outOfScope []string
	seenOut := map[string]bool{}
	addMissing := func(tuple map[string]any) {
		k := key(tuple)
		if !seenMissing[k] {
			seenMissing[k] = true
			missing = append(missing, tuple)
		}
	}
	var firstPointer string
	for _, s := range srcs {
		tuple, ok := project(s.Value, v.MatchKeys)
		if v.Scope != nil && !inScope(s.Value, v.Scope.Key, scopeWant) {
			switch mode {
			case "fail":
				addMissing(tuple)
				if firstPointer == "" {
					firstPointer = s.Pointer
				}
			case "warn":
				if k := key(tuple); !seenOut[k] && len(outOfScope) < maxListed {
					seenOut[k] = true
					outOfScope = append(outOfScope, spec.Shown(tuple))
				}
			}
			continue
		}
		if ok && targets[key(tuple)] {
			continue
		}
		addMissing(tuple)
		if firstPointer == "" {
			firstPointer = s.Pointer
		}
	}
	for _, o := range outOfScope {
		r = r.Observe("out of scope (%s != %s), not checked: %s", v.Scope.Key, v.Scope.Equals, o)
	}
	if len(missing) == 0 {
		return r.Pass()
	}
	expected := map[string]any{
		"target":     v.Target.From + ":" + v.Target.Path,
		"match_keys": toAny(v.MatchKeys),
	}
	actual := map[string]any{"missing": capList(missing), "missing_count": float64(len(missing))}
	return r.Fail(ptr(firstPointer), expected, actual,
		"%d ref(s) at %s do not resolve in %s on %s, e.g. %s",
		len(missing), v.Source.Path, v.Target.Path, strings.Join(v.MatchKeys, "+"), spec.Shown(missing[0]))
}

func inScope(ref any, k, want string) bool {
	obj, ok := ref.(map[string]any)
	if !ok {
		return false
	}
	s, ok := obj[k].(string)
	if !ok {
		return false
	}
	if strings.HasSuffix(k, "url") {
		s = normURL(s)
	}
	return s == want
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
