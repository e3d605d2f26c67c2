package report

import (
	"html"
	"html/template"
	"regexp"
	"strings"
)

// catalogueMarkdown renders the tiny Markdown the rule catalogue's own
// text uses — `code` spans and **strong** — as HTML. It is for the
// project's catalogue text only, never for seller text: the input is
// escaped first, and only those two fixed pairs of tags are added, so no
// markup of the input survives.
func catalogueMarkdown(s string) template.HTML {
	var b strings.Builder
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an unpaired backtick stays a backtick
		parts[len(parts)-2] += "`" + parts[len(parts)-1]
		parts = parts[:len(parts)-1]
	}
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString("<code>" + html.EscapeString(clean(p)) + "</code>")
			continue
		}
		b.WriteString(strong(html.EscapeString(clean(p))))
	}
	return template.HTML(b.String()) //nolint:gosec // escaped above; only fixed tags added
}

var strongSpan = regexp.MustCompile(`\*\*([^*]+)\*\*`)

// strong turns **x** in escaped text into <strong>x</strong>.
func strong(escaped string) string {
	return strongSpan.ReplaceAllString(escaped, "<strong>$1</strong>")
}

// specDocs is the root of the AdCP documentation site.
const specDocs = "https://adcontextprotocol.org/docs/"

// docPath finds the documentation pages a catalogue source names
// (building/by-layer/L3/error-handling.mdx, reference/versioning.mdx).
var docPath = regexp.MustCompile(`(?:^|[\s(;,])((?:building|protocol|reference)/[A-Za-z0-9_./-]+?)\.mdx`)

// familyDocs is the spec page of each rule family, for a rule whose source
// names no page (only sections of the spec digest, seeds or schemas).
var familyDocs = map[string]string{
	"ENV":    "building/by-layer/L0/mcp-guide",
	"ERR":    "building/operating/transport-errors",
	"EOBJ":   "building/by-layer/L3/error-handling",
	"RETRY":  "building/operating/transport-errors",
	"CTX":    "building/by-layer/L2/context-sessions",
	"TOL":    "building/by-layer/L0/mcp-response-extraction",
	"A2A":    "building/by-layer/L0/a2a-response-format",
	"CAP":    "protocol/get_adcp_capabilities",
	"TASK":   "building/by-layer/L3/task-lifecycle",
	"VER":    "reference/versioning",
	"IDEM":   "protocol/calling-an-agent",
	"AUTH":   "building/by-layer/L2/authentication",
	"URL":    "reference/url-canonicalization",
	"HOOK":   "building/by-layer/L3/webhooks",
	"SCHEMA": "building/by-layer/L0/schemas",
	"TLS":    "building/by-layer/L1/security",
}

// specLink is one link to a spec page.
type specLink struct {
	URL   string
	Label string
}

// specLinks are the spec pages of a rule: those its source names, else its
// family's page.
func specLinks(rule RuleResult) []specLink {
	var out []specLink
	for _, m := range docPath.FindAllStringSubmatch(rule.Source, -1) {
		out = append(out, specLink{URL: specDocs + m[1], Label: m[1]})
	}
	if len(out) == 0 {
		if p, ok := familyDocs[rule.Family]; ok {
			out = append(out, specLink{URL: specDocs + p, Label: p})
		}
	}
	return out
}
