package suites

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// followedKeys are the fields holding URLs a buyer would follow (transport-errors.mdx
// URL validation, 004 FilePart URI and Auth Challenge URL validation):
// details.setup_url, details.policy_url and an auth challenge's
// challenge_url, at any depth, and an A2A FilePart's URL.
var followedKeys = map[string]bool{"setup_url": true, "policy_url": true, "challenge_url": true, filePartKey: true}

// urlShaped reports whether v claims to be an absolute URL with an
// authority: a scheme (RFC 3986 §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" /
// "." )) followed by "://". It finds the first "://" and checks the scheme
// before it, in time linear in v with a small constant: a regexp's scan of
// a seller's 8 MiB string of letters cost URL-03 seconds per reply.
func urlShaped(v string) bool {
	i := strings.Index(v, "://")
	if i < 1 || !isAlpha(v[0]) {
		return false
	}
	for j := 1; j < i; j++ {
		if c := v[j]; !isAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func urlChecks() []Check {
	return []Check{
		// Rule: URL-01 · Spec: transport-errors.mdx (URL validation), 004 · Since: 0.1.0 ·
		// Description: every URL a buyer would follow (details.setup_url,
		// details.policy_url, an auth challenge's challenge_url, an A2A FilePart's
		// url (1.0) or file.uri (0.3)) MUST use https and carry no userinfo;
		// http:, javascript:, data:, file: and a relative reference fail. Walked on
		// every path a client may read: the whole reply (MCP structuredContent and
		// content; A2A artifacts and status message parts, every event of a
		// stream) and each text item or TextPart holding a JSON object.
		{ID: "URL-01", Transport: catalogue.MCP, Text: "gives followable URLs as https without userinfo", Judge: judgeURL01},
		// Rule: URL-02 · Spec: transport-errors.mdx (URL validation) · Since: 0.1.0 ·
		// Description: those URLs SHOULD sit on the agent's own registrable domain (public
		// suffix list), or one the run allows (--allow-domain).
		{ID: "URL-02", Transport: catalogue.MCP, Text: "keeps followable URLs on the agent's own domain", Judge: judgeURL02},
		// Rule: URL-03 · Spec: reference/url-canonicalization.mdx; §4.83 · Since: 0.1.0 ·
		// Description: no URL the seller emits MUST have a malformed authority: userinfo
		// without a host, an empty host, an unclosed IPv6 bracket. Judged on every string
		// value that starts with scheme://.
		{ID: "URL-03", Transport: catalogue.MCP, Text: "emits no URL with a malformed authority", Judge: judgeURL03},
	}
}

// filePartKey is the key eachString gives a FilePart's URL (A2A 1.0
// "url", v0.3 "file.uri"): a URL a buyer would follow, whatever its key.
const filePartKey = "\x00filepart"

// eachString walks every string value a client may read from a reply: the
// whole JSON-RPC message (MCP structuredContent and content, A2A artifacts
// and status message parts), every event of an A2A stream (at
// /events/<i>/…), and every text item or TextPart whose text is a JSON
// object (the text fallback, at <ptr>#/…), whether or not structuredContent
// is there too: a client may read either. An A2A FilePart's url (1.0) or
// file.uri (0.3) gets the key filePartKey.
func eachString(r *reply, fn func(ptr, key, s string)) {
	r.strOnce.Do(func() {
		files := map[string]bool{}
		collect := func(p, k, v string) {
			if files[p] {
				k = filePartKey
			}
			r.strs = append(r.strs, stringValue{p, k, v})
		}
		if r.a2a == nil {
			walkStrings("", r.call.Message, collect)
			for _, t := range r.texts {
				if t.obj != nil {
					walkStrings(t.ptr+"#", t.obj.Raw(), collect)
				}
			}
			return
		}
		views := r.events()
		var texts []textItem
		for _, v := range views {
			v.parts(func(p string, part *rawjson.Object) {
				if _, ok := str(part, "url"); ok {
					files[p+"/url"] = true
				}
				if _, ok := str(child(part, "file"), "uri"); ok {
					files[p+"/file/uri"] = true
				}
				if text, ok := str(part, "text"); ok && rawjson.KindOf([]byte(text)) == rawjson.KindObject {
					if o, err := rawjson.ParseObject([]byte(text)); err == nil {
						texts = append(texts, textItem{ptr: p + "/text", text: text, obj: o})
					}
				}
			})
		}
		if r.call.Has(evidence.PurposeStream) {
			for i, ev := range a2a.Events(r.call) {
				walkStrings("/events/"+strconv.Itoa(i), ev, collect)
			}
		} else {
			walkStrings("", r.call.Message, collect)
		}
		for _, t := range texts {
			walkStrings(t.ptr+"#", t.obj.Raw(), collect)
		}
	})
	for _, v := range r.strs {
		fn(v.ptr, v.key, v.s)
	}
}

func mcpAnswered(s *evidence.Store) []evidence.Call {
	return s.Calls(evidence.OfKind(evidence.KindToolCall))
}

// eachFollowed judges every followable URL of every reply with examine,
// which says whether it judged the URL.
func eachFollowed(id string, s *evidence.Store, examine func(p, v string) (bool, []finding)) Verdict {
	return eachReply(id, mcpAnswered(s), errorProbe, "no followable URL (setup_url, policy_url, challenge_url, a FilePart URL) observed",
		func(r *reply) (bool, []finding) {
			seen := false
			var fs []finding
			eachString(r, func(p, key, v string) {
				if followedKeys[key] {
					ok, more := examine(p, v)
					seen = seen || ok
					fs = append(fs, more...)
				}
			})
			return seen, fs
		})
}

func judgeURL01(s *evidence.Store, _ Options) Verdict {
	return eachFollowed("URL-01", s, func(p, v string) (bool, []finding) {
		u, err := url.Parse(v)
		switch {
		case err != nil:
			return true, []finding{{p, "is not a URL"}}
		case u.Scheme == "":
			return true, []finding{{p, "is not an absolute https URL"}}
		case !strings.EqualFold(u.Scheme, "https"):
			return true, []finding{{p, "uses " + quote(u.Scheme+":") + ", not https"}}
		case u.User != nil:
			return true, []finding{{p, "carries userinfo"}}
		}
		return true, nil
	})
}

func judgeURL02(s *evidence.Store, opts Options) Verdict {
	own := ""
	if u, err := url.Parse(agentURL(s)); err == nil {
		own = registrable(u.Hostname())
	}
	allowed := func(host string) bool {
		h := strings.ToLower(strings.TrimSuffix(host, "."))
		if own != "" && registrable(h) == own {
			return true
		}
		return slices.ContainsFunc(opts.AllowedDomains, func(d string) bool {
			d = strings.ToLower(strings.TrimSuffix(d, "."))
			return h == d || strings.HasSuffix(h, "."+d)
		})
	}
	return eachFollowed("URL-02", s, func(p, v string) (bool, []finding) {
		u, err := url.Parse(v)
		if err != nil || u.Hostname() == "" {
			return false, nil // URL-01's or URL-03's
		}
		if !allowed(u.Hostname()) {
			return true, []finding{{p, "points to " + quote(u.Hostname()) + ", off the agent's domain"}}
		}
		return true, nil
	})
}

// registrable returns a host's registrable domain (eTLD+1), the host itself
// for an IP address or a name the public suffix list cannot split.
func registrable(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if net.ParseIP(host) != nil {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

func judgeURL03(s *evidence.Store, _ Options) Verdict {
	return eachReply("URL-03", mcpAnswered(s), errorProbe, "no URL observed", func(r *reply) (bool, []finding) {
		seen := false
		var fs []finding
		eachString(r, func(p, _, v string) {
			if !urlShaped(v) {
				return
			}
			seen = true
			if what := badAuthority(v); what != "" {
				fs = append(fs, finding{p, what})
			}
		})
		return seen, fs
	})
}

// badAuthority says what is wrong with the authority of an absolute URL, or
// "" when it is well formed.
func badAuthority(v string) string {
	scheme := v[:strings.Index(v, "://")]
	rest := v[len(scheme)+3:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if strings.EqualFold(scheme, "file") && rest == "" {
		return "" // file:///path has an empty authority by design
	}
	host := rest
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		host = rest[i+1:]
		if host == "" {
			return "has userinfo without a host"
		}
	}
	if strings.HasPrefix(host, "[") && !strings.Contains(host, "]") {
		return "has an unclosed IPv6 bracket"
	}
	if strings.Contains(host, "]") && !strings.HasPrefix(host, "[") {
		return "has a stray IPv6 bracket"
	}
	h := host
	if strings.HasPrefix(h, "[") {
		h = h[:strings.IndexByte(h, ']')+1]
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	if h == "" {
		return "has an empty host"
	}
	if _, err := url.Parse(scheme + "://" + rest); err != nil {
		return "has a malformed authority"
	}
	return ""
}
