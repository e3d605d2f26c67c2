// Package release is the harness's release material: which AdCP release a
// run grades a seller on, where the releases come from, and the fetched
// copies of their JSON Schemas and compliance storyboards in the user's
// cache.
//
//	c := release.Choose([]string{"3.0", "3.1", "3.2-beta.5"}, []string{"3.1.19", "3.2.0-beta.5"})
//	// c.Release == "3.2.0-beta.5", c.Matched == "3.2-beta.5"
//	root, _ := release.Storyboards.CacheRoot()
//	dir, fetched, err := release.Fetch(ctx, nil, release.Storyboards, release.Mirror{URL: release.Published}.BundleURL(c.Release), root)
//
// # Choosing a release
//
// Two spellings meet here (reference/versioning.mdx §Version negotiation):
// a release is published at full semver ("3.1.19", "3.2.0-beta.5"), and a
// seller advertises release precision on the wire ("3.1", "3.2-beta.5"),
// patches never negotiated. Choose picks, from the releases the harness can
// get (a mirror's, the published site's index, the cache), the newest one
// the seller's adcp.supported_versions lists.
//
// # Fetching and the cache
//
// Fetch gets one kind of Material of a release from where it is published:
// the Schemas of a release folder (index.json, the manifest's response
// schemas and everything they reference), or the Storyboards of a release
// bundle (<release>.tgz, used only when its SHA-256 matches the .sha256
// published beside it, and only its adcp-<release>/compliance/ tree
// extracted, regular files and folders within bounds). Every download is
// bounded, and goes through a guard like the probes' (probes/fetch).
//
// Fetched material is kept in the user's cache, one folder per release,
// filled in a temporary folder and renamed into place with a mark written
// last, so an interrupted fetch is never used and two runs fetching at once
// both end with the one copy.
package release
