// Package observer is the substitution observer of
// test-kits/substitution-observer-runner.yaml: it grades the
// expect_substitution_safe runner task over a preview a seller built. It
// reads the preview HTML's tracker URLs (x/net/html; comments and script
// text unread), aligns each with the step's macro_template (scheme, host,
// port, path segments, query pairs by key) and compares the bytes at each
// macro position with the encoding the release's
// test-vectors/catalog-macro-substitution.json gives the bound vector (hex
// digits case-insensitive, every other byte exact): one validation, check
// expect_substitution_safe, whose message opens with the kit's code. A
// whole-value macro_template ("{CLICK}") reads every attribute value as a
// browser's URL parser does and adds the url_scheme_preserved check. It
// does no I/O: the engine hands it the previous step's reply and, for a
// url_fetch source, fetches the preview_url it asks for (Preview judges
// that fetch).
//
//	plan, skip := observer.Prepare(step, vectors) // vectors: LoadMacroVectors(releaseDir)
//	if skip != nil {
//		return skip // requirement_unmet: the step cannot be graded as authored
//	}
//	results, skip := plan.Grade(prev.Payload, "build.preview", nil) // nil: no preview_url fetches
package observer
