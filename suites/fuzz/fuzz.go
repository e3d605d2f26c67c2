// Package fuzz is the engine of adcp-conform fuzz: property-based fuzzing
// of a seller against one release's request schemas, judged by the
// two-path oracle of the FUZZ rules (package suites).
//
//	face, err := fuzz.DialMCP(ctx, mcpCfg, "fuzz/", store.Add)
//	res, err := fuzz.Run(ctx, fuzz.Config{Set: set, Seed: 42, Turns: 20}, face, nil, store.Add)
//	// then judge the store with suites.Options{Fuzz: true, Schemas: set}
//
// Each tool the seller lists and the release has a request schema for is
// called with Turns schema-valid requests (probes/fuzz), stateless reads
// first, then the tools that need an existing resource, then — only with
// AllowMutations — the mutating ones. Ids in accepted replies fill the
// pools later requests draw from; with Sandbox the creating tools are
// tried first so the rest have ids to work on. A turn the oracle fails is
// shrunk: the seller is called again with smaller schema-valid requests
// while they fail the same way (bounded), so the evidence ends with a
// minimal reproduction. An accepted turn that used an existing id is sent
// again with an unknown id of the same shape (FUZZ-03), and, given a
// second tenant's face, as that tenant with the first tenant's id and an
// unknown one (FUZZ-05).
//
// Every call is recorded through add with the seed, tool and turn in its
// probe ID, so the verdicts are a pure function of the evidence (the
// judge command re-judges a fuzz folder offline) and the same seed against
// the same seller sends the same requests.
package fuzz

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/fuzz"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
)

// Defaults of a Config.
const (
	DefaultTurns       = 20
	DefaultShrinkCalls = 60
	DefaultMaxShrinks  = 20
	// MaxTurns bounds Turns.
	MaxTurns = 10000
	// maxPool bounds the ids kept per entity, maxEntities the entities
	// (a reply's keys name them: a hostile one may name thousands).
	maxPool     = 8
	maxEntities = 64
	// maxRetries and maxRetryWait bound the waits RATE_LIMITED asks for.
	maxRetries   = 2
	maxRetryWait = 5.0
	// seedAttempts bounds the generated requests tried per creating tool
	// when seeding a sandbox.
	seedAttempts = 12
)

// Config is one fuzz run.
type Config struct {
	// Set is the release the requests are generated from and the replies
	// judged against.
	Set *schemas.Set
	// Seed fixes every request: the same seed against the same seller
	// sends the same requests.
	Seed uint64
	// Turns is the budget of requests per tool (DefaultTurns when 0).
	Turns int
	// AllowMutations lets the mutating tools be fuzzed.
	AllowMutations bool
	// Sandbox: the account is a sandbox; creating tools are called first to
	// seed the pools (needs AllowMutations).
	Sandbox bool
	// Tools, when set, limits the run to these tools.
	Tools []string
	// Pools are ids of existing resources by entity (x-entity:
	// "media_buy", "property_list"…), given by the user.
	Pools map[string][]string
	// ShrinkCalls bounds the calls one shrink makes (DefaultShrinkCalls
	// when 0); MaxShrinks the failed turns shrunk (DefaultMaxShrinks when
	// 0, none when negative).
	ShrinkCalls, MaxShrinks int
}

// Result is the run's account of itself (the verdicts come from judging
// the evidence).
type Result = report.Fuzz

// engine is one run's state.
type engine struct {
	cfg     Config
	f       *fuzz.Fuzzer
	face    Face
	tenant2 Face
	add     func(evidence.Call)
	prefix  string
	pools   map[string][]string
	ownedID map[string]bool // pooled ids of a tenant's own resources (tenantOwned)
	shrinks int
	shrunk  map[string]bool // the failures shrunk once already (signature)
	res     Result
}

// Run fuzzes the seller through face (and tenant2, the second tenant's
// face of the same transport, for the cross-tenant probe; nil to skip
// it), recording every call through add. It stops at ctx's end; what it
// did by then is recorded and counted.
func Run(ctx context.Context, cfg Config, face Face, tenant2 Face, add func(evidence.Call)) (Result, error) {
	if cfg.Set == nil {
		return Result{}, fmt.Errorf("fuzz: no schemas")
	}
	if cfg.Turns <= 0 {
		cfg.Turns = DefaultTurns
	}
	if cfg.ShrinkCalls <= 0 {
		cfg.ShrinkCalls = DefaultShrinkCalls
	}
	if cfg.MaxShrinks == 0 {
		cfg.MaxShrinks = DefaultMaxShrinks
	}
	e := &engine{cfg: cfg, f: fuzz.New(cfg.Set), face: face, tenant2: tenant2, add: add, pools: map[string][]string{}, ownedID: map[string]bool{}, shrunk: map[string]bool{},
		res: Result{Seed: cfg.Seed, TurnsPerTool: cfg.Turns, CrossTenant: tenant2 != nil}}
	e.prefix = fmt.Sprintf("%ss%d/", suites.FuzzPrefix, cfg.Seed)
	if face.Transport() == evidence.A2A {
		e.prefix = "a2a/" + e.prefix
	}
	for k, ids := range cfg.Pools {
		for _, id := range ids {
			e.pool(k, id, true)
		}
	}
	tools := e.plan()
	if cfg.Sandbox && cfg.AllowMutations {
		e.seed(ctx, tools)
	}
	for _, t := range tools {
		if ctx.Err() != nil {
			e.res.Notes = append(e.res.Notes, fmt.Sprintf("%s and the tools after it were not fuzzed: %v", t.Name, context.Cause(ctx)))
			break
		}
		e.res.Tools = append(e.res.Tools, e.fuzzTool(ctx, t))
	}
	e.res.Pools = e.pools
	return e.res, nil
}

// plan lists the tools to fuzz in order: the creating tools (create_*,
// sync_*) when mutations are allowed, so the others find ids in the pools;
// then the stateless reads, the referential ones, and the other mutating
// ones; each group by name. A tool of the release the seller lists is
// fuzzed; a mutating one only when allowed.
func (e *engine) plan() []*fuzz.Task {
	listed := e.face.Tools()
	var tasks []*fuzz.Task
	for _, name := range listed {
		if name == "comply_test_controller" || (len(e.cfg.Tools) > 0 && !slices.Contains(e.cfg.Tools, name)) {
			continue // the sandbox controller is the harness's lever, not a buyer's task
		}
		t, err := e.f.Task(name)
		if err != nil {
			if e.cfg.Set.RequestSchema(name) != "" {
				e.res.Tools = append(e.res.Tools, report.FuzzTool{Tool: name, Skipped: "its request schema cannot be generated from: " + err.Error()})
			}
			continue
		}
		if t.Tier == fuzz.Mutating && !e.cfg.AllowMutations {
			e.res.Tools = append(e.res.Tools, report.FuzzTool{Tool: name, Tier: t.Tier.String(), Skipped: "mutating (x-mutates-state): give --allow-mutations"})
			continue
		}
		tasks = append(tasks, t)
	}
	group := func(t *fuzz.Task) int {
		if t.Tier == fuzz.Mutating && (strings.HasPrefix(t.Name, "create_") || strings.HasPrefix(t.Name, "sync_")) {
			return -1
		}
		return int(t.Tier)
	}
	sort.SliceStable(tasks, func(i, j int) bool {
		if gi, gj := group(tasks[i]), group(tasks[j]); gi != gj {
			return gi < gj
		}
		return tasks[i].Name < tasks[j].Name
	})
	return tasks
}

// seedOf is the stream seed of one tool: the run's seed mixed with the
// tool's name, so a tool's requests do not depend on which other tools the
// seller lists.
func seedOf(seed uint64, what string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(what))
	return seed ^ h.Sum64()
}

// opts are the generation options of a stream.
func (e *engine) opts(what string) fuzz.Options {
	return fuzz.Options{Seed: seedOf(e.cfg.Seed, what), Pools: e.pools}
}

// call sends one request, records it and judges it. A RATE_LIMITED
// rejection is honoured: the same request is sent again (".../retry/N")
// after its retry_after (1 to maxRetryWait s), at most maxRetries times;
// the last call is returned.
func (e *engine) call(ctx context.Context, face Face, id, tool string, v any, p evidence.Purpose) (evidence.Call, suites.FuzzOutcome, error) {
	raw, err := fuzz.Marshal(v)
	if err != nil {
		return evidence.Call{}, suites.FuzzOutcome{}, err
	}
	c := face.Call(ctx, id, tool, raw, p)
	e.add(c)
	out := suites.FuzzOracle(c, e.cfg.Set)
	for n := 1; n <= maxRetries && out.Class == suites.FuzzRejected && out.Code == "RATE_LIMITED"; n++ {
		wait := time.Duration(min(max(out.RetryAfter, 1), maxRetryWait) * float64(time.Second))
		select {
		case <-ctx.Done():
			return c, out, nil
		case <-time.After(wait):
		}
		c = face.Call(ctx, fmt.Sprintf("%s%s%d", id, suites.FuzzRetryInfix, n), tool, raw, p)
		e.add(c)
		out = suites.FuzzOracle(c, e.cfg.Set)
	}
	return c, out, nil
}

// fuzzTool runs a tool's turns.
func (e *engine) fuzzTool(ctx context.Context, t *fuzz.Task) report.FuzzTool {
	st := report.FuzzTool{Tool: t.Name, Tier: t.Tier.String()}
	base := e.prefix + t.Name + "/"
	var reusable []any // accepted turns that used an existing id
	var owned []any    // … of a tenant's own resource
	for i := 0; i < e.cfg.Turns && ctx.Err() == nil; i++ {
		v, err := t.Generate(e.opts(t.Name), uint64(i))
		if err != nil {
			e.res.Notes = append(e.res.Notes, fmt.Sprintf("%s turn %d: no request generated: %v", t.Name, i, err))
			continue
		}
		v = e.pinVersion(t, v)
		id := fmt.Sprintf("%st%03d", base, i)
		c, out, err := e.call(ctx, e.face, id, t.Name, v, evidence.PurposeFuzz)
		if err != nil {
			continue
		}
		st.Turns++
		switch out.Class {
		case suites.FuzzAccepted:
			st.Accepted++
			e.harvest(c, t.Tier == fuzz.Mutating)
			if t.Tier != fuzz.Mutating && e.usesPool(v) {
				reusable = append(reusable, v)
				if len(reusable) == 1 {
					e.unknownRepeat(ctx, t, c.ProbeID, v)
				}
				if _, ok := e.unknownOf(v, true); ok {
					owned = append(owned, v)
				}
			}
		case suites.FuzzRejected:
			st.Rejected++
		case suites.FuzzFailed:
			st.Failed++
			st.Shrinks += e.shrink(ctx, t, c.ProbeID, v, out)
		default:
			st.Unjudged++
		}
	}
	if e.tenant2 != nil && len(owned) > 0 && ctx.Err() == nil {
		e.crossTenant(ctx, t, owned[0])
	}
	return st
}

// shrink reduces a failed turn: the same request once more (a timeout is
// only repeated, each try costing the whole timeout), then smaller ones
// while they fail the same way. It returns the calls it made. A failure
// already shrunk on the tool (the same rule, pointer and finding) is not
// shrunk again: its reproduction stands for it.
func (e *engine) shrink(ctx context.Context, t *fuzz.Task, id string, v any, failed suites.FuzzOutcome) int {
	sig := t.Name + " " + failed.Rule
	if len(failed.Findings) > 0 {
		sig += " " + failed.Findings[0].Pointer + " " + failed.Findings[0].What
	}
	if e.shrinks >= e.cfg.MaxShrinks || (e.shrunk[sig] && !failed.Timeout) {
		return 0
	}
	e.shrunk[sig] = true
	e.shrinks++
	n := 0
	fails := func(x any) bool {
		if ctx.Err() != nil {
			return false
		}
		_, out, err := e.call(ctx, e.face, fmt.Sprintf("%s%s%03d", id, suites.FuzzShrinkInfix, n), t.Name, x, evidence.PurposeFuzzShrink)
		n++
		return err == nil && out.Same(failed)
	}
	if failed.Timeout {
		fails(v)
		return n
	}
	if _, _, err := t.Shrink(v, fails, fuzz.ShrinkOptions{MaxCalls: e.cfg.ShrinkCalls}); err != nil && n == 1 {
		e.res.Notes = append(e.res.Notes, fmt.Sprintf("%s: the same request sent again did not fail the same way: the failure does not reproduce", id))
	}
	return n
}

// pinVersion sets a request's release pins to the release fuzzed
// (adcp_version, adcp_major_version) where the schema allows: a seller
// rightly refuses a release it does not serve (VERSION_UNSUPPORTED, run's
// VER rules), and left random the pins would take most turns there rather
// than into the task.
func (e *engine) pinVersion(t *fuzz.Task, v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	_, hasV := m["adcp_version"]
	_, hasM := m["adcp_major_version"]
	if !hasV && !hasM {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	rel := e.cfg.Set.Release()
	if hasV {
		out["adcp_version"] = schemas.WireRelease(rel)
	}
	if hasM {
		major, _, _ := strings.Cut(rel, ".")
		out["adcp_major_version"] = json.Number(major)
	}
	if !t.Valid(out) {
		return v
	}
	return out
}

// pool adds an id to an entity's pool (bounded, no repeats); created says
// the first tenant created it (a mutating call's reply, or --pool).
func (e *engine) pool(entity, id string, created bool) {
	if created && tenantOwned[entity] && len(id) >= 3 && len(id) <= 200 && len(e.ownedID) < maxEntities*maxPool { // a one-letter id would stand for too much
		e.ownedID[id] = true
	}
	if id == "" || len(id) > 200 || slices.Contains(e.pools[entity], id) || len(e.pools[entity]) >= maxPool {
		return
	}
	if _, known := e.pools[entity]; !known && len(e.pools) >= maxEntities {
		return
	}
	e.pools[entity] = append(e.pools[entity], id)
}

// tenantOwned are the entities a buyer's account owns (x-entity names):
// another tenant asking for one the first tenant created must be told what
// an unknown id is told (FUZZ-05). A product, a format or a signal is the
// seller's catalogue, the same for every buyer, and an id read rather than
// created (a sandbox's ready-made account) may be the second tenant's too:
// asking for either proves nothing.
var tenantOwned = map[string]bool{
	"media_buy": true, "package": true, "creative": true, "property_list": true, "collection_list": true,
	"content_standards": true, "account": true, "governance_plan": true, "governance_check": true, "rights_grant": true,
	"si_session": true, "task": true, "audience": true, "event_source": true, "catalog": true,
}

// harvest files the ids of an accepted reply's payload under the entities
// the release annotates their property names with (x-entity), or
// <entity>_id's entity; created says the call was a mutating one.
func (e *engine) harvest(c evidence.Call, created bool) {
	data := suites.FuzzPayload(c)
	if data == nil {
		return
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return
	}
	var walk func(key string, x any, depth int)
	walk = func(key string, x any, depth int) {
		if depth > 8 {
			return
		}
		switch xv := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(xv))
			for k := range xv {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(k, xv[k], depth+1)
			}
		case []any:
			for _, it := range xv {
				walk(key, it, depth+1)
			}
		case string:
			ents := e.f.Entities(key)
			if len(ents) == 0 && strings.HasSuffix(key, "_id") && key != "context_id" && key != "task_id" {
				ents = []string{strings.TrimSuffix(key, "_id")}
			}
			for _, ent := range ents {
				e.pool(ent, xv, created)
			}
		}
	}
	walk("", v, 0)
}

// usesPool reports whether a request carries an id from a pool.
func (e *engine) usesPool(v any) bool {
	found := false
	eachString(v, func(s string) string {
		for _, ids := range e.pools {
			if slices.Contains(ids, s) {
				found = true
			}
		}
		return s
	})
	return found
}

// unknownOf returns v with every pooled id (only the ids of a tenant's
// own resources, when owned) replaced by an unknown id of the same shape,
// and whether any was.
func (e *engine) unknownOf(v any, owned bool) (any, bool) {
	changed := false
	out := eachString(v, func(s string) string {
		if owned && !e.ownedID[s] {
			return s
		}
		for _, ids := range e.pools {
			if slices.Contains(ids, s) {
				changed = true
				return unknownLike(s, e.cfg.Seed)
			}
		}
		return s
	})
	return out, changed
}

// unknownRepeat sends an accepted turn that used existing ids again with
// unknown ids of the same shape (FUZZ-03), when that is still valid.
func (e *engine) unknownRepeat(ctx context.Context, t *fuzz.Task, id string, v any) {
	u, ok := e.unknownOf(v, false)
	if !ok || !t.Valid(u) {
		return
	}
	c, out, err := e.call(ctx, e.face, id+suites.FuzzUnknownSuffix, t.Name, u, evidence.PurposeFuzzUnknownID)
	if err == nil && out.Class == suites.FuzzFailed {
		e.shrink(ctx, t, c.ProbeID, u, out) // a failure of its own, whatever its turn did
	}
}

// crossTenant asks, as the second tenant, for the first tenant's ids (an
// accepted request) and for unknown ids of the same shape (FUZZ-05). A
// pair whose replies differ is shrunk: smaller requests still carrying a
// pooled id, each pair sent again, while the replies still differ.
func (e *engine) crossTenant(ctx context.Context, t *fuzz.Task, v any) {
	base := e.prefix + t.Name + "/tenant2"
	n := 0
	differs := func(key string, x any) bool {
		u, ok := e.unknownOf(x, true)
		if !ok || !t.Valid(u) || ctx.Err() != nil {
			return false
		}
		a, _, errA := e.call(ctx, e.tenant2, key+suites.FuzzOtherSuffix, t.Name, x, evidence.PurposeFuzzTenant2)
		b, _, errB := e.call(ctx, e.tenant2, key+suites.FuzzUnknownSuffix, t.Name, u, evidence.PurposeFuzzTenant2)
		return errA == nil && errB == nil && len(suites.FuzzUniformDiffs(a, b)) > 0
	}
	if !differs(base, v) || e.shrinks >= e.cfg.MaxShrinks {
		return
	}
	e.shrinks++
	_, _, _ = t.Shrink(v, func(x any) bool {
		key := fmt.Sprintf("%s%s%03d", base, suites.FuzzShrinkInfix, n)
		n++
		return differs(key, x)
	}, fuzz.ShrinkOptions{MaxCalls: e.cfg.ShrinkCalls})
}

// creators are the tools that create the resources the others refer to,
// in the order a sandbox is seeded.
var creators = []string{"create_property_list", "create_content_standards", "sync_creatives", "create_media_buy"}

// seed calls the creating tools the seller lists before the turns, so the
// referential and updating tools have ids to work on: up to seedAttempts
// generated requests each, until one is accepted (its ids harvested).
func (e *engine) seed(ctx context.Context, tools []*fuzz.Task) {
	for _, name := range creators {
		i := slices.IndexFunc(tools, func(t *fuzz.Task) bool { return t.Name == name })
		if i < 0 {
			continue
		}
		t, ok := tools[i], false
		for k := 0; k < seedAttempts && !ok && ctx.Err() == nil; k++ {
			o := e.opts("seed/" + name)
			if k%2 == 0 {
				o.MaxDepth = 1 // what the schema requires, and little more
			}
			v, err := t.Generate(o, uint64(k))
			if err != nil {
				continue
			}
			v = e.pinVersion(t, v)
			c, out, err := e.call(ctx, e.face, fmt.Sprintf("%sseed/%s/%02d", e.prefix, name, k), name, v, evidence.PurposeFuzzSeed)
			if err == nil && out.Class == suites.FuzzAccepted {
				e.harvest(c, true)
				ok = true
			}
		}
		if !ok {
			e.res.Notes = append(e.res.Notes, fmt.Sprintf("seeding: no generated %s request was accepted in %d tries", name, seedAttempts))
		}
	}
}

// eachString rebuilds v with every string passed through f.
func eachString(v any, f func(string) string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, it := range x {
			out[k] = eachString(it, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			out[i] = eachString(it, f)
		}
		return out
	case string:
		return f(x)
	}
	return v
}

// unknownLike returns an id of the same length and shape as id that names
// nothing: its digits moved within the digits (an id without digits: each
// hex letter within the hex letters, each other letter within its case's
// others), prefixes and separators kept, so a format check (a UUID, an
// "mb_" prefix) passes it as it passes id — the spec lets a seller check
// an id's format before any lookup (error-handling.mdx §Uniform response
// for inaccessible references).
func unknownLike(id string, seed uint64) string {
	const digits, hexL, hexU = "0123456789", "abcdef", "ABCDEF"
	const restL, restU = "ghijklmnopqrstuvwxyz", "GHIJKLMNOPQRSTUVWXYZ"
	k := int(seed%5) + 3
	rot := func(set string, r rune) rune {
		i := strings.IndexRune(set, r)
		return rune(set[(i+k)%len(set)])
	}
	b := []rune(id)
	if strings.ContainsAny(id, digits) {
		for i, r := range b {
			if strings.ContainsRune(digits, r) {
				b[i] = rot(digits, r)
			}
		}
		return string(b)
	}
	for i, r := range b {
		for _, set := range []string{hexL, hexU, restL, restU} {
			if strings.ContainsRune(set, r) {
				b[i] = rot(set, r)
				break
			}
		}
	}
	return string(b)
}
