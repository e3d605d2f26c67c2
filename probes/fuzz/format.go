package fuzz

import (
	"fmt"
	"strings"
)

// formatGens generate strings of the formats draft-07 defines (and the
// validator asserts), each a value the format's RFC accepts, with the
// edges a parser trips on: leap days, fractional seconds, offsets,
// ports, percent-escapes, plus-addressing.
var formatGens = map[string]func(r *rng) (string, bool){
	"date-time":             func(r *rng) (string, bool) { return genDate(r) + "T" + genTime(r), true },
	"date":                  func(r *rng) (string, bool) { return genDate(r), true },
	"time":                  func(r *rng) (string, bool) { return genTime(r), true },
	"uri":                   genURI,
	"iri":                   genURI,
	"uri-reference":         genURIReference,
	"iri-reference":         genURIReference,
	"uri-template":          genURITemplate,
	"email":                 genEmail,
	"idn-email":             genEmail,
	"hostname":              func(r *rng) (string, bool) { return genHost(r), true },
	"idn-hostname":          func(r *rng) (string, bool) { return genHost(r), true },
	"uuid":                  genUUID,
	"ipv4":                  genIPv4,
	"ipv6":                  genIPv6,
	"json-pointer":          genJSONPointer,
	"relative-json-pointer": func(r *rng) (string, bool) { p, _ := genJSONPointer(r); return fmt.Sprint(r.intn(3)) + p, true },
	"duration":              genDuration,
	"regex":                 func(r *rng) (string, bool) { return pick(r, "^[a-z]+$", "a|b", ".*", `\d{2,4}`), true },
}

func pick(r *rng, xs ...string) string { return xs[r.intn(len(xs))] }

var daysIn = [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func genDate(r *rng) string {
	switch r.intn(6) {
	case 0:
		return "2024-02-29" // a leap day
	case 1:
		return pick(r, "1970-01-01", "2000-01-01", "2038-01-19", "2099-12-31", "2025-12-31")
	}
	y := r.between(2020, 2035)
	m := r.between(1, 12)
	d := r.between(1, daysIn[m-1])
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
}

func genTime(r *rng) string {
	t := fmt.Sprintf("%02d:%02d:%02d", r.intn(24), r.intn(60), r.intn(60))
	switch r.intn(4) {
	case 0:
		t += "." + fmt.Sprint(r.intn(1000))
	case 1:
		t = pick(r, "00:00:00", "23:59:59", "12:00:00.000001")
	}
	switch r.intn(4) {
	case 0:
		return t + fmt.Sprintf("%c%02d:%02d", "+-"[r.intn(2)], r.intn(15), pick2(r, 0, 30, 45))
	case 1:
		return t + "+00:00"
	}
	return t + "Z"
}

func pick2(r *rng, xs ...int) int { return xs[r.intn(len(xs))] }

var labels = []string{"example", "ads", "seller", "cdn", "buyer-agent", "xn--bcher-kva", "a", "media1"}

func genHost(r *rng) string {
	n := r.between(1, 3)
	parts := make([]string, 0, n+1)
	for i := 0; i < n; i++ {
		parts = append(parts, labels[r.intn(len(labels))])
	}
	return strings.Join(append(parts, pick(r, "com", "org", "test", "example", "io")), ".")
}

// pathSegs include percent-escaped UTF-8 and sub-delimiters.
var pathSegs = []string{"v1", "creative", "assets", "img_300x250.png", "%E6%97%A5%E6%9C%AC", "a%20b", "x;y=1", "~user", "index.html"}

func genPath(r *rng) string {
	var b strings.Builder
	for i, n := 0, r.intn(4); i < n; i++ {
		b.WriteString("/" + pathSegs[r.intn(len(pathSegs))])
	}
	return b.String()
}

func genURI(r *rng) (string, bool) {
	var b strings.Builder
	b.WriteString(pick(r, "https", "https", "https", "http") + "://" + genHost(r))
	if r.chance(1, 8) {
		fmt.Fprintf(&b, ":%d", pick2(r, 443, 8080, 1, 65535))
	}
	b.WriteString(genPath(r))
	if r.chance(1, 4) {
		b.WriteString(pick(r, "?q=1", "?utm_source=adcp&cb=%5Bts%5D", "?a=&b=c"))
	}
	if r.chance(1, 8) {
		b.WriteString("#" + pick(r, "top", "frag-1"))
	}
	return b.String(), true
}

func genURIReference(r *rng) (string, bool) {
	if r.chance(1, 2) {
		return genURI(r)
	}
	p := genPath(r)
	if p == "" {
		p = "/"
	}
	return p, true
}

func genURITemplate(r *rng) (string, bool) {
	u, _ := genURI(r)
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return strings.TrimSuffix(u, "/") + pick(r, "/{id}", "/{id}/report{?from,to}", "{?cb}", "/items/{item_id}"), true
}

func genEmail(r *rng) (string, bool) {
	local := pick(r, "buyer", "ops", "first.last", "a+tag", "x_y-z", "u1")
	return local + "@" + genHost(r), true
}

func genUUID(r *rng) (string, bool) {
	a, b := r.next(), r.next()
	a = a&^0xf000 | 0x4000           // version 4
	b = b&^(0xc000<<48) | 0x8000<<48 // RFC 4122 variant
	h := fmt.Sprintf("%016x%016x", a, b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], true
}

func genIPv4(r *rng) (string, bool) {
	return fmt.Sprintf("%d.%d.%d.%d", r.between(1, 223), r.intn(256), r.intn(256), r.between(1, 254)), true
}

func genIPv6(r *rng) (string, bool) {
	if r.chance(1, 3) {
		return pick(r, "::1", "2001:db8::1", "fe80::1"), true
	}
	parts := make([]string, 8)
	for i := range parts {
		parts[i] = fmt.Sprintf("%x", r.intn(1<<16))
	}
	return strings.Join(parts, ":"), true
}

func genJSONPointer(r *rng) (string, bool) {
	var b strings.Builder
	for i, n := 0, r.intn(4); i < n; i++ {
		b.WriteString("/" + pick(r, "packages", "0", "a~1b", "m~0n", "budget", ""))
	}
	return b.String(), true
}

func genDuration(r *rng) (string, bool) {
	return pick(r, "P1D", "PT30M", "P1Y2M3DT4H5M6S", "PT0S", "P2W"), true
}
