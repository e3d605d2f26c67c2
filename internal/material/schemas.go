package material

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/release"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

// schemasFetchTimeout bounds a first fetch of a release.
const schemasFetchTimeout = 2 * time.Minute

// SchemasCache is where fetched releases are kept (a variable for tests).
var SchemasCache = release.Schemas.CacheRoot

// loadSchemas sets the selection's Schemas from --schemas: a folder is
// loaded (an unusable one is a usage error); a URL is fetched into the
// user's cache unless it is there already, saying so on errOut, when the
// selection judges a SCHEMA rule. A release that cannot be fetched leaves
// those rules skipped with the reason. Without the flag the run's release
// decides (schemasOf).
func loadSchemas(src string, sel *runner.Selection, errOut io.Writer) error {
	opts := &sel.Options
	if src == "" || src == Off {
		return nil
	}
	remote := strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
	if !remote {
		set, err := schemas.Load(src)
		if err != nil {
			return usagef("--schemas: %v", err)
		}
		opts.Schemas = set
		return nil
	}
	if _, err := release.Schemas.ReleaseOf(src); err != nil {
		return usagef("--schemas: %v", err)
	}
	if JudgesSchemas(*sel) {
		fetchSchemas(context.Background(), src, opts, errOut)
	}
	return nil
}

// JudgesSchemas reports whether the selection judges a SCHEMA rule: the
// published schemas are fetched for nothing else.
func JudgesSchemas(sel runner.Selection) bool {
	return slices.ContainsFunc(sel.Selected, func(c suites.Check) bool { return strings.HasPrefix(c.ID, "SCHEMA-") })
}

// schemasUnavailable leaves SCHEMA-01/02 skipped with the reason, said on
// errOut.
func schemasUnavailable(opts *suites.Options, err error, errOut io.Writer) {
	opts.SchemasUnavailable = wire.Sanitize(err.Error(), 600)
	fmt.Fprintf(errOut, "adcp-conform: schemas: %s; SCHEMA-01 and SCHEMA-02 are skipped (give a local copy with --schemas DIR)\n", opts.SchemasUnavailable)
}

// fetchSchemas sets opts.Schemas to the release published at src, fetched
// into the user's cache once per process (another pass or target reads
// the cache), or says why it cannot.
func fetchSchemas(ctx context.Context, src string, opts *suites.Options, errOut io.Writer) {
	set, err := fetchedSchemas(ctx, src, errOut)
	if err != nil {
		schemasUnavailable(opts, err, errOut)
		return
	}
	opts.Schemas = set
}

// fetchedSchemas is the release published at src, fetched into the
// user's cache once per process; where it came from is said on errOut.
func fetchedSchemas(ctx context.Context, src string, errOut io.Writer) (*schemas.Set, error) {
	root, err := SchemasCache()
	if err != nil {
		return nil, fmt.Errorf("no cache folder for %s: %w", src, err)
	}
	started := time.Now()
	dir, fetched, err := fetchShared("schemas\x00"+root+"\x00"+src, func() (string, bool, error) {
		ctx, cancel := context.WithTimeout(ctx, schemasFetchTimeout)
		defer cancel()
		return release.Fetch(ctx, nil, release.Schemas, src, root)
	})
	if err != nil {
		return nil, err
	}
	set, err := schemas.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("the cached copy %s: %w", dir, err)
	}
	if fetched {
		fmt.Fprintf(errOut, "adcp-conform: schemas: fetched release %s from %s into %s in %s\n", set.Release(), wire.Sanitize(src, 300), dir, time.Since(started).Round(time.Millisecond))
	} else {
		fmt.Fprintf(errOut, "adcp-conform: schemas: release %s from the cache %s\n", set.Release(), dir)
	}
	return set, nil
}

// CachedHint names the cached copy of a release a run fetched into the
// cache at root (SchemasCache, StoryboardsCache), for the usage error of
// a re-judge without --schemas or --storyboards; "" when there is none.
func CachedHint(root func() (string, error), rel string) string {
	dir, err := root()
	if err != nil {
		return ""
	}
	if dir := release.Cached(dir, rel); dir != "" {
		return " (the copy fetched earlier is " + dir + ")"
	}
	return ""
}

// RecordedSchemasSkip returns why a recorded run had no schemas, when it
// looked for them and could not fetch them, so that judging it again skips
// SCHEMA-01/02 for the same reason.
func RecordedSchemasSkip(prev *report.Run) string {
	for _, r := range prev.Rules {
		if !strings.HasPrefix(r.ID, "SCHEMA-") {
			continue
		}
		for _, sp := range r.Specs {
			if why, ok := strings.CutPrefix(sp.Message, suites.SchemasUnavailablePrefix); ok && sp.Outcome == report.Skipped {
				return why
			}
		}
	}
	return ""
}

// RequireSchemas is the release src names, whatever rules are selected
// (a fuzz run generates its requests from it): a folder is loaded, a
// release's URL fetched into the user's cache, "" the default release's,
// fetched. A folder or URL that is not one is a usage error; a release
// that cannot be had is an error of the harness, saying why.
func RequireSchemas(src string, errOut io.Writer) (*schemas.Set, error) {
	switch {
	case src == Off:
		return nil, usagef("--schemas off: the requests are generated from the schemas; fuzz needs them")
	case src == "":
		src = release.PublishedSchemas + "/" + release.Default + "/"
	}
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		set, err := schemas.Load(src)
		if err != nil {
			return nil, usagef("--schemas: %v", err)
		}
		return set, nil
	}
	if _, err := release.Schemas.ReleaseOf(src); err != nil {
		return nil, usagef("--schemas: %v", err)
	}
	set, err := fetchedSchemas(context.Background(), src, errOut)
	if err != nil {
		return nil, fmt.Errorf("no schemas to generate requests from: %s (give a local copy with --schemas DIR)", wire.Sanitize(err.Error(), 600))
	}
	return set, nil
}
