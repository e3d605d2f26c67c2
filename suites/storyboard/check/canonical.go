package check

import (
	"fmt"
	"strings"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// canonical_format_satisfaction (universal/storyboard-schema.yaml
// "Canonical format satisfaction"; runner-output-contract.yaml expected /
// actual { accepted, local_satisfied, rejection? }).
//
// The full check needs the v1-to-canonical registry and the directional
// gating rules of canonical-formats.mdx (duration declarations, range
// containment, the v2-narrows-v1 relation), which the spec folder does not
// carry. This implements the parts that are decidable from the request and
// the product alone, and grades every other case not_applicable with the
// reason — never a guessed failure:
//   - format_option_refs with scope "product" resolve against the
//     product's format_options[].format_option_id; an unresolved one makes
//     local_satisfied false (step 1). Publisher-scope refs are undecided.
//   - a direct format_kind/params selector against options whose params
//     fix a numeric width and height: the selector must carry the same
//     kind, width and height (a bare or width-only selector does not
//     satisfy a fixed product). Selector params beyond width/height, and
//     product options declaring a duration or no fixed dimensions, are
//     undecided.
//   - legacy format_ids select the options whose v1_format_ref[] names
//     them; an id no option names is undecided (the registry may project
//     it).
//   - when several routes are decided, their selected option sets must
//     match, else local_satisfied is false (step 3).

// tri is a three-valued verdict.
type tri int

const (
	unknown tri = iota
	yes
	no
)

// route is one selector route's outcome: the product options it selects
// (indexes) or why it is undecided or unsatisfied.
type route struct {
	name    string
	verdict tri // yes: resolved to sel; no: cannot be satisfied; unknown
	sel     map[int]bool
	why     string
}

// formatAttributable lists the error codes that attribute a rejection to
// format selection (enums/error-code.json: the selector and FORMAT_*
// codes; UNSUPPORTED_FEATURE is what the storyboards pair with
// unprojectable and under-specified selectors).
func formatAttributable(o *spec.Observation) bool {
	c := o.ErrorCode
	if c == "CONFLICTING_SELECTORS" || c == "UNSUPPORTED_FEATURE" || strings.HasPrefix(c, "FORMAT_") {
		return true
	}
	if c == "INVALID_REQUEST" || c == "VALIDATION_ERROR" {
		field, _ := o.Error["field"].(string)
		return strings.Contains(field, "format") || strings.Contains(field, "params")
	}
	return false
}

func checkCanonicalFormatSatisfaction(v spec.Validation, f Facts) spec.Result {
	r := newResult(v)
	want, isBool := v.Value.(bool)
	if !isBool {
		return r.NA("canonical_format_satisfaction value must be true or false (an authoring error)")
	}
	if out, done := noObservation(r, f); done {
		return out
	}
	if f.Obs.Task != "create_media_buy" {
		return r.NA("canonical_format_satisfaction applies to create_media_buy steps only (this step ran %q)", f.Obs.Task)
	}
	path := "packages"
	if v.Path != nil && *v.Path != "" {
		path = *v.Path
	}
	got, _, ok := spec.Lookup(spec.Normalize(f.Obs.Request), path)
	if !ok {
		return r.NA("the request carries no packages at %s", path)
	}
	var pkgs []any
	switch x := got.(type) {
	case []any:
		pkgs = x
	case map[string]any:
		pkgs = []any{x}
	default:
		return r.NA("%s in the request is neither a package nor a package array", path)
	}
	if len(pkgs) == 0 {
		return r.NA("the request carries no packages")
	}
	local := yes
	var reasons []string
	for i, p := range pkgs {
		pm, _ := p.(map[string]any)
		pid, _ := pm["product_id"].(string)
		if pid == "" {
			return r.NA("package %d names no product_id", i)
		}
		product := priorProduct(f.Prior, pid)
		if product == nil {
			// Spec: "if no such response exists, the check fails as an
			// authoring or setup error".
			return r.Fail(ptr(fmt.Sprintf("/packages/%d/product_id", i)), "a prior get_products response containing "+spec.Shown(pid), nil,
				"setup error: no earlier get_products response in this run contains product %s", spec.Shown(pid))
		}
		lv, why := packageSatisfied(pm, product)
		reasons = append(reasons, fmt.Sprintf("package %d: %s", i, why))
		switch {
		case lv == no:
			local = no
		case lv == unknown && local == yes:
			local = unknown
		}
	}
	accepted := !f.Obs.IsError && f.Obs.Error == nil
	expected := map[string]any{"accepted": want, "local_satisfied": want}
	actual := map[string]any{"accepted": accepted}
	if local != unknown {
		actual["local_satisfied"] = local == yes
	}
	if !accepted {
		rej := map[string]any{"code": f.Obs.ErrorCode, "format_attributable": formatAttributable(f.Obs)}
		actual["rejection"] = rej
	}
	detail := strings.Join(reasons, "; ")
	if len(detail) > 4*maxShown {
		detail = detail[:4*maxShown] + "…"
	}
	switch {
	case want && accepted:
		if local == no {
			return r.Fail(nil, expected, actual, "the seller accepted a selector that does not satisfy its product: %s", detail)
		}
		if local == unknown {
			return r.Pass().Observe("accepted; local satisfaction not decidable here: %s", detail)
		}
		return r.Pass()
	case want && !accepted:
		if local == yes {
			if !formatAttributable(f.Obs) {
				// The step's other validations grade a rejection for
				// another cause; this check only judges format selection.
				return r.NA("rejected for a cause not attributable to format selection (%s); the selector satisfies the product: %s", codeOr(f.Obs), detail)
			}
			return r.Fail(nil, expected, actual, "the seller rejected (%s) a selector that satisfies the product: %s", codeOr(f.Obs), detail)
		}
		if local == no {
			return r.NA("the seller's product does not match the storyboard fixture and the rejection is consistent with it: %s", detail)
		}
		return r.NA("rejected (%s) and local satisfaction is not decidable here: %s", codeOr(f.Obs), detail)
	case !want && !accepted:
		if formatAttributable(f.Obs) {
			return r.Pass()
		}
		// Spec: "Negative cases only pass when the observed rejection is
		// attributable to formats".
		return r.Fail(ptr("/error/code"), expected, actual,
			"the rejection (%s) is not attributable to format selection, so it does not show the selector was refused", codeOr(f.Obs))
	default: // !want && accepted
		if local == no {
			return r.Fail(nil, expected, actual, "the seller accepted a selector that does not satisfy its product: %s", detail)
		}
		if local == yes {
			return r.NA("the seller's product does not match the storyboard fixture and accepting is consistent with it: %s", detail)
		}
		return r.NA("accepted, and local satisfaction is not decidable here: %s", detail)
	}
}

// priorProduct returns the product with id pid from the most recent prior
// get_products observation that contains it.
func priorProduct(prior []*spec.Observation, pid string) map[string]any {
	for i := len(prior) - 1; i >= 0; i-- {
		o := prior[i]
		if o == nil || o.Task != "get_products" || o.Failure != "" {
			continue
		}
		ms, _ := spec.Resolve(o.Payload, "products[*]")
		for _, m := range ms {
			if p, ok := m.Value.(map[string]any); ok && p["product_id"] == pid {
				return p
			}
		}
	}
	return nil
}

func packageSatisfied(pkg, product map[string]any) (tri, string) {
	opts, _ := product["format_options"].([]any)
	var routes []route
	if refs, has := pkg["format_option_refs"]; has {
		routes = append(routes, optionRefRoute(refs, opts))
	}
	if kind, has := pkg["format_kind"]; has {
		routes = append(routes, directRoute(kind, pkg["params"], opts))
	}
	if ids, has := pkg["format_ids"]; has {
		routes = append(routes, legacyRoute(ids, opts))
	}
	if len(routes) == 0 {
		return unknown, "no format selector on the package"
	}
	var parts []string
	for _, rt := range routes {
		parts = append(parts, rt.name+": "+rt.why)
		if rt.verdict == no {
			return no, strings.Join(parts, ", ")
		}
	}
	for _, rt := range routes {
		if rt.verdict == unknown {
			return unknown, strings.Join(parts, ", ")
		}
	}
	for _, rt := range routes[1:] {
		if !sameSet(rt.sel, routes[0].sel) {
			return no, strings.Join(parts, ", ") + fmt.Sprintf(" — %s and %s select different product options", routes[0].name, rt.name)
		}
	}
	return yes, strings.Join(parts, ", ")
}

func sameSet(a, b map[int]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func optionRefRoute(refs any, opts []any) route {
	rt := route{name: "format_option_refs", sel: map[int]bool{}}
	list, ok := refs.([]any)
	if !ok || len(list) == 0 {
		rt.why = "not a non-empty array"
		return rt
	}
	for _, ref := range list {
		m, _ := ref.(map[string]any)
		id, _ := m["format_option_id"].(string)
		scope, _ := m["scope"].(string)
		if scope != "product" {
			rt.why = fmt.Sprintf("ref %s is not product-scoped (publisher catalogs are not read here)", spec.Shown(ref))
			return rt
		}
		found := false
		for i, o := range opts {
			om, _ := o.(map[string]any)
			if om != nil && om["format_option_id"] == id && id != "" {
				rt.sel[i] = true
				found = true
			}
		}
		if !found {
			rt.verdict = no
			rt.why = fmt.Sprintf("format_option_id %s does not resolve on the product", spec.Shown(id))
			return rt
		}
	}
	rt.verdict = yes
	rt.why = "resolved"
	return rt
}

// fixedDims reads a product option's fixed numeric width and height. Its
// other params (file size, image formats, slots) constrain creatives, not
// the selector; a duration declaration is left undecided (the duration
// gating rules are not in the spec folder).
func fixedDims(p any) (w, h float64, ok bool) {
	m, isMap := p.(map[string]any)
	if !isMap {
		return 0, 0, false
	}
	for k := range m {
		if strings.Contains(k, "duration") {
			return 0, 0, false
		}
	}
	w, okW := finite(m["width"])
	h, okH := finite(m["height"])
	return w, h, okW && okH
}

func directRoute(kind, params any, opts []any) route {
	rt := route{name: "format_kind", sel: map[int]bool{}}
	k, _ := kind.(string)
	pm, _ := params.(map[string]any)
	var sw, sh float64
	var swOK, shOK bool
	for key := range pm {
		if key != "width" && key != "height" {
			rt.why = fmt.Sprintf("selector params %s are beyond fixed width/height", spec.Shown(params))
			return rt
		}
	}
	sw, swOK = finite(pm["width"])
	sh, shOK = finite(pm["height"])
	if (pm["width"] != nil && !swOK) || (pm["height"] != nil && !shOK) {
		rt.why = "selector dimensions are not numbers"
		return rt
	}
	sameKind := 0
	for i, o := range opts {
		om, _ := o.(map[string]any)
		if om == nil || om["format_kind"] != k {
			continue
		}
		sameKind++
		w, h, fixed := fixedDims(om["params"])
		if !fixed {
			rt.why = fmt.Sprintf("product option %d params %s are not fixed width/height", i, spec.Shown(om["params"]))
			return rt
		}
		if swOK && shOK && sw == w && sh == h {
			rt.sel[i] = true
		}
	}
	switch {
	case sameKind == 0:
		rt.verdict, rt.why = no, fmt.Sprintf("the product has no %s option", spec.Shown(k))
	case len(rt.sel) == 0:
		rt.verdict, rt.why = no, fmt.Sprintf("the selector %s %s does not carry the product's fixed dimensions", spec.Shown(k), spec.Shown(params))
	default:
		rt.verdict, rt.why = yes, "matches the fixed dimensions"
	}
	return rt
}

func legacyRoute(ids any, opts []any) route {
	rt := route{name: "format_ids", sel: map[int]bool{}}
	list, ok := ids.([]any)
	if !ok || len(list) == 0 {
		rt.why = "not a non-empty array"
		return rt
	}
	for _, id := range list {
		want, ok := project(id, []string{"agent_url", "id"})
		if !ok {
			rt.why = fmt.Sprintf("format_id %s lacks agent_url or id", spec.Shown(id))
			return rt
		}
		found := false
		for i, o := range opts {
			om, _ := o.(map[string]any)
			refs, _ := om["v1_format_ref"].([]any)
			for _, ref := range refs {
				if got, ok := project(ref, []string{"agent_url", "id"}); ok && sameJSON(got, want) {
					rt.sel[i] = true
					found = true
				}
			}
		}
		if !found {
			rt.why = fmt.Sprintf("format_id %s is named by no product option's v1_format_ref (the v1-to-canonical registry is not read here)", spec.Shown(id))
			return rt
		}
	}
	rt.verdict, rt.why = yes, "selected through v1_format_ref"
	return rt
}
