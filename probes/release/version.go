package release

import (
	"strconv"
	"strings"
)

// Version is a published release: MAJOR.MINOR.PATCH with an optional
// pre-release tag ("3.1.19", "3.2.0-beta.5").
type Version struct {
	Major, Minor, Patch int
	Pre                 string
}

// Parse reads a published release's name; ok is false for anything else
// ("3.1", "v3.1.0", "latest", "3.1.19+build").
func Parse(s string) (Version, bool) {
	core, pre, hasPre := strings.Cut(s, "-")
	if hasPre && !validPre(pre) {
		return Version{}, false
	}
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return Version{}, false
	}
	var n [3]int
	for i, p := range parts {
		v, ok := number(p)
		if !ok {
			return Version{}, false
		}
		n[i] = v
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2], Pre: pre}, true
}

// String is the release's published name.
func (v Version) String() string {
	s := strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch)
	if v.Pre != "" {
		s += "-" + v.Pre
	}
	return s
}

// Wire is the release at the wire's precision: MAJOR.MINOR, with the
// pre-release tag when there is one ("3.2.0-beta.5" → "3.2-beta.5").
func (v Version) Wire() string { return Wire{v.Major, v.Minor, v.Pre}.String() }

// Less orders releases by semver precedence (semver.org §11): a
// pre-release comes before its final release.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	if v.Patch != w.Patch {
		return v.Patch < w.Patch
	}
	return preLess(v.Pre, w.Pre)
}

// Wire is a release-precision version as a seller advertises it in
// adcp.supported_versions ("3.1", "3.2-beta.5").
type Wire struct {
	Major, Minor int
	Pre          string
}

// ParseWire reads a release-precision version; ok is false for a full
// release ("3.1.19"), a bare major ("3") or anything else.
func ParseWire(s string) (Wire, bool) {
	core, pre, hasPre := strings.Cut(s, "-")
	if hasPre && !validPre(pre) {
		return Wire{}, false
	}
	maj, mnr, ok := strings.Cut(core, ".")
	if !ok {
		return Wire{}, false
	}
	major, ok1 := number(maj)
	minor, ok2 := number(mnr)
	if !ok1 || !ok2 {
		return Wire{}, false
	}
	return Wire{major, minor, pre}, true
}

func (w Wire) String() string {
	s := strconv.Itoa(w.Major) + "." + strconv.Itoa(w.Minor)
	if w.Pre != "" {
		s += "-" + w.Pre
	}
	return s
}

// less orders release-precision versions as their releases are ordered.
func (w Wire) less(x Wire) bool {
	return Version{w.Major, w.Minor, 0, w.Pre}.Less(Version{x.Major, x.Minor, 0, x.Pre})
}

// number reads a semver numeric identifier: digits, no leading zero.
func number(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// validPre reports whether s is a semver pre-release: dot-separated
// non-empty identifiers of [0-9A-Za-z-].
func validPre(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		for _, c := range id {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
				return false
			}
		}
	}
	return true
}

// preLess orders pre-release tags (semver.org §11.4): none is the
// greatest; numeric identifiers compare as numbers and before
// alphanumeric ones; a shorter run of equal identifiers comes first.
func preLess(a, b string) bool {
	switch {
	case a == b:
		return false
	case a == "":
		return false
	case b == "":
		return true
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, y := as[i], bs[i]
		if x == y {
			continue
		}
		nx, xNum := number(x)
		ny, yNum := number(y)
		switch {
		case xNum && yNum:
			return nx < ny
		case xNum != yNum:
			return xNum
		default:
			return x < y
		}
	}
	return len(as) < len(bs)
}
