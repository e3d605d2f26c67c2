package certify

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
)

func TestRedactReachesEveryDepthAndJSONInsideStrings(t *testing.T) {
	in := `{"a":{"Token":"t1","list":[{"api-key":"k"}]},"content":[{"type":"text","text":"{\"password\":\"p\",\"n\":1.50}"}],` +
		`"plain":"<b>{not json</b>","n":12345678901234567890}`
	got := string(Redact(json.RawMessage(in)))
	for _, secret := range []string{`"t1"`, `"k"`, `\"p\"`} {
		if strings.Contains(got, secret) {
			t.Errorf("%s survived: %s", secret, got)
		}
	}
	for _, kept := range []string{`1.50`, `12345678901234567890`, `"plain":"\u003cb\u003e{not json\u003c/b\u003e"`} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s lost: %s", kept, got)
		}
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("invalid output %s", got)
	}
	// Invalid JSON falls back to the byte-level redactor.
	if got := string(Redact(json.RawMessage(`{"secret":"s", oops`))); strings.Contains(got, `"s"`) {
		t.Errorf("invalid input: %s", got)
	}
	if Redact(nil) != nil {
		t.Error("nil became non-nil")
	}
}

func TestContractDropsRequestHeadersAndUnlistedResponseHeaders(t *testing.T) {
	run := &report.Run{
		Steps: []report.Step{{Skip: &report.Skip{Reason: "mutations_off", Detail: "--allow-mutations"},
			Response: &report.Response{Payload: json.RawMessage(`{"bearer":"x"}`),
				Headers: map[string][]string{"Set-Cookie": {"s"}, "Content-Type": {"application/json"}}}}},
		Rules: []report.RuleResult{{ID: "AUTH-01", Evidence: []report.Evidence{{Exchanges: []wire.Exchange{{
			RequestHeaders:  http.Header{"Authorization": {"[redacted]"}},
			ResponseHeaders: http.Header{"X-Hostile": {"1"}, "Www-Authenticate": {"Bearer"}}}}}}}},
	}
	Contract(run)
	st := run.Steps[0]
	if st.Skip.Reason != "not_applicable" || st.Skip.Detail != "mutations_off: --allow-mutations" {
		t.Errorf("skip %+v", st.Skip)
	}
	if string(st.Response.Payload) != `{"bearer":"[redacted]"}` || len(st.Response.Headers) != 1 || st.Response.Headers["Content-Type"] == nil {
		t.Errorf("response %s %v", st.Response.Payload, st.Response.Headers)
	}
	x := run.Rules[0].Evidence[0].Exchanges[0]
	if x.RequestHeaders != nil || len(x.ResponseHeaders) != 1 || x.ResponseHeaders.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("exchange headers %v %v", x.RequestHeaders, x.ResponseHeaders)
	}
}

func TestSealAndCheckFindTheChangedCall(t *testing.T) {
	dir := t.TempDir()
	ev := `{"target":{},"calls":[{"probe_id":"a","n":1},{"probe_id":"b","n":2}]}`
	if err := os.WriteFile(filepath.Join(dir, EvidenceFile), []byte(ev), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Seal(dir, []string{EvidenceFile}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Files) != 1 || len(in.Calls) != 2 || in.Calls[1].ProbeID != "b" {
		t.Fatalf("integrity %+v", in)
	}
	if errs := Check(dir, in); len(errs) != 0 {
		t.Fatalf("untouched: %v", errs)
	}
	if err := os.WriteFile(filepath.Join(dir, EvidenceFile), []byte(strings.Replace(ev, `"n":2`, `"n":3`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	errs := Check(dir, in)
	if len(errs) != 2 || !errors.Is(errs[0], ErrMismatch) || !strings.Contains(errs[1].Error(), "call 1 (b)") {
		t.Errorf("changed call: %v", errs)
	}
	if _, err := Seal(dir, []string{"../x"}, nil); err == nil {
		t.Error("a path outside the folder was hashed")
	}
	if calls, err := HashCalls([]byte(`{"target":{},"calls":null}`)); err != nil || len(calls) != 0 {
		t.Errorf("an empty store: %v %v", calls, err)
	}
	got, err := HashCalls([]byte(`{"target":{"calls":[{"x":1}],"s":"\\\"calls\\\": [{"},` + "\n" + `"calls" : [ {"probe_id":"a","b":"}{]["} ,{}]}`))
	if err != nil || len(got) != 2 || got[0].SHA256 != digest([]byte(`{"probe_id":"a","b":"}{]["}`)) || got[1].SHA256 != digest([]byte(`{}`)) {
		t.Errorf("scanner: %+v %v", got, err)
	}
	for _, bad := range []string{`[]`, `{"calls":{}}`, `{"calls":[1,`, `{"calls":`, `{"calls":[1]}`, `{}}`} {
		if _, err := HashCalls([]byte(bad)); err == nil {
			t.Errorf("%s: hashed", bad)
		}
	}
	if errs := Check(dir, nil); len(errs) != 1 {
		t.Error("no integrity member passed")
	}
}

func TestTheSignatureCoversTheCanonicalForm(t *testing.T) {
	pub, priv, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"b": 1, "a": [1.0, "x"]}`)
	sig, err := Sign(priv, doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySignature(pub, []byte("{\"a\":[1,\"x\"],\n  \"b\":1}"), sig); err != nil {
		t.Errorf("re-indented document: %v", err)
	}
	if err := VerifySignature(pub, []byte(`{"b": 1, "a": [1.0, "y"]}`), sig); !errors.Is(err, ErrMismatch) {
		t.Errorf("changed document: %v", err)
	}
	if err := VerifySignature(pub, doc, []byte("not base64")); !errors.Is(err, ErrMismatch) {
		t.Errorf("garbage signature: %v", err)
	}
}

func TestParseBaselineIsStrict(t *testing.T) {
	known := func(id string) bool { return id == "CTX-01" || id == "ENV-02" }
	got, err := ParseBaseline([]byte("expected_failures:\n- rule: CTX-01\n  reason: r1\n- rule: ENV-02\n  reason: r2\n"), known)
	if err != nil || len(got) != 2 || !reflect.DeepEqual(got[1], report.BaselineEntry{Rule: "ENV-02", Reason: "r2"}) {
		t.Fatalf("%v %v", got, err)
	}
	got, err = ParseBaseline([]byte("expected_failures:\n- rule: storyboard:media_buy_seller\n  reason: r\n- rule: storyboard:media_buy_seller/pricing_currency_filter\n  reason: r\n"), known)
	if err != nil || len(got) != 2 || got[0].Rule != "storyboard:media_buy_seller" {
		t.Errorf("storyboard entries (a scenario's id holds a slash): %v %v", got, err)
	}
	for _, bad := range []string{`{"expected_failures":[{"rule":"X-1","reason":"r"}]}`, `{"expected_failures":[{"rule":"CTX-01","reason":" "}]}`,
		`{"expected_failures":[],"extra":1}`, `[]`, `{"expected_failures":[{"rule":"storyboard:","reason":"r"}]}`,
		`{"expected_failures":[{"rule":"storyboard:a b","reason":"r"}]}`, `{"expected_failures":[{"rule":"storyboard:a//b","reason":"r"}]}`,
		`{"expected_failures":[{"rule":"storyboard:a","reason":"r"},{"rule":"storyboard:a","reason":"r"}]}`,
		// A step is a storyboard's, <phase>/<step>, listed once, with check kinds.
		`{"expected_failures":[{"rule":"CTX-01","step":"p/s","reason":"r"}]}`,
		`{"expected_failures":[{"rule":"storyboard:a","checks":["field_value"],"reason":"r"}]}`,
		`{"expected_failures":[{"rule":"storyboard:a","step":"s","reason":"r"}]}`,
		`{"expected_failures":[{"rule":"storyboard:a","step":"p/s","checks":["field value"],"reason":"r"}]}`,
		`{"expected_failures":[{"rule":"storyboard:a","step":"p/s","reason":"r"},{"rule":"storyboard:a","step":"p/s","reason":"r"}]}`,
		`{"expected_failures":[{"rule":"storyboard:a","step":"p/s","reason":"r"},{"rule":"storyboard:a","reason":"r"}]}`,
		`{"expected_failures":[{"rule":"storyboard:a","step":"p/s","reason":"r","releases":["3.1.19"]},{"rule":"storyboard:a","step":"p/s","reason":"r"}]}`,
		`{"expected_failures":[{"rule":"storyboard:a","step":"p/s","reason":"r","releases":[" "]}]}`,
		`{"expected_failures":[{"rule":"storyboard:a","step":"p/s","reason":"r","kind":"x"}]}`} {
		if _, err := ParseBaseline([]byte(bad), known); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	// The same step in scopes that do not meet: another release, or sandbox
	// runs against the others.
	got, err = ParseBaseline([]byte(`expected_failures:
- {rule: "storyboard:a", step: p/s, checks: [field_value, "field_present(advisory)"], reason: r, spec: "the spec says", upstream: "https://example.com/1", releases: [3.1.19]}
- {rule: "storyboard:a", step: p/s, reason: r, releases: [3.2.0-beta.5], sandbox: true}
- {rule: "storyboard:a", step: p/s, reason: r, releases: [3.2.0-beta.5], sandbox: false}
- {rule: "storyboard:a", step: p/t, reason: r}
`), known)
	if err != nil || len(got) != 4 || got[0].Spec != "the spec says" || got[0].Upstream != "https://example.com/1" ||
		!slices.Equal(got[0].Checks, []string{"field_value", "field_present(advisory)"}) || got[1].Sandbox == nil || !*got[1].Sandbox {
		t.Errorf("step entries: %+v %v", got, err)
	}
}

func TestMarkPublishesOnlyACertificationRunOverHTTPS(t *testing.T) {
	run := &report.Run{Target: "https://seller.example/mcp", Rules: []report.RuleResult{
		{ID: "CTX-01", Level: report.Must, Outcome: report.Passed},
		{ID: "CAP-03", Level: report.Must, Outcome: report.Skipped, Message: "the server does not declare the MCP tasks capability"},
		{ID: "RETRY-01", Level: report.Should, Outcome: report.Skipped, Message: report.NotImplemented}}}
	Mark(run, true)
	if !run.Publishable || run.PublishableReason != "" {
		t.Errorf("publishable %v: %q", run.Publishable, run.PublishableReason)
	}
	run.Target = "https://seller.example/mcp http://seller.example/a2a"
	if Mark(run, true); run.Publishable {
		t.Error("an A2A target over plain HTTP is publishable")
	}
	run.Rules = append(run.Rules, report.RuleResult{ID: "IDEM-01", Level: report.Must, Outcome: report.Skipped,
		Message: "mutating probes not allowed (--allow-mutations)"})
	run.Target = "http://seller.example/mcp"
	Mark(run, true)
	if run.Publishable || run.PublishableReason != "the target is not served over HTTPS; MUST rules not judged for a reason of the harness: IDEM-01" {
		t.Errorf("publishable %v: %q", run.Publishable, run.PublishableReason)
	}
	run.Target = "https://seller.example/mcp"
	run.Rules = append(run.Rules[:3], report.RuleResult{ID: "SCHEMA-01", Level: report.Must, Outcome: report.Skipped,
		Message: "no schemas: fetching https://adcontextprotocol.org/schemas/3.1.19/: 404"})
	if Mark(run, true); run.Publishable || run.PublishableReason != "MUST rules not judged for a reason of the harness: SCHEMA-01" {
		t.Errorf("unfetched schemas: publishable %v: %q", run.Publishable, run.PublishableReason)
	}
}

func TestMarkNeverPublishesTheBundledReferenceSeller(t *testing.T) {
	run := &report.Run{Target: "https://127.0.0.1/mcp", TargetKind: report.TargetBundledReference,
		Rules: []report.RuleResult{{ID: "CTX-01", Level: report.Must, Outcome: report.Passed}}}
	if Mark(run, true); run.Publishable || run.PublishableReason != "the target is the bundled reference seller, not a seller" {
		t.Errorf("publishable %v: %q", run.Publishable, run.PublishableReason)
	}
	run.TargetKind = report.TargetSeller
	if Mark(run, true); !run.Publishable {
		t.Errorf("a seller's run: %q", run.PublishableReason)
	}
}

func TestAClaimOfACertifiedReferenceRunIsAMismatch(t *testing.T) {
	for _, tc := range []struct {
		doc      string
		mismatch bool
		why      string
	}{
		{`{"target_kind":"bundled_reference","certify":true,"publishable":true}`, true, "the run tested the bundled reference seller"},
		{`{"target_kind":"bundled_reference"}`, false, "the run tested the bundled reference seller"},
		{`{"target_kind":"seller","certify":true,"publishable":true}`, false, ""},
		{`{"target_kind":"seller","certify":true}`, false, "the certification run is not publishable"},
		{`{"target_kind":"seller"}`, false, "not a certification run"},
		{`{"certify":true,"publishable":true}`, false, ""}, // written before target_kind was recorded
		{`{"target_kind":"mirror","publishable":true}`, true, "the run's target kind is \"mirror\""},
	} {
		c, err := ReadClaim([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Check(); (err != nil) != tc.mismatch || (err != nil && !errors.Is(err, ErrMismatch)) {
			t.Errorf("%s: Check %v", tc.doc, err)
		}
		if why := c.SellerCertification(); !strings.HasPrefix(why, tc.why) || (tc.why == "") != (why == "") {
			t.Errorf("%s: SellerCertification %q, want %q…", tc.doc, why, tc.why)
		}
	}
}

func TestDiffComparesStoryboardsToo(t *testing.T) {
	sb := func(outcome report.Outcome) *report.Run {
		r := &report.Run{Storyboards: []report.StoryboardResult{{ID: "media_buy_seller", Category: "media-buy"}, {ID: "gone", Category: "universal"}}}
		st := report.Step{StoryboardID: "media_buy_seller", PhaseID: "create", StepID: "create_media_buy", Passed: outcome == report.Passed}
		if outcome == report.Failed {
			pointer := "/status"
			st.Validations = []report.Validation{{Check: "field_value", Description: "d", JSONPointer: &pointer, Expected: "a", Actual: []byte(`"b"`)}}
		}
		r.Steps = []report.Step{st}
		r.Settle()
		return r
	}
	old, cur := sb(report.Passed), sb(report.Failed)
	cur.Storyboards = cur.Storyboards[:1]
	d := Diff(old, cur)
	if len(d.Regressions) != 1 || d.Regressions[0].Rule != "storyboard:media_buy_seller" ||
		d.Regressions[0].Message != `create/create_media_buy: field_value /status: expected "a", got "b"` {
		t.Errorf("regressions %+v", d.Regressions)
	}
	if len(d.Removed) != 1 || d.Removed[0].Rule != "storyboard:gone" {
		t.Errorf("removed %+v", d.Removed)
	}
	if d = Diff(cur, old); len(d.Fixes) != 1 || d.Regressed() {
		t.Errorf("fixes %+v", d)
	}
}

func TestAnErroredStoryboardKeepsTheRunUnpublishable(t *testing.T) {
	run := &report.Run{Target: "https://seller.example/mcp", Rules: []report.RuleResult{{ID: "CTX-01", Level: report.Must, Outcome: report.Passed}},
		Storyboards: []report.StoryboardResult{{ID: "idempotency", Category: "universal", Outcome: report.Error},
			{ID: "signals", Category: "specialism/signals", Outcome: report.Skipped, Skip: &report.Skip{Reason: "not_applicable", Detail: "d"}}}}
	if Mark(run, true); run.Publishable || run.PublishableReason != "storyboards not judged for a reason of the harness: idempotency" {
		t.Errorf("publishable %v: %q", run.Publishable, run.PublishableReason)
	}
}

func TestContractKeepsStoryboardSkipsInTheVocabulary(t *testing.T) {
	run := &report.Run{Storyboards: []report.StoryboardResult{{ID: "a", Skip: &report.Skip{Reason: "not declared", Detail: "signals"}}}}
	Contract(run)
	if sk := run.Storyboards[0].Skip; sk.Reason != "not_applicable" || sk.Detail != "not declared: signals" {
		t.Errorf("skip %+v", sk)
	}
}

// HashCalls hashes each call's bytes whatever its strings hold: quotes,
// escaped quotes and backslashes, braces and long runs of text, wherever
// they fall against the scanner's 64 KiB reads. The oracle is
// encoding/json's decoder, which gives each element's exact bytes.
func TestHashCallsSkipsStringsExactly(t *testing.T) {
	var doc strings.Builder
	doc.WriteString(`{"target":{"mcp":"http://x"},"calls":[`)
	texts := []string{`a\"b`, `\\`, `\\\"`, `}{][`, `\u0022`, `\\\\`, ``, `\\\\\"x`}
	for i := range 40 {
		if i > 0 {
			doc.WriteString(" ,\n")
		}
		pad := strings.Repeat("p", (i*7919)%(70<<10)) // some strings span a read, some end at its edge
		fmt.Fprintf(&doc, `{"probe_id":"c%d","s":"%s%s","t":["%s"],"o":{"k\"}":"%s"}}`, i, pad, texts[i%len(texts)], texts[(i+3)%len(texts)], pad)
	}
	doc.WriteString(`]}`)
	var want struct {
		Calls []json.RawMessage `json:"calls"`
	}
	if err := json.Unmarshal([]byte(doc.String()), &want); err != nil {
		t.Fatal(err)
	}
	got, err := HashCalls([]byte(doc.String()))
	if err != nil || len(got) != len(want.Calls) {
		t.Fatalf("%d calls hashed of %d: %v", len(got), len(want.Calls), err)
	}
	for i, c := range want.Calls {
		if got[i].SHA256 != digest(c) {
			t.Errorf("call %d: hash %s, want the hash of its bytes", i, got[i].SHA256)
		}
	}
}
