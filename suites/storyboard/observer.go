package storyboard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
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

// MacroVector is one vector of the substitution fixture, with Encoded the
// value as it must appear at a macro position.
type MacroVector struct {
	Name     string `json:"name"`
	Macro    string `json:"macro"`
	Value    string `json:"value"`
	Template string `json:"template"`
	Expected string `json:"expected"`
	Encoded  string `json:"-"`
}

// LoadMacroVectors reads the release's substitution fixture
// (MacroVectorFile under dir), by vector name.
func LoadMacroVectors(dir string) (map[string]MacroVector, error) {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(MacroVectorFile)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFixtureBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFixtureBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", MacroVectorFile, maxFixtureBytes)
	}
	return ParseMacroVectors(b)
}

// ParseMacroVectors decodes the fixture's vectors and derives each one's
// Encoded value: the expected URL is the template with every occurrence
// of the macro replaced by it.
func ParseMacroVectors(b []byte) (map[string]MacroVector, error) {
	var doc struct {
		Vectors []MacroVector `json:"vectors"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", MacroVectorFile, err)
	}
	out := map[string]MacroVector{}
	var errs []error
	for _, v := range doc.Vectors {
		enc, ok := encodedPart(v.Template, v.Macro, v.Expected)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: vector %q: expected is not its template with %s replaced", MacroVectorFile, v.Name, v.Macro))
			continue
		}
		v.Encoded = enc
		out[v.Name] = v
	}
	return out, errors.Join(errs...)
}

// encodedPart solves template[macro := e] == expected for e.
func encodedPart(template, macro, expected string) (string, bool) {
	k := strings.Count(template, macro)
	if macro == "" || k == 0 {
		return "", false
	}
	fixed := len(template) - k*len(macro)
	if len(expected) < fixed || (len(expected)-fixed)%k != 0 {
		return "", false
	}
	n := (len(expected) - fixed) / k
	at := strings.Index(template, macro)
	e := expected[at : at+n]
	return e, strings.ReplaceAll(template, macro, e) == expected
}

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
	v, found := spec.AtPointer(payload, st.SourcePath)
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
	case !isString:
		return nil, &spec.Skip{Reason: spec.NotApplicable, Detail: fmt.Sprintf("preview_source_unavailable: %s in %s's response is %s, not an HTML string", spec.Clip(st.SourcePath, 120), at, kindOf(v))}
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

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "not a string"
}

// trackerURL is one URL the attribute set yields.
type trackerURL struct {
	URL, Tag, Attr string
}

// The kit's html_attribute_extraction_set: tag → attributes, and the
// attributes read on any tag.
var (
	trackerAttrs = map[string][]string{
		"a": {"href"}, "img": {"src", "srcset"}, "iframe": {"src"}, "source": {"src", "srcset"},
		"link": {"href"}, "meta": {"content"},
	}
	anyTagAttrs = []string{"data-impression-url", "data-click-url", "data-tracker-url", "data-vast-url"}
)

// extractTrackerURLs reads the URLs of the kit's attribute set from an
// HTML document: comments and script text are not read (the tokenizer
// gives neither as tags), srcset is split per candidate, a meta refresh
// yields its url=. It reports false when the document holds more than
// maxTrackerURLs.
func extractTrackerURLs(doc string) ([]trackerURL, bool) {
	z := html.NewTokenizer(strings.NewReader(doc))
	var out []trackerURL
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out, true
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		tag := string(name)
		for hasAttr {
			k, v, more := z.TagAttr()
			hasAttr = more
			attr := string(k)
			if !tracked(tag, attr) {
				continue
			}
			val := string(v)
			var found []string
			switch attr {
			case "srcset":
				found = srcsetURLs(val)
			case "content":
				found = []string{metaURL(val)}
			default:
				found = []string{val}
			}
			for _, u := range found {
				if u == "" {
					continue
				}
				if len(out) == maxTrackerURLs {
					return out, false
				}
				out = append(out, trackerURL{URL: u, Tag: tag, Attr: attr})
			}
		}
	}
}

func tracked(tag, attr string) bool {
	for _, a := range trackerAttrs[tag] {
		if a == attr {
			return true
		}
	}
	for _, a := range anyTagAttrs {
		if a == attr {
			return true
		}
	}
	return false
}

func isHTMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// srcsetURLs splits a srcset into its candidates' URLs (HTML "parse a
// srcset attribute": a URL is a run of non-space, trailing commas end
// it; descriptors run to the next comma outside parentheses).
func srcsetURLs(s string) []string {
	var out []string
	i := 0
	for i < len(s) {
		for i < len(s) && (isHTMLSpace(s[i]) || s[i] == ',') {
			i++
		}
		j := i
		for j < len(s) && !isHTMLSpace(s[j]) {
			j++
		}
		u := s[i:j]
		i = j
		if t := strings.TrimRight(u, ","); t != u {
			if t != "" {
				out = append(out, t)
			}
			continue
		}
		if u != "" {
			out = append(out, u)
		}
		depth := 0
		for i < len(s) {
			c := s[i]
			i++
			if c == '(' {
				depth++
			} else if c == ')' && depth > 0 {
				depth--
			} else if c == ',' && depth == 0 {
				break
			}
		}
	}
	return out
}

var refreshURL = regexp.MustCompile(`(?is)^\s*[0-9.]*\s*[;,]?\s*url\s*=\s*(.*)$`)

// metaURL is the URL of a meta content: a refresh's url= part, else the
// whole value (og:image and the like).
func metaURL(s string) string {
	if m := refreshURL.FindStringSubmatch(s); m != nil {
		u := strings.TrimSpace(m[1])
		if len(u) >= 2 && (u[0] == '\'' || u[0] == '"') {
			if k := strings.IndexByte(u[1:], u[0]); k >= 0 {
				return u[1 : 1+k]
			}
			return u[1:]
		}
		return u
	}
	return s
}

// span is a byte range of a URL string.
type span struct{ lo, hi int }

// qpair is one query pair: its key decoded, its value's span.
type qpair struct {
	key string
	val span
}

// urlParts is a URL split for alignment (the kit's step 1 and 2:
// scheme, host, port, path segments, query pairs), with the spans of the
// segments and values in the string as written.
type urlParts struct {
	scheme, host, port string
	segs               []span
	query              []qpair
}

// splitURL splits an absolute http(s) URL the way a WHATWG parser finds
// its components, without normalizing the bytes: leading and trailing C0
// controls and spaces are dropped, a backslash separates like a slash, a
// scheme-relative URL takes the synthetic base's https. A relative URL
// resolves against https://observer.test/ and so can align with no
// template; it is reported false, as is any other scheme.
func splitURL(s string) (urlParts, string, bool) {
	lo, hi := 0, len(s)
	for lo < hi && s[lo] <= ' ' {
		lo++
	}
	for hi > lo && s[hi-1] <= ' ' {
		hi--
	}
	s = s[:hi]
	var p urlParts
	i := lo
	if strings.HasPrefix(s[i:], "//") || strings.HasPrefix(s[i:], `\\`) {
		p.scheme = "https"
	} else {
		j := i
		for j < len(s) && (isAlpha(s[j]) || (j > i && (isDigit(s[j]) || s[j] == '+' || s[j] == '-' || s[j] == '.'))) {
			j++
		}
		if j == i || j >= len(s) || s[j] != ':' {
			return p, s, false
		}
		p.scheme = strings.ToLower(s[i:j])
		i = j + 1
	}
	if p.scheme != "https" && p.scheme != "http" {
		return p, s, false
	}
	for k := 0; k < 2; k++ {
		if i < len(s) && (s[i] == '/' || s[i] == '\\') {
			i++
		}
	}
	j := i
	for j < len(s) && !strings.ContainsRune(`/\?#`, rune(s[j])) {
		j++
	}
	auth := s[i:j]
	if k := strings.LastIndexByte(auth, '@'); k >= 0 {
		auth = auth[k+1:]
	}
	host := auth
	if k := strings.LastIndexByte(auth, ':'); k >= 0 && !strings.Contains(auth[k:], "]") {
		host, p.port = auth[:k], auth[k+1:]
	}
	if (p.scheme == "https" && p.port == "443") || (p.scheme == "http" && p.port == "80") {
		p.port = ""
	}
	p.host = strings.ToLower(host)
	if p.host == "" {
		return p, s, false
	}
	i = j
	pathEnd := i
	for pathEnd < len(s) && s[pathEnd] != '?' && s[pathEnd] != '#' {
		pathEnd++
	}
	if i < pathEnd {
		i++ // the leading slash
		start := i
		for k := i; k <= pathEnd; k++ {
			if k == pathEnd || s[k] == '/' || s[k] == '\\' {
				p.segs = append(p.segs, span{start, k})
				start = k + 1
			}
		}
	} else {
		p.segs = []span{{pathEnd, pathEnd}}
	}
	if pathEnd < len(s) && s[pathEnd] == '?' {
		qEnd := pathEnd + 1
		for qEnd < len(s) && s[qEnd] != '#' {
			qEnd++
		}
		start := pathEnd + 1
		for k := start; k <= qEnd; k++ {
			if k < qEnd && s[k] != '&' {
				continue
			}
			if k > start {
				pair := s[start:k]
				key, vlo := pair, k
				if e := strings.IndexByte(pair, '='); e >= 0 {
					key, vlo = pair[:e], start+e+1
				}
				p.query = append(p.query, qpair{key: formDecode(key), val: span{vlo, k}})
			}
			start = k + 1
		}
	}
	return p, s, true
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// unreserved is RFC 3986 §2.3: ALPHA / DIGIT / "-" / "." / "_" / "~".
func unreserved(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// pctDecode decodes the valid %XX triplets of s and leaves the rest.
func pctDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// formDecode decodes a query key as application/x-www-form-urlencoded.
func formDecode(s string) string { return pctDecode(strings.ReplaceAll(s, "+", " ")) }

// macroPos is one macro position of the template: a path segment (index)
// or the n-th query pair of a key, with the fixed text around the macro,
// or the whole attribute value.
type macroPos struct {
	macro     string
	path      bool
	whole     bool
	index     int
	key       string
	n         int
	pre, post string
}

// macroTemplate is the step's macro_template, split.
type macroTemplate struct {
	parts urlParts
	raw   string
	segs  []string // the fixed path segments ("" at a macro segment)
	pos   []macroPos
	// whole is the macro when it is the whole template (an
	// href-whole-value binding, <a href="{CLICK}">): every attribute
	// value of the set is a candidate, and the kit's url_scheme_preserved
	// check applies.
	whole string
}

// parseMacroTemplate splits the template and finds the bound macros'
// positions: each in a path segment or a query value, once per
// component. A macro elsewhere (host, key, fragment) is not aligned by
// the kit's algorithm and is refused, as is a binding whose macro the
// template lacks.
func parseMacroTemplate(t string, bs []binding) (*macroTemplate, error) {
	p, s, ok := splitURL(t)
	if !ok {
		whole := strings.TrimSpace(t)
		for _, b := range bs {
			if b.Macro != whole {
				if slices.ContainsFunc(bs, func(b binding) bool { return b.Macro == whole }) {
					return nil, fmt.Errorf("a binding's macro %s is not in %q, a whole-value template", b.Macro, spec.Clip(t, 200))
				}
				return nil, fmt.Errorf("%q is not an absolute http(s) URL", spec.Clip(t, 200))
			}
		}
		return &macroTemplate{raw: t, whole: whole, pos: []macroPos{{macro: whole, whole: true}}}, nil
	}
	mt := &macroTemplate{parts: p, raw: s}
	macros := map[string]bool{}
	for _, b := range bs {
		macros[b.Macro] = true
	}
	find := func(comp string) (string, string, string, error) {
		var hit string
		for m := range macros {
			switch c := strings.Count(comp, m); {
			case c > 1:
				return "", "", "", fmt.Errorf("%s appears twice in one component %q", m, spec.Clip(comp, 80))
			case c == 1 && hit != "":
				return "", "", "", fmt.Errorf("two macros in one component %q", spec.Clip(comp, 80))
			case c == 1:
				hit = m
			}
		}
		if hit == "" {
			return "", "", "", nil
		}
		pre, post, _ := strings.Cut(comp, hit)
		return hit, pre, post, nil
	}
	for i, sp := range p.segs {
		seg := s[sp.lo:sp.hi]
		m, pre, post, err := find(seg)
		if err != nil {
			return nil, err
		}
		if m == "" {
			mt.segs = append(mt.segs, seg)
			continue
		}
		mt.segs = append(mt.segs, "")
		mt.pos = append(mt.pos, macroPos{macro: m, path: true, index: i, pre: pre, post: post})
	}
	seen := map[string]int{}
	for _, q := range p.query {
		n := seen[q.key]
		seen[q.key]++
		m, pre, post, err := find(s[q.val.lo:q.val.hi])
		if err != nil {
			return nil, err
		}
		if m != "" {
			mt.pos = append(mt.pos, macroPos{macro: m, key: q.key, n: n, pre: pre, post: post})
		}
	}
	placed := map[string]bool{}
	for _, mp := range mt.pos {
		placed[mp.macro] = true
	}
	for m := range macros {
		if !placed[m] {
			if strings.Contains(t, m) {
				return nil, fmt.Errorf("%s sits outside a path segment or query value, which the kit's alignment does not cover", m)
			}
			return nil, fmt.Errorf("a binding's macro %s is not in %q", m, spec.Clip(t, 200))
		}
	}
	return mt, nil
}

// observed is a value at a macro position of an aligned URL; rest is the
// URL from the value's start (for a raw leak cut short by a delimiter).
type observed struct {
	pos         macroPos
	url, attr   string
	value, rest string
}

// align returns the values at the template's macro positions in u, when
// u's scheme, host, port and fixed path segments are the template's. A
// whole-value template's position is the whole value, read as a browser's
// URL parser reads it: leading and trailing C0 controls and spaces
// stripped, tabs and newlines removed ("java\nscript:" is javascript:).
func (mt *macroTemplate) align(u trackerURL) []observed {
	if mt.whole != "" {
		v := strings.Trim(u.URL, c0OrSpace)
		v = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, v)
		return []observed{{pos: mt.pos[0], url: u.URL, attr: u.Tag + "@" + u.Attr, value: v, rest: v}}
	}
	p, s, ok := splitURL(u.URL)
	tp := mt.parts
	if !ok || p.scheme != tp.scheme || p.host != tp.host || p.port != tp.port || len(p.segs) != len(tp.segs) {
		return nil
	}
	for i, seg := range mt.segs {
		if seg != "" && s[p.segs[i].lo:p.segs[i].hi] != seg {
			return nil
		}
	}
	var out []observed
	add := func(mp macroPos, sp span, restEnd int) {
		v := s[sp.lo:sp.hi]
		if !strings.HasPrefix(v, mp.pre) || !strings.HasSuffix(v[len(mp.pre):], mp.post) {
			return
		}
		lo := sp.lo + len(mp.pre)
		out = append(out, observed{pos: mp, url: s, attr: u.Tag + "@" + u.Attr, value: s[lo : sp.hi-len(mp.post)], rest: s[lo:restEnd]})
	}
	for _, mp := range mt.pos {
		if mp.path {
			add(mp, p.segs[mp.index], p.segs[mp.index].hi)
			continue
		}
		n := 0
		for _, q := range p.query {
			if q.key != mp.key {
				continue
			}
			if n == mp.n {
				end := len(s)
				if h := strings.IndexByte(s[q.val.lo:], '#'); h >= 0 {
					end = q.val.lo + h
				}
				add(mp, q.val, end)
				break
			}
			n++
		}
	}
	return out
}

// c0OrSpace are the bytes a URL parser strips from both ends of an input.
var c0OrSpace = func() string {
	var b strings.Builder
	for c := byte(0); c <= ' '; c++ {
		b.WriteByte(c)
	}
	return b.String()
}()

// urlScheme is the scheme a URL parser reads at the start of v (RFC 3986:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) then ":"), lowercased, or ""
// when v is relative.
func urlScheme(v string) string {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isAlpha(c):
		case i > 0 && (isDigit(c) || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(v[:i])
		default:
			return ""
		}
	}
	return ""
}

// hexEqual compares an observed value with an expected encoding under the
// kit's hex_case_policy: the two digits of a %XX triplet compare
// case-insensitively, every other byte exactly. It returns the offset of
// the first difference (-1 when equal).
func hexEqual(v, enc string) int {
	for i := 0; i < len(enc); i++ {
		if i >= len(v) {
			return i
		}
		if enc[i] == '%' && i+2 < len(enc) && isHex(enc[i+1]) && isHex(enc[i+2]) {
			if v[i] != '%' {
				return i
			}
			for k := 1; k <= 2; k++ {
				if i+k >= len(v) || !isHex(v[i+k]) || unhex(v[i+k]) != unhex(enc[i+k]) {
					return i + k
				}
			}
			i += 2
			continue
		}
		if v[i] != enc[i] {
			return i
		}
	}
	if len(v) != len(enc) {
		return len(enc)
	}
	return -1
}

// unsafeByte returns the offset of the first byte of v that is neither
// unreserved nor part of a valid %XX triplet (-1 when none).
func unsafeByte(v string) int {
	for i := 0; i < len(v); i++ {
		switch {
		case unreserved(v[i]):
		case v[i] == '%' && i+2 < len(v) && isHex(v[i+1]) && isHex(v[i+2]):
			i += 2
		default:
			return i
		}
	}
	return -1
}

// lowerHex reports whether v has a triplet with a lowercase hex digit.
func lowerHex(v string) bool {
	for i := 0; i+2 < len(v); i++ {
		if v[i] == '%' && isHex(v[i+1]) && isHex(v[i+2]) {
			if (v[i+1] >= 'a' && v[i+1] <= 'f') || (v[i+2] >= 'a' && v[i+2] <= 'f') {
				return true
			}
			i += 2
		}
	}
	return false
}

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
