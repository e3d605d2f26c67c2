package material

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/release"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
	"github.com/adcp-conform/adcp-conform/suites/runner"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/live"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// releaseIndexTimeout bounds the read of a site's release index.
const releaseIndexTimeout = 15 * time.Second

// runRelease is the release a run grades the seller on, and why.
type runRelease struct {
	// version is the published release; "" when none could be chosen.
	version string
	// by is what chose it (report.Release.ChosenBy) and why says how.
	by, why    string
	advertised []string
	mirror     release.Mirror
	available  []string
}

// report is the release as results.json records it.
func (r *runRelease) report() *report.Release {
	if r == nil {
		return nil
	}
	return &report.Release{Version: r.version, ChosenBy: r.by, Reason: r.why, Advertised: r.advertised, Mirror: r.mirror.String(), Available: r.available}
}

// notice is the line the run prints when it knows its release.
func (r *runRelease) notice() string {
	v := r.version
	if v == "" {
		v = "none"
	}
	return fmt.Sprintf("adcp-conform: release: %s — %s\n", v, wire.Sanitize(r.why, 1000))
}

// releaseInputs is what decides a run's release besides the seller.
type releaseInputs struct {
	pin    string         // --release
	mirror release.Mirror // --release-mirror
	// storyboards and schemas are the releases of the explicit
	// --storyboards and --schemas ("" when not given, off, or not named
	// after a release).
	storyboards, schemas string
}

// parseReleaseFlags checks --release and --release-mirror.
func parseReleaseFlags(pin, mirror string) (releaseInputs, error) {
	in := releaseInputs{pin: pin}
	if _, full := release.Parse(pin); pin != "" && !full {
		if _, ok := release.ParseWire(pin); !ok {
			return in, usagef("--release %s: want a published release such as %s or 3.2.0-beta.5, or a version such as 3.1 or 3.2-beta.5", wire.Sanitize(pin, 60), release.Default)
		}
	}
	m, err := release.ParseMirror(mirror)
	if err != nil {
		return in, usagef("--release-mirror %s", wire.Sanitize(err.Error(), 300))
	}
	in.mirror = m
	return in, nil
}

// chooseRelease decides the run's release: --release; else the release of
// the explicit --storyboards, else of --schemas; else the newest release
// the seller's adcp.supported_versions lists that the harness can get
// (release.Choose), read by advertised from the probes' evidence. A seller
// that names no version gets the harness's default release, said so; one
// that lists none the harness can get gets none, and its storyboards and
// schemas are skipped with that reason.
func chooseRelease(ctx context.Context, in releaseInputs, advertised func() (versions []string, read bool, note string)) *runRelease {
	r := &runRelease{mirror: in.mirror}
	switch {
	case in.pin != "":
		r.by = "--release"
		if _, full := release.Parse(in.pin); full {
			r.version, r.why = in.pin, "pinned by --release "+in.pin
			return r
		}
		var note string
		r.available, note = availableReleases(ctx, in.mirror)
		c := release.Choose([]string{in.pin}, r.available)
		r.version = c.Release
		switch {
		case c.Release == "":
			r.why = fmt.Sprintf("--release %s: the run can get no release of it from %s (it has %s)", in.pin, in.mirror, listOrNone(r.available))
		case c.StandIn:
			r.why = fmt.Sprintf("--release %s has no final release the run can get from %s: its newest pre-release %s stands in", in.pin, in.mirror, c.Release)
		default:
			r.why = fmt.Sprintf("the newest release of --release %s the run can get from %s", in.pin, in.mirror)
		}
		r.why += note
		return r
	case in.storyboards != "":
		r.version, r.by, r.why = in.storyboards, "--storyboards", "the release of --storyboards"
		return r
	case in.schemas != "":
		r.version, r.by, r.why = in.schemas, "--schemas", "the release of --schemas"
		return r
	}
	r.by = report.ReleaseBySeller
	versions, read, faces := advertised()
	r.advertised = versions
	if !read {
		r.version, r.by = release.Default, report.ReleaseByDefault
		r.why = "no get_adcp_capabilities reply with AdCP data was read: the harness's default release " + release.Default
		return r
	}
	var note string
	r.available, note = availableReleases(ctx, in.mirror)
	c := release.Choose(versions, r.available)
	r.version, r.why = c.Release, c.Why(r.available, " from "+in.mirror.String())
	if len(c.Advertised) == 0 {
		r.version, r.by = release.Default, report.ReleaseByDefault
		r.why += ": the harness's default release " + release.Default
	}
	r.why += faces + note
	return r
}

// advertisedIn reads the seller's adcp.supported_versions from the probes'
// evidence, on the face the storyboards run on (MCP when there is one);
// note says so when its other face lists other versions.
func advertisedIn(store *evidence.Store, cfg plan.Config) (versions []string, read bool, note string) {
	// The seller's strings reach the terminal and the reports: bounded,
	// without control characters (one that held any matches no version).
	clean := func(vs []string) []string {
		vs = slices.Clone(vs[:min(len(vs), 64)])
		for i, v := range vs {
			vs[i] = wire.Sanitize(v, 40)
		}
		return vs
	}
	order := []evidence.Transport{evidence.MCP, evidence.A2A}
	if cfg.MCP.Endpoint == "" {
		order = []evidence.Transport{evidence.A2A}
	}
	for _, t := range order {
		if versions, read = plan.Advertised(store, t); read {
			break
		}
	}
	if cfg.MCP.Endpoint != "" && cfg.A2A.BaseURL != "" {
		mcpV, mcpRead := plan.Advertised(store, evidence.MCP)
		a2aV, a2aRead := plan.Advertised(store, evidence.A2A)
		if mcpRead && a2aRead && !slices.Equal(mcpV, a2aV) {
			note = fmt.Sprintf("; the seller's A2A face lists [%s], its MCP face, where the storyboards run, [%s]: the release follows the MCP face",
				strings.Join(clean(a2aV[:min(len(a2aV), 16)]), ", "), strings.Join(clean(mcpV[:min(len(mcpV), 16)]), ", "))
		}
	}
	return clean(versions), read, note
}

// availableReleases lists the releases the run can get from a mirror,
// newest first: a folder's own; a site's release index (read once per
// process); without the index, the releases this build knows
// (release.Known) and those in the cache, and note says why.
func availableReleases(ctx context.Context, m release.Mirror) (list []string, note string) {
	if m.Dir != "" {
		return m.Releases(), ""
	}
	v, _ := indexes.LoadOrStore(m.URL, &indexOnce{})
	idx := v.(*indexOnce)
	idx.once.Do(func() {
		if _, err := SchemasCache(); err != nil {
			if _, err2 := StoryboardsCache(); err2 != nil {
				idx.err = fmt.Errorf("there is no cache folder to fetch into: %w", err)
				return
			}
		}
		ctx, cancel := context.WithTimeout(ctx, releaseIndexTimeout)
		defer cancel()
		// The site may move its index (redirects followed), every hop
		// connecting through a guard like the release material's fetches.
		client := fetch.For(m.URL).Client(fetch.AnyRedirects)
		client.Timeout = releaseIndexTimeout
		idx.list, idx.err = FetchIndex(ctx, client, m)
	})
	if idx.err == nil {
		return idx.list, ""
	}
	have := slices.Clone(release.Known)
	for _, root := range []func() (string, error){StoryboardsCache, SchemasCache} {
		if dir, err := root(); err == nil {
			have = append(have, release.List(dir)...)
		}
	}
	return release.Sort(have), fmt.Sprintf(" (the release index %s could not be read: %s; the run chose among the releases this build knows and those in its cache)",
		m.IndexURL(), wire.Sanitize(idx.err.Error(), 300))
}

// FetchIndex reads a site's release index (a variable for tests, which
// never read the published one).
var FetchIndex = release.FetchIndex

// indexes are the release indexes read in this process, by site: the
// reference seller's passes and the targets of --targets read one once.
var indexes sync.Map

type indexOnce struct {
	once sync.Once
	list []string
	err  error
}

// fetches are the fetches into the cache made in this process, by cache
// folder and source: a release fetched for one pass or target is read by
// the others, which say it came from the cache.
var fetches sync.Map

type fetchOnce struct {
	once sync.Once
	dir  string
	err  error
}

// fetchShared runs fetch once per key in the process; only the caller
// that ran it may report fetched.
func fetchShared(key string, fetch func() (string, bool, error)) (dir string, fetched bool, err error) {
	v, _ := fetches.LoadOrStore(key, &fetchOnce{})
	f := v.(*fetchOnce)
	f.once.Do(func() { f.dir, fetched, f.err = fetch() })
	return f.dir, fetched, f.err
}

// releaseOfStoryboards is the release an explicit --storyboards (src)
// names: its folder's (or bundle's) name, else its index.json's
// adcp_version, else the release its bundle URL names; "" when none is a
// published release's name.
func releaseOfStoryboards(p *Storyboards, src string) string {
	var names []string
	if p != nil && p.Release != nil {
		names = append(names, filepath.Base(filepath.Clean(p.Release.Dir)), p.Release.Version())
	}
	if Remote(src) {
		v, _ := release.Storyboards.ReleaseOf(src)
		names = append(names, v)
	}
	for _, v := range names {
		if _, ok := release.Parse(v); ok {
			return v
		}
	}
	return ""
}

// releaseOfSchemas is the release an explicit --schemas names ("" for off).
func releaseOfSchemas(src string) string {
	var v string
	switch {
	case src == "" || src == Off:
	case strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://"):
		v, _ = release.Schemas.ReleaseOf(src)
	default:
		v = filepath.Base(filepath.Clean(src))
	}
	if _, ok := release.Parse(v); ok {
		return v
	}
	return ""
}

// storyboardsOf makes the storyboard plan of the run's release from its
// mirror; what cannot be had leaves the storyboards out with the reason.
func storyboardsOf(ctx context.Context, r *runRelease) *Storyboards {
	v, m := r.version, r.mirror
	if v == "" {
		why := "the spec's compliance storyboards were not run: " + r.why + "; give a release with --release, or a local copy with --storyboards DIR"
		return &Storyboards{Unavailable: why, Notice: "adcp-conform: storyboards: " + wire.Sanitize(why, 1000) + "\n"}
	}
	if m.URL != "" {
		u := m.BundleURL(v)
		return fetchedStoryboards(ctx, u, func(ctx context.Context, root string) (string, bool, error) {
			return release.Fetch(ctx, nil, release.Storyboards, u, root)
		})
	}
	dir, tgz := m.Storyboards(v)
	switch {
	case dir != "":
		rel, err := loadRelease(dir)
		if err == nil && len(rel.Storyboards) == 0 {
			err = fmt.Errorf("no storyboards")
		}
		if err != nil {
			return unavailableStoryboards(fmt.Errorf("the mirror's %s: %w", dir, err))
		}
		return &Storyboards{Release: rel, Notice: fmt.Sprintf("adcp-conform: storyboards: release %s from the mirror %s\n", v, dir)}
	case tgz != "":
		return fetchedStoryboards(ctx, tgz, func(_ context.Context, root string) (string, bool, error) { return release.FetchFile(tgz, root) })
	}
	return unavailableStoryboards(fmt.Errorf("the mirror %s holds neither compliance/%s/ nor protocol/%s.tgz", m.Dir, v, v))
}

// schemasOf loads the run's release's schemas from its mirror into the
// selection, when it judges a SCHEMA rule; what cannot be had leaves
// SCHEMA-01/02 skipped with the reason.
func schemasOf(ctx context.Context, r *runRelease, opts *suites.Options, errOut io.Writer) {
	v, m := r.version, r.mirror
	switch {
	case v == "":
		schemasUnavailable(opts, errors.New(r.why), errOut)
	case m.URL != "":
		fetchSchemas(ctx, m.SchemasURL(v), opts, errOut)
	case m.Schemas(v) == "":
		schemasUnavailable(opts, fmt.Errorf("the mirror %s holds no schemas/%s/", m.Dir, v), errOut)
	default:
		set, err := schemas.Load(m.Schemas(v))
		if err != nil {
			schemasUnavailable(opts, fmt.Errorf("the mirror's schemas/%s: %w", v, err), errOut)
			return
		}
		fmt.Fprintf(errOut, "adcp-conform: schemas: release %s from the mirror %s\n", set.Release(), m.Schemas(v))
		opts.Schemas = set
	}
}

// listOrNone joins a list of releases, "none" when empty.
func listOrNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// Inputs are what names a run's release material: its flags.
type Inputs struct {
	Release, Mirror      string   // --release, --release-mirror
	Storyboards, Schemas string   // --storyboards, --schemas
	IDs                  []string // --storyboard
	Filter               string   // --label-filter
	// Agents are the run's further logical agents (--agent).
	Agents []live.Agent
	// Loaded, when set, are the storyboards resolved once for several runs
	// (the reference seller's passes, --targets): fetched once, said once.
	// The plan selects in a copy of its own: runs may share it at once.
	Loaded *Storyboards
	// LoadedSchemas, when set, are the schemas --schemas names, loaded
	// once for several runs (--targets), their compiled forms shared.
	LoadedSchemas *schemas.Set
}

// Plan is a run's release, storyboards and schemas as the flags decide
// them before the probes, and, when the seller decides, after them
// (Choose).
type Plan struct {
	in  releaseInputs
	rel *runRelease // nil: the run needs none, or the seller is yet to choose
	// Storyboards are the run's storyboards (nil while the seller is yet
	// to choose).
	Storyboards *Storyboards
	// Deferred is set when the seller chooses: its storyboards and schemas
	// wait for the probes' get_adcp_capabilities.
	Deferred bool
	// sbFollow and schemasFollow are set when the storyboards and the
	// schemas are the release's (no --storyboards, no --schemas).
	sbFollow, schemasFollow bool
	// loading is set while a --storyboards folder loads beside the
	// seller's discovery (Ready).
	loading *loading

	ids    []string
	filter string
	fe     *runner.FilterError
	opts   suites.Options
	agents []live.Agent
}

// NewPlan reads --release, --release-mirror, --storyboards and --schemas:
// what they decide is loaded now (a mistake in them is a usage error
// before any probe), and the storyboard selection is checked against it;
// without them the seller chooses after the probes (Choose). A
// --storyboards folder whose storyboards decide nothing before the probes
// (no --storyboard, a filter that selects rules) loads beside the seller's
// discovery instead: a folder that is none is refused now, one whose
// storyboards do not load once Ready is called, before the seller's
// discovery is used. sel is the rule selection (fe when the filter selects
// no rule), and becomes SelectNone where the run judges storyboards only.
// What it loads it says on errOut.
func NewPlan(c Inputs, sel *runner.Selection, fe *runner.FilterError, errOut io.Writer) (*Plan, error) {
	in, err := parseReleaseFlags(c.Release, c.Mirror)
	if err != nil {
		return nil, err
	}
	p := &Plan{ids: c.IDs, filter: c.Filter, fe: fe, opts: sel.Options, agents: c.Agents}
	if c.Loaded != nil {
		p.Storyboards = c.Loaded.Shared(true) // Select sets Include on the plan's own copy
	}
	var given *Storyboards // the folder's release, its storyboards yet to load
	switch {
	case p.Storyboards != nil || c.Storyboards == "":
	case fe == nil && len(c.IDs) == 0 && c.Storyboards != Off && !Remote(c.Storyboards):
		if given, err = storyboardsFolder(c.Storyboards); err != nil { // storyboards.go
			return nil, err
		}
		p.loading = loadBeside(c.Storyboards, func(sb *Storyboards) error {
			p.Storyboards = sb
			var s runner.Selection // no --storyboard, no filter naming storyboards only: the rules' selection stays
			return p.selectIn(&s, true)
		})
	default:
		if p.Storyboards, err = LoadStoryboards(c.Storyboards); err != nil { // storyboards.go
			return nil, err
		}
	}
	if given == nil {
		given = p.Storyboards
	}
	in.storyboards, in.schemas = releaseOfStoryboards(given, c.Storyboards), releaseOfSchemas(c.Schemas)
	p.in, p.sbFollow, p.schemasFollow = in, given == nil, c.Schemas == ""
	needed := p.sbFollow || p.schemasFollow && fe == nil && JudgesSchemas(*sel) || in.storyboards != "" || in.schemas != ""
	switch {
	case needed && in.pin == "" && in.storyboards == "" && in.schemas == "":
		p.Deferred = true
	case needed:
		p.rel = chooseRelease(context.Background(), in, nil)
		if p.sbFollow {
			p.Storyboards = storyboardsOf(context.Background(), p.rel)
		}
	}
	switch {
	case p.loading != nil:
	case p.Storyboards == nil:
		// The storyboards wait for the seller's release: a filter that
		// selects no rule may name storyboards only, and --storyboard
		// alone focuses on them.
		if fe != nil {
			if ok, err := mayNameStoryboards(c.Filter); err != nil || !ok {
				return nil, &UsageError{Msg: fe.Msg}
			}
		}
		if fe != nil || len(c.IDs) > 0 && c.Filter == "" {
			*sel = runner.SelectNone(c.Filter, p.opts)
		}
	default:
		if err := p.selectIn(sel, true); err != nil {
			return nil, err
		}
	}
	if p.rel != nil { // the flags are good: say which release, and why
		fmt.Fprint(errOut, p.rel.notice())
	}
	switch {
	case !p.schemasFollow && c.LoadedSchemas != nil:
		sel.Options.Schemas = c.LoadedSchemas
	case !p.schemasFollow:
		if err := loadSchemas(c.Schemas, sel, errOut); err != nil { // schemas.go
			return nil, err
		}
	case p.rel != nil && JudgesSchemas(*sel):
		schemasOf(context.Background(), p.rel, &sel.Options, errOut)
	}
	if p.loading == nil && p.Storyboards != nil {
		fmt.Fprint(errOut, p.Storyboards.Notice) // say where the storyboards came from
	}
	return p, nil
}

// Ready waits for a --storyboards folder loading beside the seller's
// discovery (NewPlan) and returns the usage error it met; nil at once for
// a plan that loads nothing in the background. Storyboards is read only
// after it.
func (p *Plan) Ready() error {
	if p.loading == nil {
		return nil
	}
	<-p.loading.done
	return p.loading.err
}

// selectIn applies --storyboard and the label filter to the plan's
// storyboards. Before the probes (strict) a filter that selects neither a
// rule nor a storyboard is a usage error; after them, storyboards that
// could not be had leave a filter naming storyboards only with nothing to
// judge, and the run says why.
func (p *Plan) selectIn(sel *runner.Selection, strict bool) error {
	if len(p.agents) > 0 {
		q := *p.Storyboards // a plan a test shares between runs stays as it was
		q.Agents, p.Storyboards = p.agents, &q
	}
	if !strict && p.Storyboards.Release == nil {
		return nil // the selection was made for storyboards-only already
	}
	switch {
	case p.fe != nil:
		// A filter that selects no rule may name storyboards only.
		if only, err := p.Storyboards.Select(p.ids, p.filter); err != nil || !only {
			return &UsageError{Msg: p.fe.Msg}
		}
		*sel = runner.SelectNone(p.filter, sel.Options)
	default:
		if _, err := p.Storyboards.Select(p.ids, p.filter); err != nil {
			return err
		}
		if len(p.ids) > 0 && p.filter == "" {
			*sel = runner.SelectNone("", sel.Options) // --storyboard focuses on storyboards
		}
	}
	return nil
}

// Choose is the seller's choice, after the probes: the release, its
// storyboards, its schemas when SCHEMA rules are judged. A --storyboard
// the release does not hold is a usage error, found only now.
func (p *Plan) Choose(ctx context.Context, store *evidence.Store, cfg plan.Config, sel *runner.Selection, errOut io.Writer) error {
	p.rel = chooseRelease(ctx, p.in, func() ([]string, bool, string) { return advertisedIn(store, cfg) })
	fmt.Fprint(errOut, p.rel.notice())
	if p.sbFollow {
		p.Storyboards = storyboardsOf(ctx, p.rel)
		if err := p.selectIn(sel, false); err != nil {
			return err
		}
	}
	if p.schemasFollow && JudgesSchemas(*sel) {
		schemasOf(ctx, p.rel, &sel.Options, errOut)
	}
	if p.sbFollow {
		fmt.Fprint(errOut, p.Storyboards.Notice)
	}
	return nil
}

// Unchosen leaves a deferred plan without storyboards or schemas when the
// probes stopped before the seller could choose (a signal, the deadline,
// a seller that could not be reached).
func (p *Plan) Unchosen(sel *runner.Selection) {
	const why = "the run stopped before the seller's release was chosen"
	if p.sbFollow {
		p.Storyboards = &Storyboards{Unavailable: why}
	}
	if p.schemasFollow && JudgesSchemas(*sel) {
		sel.Options.SchemasUnavailable = why
	}
}

// mayNameStoryboards reports whether a label filter could select a
// storyboard of some release, before the release is known: it selects
// every storyboard when it holds on a storyboard's labels whatever their
// values, and may select some when it names a storyboard label's key
// (storyboard:, category:, kind:) or holds a regular expression; a filter
// of rule labels alone ("rule:NOPE-1") never does.
func mayNameStoryboards(filter string) (bool, error) {
	match, err := types.ParseLabelFilter(filter)
	if err != nil {
		return false, err
	}
	if match(StoryboardLabels(&spec.Storyboard{ID: "\x00"})) {
		return true, nil
	}
	f := strings.ToLower(filter)
	for _, s := range []string{"storyboard", "category", "kind", "/"} {
		if strings.Contains(f, s) {
			return true, nil
		}
	}
	return false, nil
}

// Release is the release the plan chose, as results.json records it (nil:
// none was needed, or the seller never chose).
func (p *Plan) Release() *report.Release { return p.rel.report() }
