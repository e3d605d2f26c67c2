package release

import (
	"fmt"
	"slices"
	"strings"
)

// maxListed bounds the advertised versions read: a seller is untrusted.
const maxListed = 64

// Known are the releases this build is written and tested against: the
// releases a run chooses among when it can read no release index (no
// network, no cache folder), besides those in the cache.
var Known = []string{"3.1.19", "3.2.0-beta.5"}

// Choice is the release chosen for a seller, and what decided it.
type Choice struct {
	// Release is the published release chosen ("3.2.0-beta.5"); "" when
	// no release the harness can get is one the seller speaks.
	Release string
	// Matched is the advertised version the release serves ("3.2-beta.5").
	Matched string
	// StandIn is set when Matched is a final release ("3.2") none of
	// whose finals the harness can get, and Release is its newest
	// pre-release.
	StandIn bool
	// Listed is the seller's adcp.supported_versions as it gave it (at
	// most maxListed entries); Advertised its release-precision versions,
	// newest first; Ignored its entries that are none.
	Listed, Advertised, Ignored []string
	// Missed are the advertised versions newer than Matched that the
	// harness has no release of.
	Missed []string
}

// Choose picks, from the releases the harness can get, the newest one of
// the newest version the seller advertises that has one:
//
//   - an advertised final release ("3.1") takes its newest patch
//     ("3.1.19"); when the harness can get no final of that version, its
//     newest pre-release stands in ("3.2" → "3.2.0-beta.5"), said so;
//   - an advertised pre-release ("3.2-beta.5") takes a release of exactly
//     that pre-release ("3.2.0-beta.5"), never another: pre-release pins
//     match exactly (reference/versioning.mdx §Pre-release pins).
//
// Patches are not negotiated (§Patches are not negotiated): any patch of
// an advertised version serves it, and the newest is taken.
func Choose(advertised, available []string) Choice {
	c := Choice{Listed: advertised[:min(len(advertised), maxListed)]}
	var wires []Wire
	for _, s := range c.Listed {
		w, ok := ParseWire(s)
		switch {
		case !ok:
			c.Ignored = append(c.Ignored, s)
		case !slices.Contains(wires, w):
			wires = append(wires, w)
		}
	}
	slices.SortFunc(wires, func(a, b Wire) int { return cmpBool(b.less(a), a.less(b)) })
	for _, w := range wires {
		c.Advertised = append(c.Advertised, w.String())
	}
	var rels []Version
	for _, s := range available {
		if v, ok := Parse(s); ok && !slices.Contains(rels, v) {
			rels = append(rels, v)
		}
	}
	for _, w := range wires {
		var finals, pres []Version
		for _, r := range rels {
			switch {
			case r.Major != w.Major || r.Minor != w.Minor:
			case w.Pre != "":
				if r.Pre == w.Pre {
					finals = append(finals, r)
				}
			case r.Pre == "":
				finals = append(finals, r)
			default:
				pres = append(pres, r)
			}
		}
		best, standIn := newest(finals), false
		if best == nil && w.Pre == "" {
			best, standIn = newest(pres), true
		}
		if best != nil {
			c.Release, c.Matched, c.StandIn = best.String(), w.String(), standIn
			return c
		}
		c.Missed = append(c.Missed, w.String())
	}
	c.Missed = nil // nothing matched: every advertised version was missed
	return c
}

// Why says in one sentence why the release was chosen, or why none was;
// from names where the releases come from ("from ../spec").
func (c Choice) Why(available []string, from string) string {
	list := "[" + strings.Join(c.Listed, ", ") + "]"
	var b strings.Builder
	switch {
	case len(c.Listed) == 0:
		return "the seller advertises no adcp.supported_versions"
	case len(c.Advertised) == 0:
		return fmt.Sprintf("the seller's adcp.supported_versions %q holds no release-precision version", c.Listed)
	case c.Release == "":
		fmt.Fprintf(&b, "the seller's adcp.supported_versions %s lists no release the harness can get%s (it has %s)", list, from, orNone(available))
	case c.StandIn:
		fmt.Fprintf(&b, "the newest version the seller's adcp.supported_versions %s lists that the harness can get%s is %s, which has no final release there: its newest pre-release %s stands in",
			list, from, c.Matched, c.Release)
	default:
		fmt.Fprintf(&b, "%s is the newest release of %s, the newest version the seller's adcp.supported_versions %s lists that the harness can get%s",
			c.Release, c.Matched, list, from)
	}
	if len(c.Missed) > 0 {
		fmt.Fprintf(&b, "; it has no release of %s", strings.Join(c.Missed, ", "))
	}
	if len(c.Ignored) > 0 {
		fmt.Fprintf(&b, "; %q %s not release-precision", c.Ignored, pluralIs(len(c.Ignored)))
	}
	return b.String()
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

func pluralIs(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// newest returns the greatest release of vs, nil when there is none.
func newest(vs []Version) *Version {
	var best *Version
	for i := range vs {
		if best == nil || best.Less(vs[i]) {
			best = &vs[i]
		}
	}
	return best
}

func cmpBool(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

// Sort orders release names newest first, dropping those that are none
// and duplicates.
func Sort(names []string) []string {
	var vs []Version
	for _, s := range names {
		if v, ok := Parse(s); ok && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b Version) int { return cmpBool(b.Less(a), a.Less(b)) })
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}
