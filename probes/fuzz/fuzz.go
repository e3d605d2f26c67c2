package fuzz

import (
	"fmt"
	"strings"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/schemas"
)

// Options steer one stream of values.
type Options struct {
	// Seed fixes the stream: the same seed and schemas give the same
	// values, byte for byte.
	Seed uint64
	// MaxDepth is the nesting depth past which only what the schema
	// requires is generated (no optional properties, minItems items).
	// Default 6.
	MaxDepth int
	// MaxBytes is the approximate size of one value past which, likewise,
	// only what the schema requires is generated. Default 8192.
	MaxBytes int
	// Pools are ids of existing resources by entity (the x-entity the
	// schemas annotate id fields with: "media_buy", "creative",
	// "property_list"…): an id field of that entity is filled from its pool
	// instead of a random string, where a pooled id satisfies the field's
	// schema.
	Pools map[string][]string
}

func (o Options) withDefaults() Options {
	if o.MaxDepth <= 0 {
		o.MaxDepth = 6
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 8192
	}
	return o
}

// maxWork bounds the constructions one value may attempt, so a hard
// schema costs a typed error, never an unbounded search.
const maxWork = 20000

// Fuzzer generates request values from one release's schemas.
type Fuzzer struct {
	set       *schemas.Set
	c         *compiler
	namesOnce sync.Once
	names     map[string][]string // property name → the entities the release annotates it with
}

// New returns a Fuzzer over set. It is safe for concurrent use.
func New(set *schemas.Set) *Fuzzer {
	return &Fuzzer{set: set, c: &compiler{set: set, nodes: map[string]*node{}}}
}

// Task opens a task's request schema (as probes/schemas maps it: the
// release's manifest, or the file named after the task).
func (f *Fuzzer) Task(name string) (*Task, error) {
	rel := f.set.RequestSchema(name)
	if rel == "" {
		return nil, fmt.Errorf("%w: no request schema for task %q in release %s", schemas.ErrNoSchema, name, f.set.Release())
	}
	t, err := f.Schema(rel)
	if err != nil {
		return nil, err
	}
	t.Name = name
	if m, listed := f.set.Mutating(name); listed && m {
		t.Mutating = true
	}
	t.Tier = t.tier()
	return t, nil
}

// Schema opens any schema file of the release by its path
// ("media-buy/package-request.json").
func (f *Fuzzer) Schema(rel string) (*Task, error) {
	root, err := f.c.at(f.set.Location(rel))
	if err != nil {
		return nil, err
	}
	t := &Task{Schema: rel, f: f, root: root}
	t.Mutating = root.resolve().mutates
	t.Refs = t.refs()
	t.Tier = t.tier()
	return t, nil
}

// Tier is how much state a task touches, so a fuzzer knows what it may
// call freely.
type Tier int

const (
	// StatelessRead changes nothing and needs nothing to exist.
	StatelessRead Tier = iota
	// Referential changes nothing but requires the id of an existing
	// resource: without a pool, random ids exercise only its not-found path.
	Referential
	// Mutating changes the seller's state (x-mutates-state, or the
	// manifest's mutating flag): for sandbox accounts only.
	Mutating
)

func (t Tier) String() string {
	switch t {
	case StatelessRead:
		return "stateless"
	case Referential:
		return "referential"
	case Mutating:
		return "mutating"
	}
	return fmt.Sprintf("Tier(%d)", int(t))
}

// Task is one request schema, ready to generate from.
type Task struct {
	Name     string // the task ("" for a schema opened by path)
	Schema   string // its path in the release
	Mutating bool   // x-mutates-state, or the manifest's mutating flag
	Tier     Tier
	// Refs are the request's id fields that name existing resources.
	Refs []Ref
	f    *Fuzzer
	root *node
}

// Generate returns value number i of the stream opts.Seed fixes: a value
// the request schema accepts, or an *Error saying where generation gave
// up. Values of one stream are independent: any one is reproduced from
// its seed and index alone.
func (t *Task) Generate(opts Options, i uint64) (any, error) {
	opts = opts.withDefaults()
	st := &state{c: t.f.c, r: newRNG(mix(opts.Seed, i)), opts: opts, maxWork: maxWork, names: t.f.entityNames()}
	return st.value(conj{pos: []*node{t.root}}, "", 0, tAll)
}

// Stream generates values 0, 1, 2… of one seed.
type Stream struct {
	t    *Task
	opts Options
	next uint64
}

// Stream returns the stream of values opts fixes.
func (t *Task) Stream(opts Options) *Stream { return &Stream{t: t, opts: opts} }

// Next returns the stream's next value as JSON (Marshal's encoding).
func (s *Stream) Next() ([]byte, error) {
	i := s.next
	s.next++
	v, err := s.t.Generate(s.opts, i)
	if err != nil {
		return nil, fmt.Errorf("value %d of seed %d: %w", i, s.opts.Seed, err)
	}
	return Marshal(v)
}

// Valid reports whether v (decoded as encoding/json does with UseNumber)
// is valid against the task's request schema.
func (t *Task) Valid(v any) bool { return t.f.c.valid(t.root, v) }

// String names the task for messages.
func (t *Task) String() string {
	if t.Name != "" {
		return t.Name
	}
	return strings.TrimSuffix(t.Schema, ".json")
}
