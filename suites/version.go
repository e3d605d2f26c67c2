package suites

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

func verChecks() []Check {
	return []Check{
		// Rule: VER-01 · Spec: reference/versioning.mdx; §4.45 · Since: 0.1.0 ·
		// Description: capabilities MUST declare adcp.major_versions (a non-empty list of
		// integers); adcp.supported_versions, when present, MUST be a non-empty list of
		// release-precision strings. A capabilities success without an adcp object fails:
		// the declaration is absent. Each occurrence of a repeated key is judged.
		{ID: "VER-01", Transport: catalogue.MCP, Text: "declares its major and supported versions in capabilities", Judge: judgeVER01},
		// Rule: VER-02 · Spec: §4.47–4.48; error-details/version-unsupported.json;
		// protocol/get_adcp_capabilities.mdx (Version negotiation) · Since: 0.1.0 ·
		// Description: a request pinned to an unsupported release (adcp_version "99.0") MUST
		// get VERSION_UNSUPPORTED with a non-empty, release-precision
		// details.supported_versions; so MUST a request declaring the unsupported integer
		// adcp_major_version 99 ("If adcp_major_version is provided but unsupported → return
		// VERSION_UNSUPPORTED"). A success answer fails: the error is mandatory. A reply that
		// is not JSON-RPC (an HTTP error page) carries no VERSION_UNSUPPORTED and fails.
		{ID: "VER-02", Transport: catalogue.MCP, Text: "refuses an unsupported release with VERSION_UNSUPPORTED and the supported versions", Judge: judgeVER02},
		// Rule: VER-03 · Spec: §4.46–4.47; reference/versioning.mdx · Since: 0.1.0 ·
		// Description: the echoed adcp_version SHOULD be the release served for the
		// request. The probes pin get_adcp_capabilities to each release the seller
		// advertises in adcp.supported_versions, which must be echoed as pinned, and to
		// "<major>.99", which it does not advertise: a success must echo the release
		// downshifted to (the highest advertised release of that major below the pin);
		// refusing that pin is not judged here.
		{ID: "VER-03", Transport: catalogue.MCP, Text: "echoes the release it served for a pinned request", Judge: judgeVER03},
	}
}

func judgeVER03(s *evidence.Store, _ Options) Verdict {
	supported := advertisedReleases(s)
	t := newTally("VER-03")
	for _, c := range toolCalls(s, evidence.WithPurpose(evidence.PurposeVersionPin)) {
		if !t.account(c) {
			continue
		}
		pin, _ := str(argumentsOf(c), "adcp_version")
		advertised := slices.Contains(supported, pin)
		if c.Message == nil {
			if advertised || supported == nil {
				t.judged(c, []finding{{"", "a call pinned to the advertised release " + quote(pin) + " is answered HTTP " + itoa(c.HTTPStatus) + " without a JSON-RPC reply"}})
			}
			continue // a pin it does not advertise may be refused
		}
		if ok, fs := pinnedEcho(parseReply(c), pin, supported); ok {
			t.judged(c, fs)
		}
	}
	return t.verdict("no call pinned to an advertised release was made (supported_versions absent?)")
}

// pinnedEcho is VER-03 on one reply to a call pinned to pin; ok is false
// when the reply is not judged (a pin not advertised, refused).
func pinnedEcho(r *reply, pin string, supported []string) (bool, []finding) {
	want, advertised := pin, slices.Contains(supported, pin)
	if !advertised && supported != nil {
		want = downshifted(supported, pin)
	}
	if !r.success() || r.data == nil || r.errorSignal() {
		if !advertised && supported != nil {
			return false, nil // a pin it does not advertise may be refused
		}
		return true, []finding{{"", "a call pinned to the advertised release " + quote(pin) + " is not served"}}
	}
	got, ok := str(r.data, "adcp_version")
	switch {
	case !ok:
		what := "is absent from a pinned reply"
		if v, present := r.data.Get("adcp_version"); present {
			what = "is " + kindName(v) + ", not the release string, in a pinned reply"
		}
		return true, []finding{{ptr(r.dataPtr, "adcp_version"), what}}
	case want == "":
		return true, []finding{{ptr(r.dataPtr, "adcp_version"), quote(got) + " is echoed for a request pinned to " + quote(pin) +
			", which no advertised release can serve (VERSION_UNSUPPORTED is due)"}}
	case got != want && advertised:
		return true, []finding{{ptr(r.dataPtr, "adcp_version"), quote(got) + " is echoed for a request pinned to " + quote(pin)}}
	case got != want:
		return true, []finding{{ptr(r.dataPtr, "adcp_version"), quote(got) + " is echoed for a request pinned to " + quote(pin) +
			", which is served downshifted to " + quote(want)}}
	}
	return true, nil
}

// advertisedReleases returns adcp.supported_versions of the capabilities
// reply the version probes read, nil when there is none.
func advertisedReleases(s *evidence.Store) []string {
	call, found := s.Call(probe(s, "ver/capabilities"))
	if !found || call.Message == nil {
		return nil
	}
	r := parseReply(call)
	adcp := child(r.data, "adcp")
	if !r.success() || adcp == nil {
		return nil
	}
	v, ok := adcp.Get("supported_versions")
	if !ok {
		return nil
	}
	var out []string
	if json.Unmarshal(v, &out) != nil {
		return nil
	}
	return out
}

func judgeVER01(s *evidence.Store, _ Options) Verdict {
	t := newTally("VER-01")
	call, r, adcp, skip := capabilitiesAdcp(s, t)
	if adcp == nil {
		return skip
	}
	base := ptr(r.dataPtr, "adcp")
	var fs []finding
	majors := values(adcp, "major_versions")
	if len(majors) == 0 {
		fs = append(fs, finding{base + "/major_versions", "is absent"})
	}
	for _, v := range majors {
		if f := listOf(v, func(it json.RawMessage) bool {
			n, ok := number(it)
			return ok && !math.IsInf(n, 0) && n == math.Trunc(n) && n >= 1
		}); f != "" {
			fs = append(fs, finding{base + "/major_versions", f + " (want positive integers)"})
		}
	}
	for _, v := range values(adcp, "supported_versions") {
		if f := listOf(v, isRelease); f != "" {
			fs = append(fs, finding{base + "/supported_versions", f + " (want release-precision strings)"})
		}
	}
	t.judged(call, fs)
	return t.verdict("")
}

// listOf checks a non-empty array whose every item passes ok, returning what
// is wrong or "".
func listOf(v json.RawMessage, ok func(json.RawMessage) bool) string {
	var items []json.RawMessage
	if rawjson.KindOf(v) != rawjson.KindArray || json.Unmarshal(v, &items) != nil {
		return "is " + kindName(v) + ", not a list"
	}
	if len(items) == 0 {
		return "is empty"
	}
	for i, it := range items {
		if !ok(it) {
			return "item " + strconv.Itoa(i) + " " + wireText(it) + " is malformed"
		}
	}
	return ""
}

func isRelease(it json.RawMessage) bool {
	var s string
	return rawjson.KindOf(it) == rawjson.KindString && json.Unmarshal(it, &s) == nil && releasePattern.MatchString(s)
}

func judgeVER02(s *evidence.Store, _ Options) Verdict {
	t := newTally("VER-02")
	calls := toolCalls(s, func(c evidence.Call) bool {
		return c.Has(evidence.PurposeErrorVersion) || c.Has(evidence.PurposeErrorMajorVersion)
	})
	for _, c := range calls {
		if !t.account(c) {
			continue
		}
		what := "a call pinned to adcp_version \"99.0\""
		if c.Has(evidence.PurposeErrorMajorVersion) {
			what = "a call declaring adcp_major_version 99"
		}
		if c.Message == nil {
			t.judged(c, []finding{{"", what + " is answered HTTP " + itoa(c.HTTPStatus) + " without a JSON-RPC reply carrying VERSION_UNSUPPORTED"}})
			continue
		}
		t.judged(c, versionUnsupported(parseReply(c), what))
	}
	return t.verdict("no call declaring an unsupported version was made")
}

// versionUnsupported is VER-02 on one reply to a call declaring an
// unsupported version (what).
func versionUnsupported(r *reply, what string) []finding {
	if !r.errorSignal() {
		return []finding{{"/result", what + " succeeds instead of VERSION_UNSUPPORTED"}}
	}
	for _, c := range r.candidates() {
		code, _ := str(c.obj, "code")
		if code != "VERSION_UNSUPPORTED" {
			continue
		}
		if d, ok := c.obj.Get("details"); ok && rawjson.KindOf(d) != rawjson.KindObject {
			return []finding{{c.ptr + "/details", "is " + kindName(d) + ", not an object: supported_versions is absent"}}
		}
		vs := values(child(c.obj, "details"), "supported_versions")
		if len(vs) == 0 {
			return []finding{{c.ptr + "/details/supported_versions", "is absent"}}
		}
		for _, v := range vs { // each occurrence of a repeated key
			if f := listOf(v, isRelease); f != "" {
				return []finding{{c.ptr + "/details/supported_versions", f}}
			}
		}
		return nil
	}
	if cs := r.candidates(); len(cs) > 0 {
		return []finding{{cs[0].ptr + "/code", what + " gets " + orNone(errorCode(r)) + ", not VERSION_UNSUPPORTED"}}
	}
	if r.rpcErr != nil {
		return []finding{{"/error", "is a JSON-RPC error carrying no VERSION_UNSUPPORTED"}}
	}
	return []finding{{"", what + " gets an error carrying no VERSION_UNSUPPORTED"}}
}

func itoa(n int) string { return strconv.Itoa(n) }

// downshifted returns the release a seller advertising supported should
// serve a request pinned to pin: the pin when advertised; else, for a plain
// release, the highest advertised plain release of the same major below it
// (reference/versioning.mdx); else "" (VERSION_UNSUPPORTED).
func downshifted(supported []string, pin string) string {
	if slices.Contains(supported, pin) {
		return pin
	}
	pMajor, pMinor, ok := plainRelease(pin)
	if !ok {
		return ""
	}
	best, bestMinor := "", -1
	for _, v := range supported {
		if m, n, ok := plainRelease(v); ok && m == pMajor && n <= pMinor && n > bestMinor {
			best, bestMinor = v, n
		}
	}
	return best
}

// plainRelease splits a release-precision version without a pre-release
// tag ("3.1" → 3, 1).
func plainRelease(v string) (major, minor int, ok bool) {
	maj, mnr, found := strings.Cut(v, ".")
	if !found {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(maj)
	minor, err2 := strconv.Atoi(mnr)
	return major, minor, err1 == nil && err2 == nil && major >= 0 && minor >= 0
}
