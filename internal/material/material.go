// Package material is a run's release material: the AdCP release it
// grades a seller on (the one its flags name, else the newest the seller
// advertises that the harness can get), that release's compliance
// storyboards and its published JSON Schemas, read from a folder, a
// mirror, or the user's cache (a release is fetched into it once per
// process, however many runs read it).
//
//	p, err := material.NewPlan(material.Inputs{Storyboards: dir}, &sel, nil, os.Stderr)
//	// probe …
//	if p.Deferred { err = p.Choose(ctx, store, cfg, &sel, os.Stderr) }
//
// Its messages name the material by the flags of `adcp-conform run`
// (--release, --storyboards, …), as the reports do.
package material

import "fmt"

// UsageError is a mistake in what names the material: the run's
// configuration is refused before any probe.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}
