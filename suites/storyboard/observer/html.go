package observer

import (
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

// Reading a preview: the URLs of the kit's html_attribute_extraction_set.

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
