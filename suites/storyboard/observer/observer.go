package observer

import (
	"errors"
	"fmt"
	"mime"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// The substitution observer (test-kits/substitution-observer-runner.yaml,
// the same in 3.1.19 and 3.2.0-beta.5): the runner task
// expect_substitution_safe reads the preview artifact of the step before
// it, extracts the tracker URLs of the kit's attribute set, aligns each
// with the step's macro_template and checks the value at each macro
// position against the fixture's encoding of the bound catalog value
// (test-vectors/catalog-macro-substitution.json). The step is graded by
// one validation, check expect_substitution_safe, whose failure message
// opens with the kit's error code.
//
// Decisions, each where the kit leaves the runner a choice or the
// storyboards and the schemas disagree:
//
//   - The bytes compared are the ones the seller emitted: the attribute
//     value as the HTML tokenizer gives it (entities decoded, CR and CRLF
//     read as LF, as every HTML parser does), not a WHATWG-reserialized
//     URL. A WHATWG parser would percent-encode a raw `é` or drop a raw
//     newline and hide the leak the #2620 rule forbids
//     ("rfc3986_unreserved_only_at_macro_position": every byte emitted at
//     the macro position is unreserved or a triplet).
//   - Hex case: the kit requires producers to emit uppercase hex but
//     verifiers to compare the two digits of a triplet case-insensitively
//     (hex_case_policy); a lowercase triplet passes, noted as an
//     observation. Every byte outside a triplet compares exactly, so an
//     over-encoded unreserved byte or `+` for a space fails (the kit's
//     byte comparison against expected_encoded).
//   - The fixture gives each vector's value, template and expected URL;
//     expected_encoded is the part of the expected URL at the vector's
//     macro positions (checked against the template when loaded).
//   - A missing artifact (source_path absent, null or "") grades the step
//     not_applicable, not preview_source_unavailable: build_creative's
//     schema carries previews under /preview (not the storyboards'
//     /creative_manifest/preview_html) and lets an agent omit them, so an
//     agent can be conformant with nothing at source_path.
//   - A value at a macro position that matches no binding's encoding is
//     attributed to the binding whose raw value it leaks (the value
//     decodes to the raw or NFC value, the raw value appears literally at
//     the position and was cut by a delimiter, or the nested macro was
//     expanded); a value attributed to none fails only when it carries a
//     byte outside the unreserved set (any catalog value there must be
//     encoded), and is otherwise ignored (another catalog item). The
//     literal macro token (unsubstituted) is ignored.
//   - url_fetch: the URL at source_path is fetched once through the
//     dispatcher's PublicFetcher (probes/fetch: https only, every resolved
//     address and the connected peer checked, no credentials, 256 KiB),
//     tightened by the kit's ssrf_policy — no bare IP literal
//     (host_literal_policy_verified: reject; --allow-local-fetch relaxes
//     it, as the kit allows local-dev flags to) and the metadata host
//     names refused. Anything but 200 text/html or application/xhtml+xml
//     read whole fails preview_url_unusable with the kit's sub-reason
//     (http_status, content_type, size_exceeded, redirect_returned,
//     ssrf_blocked, fetch_timeout). The connect bound is probes/fetch's
//     5 s, not the kit's 3 s.
//   - Custom vectors (raw_value / expected_encoded inlined) are redacted to
//     sha256 digests in messages; there is no --include-raw-payloads.

const (
	// checkSubstitutionSafe is the check of the step's one validation,
	// named after the runner task it grades.
	checkSubstitutionSafe = "expect_substitution_safe"
	// MacroVectorFile is the fixture, relative to the release folder.
	MacroVectorFile = "test-vectors/catalog-macro-substitution.json"
)

// The kit's error codes (step_task.error_modes).
const (
	codeEncoding       = "substitution_encoding_violation"
	codeNested         = "nested_macro_re_expansion"
	codeBindingMissing = "substitution_binding_missing"
	codeScheme         = "substitution_scheme_injection"
)

// Bounds on what the observer reads from a seller.
const (
	maxPreviewBytes = 4 << 20
	maxTrackerURLs  = 20000
	maxFixtureBytes = 1 << 20
	maxViolations   = 20
)

// binding is a catalog binding with its values resolved.
type binding struct {
	spec.CatalogBinding
	raw, enc string
	custom   bool
}

// Plan is a step's expect_substitution_safe, read and checked before
// anything is observed: its source, its bindings and its macro template.
type Plan struct {
	st *spec.Step
	// fetch says the source_path holds a preview_url to fetch (url_fetch)
	// rather than the HTML itself (html_inline).
	fetch bool
	bs    []binding
	tpl   *macroTemplate
}

// Prepare reads st's expect_substitution_safe against the release's
// vectors (LoadMacroVectors), or says why the step cannot be graded as
// authored (requirement_unmet).
func Prepare(st *spec.Step, vectors map[string]MacroVector) (*Plan, *spec.Skip) {
	p := &Plan{st: st}
	switch st.Source {
	case "", "html_inline":
	case "url_fetch", "preview_url":
		p.fetch = true
	default:
		return nil, &spec.Skip{Reason: spec.RequirementUnmet, Detail: fmt.Sprintf("expect_substitution_safe: unknown source %q (html_inline or url_fetch)", spec.Clip(st.Source, 80))}
	}
	var err error
	if p.bs, err = bindings(st, vectors); err != nil {
		return nil, &spec.Skip{Reason: spec.RequirementUnmet, Detail: "expect_substitution_safe: " + err.Error()}
	}
	if p.tpl, err = parseMacroTemplate(st.MacroTemplate, p.bs); err != nil {
		return nil, &spec.Skip{Reason: spec.RequirementUnmet, Detail: "expect_substitution_safe: macro_template: " + err.Error()}
	}
	return p, nil
}

// Grade grades the step over payload, the reply of the step before it
// (at names that step, "phase.step"): one validation, check
// expect_substitution_safe, or the skip. fetch gets a url_fetch source's
// preview: its HTML, or the preview_url_unusable failure (Preview judges
// the fetch); nil when the run cannot fetch, which skips such a step.
func (p *Plan) Grade(payload any, at string, fetch func(url string) (string, *spec.Result)) ([]spec.Result, *spec.Skip) {
	st := p.st
	v, found := rawjson.Resolve(payload, st.SourcePath)
	src, isString := v.(string)
	if p.fetch && fetch == nil {
		return nil, &spec.Skip{Reason: spec.NotApplicable, Detail: "url_fetch: this run's dispatcher cannot fetch a preview_url"}
	}
	if p.fetch && found && isString && src != "" {
		var unusable *spec.Result
		if src, unusable = fetch(src); unusable != nil {
			return []spec.Result{*unusable}, nil
		}
	}
	switch {
	case !found || v == nil || (isString && src == ""):
		return nil, &spec.Skip{Reason: spec.NotApplicable, Detail: fmt.Sprintf("preview_source_unavailable: %s's response carries no preview at %s (the agent may omit previews; build_creative's schema puts them under /preview)", at, spec.Clip(st.SourcePath, 120))}
	case !isString: // v is neither null nor a string: an object, an array, a number or a boolean
		return nil, &spec.Skip{Reason: spec.NotApplicable, Detail: fmt.Sprintf("preview_source_unavailable: %s in %s's response is %s, not an HTML string", spec.Clip(st.SourcePath, 120), at, rawjson.KindOfDecoded(v).Phrase())}
	case len(src) > maxPreviewBytes:
		return nil, &spec.Skip{Reason: spec.NotApplicable, Detail: fmt.Sprintf("the preview at %s is %d bytes, over the observer's %d-byte bound: not parsed", spec.Clip(st.SourcePath, 120), len(src), maxPreviewBytes)}
	}
	urls, complete := extractTrackerURLs(src)
	if !complete {
		return nil, &spec.Skip{Reason: spec.NotApplicable, Detail: fmt.Sprintf("the preview holds more than %d tracker URLs: not graded", maxTrackerURLs)}
	}
	every := true
	switch {
	case st.RequireEveryBinding != nil:
		every = *st.RequireEveryBinding
	case st.RequireAllBindings != nil:
		every = *st.RequireAllBindings
	}
	return []spec.Result{gradeSubstitution(p.tpl, p.bs, urls, every, st.SourcePath)}, nil
}

// bindings resolves the step's catalog_bindings: an inlined raw_value and
// expected_encoded (a custom vector) or the fixture's vector.
func bindings(st *spec.Step, vectors map[string]MacroVector) ([]binding, error) {
	if len(st.CatalogBindings) == 0 {
		return nil, errors.New("no catalog_bindings")
	}
	var out []binding
	for i, cb := range st.CatalogBindings {
		b := binding{CatalogBinding: cb}
		switch {
		case cb.Macro == "":
			return nil, fmt.Errorf("catalog_bindings[%d] names no macro", i)
		case cb.RawValue != "" || cb.ExpectedEncoded != "":
			if cb.RawValue == "" || cb.ExpectedEncoded == "" {
				return nil, fmt.Errorf("catalog_bindings[%d] inlines only one of raw_value and expected_encoded", i)
			}
			b.raw, b.enc, b.custom = cb.RawValue, cb.ExpectedEncoded, true
		default:
			vec, ok := vectors[cb.VectorName]
			if !ok {
				if vectors == nil {
					return nil, fmt.Errorf("the release's %s was not loaded", MacroVectorFile)
				}
				return nil, fmt.Errorf("catalog_bindings[%d]: vector %q is not in %s", i, spec.Clip(cb.VectorName, 80), MacroVectorFile)
			}
			b.raw, b.enc = vec.Value, vec.Encoded
		}
		out = append(out, b)
	}
	return out, nil
}

// previewDenyHosts is the kit's hosts_denied_metadata (names; the
// addresses fall to probes/fetch's ranges).
var previewDenyHosts = []string{"metadata.google.internal", "metadata", "metadata.packet.net"}

// PreviewFetch is the fetch policy of a preview_url: the kit's
// ssrf_policy over probes/fetch's (no bare IP literal, the metadata host
// names refused).
func PreviewFetch() spec.FetchOptions {
	return spec.FetchOptions{NoIPLiterals: true, DenyHosts: previewDenyHosts}
}

// Preview judges the fetch of a preview_url u (url_fetch): its HTML, or
// the preview_url_unusable failure with the kit's sub-reason.
func Preview(resp *spec.Response, u string) (string, *spec.Result) {
	unusable := func(sub, format string, args ...any) (string, *spec.Result) {
		return "", &spec.Result{Check: checkSubstitutionSafe, Severity: "required", Description: "the preview at preview_url can be observed",
			Expected: "200 text/html", Actual: map[string]any{"sub_reason": sub},
			Message: "preview_url_unusable (" + sub + "): " + fmt.Sprintf(format, args...)}
	}
	shownURL := wire.Sanitize(fetch.RedactURL(u), 200)
	ct, _, _ := mime.ParseMediaType(resp.ContentType)
	switch {
	case resp.Blocked != "":
		return unusable("ssrf_blocked", "%s: %s", shownURL, wire.Sanitize(resp.Blocked, 200))
	case resp.Failed != "" || resp.Status == 0:
		return unusable("fetch_timeout", "%s: no response (%s)", shownURL, wire.Sanitize(resp.Failed, 200))
	case resp.Status >= 300 && resp.Status < 400:
		return unusable("redirect_returned", "%s answered HTTP %d (the kit does not follow redirects)", shownURL, resp.Status)
	case resp.Status != 200:
		return unusable("http_status", "%s answered HTTP %d, not 200", shownURL, resp.Status)
	case ct != "text/html" && ct != "application/xhtml+xml":
		return unusable("content_type", "%s is served as %s, not text/html or application/xhtml+xml", shownURL, wire.Sanitize(resp.ContentType, 80))
	case resp.Limit != "":
		return unusable("size_exceeded", "%s: %s", shownURL, resp.Limit)
	}
	return string(resp.Body), nil
}
