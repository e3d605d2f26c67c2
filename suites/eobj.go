package suites

import (
	"encoding/json"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/extract"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

const noErrorObject = "no adcp_error observed"

// The skip reasons of the rules on one member of the error object: an error
// without the member shows nothing of its value.
const (
	noDetails    = "no error with details observed"
	noRecovery   = "no error with recovery observed"
	noStringCode = "no error with a string code observed"
)

// The size limits of transport-errors.mdx.
const (
	maxCodeLength   = 64
	maxDetailsBytes = 500
)

// vendorCode is transport-errors.mdx's X_{VENDOR}_{CODE}.
var vendorCode = regexp.MustCompile(`^X_[A-Z][A-Z0-9]{1,19}_[A-Z][A-Z0-9_]{1,39}$`)

func eobjChecks() []Check {
	return []Check{
		// Rule: EOBJ-01 · Spec: transport-errors.mdx (validate); core/error.json · Since: 0.1.0 ·
		// Description: code MUST be a non-empty string of at most 64 characters (UTF-16
		// units, as the seed's .length counts) and message MUST be a string. Each
		// occurrence of a repeated key is judged.
		{ID: "EOBJ-01", Transport: catalogue.MCP, Text: "types code as a short non-empty string and message as a string", Judge: judgeEOBJ01},
		// Rule: EOBJ-02 · Spec: transport-errors.mdx (validate, Client Library Requirements #3) · Since: 0.1.0 ·
		// Description: the serialized error MUST be at most 4096 bytes.
		// Policy: the seed's prose says "4096 bytes", its validate() counts
		// JSON.stringify(error).length, UTF-16 code units; they differ only for non-ASCII
		// text, where bytes is the stricter reading. As for mcp-response-extraction.mdx's 1 MB text limit, the
		// project counts the reference code's unit (extract.MaxErrorLength): an error a
		// reference client keeps is never failed, and ERR-02 (which reads through the same
		// validate()) and this rule never disagree.
		{ID: "EOBJ-02", Transport: catalogue.MCP, Text: "keeps the serialized error within 4096 bytes", Judge: judgeEOBJ02},
		// Rule: EOBJ-03 · Spec: transport-errors.mdx (Size Guidance) · Since: 0.1.0 ·
		// Description: details, when present, SHOULD serialize to under 500 bytes of UTF-8.
		// Judged on the errors that carry details (each occurrence of a repeated key); a
		// run whose errors carry none skips: they show nothing of the size.
		{ID: "EOBJ-03", Transport: catalogue.MCP, Text: "keeps details under 500 serialized bytes", Judge: judgeEOBJ03},
		// Rule: EOBJ-04 · Spec: L3/error-handling; core/error.json; §4.20 · Since: 0.1.0 ·
		// Description: recovery, when present, MUST be one of transient, correctable,
		// terminal. Its presence is EOBJ-10's (a SHOULD): an error without recovery is not
		// judged here, and a run whose errors carry none skips. A falsy recovery (null, "")
		// is present, and no value; each occurrence of a repeated key is judged.
		{ID: "EOBJ-04", Transport: catalogue.MCP, Text: "states recovery as transient, correctable or terminal", Judge: judgeEOBJ04},
		// Rule: EOBJ-05 · Spec: enums/error-code.json · Since: 0.1.0 ·
		// Description: for a standard code, recovery SHOULD equal that code's registered
		// recovery. Judged on errors whose recovery is one of the three values: an absent
		// recovery is EOBJ-10's, any other value EOBJ-04's (one defect, one rule).
		{ID: "EOBJ-05", Transport: catalogue.MCP, Text: "gives a standard code its registered recovery", Judge: judgeEOBJ05},
		// Rule: EOBJ-06 · Spec: transport-errors.mdx (Seller-Specific Error Codes) · Since: 0.1.0 ·
		// Description: code MUST be a standard code or a vendor code X_{VENDOR}_{CODE}.
		// Judged on the codes that are non-empty strings; any other code is EOBJ-01's, and a
		// run with no string code skips.
		{ID: "EOBJ-06", Transport: catalogue.MCP, Text: "uses a standard code or a vendor code", Judge: judgeEOBJ06},
		// Rule: EOBJ-07 · Spec: transport-errors.mdx (Seller Requirements); §4.26 · Since: 0.1.0 ·
		// Description: error strings MUST leak no internals (stack traces, file paths, SQL,
		// internal hostnames, private IPs) and never the caller's own credential.
		// Policy: the agent's own host is not a leak; the credential canary is the wire
		// layer's record that the run's secret came back in a reply carrying an error.
		{ID: "EOBJ-07", Transport: catalogue.MCP, Text: "leaks no internals or credentials in error strings", Judge: judgeEOBJ07},
		// Rule: EOBJ-08 · Spec: transport-errors.mdx (details tables); error-details/*.json · Since: 0.1.0 ·
		// Description: standard details keys SHOULD have their documented types. Judged on
		// errors whose code has a documented details shape.
		{ID: "EOBJ-08", Transport: catalogue.MCP, Text: "types the standard details keys as documented", Judge: judgeEOBJ08},
		// Rule: EOBJ-09 · Spec: §4.12 · Since: 0.1.0 ·
		// Description: the same error carried on two paths of one response MUST NOT disagree
		// on code or recovery. Judged on replies carrying adcp_error on two or more paths
		// (copies: code and recovery equal, each present on both or neither), and on
		// replies carrying adcp_error beside a payload errors[] (error-handling.mdx, the
		// two-layer model): an errors[] list must hold an entry with the envelope's code,
		// and a recovery both state must agree (see envelopeAgrees).
		{ID: "EOBJ-09", Transport: catalogue.MCP, Text: "never disagrees with itself across the paths of one response", Judge: judgeEOBJ09},
		// Rule: EOBJ-10 · Spec: core/error.json (recovery description); L3/error-handling · Since: 0.2.0 ·
		// Description: recovery SHOULD be present on every error (3.1 onward). The schema
		// does not require it and transport-errors.mdx's clients fall back to the code's class when it is
		// absent, so its absence is a warning; its value is EOBJ-04's.
		{ID: "EOBJ-10", Transport: catalogue.MCP, Text: "states recovery on every error", Judge: judgeEOBJ10},
	}
}

// eachError judges every adcp_error object of every reply in the store
// with examine. A reply counts as examined when it carries at least one.
func eachError(id string, s *evidence.Store, examine func(r *reply, c candidate) []finding) Verdict {
	return eachErrorWhere(id, s, noErrorObject, func(r *reply, c candidate) (bool, []finding) { return true, examine(r, c) })
}

// eachErrorWhere is eachError where examine also says whether an error is
// one the rule judges; a reply counts as examined when it carries one.
func eachErrorWhere(id string, s *evidence.Store, none string, examine func(r *reply, c candidate) (bool, []finding)) Verdict {
	calls := s.Calls()
	return eachReply(id, calls, errorProbe, none, func(r *reply) (bool, []finding) {
		var fs []finding
		seen := false
		for _, c := range r.candidates() {
			if c.obj == nil {
				continue // not an object: ERR-02's
			}
			ok, more := examine(r, c)
			seen = seen || ok
			fs = append(fs, more...)
		}
		return seen, fs
	})
}

func judgeEOBJ01(s *evidence.Store, _ Options) Verdict {
	return eachError("EOBJ-01", s, func(_ *reply, c candidate) []finding {
		var fs []finding
		codes := values(c.obj, "code")
		if len(codes) == 0 {
			fs = append(fs, finding{c.ptr + "/code", "is absent"})
		}
		for _, v := range codes {
			code, isStr := rawjson.StringValue(v)
			switch {
			case !isStr:
				fs = append(fs, finding{c.ptr + "/code", "is " + kindName(v) + ", not a string"})
			case code == "":
				fs = append(fs, finding{c.ptr + "/code", "is empty"})
			case utf16Len(code) > maxCodeLength:
				fs = append(fs, finding{c.ptr + "/code", "is " + strconv.Itoa(utf16Len(code)) + " characters, over 64"})
			}
		}
		msgs := values(c.obj, "message")
		if len(msgs) == 0 {
			fs = append(fs, finding{c.ptr + "/message", "is absent"})
		}
		for _, m := range msgs {
			if rawjson.KindOf(m) != rawjson.KindString {
				fs = append(fs, finding{c.ptr + "/message", "is " + kindName(m) + ", not a string"})
			}
		}
		return fs
	})
}

func judgeEOBJ02(s *evidence.Store, _ Options) Verdict {
	return eachError("EOBJ-02", s, func(_ *reply, c candidate) []finding {
		if n := stringifyUnits(c.raw); n > extract.MaxErrorLength {
			return []finding{{c.ptr, "serializes to " + strconv.Itoa(n) + " UTF-16 code units, over 4096"}}
		}
		return nil
	})
}

func judgeEOBJ03(s *evidence.Store, _ Options) Verdict {
	return eachErrorWhere("EOBJ-03", s, noDetails, func(_ *reply, c candidate) (bool, []finding) {
		ds := values(c.obj, "details")
		var fs []finding
		for _, d := range ds {
			if n := stringifyLen(d); n >= maxDetailsBytes {
				fs = append(fs, finding{c.ptr + "/details", "serializes to " + strconv.Itoa(n) + " bytes, not under 500"})
			}
		}
		return len(ds) > 0, fs
	})
}

var recoveries = map[string]bool{"transient": true, "correctable": true, "terminal": true}

func judgeEOBJ04(s *evidence.Store, _ Options) Verdict {
	return eachErrorWhere("EOBJ-04", s, noRecovery, func(_ *reply, c candidate) (bool, []finding) {
		vs := values(c.obj, "recovery") // none: EOBJ-10's
		var fs []finding
		for _, v := range vs {
			rec, isStr := rawjson.StringValue(v)
			switch {
			case !isStr:
				fs = append(fs, finding{c.ptr + "/recovery", "is " + kindName(v) + ", not a string"})
			case !recoveries[rec]:
				fs = append(fs, finding{c.ptr + "/recovery", quote(rec) + " is not transient, correctable or terminal"})
			}
		}
		return len(vs) > 0, fs
	})
}

func judgeEOBJ10(s *evidence.Store, _ Options) Verdict {
	return eachError("EOBJ-10", s, func(_ *reply, c candidate) []finding {
		if _, ok := c.obj.Get("recovery"); !ok {
			return []finding{{c.ptr + "/recovery", "is absent"}}
		}
		return nil
	})
}

func judgeEOBJ05(s *evidence.Store, _ Options) Verdict {
	return eachErrorWhere("EOBJ-05", s, "no standard error code observed", func(_ *reply, c candidate) (bool, []finding) {
		code, okCode := str(c.obj, "code")
		rec, okRec := str(c.obj, "recovery")
		want, standard := extract.CodeRecovery(code)
		if !okCode || !okRec || !standard || !recoveries[rec] {
			return false, nil
		}
		if rec != string(want) {
			return true, []finding{{c.ptr + "/recovery", quote(rec) + " differs from " + code + "'s registered " + quote(string(want))}}
		}
		return true, nil
	})
}

func judgeEOBJ06(s *evidence.Store, _ Options) Verdict {
	return eachErrorWhere("EOBJ-06", s, noStringCode, func(_ *reply, c candidate) (bool, []finding) {
		seen := false
		var fs []finding
		for _, v := range values(c.obj, "code") {
			code, ok := rawjson.StringValue(v)
			if !ok || code == "" {
				continue // EOBJ-01's
			}
			seen = true
			if _, standard := extract.CodeRecovery(code); !standard && !vendorCode.MatchString(code) {
				fs = append(fs, finding{c.ptr + "/code", quote(code) + " is neither a standard code nor X_{VENDOR}_{CODE}"})
			}
		}
		return seen, fs
	})
}

// leakPatterns are the internals an error string must not reveal. They
// are written not to match ordinary prose a seller may send: "Select a
// product from the list", "Update the campaign set-up", "starts at noon
// (UTC+2:00)" are not SQL or stack traces (a lower-case select/update/
// insert/delete needs identifiers and SQL punctuation around it; a stack
// frame names a file with an extension and a line).
var leakPatterns = []struct {
	what string
	re   *regexp.Regexp
}{
	{"a stack trace", regexp.MustCompile(`(?i)(\bat [\w.$<>]+\s*\([^)]*\.\w+:\d+(:\d+)?\)|Traceback \(most recent call last\)|goroutine \d+ \[|Exception in thread|\.(go|js|ts|py|java|rb|php|cs):\d+)`)},
	{"a file path", regexp.MustCompile(`(?i)((^|[\s("'=:])/(srv|home|usr|var|opt|app|etc|root|tmp|Users|workspace)/[\w.-]+|\b[A-Z]:\\[\w.-]+\\)`)},
	{"an SQL fragment", regexp.MustCompile(`\bSELECT\s[^.]{1,80}?\sFROM\s|(?i:\bselect\s+\*\s+from\b|\bselect\s+[\w."]+(\s*,\s*[\w."]+)*\s+from\s+[\w."]+\s+where\b|\binsert\s+into\s+[\w."]+\s*(\(|values\b)|\bupdate\s+[\w."]+\s+set\s+[\w."]+\s*=|\bdelete\s+from\s+[\w."]+(\s+where\b|\s*;)|\bpq: |\bORA-\d{5}\b|\bSQLSTATE\b|\bsyntax error at or near\b|\brelation "[^"]+" does not exist)`)},
	{"an internal hostname", regexp.MustCompile(`(?i)\b[a-z0-9-]+(\.[a-z0-9-]+)*\.(internal|local|localdomain|corp|lan|intranet|svc\.cluster\.local)\b`)},
}

var ipLike = regexp.MustCompile(`\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`)

func judgeEOBJ07(s *evidence.Store, _ Options) Verdict {
	agentHost := ""
	if u, err := url.Parse(agentURL(s)); err == nil {
		agentHost = u.Hostname()
	}
	return eachReply("EOBJ-07", s.Calls(), errorProbe, noErrorObject,
		func(r *reply) (bool, []finding) {
			cs := r.candidates()
			if len(cs) == 0 {
				return false, nil
			}
			var fs []finding
			if r.call.SecretEchoed() {
				fs = append(fs, finding{"", "the reply carrying an error echoes the caller's credential"})
			}
			for _, c := range cs {
				walkStrings(c.ptr, c.raw, func(p, key, v string) {
					if w := leak(v, agentHost, strings.HasSuffix(key, "version")); w != "" {
						fs = append(fs, finding{p, "reveals " + w})
					}
				})
			}
			return true, fs
		})
}

// leakScanBytes bounds the part of each string leak reads: the patterns
// are linear but slow on megabytes, and a string that long already fails
// EOBJ-02's 4 KiB bound on the error object.
const leakScanBytes = 64 << 10

// leak names the internal detail s (its first leakScanBytes) reveals, or "".
// A version's value (a key ending in "version": build_version "10.0.3.1") is
// not read for IP addresses.
func leak(s, agentHost string, version bool) string {
	if len(s) > leakScanBytes {
		s = s[:leakScanBytes]
	}
	for _, l := range leakPatterns {
		if l.re.MatchString(s) {
			return l.what
		}
	}
	if version {
		return ""
	}
	for _, m := range ipLike.FindAllString(s, -1) {
		if m == agentHost {
			continue
		}
		if ip := parseIPv4(m); ip != nil && (ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast()) {
			return "a private IP address"
		}
	}
	return ""
}

// detailTypes are the documented details keys per code and the JSON kinds
// they take (transport-errors.mdx's tables; error-details/*.json). A nil element check
// means "an array of strings".
var detailTypes = map[string]map[string]detailType{
	"RATE_LIMITED": {
		"limit": {kinds: kinds(rawjson.KindNumber)}, "remaining": {kinds: kinds(rawjson.KindNumber)},
		"window_seconds": {kinds: kinds(rawjson.KindNumber)},
		"scope":          {kinds: kinds(rawjson.KindString), enum: []string{"account", "tool", "global"}},
	},
	"BUDGET_TOO_LOW": {
		"minimum_budget": {kinds: kinds(rawjson.KindNumber)},
		"currency":       {kinds: kinds(rawjson.KindString), pattern: regexp.MustCompile(`^[A-Z]{3}$`)},
	},
	"AUDIENCE_TOO_SMALL": {
		"minimum_size": {kinds: kinds(rawjson.KindNumber)}, "current_size": {kinds: kinds(rawjson.KindNumber)},
	},
	"ACCOUNT_SETUP_REQUIRED": {
		"setup_url": {kinds: kinds(rawjson.KindString)}, "setup_steps": {kinds: kinds(rawjson.KindArray), items: rawjson.KindString},
	},
	"CREATIVE_REJECTED": {
		"policy_id": {kinds: kinds(rawjson.KindString)}, "policy_url": {kinds: kinds(rawjson.KindString)},
		"reasons": {kinds: kinds(rawjson.KindArray), items: rawjson.KindString},
	},
	"POLICY_VIOLATION": {
		"policy_id": {kinds: kinds(rawjson.KindString)}, "policy_url": {kinds: kinds(rawjson.KindString)},
		"violated_rules": {kinds: kinds(rawjson.KindArray), items: rawjson.KindString},
	},
	"CONFLICT": {
		"resource_id":      {kinds: kinds(rawjson.KindString)},
		"expected_version": {kinds: kinds(rawjson.KindNumber, rawjson.KindString)},
		"current_version":  {kinds: kinds(rawjson.KindNumber, rawjson.KindString)},
	},
	"VERSION_UNSUPPORTED": {
		"supported_versions": {kinds: kinds(rawjson.KindArray), items: rawjson.KindString},
		"supported_majors":   {kinds: kinds(rawjson.KindArray), items: rawjson.KindNumber},
		"build_version":      {kinds: kinds(rawjson.KindString)},
	},
}

type detailType struct {
	kinds   map[rawjson.Kind]bool
	items   rawjson.Kind // for arrays: the kind of every element
	enum    []string
	pattern *regexp.Regexp
}

func kinds(ks ...rawjson.Kind) map[rawjson.Kind]bool {
	m := map[rawjson.Kind]bool{}
	for _, k := range ks {
		m[k] = true
	}
	return m
}

func judgeEOBJ08(s *evidence.Store, _ Options) Verdict {
	return eachErrorWhere("EOBJ-08", s, "no error with documented details observed", func(_ *reply, c candidate) (bool, []finding) {
		code, _ := str(c.obj, "code")
		table, documented := detailTypes[code]
		details := child(c.obj, "details")
		if !documented || details == nil {
			return false, nil
		}
		var fs []finding
		for _, m := range details.Members() {
			if want, ok := table[m.Key]; ok {
				if f := want.check(m.Value); f != "" {
					fs = append(fs, finding{ptr(c.ptr+"/details", m.Key), f})
				}
			}
		}
		return true, fs
	})
}

func (d detailType) check(v json.RawMessage) string {
	k := rawjson.KindOf(v)
	if !d.kinds[k] {
		return "is " + kindName(v) + ", not as documented"
	}
	if k == rawjson.KindArray {
		var items []json.RawMessage
		_ = json.Unmarshal(v, &items)
		for i, it := range items {
			if rawjson.KindOf(it) != d.items {
				return "item " + strconv.Itoa(i) + " is " + kindName(it) + ", not as documented"
			}
		}
	}
	if k == rawjson.KindString {
		var s string
		_ = json.Unmarshal(v, &s)
		if d.enum != nil && !contains(d.enum, s) {
			return quote(s) + " is not one of " + strings.Join(d.enum, ", ")
		}
		if d.pattern != nil && !d.pattern.MatchString(s) {
			return quote(s) + " does not have the documented form"
		}
	}
	return ""
}

func judgeEOBJ09(s *evidence.Store, _ Options) Verdict {
	return eachReply("EOBJ-09", s.Calls(), errorProbe,
		"no error carried on two paths of one response", func(r *reply) (bool, []finding) {
			var objs []candidate
			for _, c := range r.candidates() {
				if c.obj != nil {
					objs = append(objs, c)
				}
			}
			if len(objs) == 0 {
				return false, nil
			}
			seen := false
			var fs []finding
			first := objs[0]
			for _, c := range objs[1:] {
				seen = true
				for _, k := range []string{"code", "recovery"} {
					a, aok := first.obj.Get(k)
					b, bok := c.obj.Get(k)
					if aok != bok || (aok && !jsonEqual(a, b)) {
						fs = append(fs, finding{c.ptr + "/" + k, "disagrees with " + first.ptr + "/" + k})
					}
				}
			}
			for _, list := range payloadErrors(r) {
				ok, more := envelopeAgrees(first, list)
				seen = seen || ok
				fs = append(fs, more...)
			}
			return seen, fs
		})
}

// payloadErrors returns the errors[] lists a reply's payload carries beside
// its envelope (error-handling.mdx, "Envelope vs. payload errors"): errors
// (or payload.errors) of every body a client reads, on MCP structuredContent
// and each JSON text item, on A2A every DataPart's data (the payload rides
// in a sibling DataPart of the adcp_error one). Each list is the located
// object items of an array.
func payloadErrors(r *reply) [][]located {
	var bodies []root
	if r.a2a != nil {
		r.a2a.dataParts(func(p string, _ *rawjson.Object, data json.RawMessage) {
			if o, err := rawjson.ParseObject(data); err == nil {
				bodies = append(bodies, root{p + "/data", o})
			}
		})
	} else {
		bodies = r.roots()
	}
	var out [][]located
	for _, b := range bodies {
		for _, at := range []root{b, {ptr(b.ptr, "payload"), child(b.obj, "payload")}} {
			if items := objectsAt(at.obj, "errors", ptr(at.ptr, "errors")); len(items) > 0 {
				out = append(out, items)
			}
		}
	}
	return out
}

// envelopeAgrees judges the envelope's adcp_error against one errors[] list
// (EOBJ-09): the same error is the item with the envelope's code, and a
// list none of whose items has that code disagrees with it (a reader of the
// payload, detection step 6, reads errors[0]'s). Of the matching item, a
// recovery stated on both sides must agree; stated on one side only is not
// a disagreement (the payload entry may leave it to the code table). ok is
// false when there is nothing to compare: the envelope's code or every
// item's is not a string.
func envelopeAgrees(env candidate, items []located) (ok bool, fs []finding) {
	code, isStr := str(env.obj, "code")
	if !isStr {
		return false, nil
	}
	var first *located
	for i, it := range items {
		c, isStr := str(it.obj, "code")
		if !isStr {
			continue
		}
		if first == nil {
			first = &items[i]
		}
		if c != code {
			continue
		}
		a, aok := env.obj.Get("recovery")
		b, bok := it.obj.Get("recovery")
		if aok && bok && !jsonEqual(a, b) {
			return true, []finding{{it.ptr + "/recovery", "disagrees with " + env.ptr + "/recovery"}}
		}
		return true, nil
	}
	if first == nil {
		return false, nil
	}
	other, _ := str(first.obj, "code")
	return true, []finding{{first.ptr + "/code", quote(other) + " disagrees with " + env.ptr + "/code " + quote(code) + ": no entry of errors[] carries the envelope's error"}}
}

// utf16Len counts UTF-16 code units, as JavaScript's .length does.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// stringifyLen is the serialized size in UTF-8 bytes (transport-errors.mdx's details
// guidance); a value that is not JSON counts its raw bytes.
func stringifyLen(raw []byte) int {
	n, err := rawjson.StringifyLen(raw)
	if err != nil {
		return len(raw)
	}
	return n
}

// stringifyUnits is JSON.stringify(value).length in UTF-16 code units
// (transport-errors.mdx's validate()); a value that is not JSON counts its raw bytes.
func stringifyUnits(raw []byte) int {
	n, err := rawjson.StringifyUnits(raw)
	if err != nil {
		return len(raw)
	}
	return n
}

// parseIPv4 parses a dotted quad, nil when it is not one.
func parseIPv4(s string) net.IP { return net.ParseIP(s).To4() }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
