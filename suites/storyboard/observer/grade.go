package observer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Grading the values at the macro positions against the bindings: what a
// leak looks like, the violations and their messages.

// rawForms are the spellings of a binding's value a leak shows: as
// supplied, NFC (the decoded expected encoding), and each as an HTML
// parser reads it (CR and CRLF as LF).
func (b binding) rawForms() []string {
	var out []string
	for _, f := range []string{b.raw, pctDecode(b.enc)} {
		nl := strings.ReplaceAll(strings.ReplaceAll(f, "\r\n", "\n"), "\r", "\n")
		for _, g := range []string{f, nl} {
			if g != "" && !containsStr(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

var nestedToken = regexp.MustCompile(`\{[A-Za-z0-9_]+\}`)

// expansion returns the nested macro b's raw value carries and the value
// it was expanded to in d (a decoded observed value), when d is the raw
// value with that token replaced by something else.
func (b binding) expansion(d string) (string, string, bool) {
	loc := nestedToken.FindStringIndex(b.raw)
	if loc == nil {
		return "", "", false
	}
	pre, tok, post := b.raw[:loc[0]], b.raw[loc[0]:loc[1]], b.raw[loc[1]:]
	if len(d) < len(pre)+len(post) || !strings.HasPrefix(d, pre) || !strings.HasSuffix(d, post) {
		return "", "", false
	}
	mid := d[len(pre) : len(d)-len(post)]
	if mid == tok {
		return "", "", false
	}
	return tok, mid, true
}

// violation is one failed macro position.
type violation struct {
	code string
	b    *binding
	o    observed
	off  int
	note string
}

// attribute finds the binding an unmatched value belongs to: the value
// decodes to one of its raw forms, expands its nested macro, or is its
// raw value cut short at a delimiter the raw value carries.
func attribute(o observed, bs []*binding) (*binding, string, string) {
	d := pctDecode(o.value)
	for _, b := range bs {
		for _, f := range b.rawForms() {
			if d == f || formDecode(o.value) == f {
				return b, codeEncoding, ""
			}
			if len(d) < len(f) && strings.HasPrefix(f, d) && strings.HasPrefix(pctDecode(o.rest), f) && o.value != o.rest {
				return b, codeEncoding, "the raw value leaks: a delimiter it carries ends the value"
			}
		}
		if tok, mid, ok := b.expansion(d); ok {
			return b, codeNested, fmt.Sprintf("%s was expanded to %s", tok, quoted(mid, false))
		}
	}
	return nil, "", ""
}

// gradeSubstitution grades the extracted URLs against the template and
// the bindings: the step's one validation.
func gradeSubstitution(mt *macroTemplate, bs []binding, urls []trackerURL, every bool, sourcePath string) spec.Result {
	res := spec.Result{Check: checkSubstitutionSafe, Severity: "required", JSONPointer: &sourcePath,
		Description: "catalog-item macro values at the preview's tracker URL positions are percent-encoded per RFC 3986 (only unreserved bytes unescaped) and equal the fixture's expected encoding"}
	byMacro := map[string][]*binding{}
	for i := range bs {
		byMacro[bs[i].Macro] = append(byMacro[bs[i].Macro], &bs[i])
	}
	seen := make([]bool, len(bs))
	var viols []violation
	aligned, lower := 0, false
	for _, u := range urls {
		obs := mt.align(u)
		if len(obs) > 0 && mt.whole == "" {
			aligned++
		}
		for _, o := range obs {
			if o.value == o.pos.macro {
				continue // unsubstituted: no evidence either way
			}
			matched := false
			for _, b := range byMacro[o.pos.macro] {
				if hexEqual(o.value, b.enc) < 0 {
					seen[indexOf(bs, b)] = true
					matched = true
					lower = lower || lowerHex(o.value)
				}
			}
			if matched {
				if mt.whole != "" {
					aligned++
				}
				continue
			}
			b, code, note := attribute(o, byMacro[o.pos.macro])
			switch {
			case b != nil && o.pos.whole && urlScheme(o.value) != "":
				// url_scheme_preserved: the template's value has no scheme.
				aligned++
				viols = append(viols, violation{code: codeScheme, b: b, o: o, off: hexEqual(o.value, b.enc),
					note: fmt.Sprintf("the substituted value parses as a %s: URL where the template's whole value has no scheme", quoted(urlScheme(o.value), false))})
			case b != nil:
				if mt.whole != "" {
					aligned++
				}
				viols = append(viols, violation{code: code, b: b, o: o, off: hexEqual(o.value, b.enc), note: note})
			case o.pos.whole:
				// Any other attribute value of the set: not attributable to
				// the binding, so no evidence either way.
			case unsafeByte(o.value) >= 0:
				viols = append(viols, violation{code: codeEncoding, o: o, off: unsafeByte(o.value),
					note: "a byte outside the RFC 3986 unreserved set is not percent-encoded"})
			}
		}
	}
	var missing []string
	for i, b := range bs {
		if !seen[i] && !violated(viols, &bs[i]) {
			missing = append(missing, describeBinding(b))
		}
	}
	expected := map[string]any{"macro_template": mt.raw}
	var exp []any
	for _, b := range bs {
		exp = append(exp, map[string]any{"macro": b.Macro, "catalog_item_id": b.CatalogItemID, "vector_name": b.VectorName, "expected_encoded": b.expectedShown()})
	}
	expected["bindings"] = exp
	switch {
	case len(viols) > 0:
		v := viols[0]
		res.Expected = expected
		var act []any
		for _, x := range viols[:min(len(viols), maxViolations)] {
			act = append(act, map[string]any{"code": x.code, "url": x.shown(x.o.url), "source_attr": x.o.attr, "observed": x.shown(x.o.value), "byte_offset": x.off})
		}
		res.Actual = spec.Bounded(map[string]any{"violations": act, "violation_count": len(viols)})
		res.Message = v.message()
		if len(viols) > 1 {
			res.Message += fmt.Sprintf(" (%d more violation(s))", len(viols)-1)
		}
		if every && len(missing) > 0 {
			res.Message += fmt.Sprintf("; %s also: %s", codeBindingMissing, strings.Join(missing, ", "))
		}
	case every && len(missing) > 0:
		res.Expected = expected
		res.Actual = map[string]any{"tracker_urls": len(urls), "aligned_urls": aligned, "missing": missing}
		why := "no extracted tracker URL carries its expected encoding at the macro position"
		if mt.whole != "" {
			why = fmt.Sprintf("none of the %d attribute value(s) extracted is its expected encoding", len(urls))
		} else if aligned == 0 {
			why = fmt.Sprintf("none of the %d tracker URL(s) extracted matches the macro_template's scheme, host, port and path", len(urls))
		}
		res.Message = fmt.Sprintf("%s: %s not observed (%s)", codeBindingMissing, strings.Join(missing, ", "), why)
	default:
		res.Passed = true
		n := 0
		for _, s := range seen {
			if s {
				n++
			}
		}
		res.Observations = append(res.Observations, fmt.Sprintf("%d of %d binding(s) observed encoded in %d aligned tracker URL(s)", n, len(bs), aligned))
		if len(missing) > 0 {
			res.Observations = append(res.Observations, "not observed (require_every_binding_observed: false): "+strings.Join(missing, ", "))
		}
	}
	if lower {
		res.Observations = append(res.Observations, "lowercase hex in a percent-encoded triplet: verifiers compare hex digits case-insensitively, but producers are required to emit uppercase (hex_case_policy)")
	}
	return res
}

func indexOf(bs []binding, b *binding) int {
	for i := range bs {
		if &bs[i] == b {
			return i
		}
	}
	return -1
}

func violated(vs []violation, b *binding) bool {
	for _, v := range vs {
		if v.b == b {
			return true
		}
	}
	return false
}

func describeBinding(b binding) string {
	return fmt.Sprintf("%s→%s (item %s)", spec.Clip(b.Macro, 40), spec.Clip(b.VectorName, 80), spec.Clip(b.CatalogItemID, 80))
}

// shown renders a value for a report: quoted and sanitized, or a digest
// for a custom vector (the kit's error_report_payload_policy).
func (b binding) shown(s string) string { return quoted(s, b.custom) }

// expectedShown is the expected encoding for a report: a canonical
// vector's is unreserved bytes and triplets, shown as it is.
func (b binding) expectedShown() string {
	if b.custom {
		return quoted(b.enc, true)
	}
	return b.enc
}

func (v violation) shown(s string) string { return quoted(s, v.b != nil && v.b.custom) }

func quoted(s string, redact bool) string {
	if redact {
		sum := sha256.Sum256([]byte(s))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	return wire.Sanitize(strconv.QuoteToASCII(spec.Clip(s, 200)), 0)
}

func (v violation) message() string {
	where := fmt.Sprintf("query %s", quoted(v.o.pos.key, false))
	switch {
	case v.o.pos.path:
		where = fmt.Sprintf("path segment %d", v.o.pos.index+1)
	case v.o.pos.whole:
		where = "whole-value"
	}
	if v.b == nil {
		return fmt.Sprintf("%s: the value %s at %s's %s position (%s) of %s has an unencoded byte at offset %d: %s",
			v.code, v.shown(v.o.value), v.o.pos.macro, where, v.o.attr, v.shown(v.o.url), v.off, v.note)
	}
	msg := fmt.Sprintf("%s: binding %s at the %s position (%s) of %s: observed %s, expected %s, differing at byte %d",
		v.code, describeBinding(*v.b), where, v.o.attr, v.shown(v.o.url), v.shown(v.o.value), v.shown(v.b.enc), v.off)
	if v.note != "" {
		msg += "; " + v.note
	}
	return msg
}
