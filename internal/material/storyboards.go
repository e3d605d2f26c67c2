package material

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/release"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/runner"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/live"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Off is the --storyboards (and --schemas) value that runs no storyboard
// (skips SCHEMA-01/02 without looking for schemas).
const Off = "off"

// StoryboardsCache is where fetched compliance trees are kept (a variable
// for tests).
var StoryboardsCache = release.Storyboards.CacheRoot

// storyboardsFetchTimeout bounds a first fetch of a release's bundle.
const storyboardsFetchTimeout = 2 * time.Minute

// Storyboards is what a run knows about its storyboards before probing.
type Storyboards struct {
	// Release is the compliance release loaded (nil: none).
	Release *spec.Release
	// Unavailable says why the run has no storyboards ("" when it has).
	Unavailable string
	// Include selects the storyboards the run runs (Select sets it).
	Include func(*spec.Storyboard) bool
	// Notice is the line a fetch leaves for stderr (fetched, from the
	// cache, or why not), printed once the run's flags are known good so
	// that a usage error stays one line.
	Notice string
	// Agents are the run's further logical agents (--agent), for the
	// multi-agent storyboards.
	Agents []live.Agent
}

// Shared returns a copy of a plan resolved once for several runs (the
// reference seller's passes, --targets), with its notice or without.
func (p *Storyboards) Shared(notice bool) *Storyboards {
	q := &Storyboards{Release: p.Release, Unavailable: p.Unavailable}
	if notice {
		q.Notice = p.Notice
	}
	return q
}

// Remote reports whether --storyboards names a published bundle
// (a URL).
func Remote(src string) bool {
	return strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
}

// LoadStoryboards reads --storyboards (or ADCP_CONFORM_STORYBOARDS, as
// every flag): a folder that does not load is a usage error; a URL is the
// published bundle of a release, fetched into the user's cache unless it
// is there already (saying so in the plan's notice). A bundle that cannot
// be fetched leaves the storyboards out, with the reason in the report's
// notes, as schemas do. Without the flag the run's release decides
// (storyboardsOf).
func LoadStoryboards(src string) (*Storyboards, error) {
	p := &Storyboards{}
	if src == Off {
		p.Unavailable = "--storyboards off"
		return p, nil
	}
	if !Remote(src) {
		if _, err := storyboardsFolder(src); err != nil {
			return nil, err
		}
		rel, err := loadRelease(src)
		if err != nil {
			return nil, usagef("--storyboards: %v", err)
		}
		if len(rel.Storyboards) == 0 {
			return nil, usagef("--storyboards %s: no storyboards (want a compliance/<release>/ folder)", src)
		}
		p.Release = rel
		return p, nil
	}
	if _, err := release.Storyboards.ReleaseOf(src); err != nil {
		return nil, usagef("--storyboards: %v", wire.Sanitize(err.Error(), 300))
	}
	return fetchedStoryboards(context.Background(), src, func(ctx context.Context, root string) (string, bool, error) {
		return release.Fetch(ctx, nil, release.Storyboards, src, root)
	}), nil
}

// storyboardsFolder checks that --storyboards names a folder, and returns
// its storyboards' plan with the release it names, not loaded
// (LoadStoryboards loads it).
func storyboardsFolder(src string) (*Storyboards, error) {
	st, err := os.Stat(src)
	if err != nil || !st.IsDir() {
		return nil, usagef("--storyboards %s: not a folder", src)
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return nil, usagef("--storyboards %s: %v", src, err)
	}
	return &Storyboards{Release: &spec.Release{Dir: abs}}, nil
}

// loading is a --storyboards folder loading in the background.
type loading struct {
	done chan struct{}
	err  error
}

// loadBeside loads the --storyboards folder src in the background and
// gives what loaded to then (the plan's storyboards, selected): the error
// of either is the loading's.
func loadBeside(src string, then func(*Storyboards) error) *loading {
	l := &loading{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		sb, err := LoadStoryboards(src)
		if err == nil {
			err = then(sb)
		}
		l.err = err
	}()
	return l
}

// unavailableStoryboards is the plan of a run whose storyboards could not
// be had, saying why.
func unavailableStoryboards(err error) *Storyboards {
	p := &Storyboards{Unavailable: "the spec's compliance storyboards were not run: " + wire.Sanitize(err.Error(), 600) + "; give a local copy with --storyboards DIR"}
	p.Notice = fmt.Sprintf("adcp-conform: storyboards: %s\n", p.Unavailable)
	return p
}

// fetchedStoryboards makes the plan of a bundle that fetch brings into the
// cache (once per process: another pass or target reading it says it came
// from the cache); src names it.
func fetchedStoryboards(ctx context.Context, src string, fetch func(ctx context.Context, root string) (string, bool, error)) *Storyboards {
	root, err := StoryboardsCache()
	if err != nil {
		return unavailableStoryboards(fmt.Errorf("no cache folder for %s: %w", src, err))
	}
	started := time.Now()
	dir, fetched, err := fetchShared("compliance\x00"+root+"\x00"+src, func() (string, bool, error) {
		ctx, cancel := context.WithTimeout(ctx, storyboardsFetchTimeout)
		defer cancel()
		return fetch(ctx, root)
	})
	if err != nil {
		return unavailableStoryboards(err)
	}
	rel, err := loadRelease(dir)
	if err == nil && len(rel.Storyboards) == 0 {
		err = fmt.Errorf("no storyboards")
	}
	if err != nil {
		return unavailableStoryboards(fmt.Errorf("the cached copy %s: %w", dir, err))
	}
	p := &Storyboards{Release: rel}
	name := filepath.Base(dir)
	if fetched {
		p.Notice = fmt.Sprintf("adcp-conform: storyboards: fetched release %s from %s into %s in %s\n", name, wire.Sanitize(src, 300), dir, time.Since(started).Round(time.Millisecond))
	} else {
		p.Notice = fmt.Sprintf("adcp-conform: storyboards: release %s from the cache %s\n", name, dir)
	}
	return p
}

// releases caches loaded compliance folders by absolute path: the
// reference run's two passes, and the targets of --targets, share one
// (a release is read-only once loaded).
var releases sync.Map

type loaded struct {
	once sync.Once
	rel  *spec.Release
	err  error
}

func loadRelease(dir string) (*spec.Release, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	v, _ := releases.LoadOrStore(abs, &loaded{})
	l := v.(*loaded)
	l.once.Do(func() { l.rel, l.err = spec.Load(abs) })
	return l.rel, l.err
}

// StoryboardLabels are a storyboard's labels for --label-filter:
// storyboard:<id> and category:<group>, "/" written "." (Ginkgo labels
// cannot hold it).
func StoryboardLabels(sb *spec.Storyboard) []string {
	return []string{"storyboard:" + strings.ReplaceAll(sb.ID, "/", "."), "category:" + strings.ReplaceAll(sb.Group(), "/", "."),
		"kind:" + string(sb.Kind)}
}

// Select sets the plan's include function from --storyboard
// ids and the label filter; it reports whether the filter selects any
// storyboard (a filter naming only storyboards selects no rule, and that
// is no mistake).
func (p *Storyboards) Select(ids []string, filter string) (bool, error) {
	if p.Release == nil {
		return false, nil
	}
	match := func([]string) bool { return true }
	if filter != "" {
		m, err := types.ParseLabelFilter(filter)
		if err != nil {
			return false, usagef("--label-filter %q: %v", filter, err)
		}
		match = m
	}
	var unknown []string
	for _, id := range ids {
		if !slices.ContainsFunc(p.Release.Storyboards, func(sb *spec.Storyboard) bool { return sb.ID == id }) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		return false, usagef("--storyboard: no storyboard %s in %s", strings.Join(unknown, ", "), filepath.Base(p.Release.Dir))
	}
	p.Include = func(sb *spec.Storyboard) bool {
		if len(ids) > 0 && !slices.Contains(ids, sb.ID) {
			return false
		}
		return filter == "" || match(StoryboardLabels(sb))
	}
	any := false
	for _, sb := range p.Release.Storyboards {
		if p.Include(sb) && (filter != "" || len(ids) > 0) {
			any = true
		}
	}
	return any, nil
}

// Rejudge grades a recorded run's storyboards again from its evidence (a
// replay: nothing is sent) and puts them in run; runnerVersion is the
// release whose runner the harness is (storyboard.Env.RunnerVersion).
func Rejudge(run, prev *report.Run, store *evidence.Store, dir string, opts suites.Options, errOut io.Writer, runnerVersion string) error {
	if prev.StoryboardsRelease == "" {
		return nil
	}
	if dir == "" {
		return usagef("the run ran the %s storyboards: give them with --storyboards DIR or the URL of their bundle%s",
			wire.Sanitize(prev.StoryboardsRelease, 40), CachedHint(StoryboardsCache, prev.StoryboardsRelease))
	}
	p, err := LoadStoryboards(dir)
	if err != nil {
		return err
	}
	fmt.Fprint(errOut, p.Notice)
	if p.Release == nil { // a bundle that could not be fetched
		return usagef("--storyboards %s: %s", wire.Sanitize(dir, 300), p.Unavailable)
	}
	if got := filepath.Base(filepath.Clean(p.Release.Dir)); got != prev.StoryboardsRelease {
		return usagef("--storyboards %s is release %s; the run used %s", wire.Sanitize(dir, 300), got, wire.Sanitize(prev.StoryboardsRelease, 40))
	}
	if _, err := p.Select(prev.StoryboardIDs, prev.LabelFilter); err != nil {
		return err
	}
	t := evidence.MCP
	for _, c := range store.Calls() {
		if c.IsStoryboard() && !c.OtherAgent() { // another agent's face is its own
			t = c.Transport
			break
		}
	}
	target := store.Target()
	results := live.Run(context.Background(), live.Config{
		MCP: mcp.Config{Endpoint: target.MCP}, A2A: a2a.Config{BaseURL: target.A2A}, Transport: t,
		Release: p.Release, Store: store, Include: p.Include, Dispatcher: storyboard.Replay{Store: store},
		Env: storyboard.Env{AllowMutations: target.AllowMutations, Sandbox: target.Sandbox, LocalFetch: target.LocalFetch, BrandJSON: target.BrandJSON, Credential: target.Credential,
			LiveCredential: target.LiveCredential, Schemas: opts.Schemas, RunnerVersion: runnerVersion, Generated: live.Generated(store)},
	})
	runner.AddStoryboards(run, results, "")
	run.StoryboardsRelease, run.StoryboardIDs = prev.StoryboardsRelease, prev.StoryboardIDs
	return nil
}
