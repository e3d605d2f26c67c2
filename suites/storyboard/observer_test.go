package storyboard

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/observer"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// testVectors are vectors shaped like the fixture's (name, value, the
// encoding at the macro position), written here so the table runs
// without the spec folder; TestMacroVectorsFixture checks the fixture's
// own derive the same.
var testVectors = map[string]observer.MacroVector{
	"reserved-character-breakout":           {Name: "reserved-character-breakout", Value: "00013&cmd=drop", Encoded: "00013%26cmd%3Ddrop"},
	"nested-expansion-preserved-as-literal": {Name: "nested-expansion-preserved-as-literal", Value: "vacancy-{DEVICE_ID}-42", Encoded: "vacancy-%7BDEVICE_ID%7D-42"},
	"non-ascii-utf8-percent-encoding":       {Name: "non-ascii-utf8-percent-encoding", Value: "café-amsterdam", Encoded: "caf%C3%A9-amsterdam"},
	"crlf-injection-neutralized":            {Name: "crlf-injection-neutralized", Value: "abc\r\nHost: evil.example", Encoded: "abc%0D%0AHost%3A%20evil.example"},
	"bidi-override-neutralized":             {Name: "bidi-override-neutralized", Value: "VIN-\u202E1234", Encoded: "VIN-%E2%80%AE1234"},
	"url-scheme-injection-neutralized":      {Name: "url-scheme-injection-neutralized", Value: "javascript:alert(0)", Encoded: "javascript%3Aalert%280%29"},
}

// The kit's error codes (step_task.error_modes) a failure message opens
// with.
const (
	kitEncoding       = "substitution_encoding_violation"
	kitNested         = "nested_macro_re_expansion"
	kitBindingMissing = "substitution_binding_missing"
	kitScheme         = "substitution_scheme_injection"
)

// observerSB is a build step answering preview_html, then the observer
// step over three bindings of {SKU} (the sales-catalog-driven shape).
func observerSB(extra string) string {
	return `
id: obs
version: "1.0.0"
title: t
category: t
narrative: t
phases:
  - id: substitution_safety
    title: s
    steps:
      - id: build
        title: build
        task: build_creative
        stateful: true
        sample_request: {message: m, include_preview: true}
        validations:
          - check: field_present
            path: creative_manifest.format_id
            description: manifest
      - id: expect_substitution_safe
        title: expect
        task: expect_substitution_safe
        requires_contract: substitution_observer_runner
        source_path: "/creative_manifest/preview_html"
        macro_template: "https://track.example/imp?sku={SKU}"
` + extra + `        catalog_bindings:
          - {macro: "{SKU}", catalog_item_id: reserved_char_breakout, vector_name: reserved-character-breakout}
          - {macro: "{SKU}", catalog_item_id: nested_expansion, vector_name: nested-expansion-preserved-as-literal}
          - {macro: "{SKU}", catalog_item_id: non_ascii, vector_name: non-ascii-utf8-percent-encoding}
`
}

// crlf adds the CRLF vector's binding to observerSB's three.
const crlf = "crlf"

// observerSBFor is observerSB, with the CRLF binding when extra is crlf.
func observerSBFor(extra string) string {
	if extra != crlf {
		return observerSB(extra)
	}
	return observerSB("") + `          - {macro: "{SKU}", catalog_item_id: crlf_injection, vector_name: crlf-injection-neutralized}
`
}

const (
	goodBreakout = `<img src="https://track.example/imp?sku=00013%26cmd%3Ddrop">`
	goodNested   = `<a href="https://track.example/imp?sku=vacancy-%7BDEVICE_ID%7D-42">x</a>`
	goodASCII    = `<iframe src="https://track.example/imp?sku=caf%C3%A9-amsterdam"></iframe>`
	goodAll      = goodBreakout + goodNested + goodASCII
)

// runObserver runs observerSB with the build step answering manifest.
func runObserver(t *testing.T, extra string, manifest map[string]any) StepResult {
	t.Helper()
	f := &fake{answers: map[string]func(Request) *spec.Observation{
		"build_creative": ok(map[string]any{"creative_manifest": manifest}),
	}}
	e := env("build_creative")
	e.MacroVectors = testVectors
	res := Run(context.Background(), parse(t, observerSBFor(extra)), e, f)
	if len(res.Steps) != 2 {
		t.Fatalf("steps: %s", outcomes(res))
	}
	return res.Steps[1]
}

func withPreview(h string) map[string]any {
	return map[string]any{"format_id": map[string]any{"id": "f"}, "preview_html": h}
}

func TestExpectSubstitutionSafe(t *testing.T) {
	cases := []struct {
		name     string
		extra    string
		manifest map[string]any
		// want: "pass", "fail:<message prefix>", "skip:<reason>"
		want string
		// has is a substring of the failure message, skip detail or
		// observations.
		has string
	}{
		{name: "conformant encoding", manifest: withPreview(goodAll), want: "pass", has: "3 of 3 binding(s) observed"},
		{name: "conformant in a full document with other URLs", want: "pass", manifest: withPreview(
			`<!doctype html><html><head><link href="https://cdn.example/s.css" rel="stylesheet"><meta property="og:image" content="https://cdn.example/i.jpg"></head>` +
				`<body>` + goodAll + `<a href="https://track.example/click?sku=00013&cmd=drop">other path</a>` +
				`<img src="https://other.example/imp?sku=00013&amp;cmd=drop"></body></html>`)},
		{name: "raw & leak", manifest: withPreview(`<img src="https://track.example/imp?sku=00013&amp;cmd=drop">` + goodNested + goodASCII),
			want: "fail:" + kitEncoding, has: "reserved-character-breakout"},
		{name: "raw & leak, unescaped in the HTML", manifest: withPreview(`<img src="https://track.example/imp?sku=00013&cmd=drop">` + goodNested + goodASCII),
			want: "fail:" + kitEncoding, has: "the raw value leaks"},
		{name: "& encoded, = leaked", manifest: withPreview(`<img src="https://track.example/imp?sku=00013%26cmd=drop">` + goodNested + goodASCII),
			want: "fail:" + kitEncoding, has: "differing at byte 11"},
		{name: "= encoded, & leaked", manifest: withPreview(`<img src="https://track.example/imp?sku=00013&cmd%3Ddrop">` + goodNested + goodASCII),
			want: "fail:" + kitEncoding, has: "reserved-character-breakout"},
		{name: "CRLF leak", extra: crlf, manifest: withPreview(goodAll + "<img src=\"https://track.example/imp?sku=abc\r\nHost: evil.example\">"),
			want: "fail:" + kitEncoding, has: "crlf-injection-neutralized"},
		{name: "CRLF leak through character references", extra: crlf, manifest: withPreview(goodAll + `<img src="https://track.example/imp?sku=abc&#13;&#10;Host: evil.example">`),
			want: "fail:" + kitEncoding, has: "crlf-injection-neutralized"},
		{name: "CRLF encoded, space as +", extra: crlf, manifest: withPreview(goodAll + `<img src="https://track.example/imp?sku=abc%0D%0AHost%3A+evil.example">`),
			want: "fail:" + kitEncoding, has: "crlf-injection-neutralized"},
		{name: "CRLF encoded", extra: crlf, manifest: withPreview(goodAll + `<img src="https://track.example/imp?sku=abc%0D%0AHost%3A%20evil.example">`), want: "pass"},
		{name: "nested {SKU} expanded", manifest: withPreview(goodBreakout + goodASCII + `<a href="https://track.example/imp?sku=vacancy-6f1c2a-42">x</a>`),
			want: "fail:" + kitNested, has: "{DEVICE_ID} was expanded to \"6f1c2a\""},
		{name: "nested braces left raw", manifest: withPreview(goodBreakout + goodASCII + `<a href="https://track.example/imp?sku=vacancy-{DEVICE_ID}-42">x</a>`),
			want: "fail:" + kitEncoding, has: "nested-expansion-preserved-as-literal"},
		{name: "non-ASCII raw", manifest: withPreview(goodBreakout + goodNested + `<img src="https://track.example/imp?sku=café-amsterdam">`),
			want: "fail:" + kitEncoding, has: "non-ascii-utf8-percent-encoding"},
		{name: "NFD not normalized", manifest: withPreview(goodBreakout + goodNested + `<img src="https://track.example/imp?sku=cafe%CC%81-amsterdam">`),
			want: "fail:" + kitBindingMissing, has: "non-ascii-utf8-percent-encoding"},
		{name: "over-encoded unreserved byte", manifest: withPreview(goodBreakout + goodNested + `<img src="https://track.example/imp?sku=caf%C3%A9%2Damsterdam">`),
			want: "fail:" + kitEncoding, has: "differing at byte 9"},
		{name: "a binding missing", manifest: withPreview(goodBreakout + goodNested),
			want: "fail:" + kitBindingMissing, has: "{SKU}→non-ascii-utf8-percent-encoding (item non_ascii) not observed"},
		{name: "a binding missing, not required", extra: "        require_every_binding_observed: false\n", manifest: withPreview(goodBreakout + goodNested),
			want: "pass", has: "not observed (require_every_binding_observed: false)"},
		{name: "a binding missing, not required under the deprecated name", extra: "        require_all_bindings_observed: false\n", manifest: withPreview(goodBreakout + goodNested),
			want: "pass", has: "not observed (require_every_binding_observed: false)"},
		{name: "the new name wins over the deprecated one", extra: "        require_all_bindings_observed: false\n        require_every_binding_observed: true\n", manifest: withPreview(goodBreakout + goodNested),
			want: "fail:" + kitBindingMissing, has: "non_ascii"},
		{name: "macro left unsubstituted", manifest: withPreview(`<img src="https://track.example/imp?sku={SKU}">`),
			want: "fail:" + kitBindingMissing, has: "no extracted tracker URL carries"},
		{name: "no tracker URL matches the template", manifest: withPreview(`<img src="https://track.example/other?sku=00013%26cmd%3Ddrop">`),
			want: "fail:" + kitBindingMissing, has: "none of the 1 tracker URL(s)"},
		{name: "lowercase hex", manifest: withPreview(goodBreakout + goodNested + `<img src="https://track.example/imp?sku=caf%c3%a9-amsterdam">`),
			want: "pass", has: "lowercase hex"},
		{name: "mixed-case hex", manifest: withPreview(`<img src="https://track.example/imp?sku=00013%26cmd%3ddrop">` + goodNested + `<img src="https://track.example/imp?sku=caf%C3%a9-amsterdam">`),
			want: "pass", has: "lowercase hex"},
		{name: "invalid triplet", manifest: withPreview(goodAll + `<img src="https://track.example/imp?sku=caf%G3%A9-amsterdam">`),
			want: "fail:" + kitEncoding, has: "unencoded byte at offset 3"},
		{name: "an unbound value with an unencoded byte", manifest: withPreview(goodAll + `<img src="https://track.example/imp?sku=spring sale">`),
			want: "fail:" + kitEncoding, has: "a byte outside the RFC 3986 unreserved set"},
		{name: "an unbound encoded value is another item", manifest: withPreview(goodAll + `<img src="https://track.example/imp?sku=spring%20sale">`), want: "pass"},
		{name: "attributes outside the set ignored", want: "pass", manifest: withPreview(goodAll +
			`<div data-title="https://track.example/imp?sku=00013&cmd=drop" title="https://track.example/imp?sku=café"></div>` +
			`<img alt="https://track.example/imp?sku=café" longdesc="https://track.example/imp?sku=café">` +
			`<a src="https://track.example/imp?sku=café">tag and attribute out of pair</a>` +
			`<!-- <img src="https://track.example/imp?sku=café"> -->` +
			`<script>document.write('<img src="https://track.example/imp?sku=café">')</script>`)},
		{name: "data-impression-url on any tag", manifest: withPreview(goodAll + `<div data-impression-url="https://track.example/imp?sku=café-amsterdam"></div>`),
			want: "fail:" + kitEncoding, has: "div@data-impression-url"},
		{name: "srcset, every candidate", manifest: withPreview(goodBreakout + goodNested +
			`<img srcset="https://cdn.example/a.jpg 1x, https://track.example/imp?sku=caf%C3%A9-amsterdam 2x">`), want: "pass"},
		{name: "srcset leak in a later candidate", manifest: withPreview(goodAll +
			`<picture><source srcset="https://cdn.example/a.jpg 1x,https://track.example/imp?sku=café-amsterdam 2x"></picture>`),
			want: "fail:" + kitEncoding, has: "source@srcset"},
		{name: "meta refresh url", manifest: withPreview(goodAll + `<meta http-equiv="refresh" content="0; url='https://track.example/imp?sku=café-amsterdam'">`),
			want: "fail:" + kitEncoding, has: "meta@content"},
		{name: "scheme-relative and case of scheme and host", want: "pass", manifest: withPreview(
			`<img src="//track.example/imp?sku=00013%26cmd%3Ddrop"><img src="HTTPS://Track.Example:443/imp?sku=vacancy-%7BDEVICE_ID%7D-42"><img src=" https://track.example/imp?x=1&sku=caf%C3%A9-amsterdam#f">`)},
		{name: "malformed HTML", manifest: withPreview(`<img src="https://track.example/imp?sku=00013%26cmd%3Ddrop" <a href=<<<>` + `<img src='https://track.example/imp?sku=caf%C3%A9-amsterdam'` + "\x00<\xff\xfe"),
			want: "fail:" + kitBindingMissing, has: "nested-expansion-preserved-as-literal"},
		{name: "no artifact", manifest: map[string]any{"format_id": map[string]any{"id": "f"}},
			want: "skip:" + spec.NotApplicable, has: "preview_source_unavailable"},
		{name: "empty artifact", manifest: withPreview(""), want: "skip:" + spec.NotApplicable, has: "preview_source_unavailable"},
		{name: "artifact not a string", manifest: withPreview2(map[string]any{"html": goodAll}), want: "skip:" + spec.NotApplicable, has: "is an object, not an HTML string"},
		{name: "previous step did not pass", manifest: map[string]any{"preview_html": goodAll},
			want: "skip:" + spec.PrerequisiteFailed, has: "did not pass"},
		{name: "preview_url source, no fetcher", extra: "        source: url_fetch\n", manifest: withPreview(goodAll),
			want: "skip:" + spec.NotApplicable, has: "cannot fetch a preview_url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := runObserver(t, c.extra, c.manifest)
			got := "pass"
			text := ""
			switch {
			case s.Skip != nil:
				got, text = "skip:"+s.Skip.Reason, s.Skip.Detail
			case s.Error != "":
				got, text = "error", s.Error
			case !s.Passed:
				got = "fail:"
				if len(s.Validations) == 1 {
					text = s.Validations[0].Message
					code, _, _ := strings.Cut(text, ":")
					got += code
				}
			default:
				if len(s.Validations) == 1 {
					text = strings.Join(s.Validations[0].Observations, "; ")
				}
			}
			if got != c.want {
				t.Fatalf("got %s (%s), want %s", got, text, c.want)
			}
			if !strings.Contains(text, c.has) {
				t.Errorf("%q does not say %q", text, c.has)
			}
			if strings.HasPrefix(got, "pass") || strings.HasPrefix(got, "fail") {
				if len(s.Validations) != 1 || s.Validations[0].Check != taskSubstitutionSafe {
					t.Errorf("validations %+v, want one %s", s.Validations, taskSubstitutionSafe)
				}
			}
			for _, r := range text {
				if r == '\r' || r == '\n' || r == '\u202e' {
					t.Errorf("message carries %U unsanitized: %q", r, text)
				}
			}
		})
	}
}

// wholeValueSB is observerSB with an href-whole-value template,
// macro_template "{CLICK}", and the scheme-injection vector bound to it:
// the kit's url_scheme_preserved check.
func wholeValueSB(extra string) string {
	sb := strings.Replace(observerSB(extra), `macro_template: "https://track.example/imp?sku={SKU}"`, `macro_template: "{CLICK}"`, 1)
	head, _, _ := strings.Cut(sb, "        catalog_bindings:\n")
	return head + `        catalog_bindings:
          - {macro: "{CLICK}", catalog_item_id: scheme_injection, vector_name: url-scheme-injection-neutralized}
`
}

func TestExpectSubstitutionSafeWholeValue(t *testing.T) {
	const (
		good  = `<a href="javascript%3Aalert%280%29">buy</a>`
		other = `<img src="https://cdn.example/i.jpg"><link href="https://cdn.example/s.css"><a href="https://brand.example/p?q=a b">x</a>`
	)
	cases := []struct {
		name, extra, html string
		want, has         string // want: "pass" or the failure's code
	}{
		{name: "neutralized", html: good, want: "pass", has: "1 of 1 binding(s) observed"},
		{name: "neutralized among other URLs", html: other + good, want: "pass"},
		{name: "neutralized, whitespace around the value", html: "<a href=\" \tjavascript%3Aalert%280%29\n\">x</a>", want: "pass"},
		{name: "lowercase hex", html: `<a href="javascript%3aalert%280%29">x</a>`, want: "pass", has: "lowercase hex"},
		{name: "raw value leaks", html: other + `<a href="javascript:alert(0)">x</a>`, want: kitScheme, has: `parses as a "javascript": URL`},
		{name: "colon left, parentheses encoded", html: `<a href="javascript:alert%280%29">x</a>`, want: kitScheme, has: "whole-value position (a@href)"},
		{name: "scheme split by a newline", html: `<a href="java&#10;script:alert(0)">x</a>`, want: kitScheme},
		{name: "scheme behind leading controls", html: "<a href=\"\x01 javascript:alert(0)\">x</a>", want: kitScheme},
		{name: "colon encoded, parentheses left", html: `<a href="javascript%3Aalert(0)">x</a>`, want: kitEncoding, has: "differing at byte 18"},
		{name: "in a data-click-url", html: `<div data-click-url="javascript:alert(0)"></div>`, want: kitScheme, has: "div@data-click-url"},
		{name: "not observed", html: other, want: kitBindingMissing, has: "none of the 3 attribute value(s) extracted"},
		{name: "not observed, not required", extra: "        require_every_binding_observed: false\n", html: other, want: "pass", has: "not observed"},
		{name: "left unsubstituted", html: `<a href="{CLICK}">x</a>`, want: kitBindingMissing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fake{answers: map[string]func(Request) *spec.Observation{"build_creative": ok(map[string]any{"creative_manifest": withPreview(c.html)})}}
			e := env("build_creative")
			e.MacroVectors = testVectors
			res := Run(context.Background(), parse(t, wholeValueSB(c.extra)), e, f)
			s := res.Steps[len(res.Steps)-1]
			if s.Skip != nil || s.Error != "" || len(s.Validations) != 1 {
				t.Fatalf("got skip %+v error %q validations %d, want a verdict", s.Skip, s.Error, len(s.Validations))
			}
			v := s.Validations[0]
			got, text := "pass", strings.Join(v.Observations, "; ")
			if !s.Passed {
				text = v.Message
				got, _, _ = strings.Cut(text, ":")
			}
			if got != c.want || !strings.Contains(text, c.has) {
				t.Errorf("got %s (%s), want %s saying %q", got, text, c.want, c.has)
			}
		})
	}
}

func withPreview2(v any) map[string]any {
	return map[string]any{"format_id": map[string]any{"id": "f"}, "preview_html": v}
}

// The step's authoring faults are skips with the reason, never a verdict
// on the agent.
func TestExpectSubstitutionSafeAuthoring(t *testing.T) {
	for _, c := range []struct{ name, sb, has string }{
		{"unknown vector", strings.Replace(observerSB(""), "vector_name: non-ascii-utf8-percent-encoding", "vector_name: nope", 1), `vector "nope" is not in`},
		{"macro not in the template", strings.Replace(observerSB(""), `imp?sku={SKU}"`, `imp?sku=x"`, 1), "is not in"},
		{"macro in the host", strings.Replace(observerSB(""), `"https://track.example/imp?sku={SKU}"`, `"https://{SKU}.example/imp"`, 1), "outside a path segment or query value"},
		{"relative template", strings.Replace(observerSB(""), `"https://track.example/imp?sku={SKU}"`, `"/imp?sku={SKU}"`, 1), "not an absolute http(s) URL"},
		{"whole-value template, a binding of another macro", strings.Replace(strings.Replace(observerSB(""), `"https://track.example/imp?sku={SKU}"`, `"{SKU}"`, 1),
			`{macro: "{SKU}", catalog_item_id: non_ascii`, `{macro: "{CLICK}", catalog_item_id: non_ascii`, 1), "{CLICK} is not in"},
		{"unknown source", strings.Replace(observerSB(""), "source_path:", "source: smoke\n        source_path:", 1), `unknown source "smoke"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fake{answers: map[string]func(Request) *spec.Observation{"build_creative": ok(map[string]any{"creative_manifest": withPreview(goodAll)})}}
			e := env("build_creative")
			e.MacroVectors = testVectors
			res := Run(context.Background(), parse(t, c.sb), e, f)
			s := res.Steps[len(res.Steps)-1]
			if s.Skip == nil || s.Skip.Reason != spec.RequirementUnmet || !strings.Contains(s.Skip.Detail, c.has) {
				t.Errorf("got %+v, want requirement_unmet saying %q", s.Skip, c.has)
			}
		})
	}
	// Without the release's fixture the step says so.
	f := &fake{answers: map[string]func(Request) *spec.Observation{"build_creative": ok(map[string]any{"creative_manifest": withPreview(goodAll)})}}
	res := Run(context.Background(), parse(t, observerSB("")), env("build_creative"), f)
	if s := res.Steps[1]; s.Skip == nil || !strings.Contains(s.Skip.Detail, "was not loaded") {
		t.Errorf("without vectors: %+v", s.Skip)
	}
	// An inlined custom vector needs no fixture, and its values are
	// redacted in the report.
	custom := strings.Replace(observerSB(""), `vector_name: non-ascii-utf8-percent-encoding}`, `vector_name: custom, raw_value: "secret&x", expected_encoded: "secret%26x"}`, 1)
	f = &fake{answers: map[string]func(Request) *spec.Observation{"build_creative": ok(map[string]any{"creative_manifest": withPreview(goodBreakout + goodNested + `<img src="https://track.example/imp?sku=secret&amp;x">`)})}}
	e := env("build_creative")
	e.MacroVectors = testVectors
	res = Run(context.Background(), parse(t, custom), e, f)
	s := res.Steps[1]
	if s.Passed || len(s.Validations) != 1 {
		t.Fatalf("custom leak: %s", outcomes(res))
	}
	b, _ := json.Marshal(s.Validations[0])
	if strings.Contains(string(b), "secret") || !strings.Contains(string(b), "sha256:") {
		t.Errorf("custom vector not redacted: %s", b)
	}
}

// The fixture's vectors derive an encoding each, and the table's are
// the fixture's.
func TestMacroVectorsFixture(t *testing.T) {
	for _, rel := range []string{"3.1.19", "3.2.0-beta.5"} {
		dir := filepath.Dir(filepath.Dir(shared.File(t, "spec/compliance/"+rel+"/"+observer.MacroVectorFile)))
		vs, err := observer.LoadMacroVectors(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) < 11 {
			t.Errorf("%s: %d vectors", rel, len(vs))
		}
		for name, want := range testVectors {
			if got := vs[name]; got.Encoded != want.Encoded || got.Value != want.Value {
				t.Errorf("%s %s: %q → %q, the table has %q → %q", rel, name, got.Value, got.Encoded, want.Value, want.Encoded)
			}
		}
	}
}

// htmlFor is a preview carrying the template with each binding's value:
// encoded as the fixture says, or raw (HTML-escaped into the attribute).
func htmlFor(template string, bs []spec.CatalogBinding, vs map[string]observer.MacroVector, raw bool) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><body>")
	for _, cb := range bs {
		v := vs[cb.VectorName].Encoded
		if raw {
			v = vs[cb.VectorName].Value
		}
		b.WriteString(`<img width="1" height="1" src="` + html.EscapeString(strings.ReplaceAll(template, cb.Macro, v)) + `">`)
	}
	b.WriteString("</body></html>")
	return b.String()
}

// mcpCall is a recorded MCP tools/call answered with payload as its
// structuredContent.
func mcpCall(probeID, tool string, payload any) evidence.Call {
	body, _ := json.Marshal(payload)
	result, _ := json.Marshal(map[string]any{"structuredContent": json.RawMessage(body),
		"content": []any{map[string]any{"type": "text", "text": string(body)}}})
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": json.RawMessage(result)})
	return evidence.Call{ProbeID: probeID, Transport: evidence.MCP, Kind: evidence.KindToolCall, Tool: tool, Method: "tools/call",
		Message: msg, Result: result, HTTPStatus: 200}
}

// recording answers through recorded calls, as a live run does: each
// answer is an evidence.Call kept in the store and read by Observe.
type recording struct {
	store   *evidence.Store
	answers map[string]any
}

func (r recording) Call(_ context.Context, req Request) *spec.Observation {
	p, ok := r.answers[req.Task]
	if !ok {
		return &spec.Observation{Task: req.Task, Transport: "mcp", Failure: "no answer for " + req.Task}
	}
	c := mcpCall(req.ProbeID, req.Task, p)
	r.store.Add(c)
	return spec.Observe(c, req.Task, req.Args, false)
}

func (r recording) Get(context.Context, string, string) *spec.Observation {
	return &spec.Observation{Transport: "http", Failure: "no GET"}
}

// The three specialism storyboards' observer steps (3.1.19 and
// 3.2.0-beta.5) pass a preview
// encoded from the fixture and fail a raw one with the kit's code; a
// recorded run re-judges (Replay, through the evidence JSON) the same.
func TestSubstitutionSpecialisms(t *testing.T) {
	for _, release := range []string{"3.1.19", "3.2.0-beta.5"} {
		t.Run(release, func(t *testing.T) {
			substitutionSpecialisms(t, filepath.Dir(shared.File(t, "spec/compliance/"+release+"/specialisms")))
		})
	}
}

func substitutionSpecialisms(t *testing.T, dir string) {
	vs, err := observer.LoadMacroVectors(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sales-catalog-driven", "creative-generative", "sales-social"} {
		path := "specialisms/" + name + "/index.yaml"
		data, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil {
			t.Fatal(err)
		}
		sb, _, err := spec.Parse(path, data)
		if err != nil {
			t.Fatal(err)
		}
		var ph *spec.Phase
		var obs *spec.Step
		for i := range sb.Phases {
			for j := range sb.Phases[i].Steps {
				if sb.Phases[i].Steps[j].Task == taskSubstitutionSafe {
					ph, obs = &sb.Phases[i], &sb.Phases[i].Steps[j]
				}
			}
		}
		if obs == nil {
			t.Fatalf("%s: no %s step", name, taskSubstitutionSafe)
		}
		// Only the substitution phase runs, as its own storyboard.
		one := *sb
		one.Phases = []spec.Phase{*ph}
		one.Kind, one.Path = spec.Protocols, "protocols/media-buy/"+name+".yaml"
		for _, raw := range []bool{false, true} {
			h := htmlFor(obs.MacroTemplate, obs.CatalogBindings, vs, raw)
			preview := map[string]any{"previews": []any{map[string]any{"renders": []any{map[string]any{"render_id": "r", "output_format": "html", "role": "primary", "preview_html": h}}}}}
			answers := map[string]any{
				"sync_catalogs":    map[string]any{"catalogs": []any{map[string]any{"catalog_id": "c", "action": "created"}}},
				"sync_creatives":   map[string]any{"creatives": []any{map[string]any{"creative_id": "c", "action": "created"}}, "context": map[string]any{}},
				"build_creative":   map[string]any{"creative_manifest": map[string]any{"format_id": map[string]any{"id": "f"}, "format_kind": "display", "preview_html": h}},
				"preview_creative": preview,
			}
			e := env("sync_catalogs", "sync_creatives", "build_creative", "preview_creative", "get_products", "create_media_buy")
			e.MacroVectors = vs
			store := evidence.NewStore(evidence.Target{})
			live := Run(context.Background(), &one, e, recording{store: store, answers: answers})
			if len(live.Steps) == 0 {
				t.Fatalf("%s: not run: %+v %+v", name, live.Skip, live.NotSelected)
			}
			s := live.Steps[len(live.Steps)-1]
			if s.StepID != obs.ID || s.Skip != nil || len(s.Validations) != 1 {
				t.Fatalf("%s raw=%v: the observer did not grade: %s %+v", name, raw, outcomes(live), s.Skip)
			}
			msg := s.Validations[0].Message
			switch {
			case !raw && !s.Passed:
				t.Errorf("%s: an encoded preview fails: %s", name, msg)
			case raw && (s.Passed || !strings.HasPrefix(msg, kitEncoding+": ")):
				t.Errorf("%s: a raw preview: passed %v, %q", name, s.Passed, msg)
			}
			// Replay: the calls through the evidence file's JSON.
			back := evidence.NewStore(evidence.Target{})
			for _, c := range store.Calls() {
				b, err := json.Marshal(c)
				if err != nil {
					t.Fatal(err)
				}
				var c2 evidence.Call
				if err := json.Unmarshal(b, &c2); err != nil {
					t.Fatal(err)
				}
				back.Add(c2)
			}
			again := Run(context.Background(), &one, e, Replay{Store: back})
			if a, b := outcomes(live), outcomes(again); a != b {
				t.Errorf("%s raw=%v: live %s, replay %s", name, raw, a, b)
			}
			r := again.Steps[len(again.Steps)-1]
			if len(r.Validations) != 1 || r.Validations[0].Message != msg {
				t.Errorf("%s raw=%v: replay graded %+v, live %q", name, raw, r.Validations, msg)
			}
		}
	}
}

// A previous step that proves nothing (a harness failure) or was refused
// leaves nothing to observe: prerequisite_failed, naming it.
func TestExpectSubstitutionSafeAfterNoReply(t *testing.T) {
	for name, answer := range map[string]func(Request) *spec.Observation{
		"failure": func(Request) *spec.Observation { return &spec.Observation{Failure: "connection reset"} },
		"refusal": refuse("INVALID_REQUEST"),
	} {
		f := &fake{answers: map[string]func(Request) *spec.Observation{"build_creative": answer}}
		e := env("build_creative")
		e.MacroVectors = testVectors
		res := Run(context.Background(), parse(t, observerSB("")), e, f)
		s := res.Steps[1]
		if s.Skip == nil || s.Skip.Reason != spec.PrerequisiteFailed || !strings.Contains(s.Skip.Detail, "substitution_safety.build") {
			t.Errorf("%s: %+v", name, s.Skip)
		}
	}
}

// previewFake serves preview_url fetches from a map and records them.
type previewFake struct {
	fake
	docs map[string]*spec.Response
	got  []string
	opts []spec.FetchOptions
}

func (p *previewFake) FetchPublic(_ context.Context, probeID, url string, opt spec.FetchOptions) *spec.Response {
	p.got = append(p.got, probeID+" "+url)
	p.opts = append(p.opts, opt)
	if r, ok := p.docs[url]; ok {
		return r
	}
	return &spec.Response{Failed: "connection refused"}
}

// url_fetch: the preview_url the previous reply names is fetched once,
// under the kit's tightened policy, and observed like an inline preview;
// every way the fetch can be unusable fails with the kit's sub-reason.
func TestExpectSubstitutionSafeFetchesPreviewURL(t *testing.T) {
	const u = "https://preview.example/p/1"
	page := func(ct, body string) *spec.Response {
		return &spec.Response{Status: 200, ContentType: ct, Body: []byte(body)}
	}
	cases := []struct {
		name string
		doc  *spec.Response
		want string // "pass" or the failure message's opening
	}{
		{"a conformant preview", page("text/html; charset=utf-8", goodAll), "pass"},
		{"xhtml", page("application/xhtml+xml", goodAll), "pass"},
		{"a leaking preview", page("text/html", `<img src="https://track.example/imp?sku=00013&cmd=drop">`+goodNested+goodASCII), kitEncoding},
		{"a redirect", &spec.Response{Status: 302, Location: "https://elsewhere.example/"}, "preview_url_unusable (redirect_returned)"},
		{"not found", &spec.Response{Status: 404}, "preview_url_unusable (http_status)"},
		{"JSON", page("application/json", `{}`), "preview_url_unusable (content_type)"},
		{"too large", &spec.Response{Status: 200, ContentType: "text/html", Limit: "a response over 262144 bytes"}, "preview_url_unusable (size_exceeded)"},
		{"blocked", &spec.Response{Blocked: "preview.example resolves to 10.0.0.7, not globally routable"}, "preview_url_unusable (ssrf_blocked)"},
		{"no response", nil, "preview_url_unusable (fetch_timeout)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &previewFake{docs: map[string]*spec.Response{}}
			if c.doc != nil {
				f.docs[u] = c.doc
			}
			f.answers = map[string]func(Request) *spec.Observation{"build_creative": ok(map[string]any{"creative_manifest": map[string]any{"format_id": map[string]any{"id": "f"}, "preview_url": u}})}
			e := env("build_creative")
			e.MacroVectors = testVectors
			src := strings.Replace(observerSBFor("        source: url_fetch\n"), "/creative_manifest/preview_html", "/creative_manifest/preview_url", 1)
			res := Run(context.Background(), parse(t, src), e, f)
			s := res.Steps[1]
			got := "pass"
			if !s.Passed {
				got = "no validation"
				if len(s.Validations) == 1 {
					got = s.Validations[0].Message
				}
			}
			if !strings.HasPrefix(got, c.want) {
				t.Fatalf("got %q, want %q (%s)", got, c.want, outcomes(res))
			}
			if len(f.got) != 1 || !strings.HasSuffix(strings.Fields(f.got[0])[0], "#preview") || !f.opts[0].NoIPLiterals || !slices.Contains(f.opts[0].DenyHosts, "metadata.google.internal") {
				t.Fatalf("fetches %v with %+v, want one under the step's probe ID, literals and metadata names refused", f.got, f.opts)
			}
		})
	}
}
