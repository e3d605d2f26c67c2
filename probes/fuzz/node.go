package fuzz

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
)

// types is a set of JSON types; integer is its own bit and "number" means
// both number bits.
type types uint8

const (
	tNull types = 1 << iota
	tBool
	tObject
	tArray
	tNumber // a number with a fraction
	tInteger
	tString
	tAll = tNull | tBool | tObject | tArray | tNumber | tInteger | tString
)

var typeNames = map[string]types{
	"null": tNull, "boolean": tBool, "object": tObject, "array": tArray,
	"number": tNumber | tInteger, "integer": tInteger, "string": tString,
}

// typeOf returns the type bit of a decoded JSON value.
func typeOf(v any) types {
	switch x := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBool
	case map[string]any:
		return tObject
	case []any:
		return tArray
	case string:
		return tString
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(x)); ok && r.IsInt() {
			return tInteger
		}
		return tNumber
	}
	return 0
}

// node is one schema (object or boolean) of draft-07, its keywords parsed.
// A node is built once per location and never changes after the task's
// graph is built, except for its lazily compiled checker.
type node struct {
	loc     string // absolute URL, fragment a JSON pointer: the validator's location
	boolean *bool  // a true/false schema
	ref     *node  // $ref's target: draft-07 ignores every sibling keyword

	hasType bool
	types   types
	enum    []any // enum, or const as a one-value enum
	hasEnum bool

	allOf, anyOf, oneOf   []*node
	not, ifS, thenS, elsS *node

	props      map[string]*node
	propKeys   []string // sorted
	required   []string
	addl       *node // additionalProperties (false is a boolean node)
	patProps   []patProp
	propNames  *node
	depKeys    map[string][]string
	depSchemas map[string]*node
	depOrder   []string // sorted keys of both dependency forms
	minProps   int
	maxProps   int // -1: no bound

	items     *node   // items as one schema
	tuple     []*node // items as an array
	addItems  *node
	minItems  int
	maxItems  int // -1: no bound
	unique    bool
	contains  *node
	minLen    int
	maxLen    int // -1: no bound
	pattern   *pattern
	format    string
	min, max  *big.Rat
	exMin     bool // min is exclusiveMinimum
	exMax     bool
	multiple  *big.Rat
	entity    string // x-entity: the kind of resource an id names
	mutates   bool   // x-mutates-state
	hasObjKW  bool   // object keywords, so object is the natural type
	hasArrKW  bool
	hasStrKW  bool
	hasNumKW  bool
	checkOnce sync.Once
	check     func(any) bool
	checkErr  error
}

type patProp struct {
	pat *pattern
	n   *node
}

// compiler builds the node graph of one schema set.
type compiler struct {
	set   *schemas.Set
	mu    sync.Mutex
	nodes map[string]*node
}

// at returns the node at an absolute location, building it (and every node
// it reaches) on first use.
func (c *compiler) at(loc string) (*node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.atLocked(loc)
}

func (c *compiler) atLocked(loc string) (*node, error) {
	if n, ok := c.nodes[loc]; ok {
		return n, nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("schema location %s: %w", loc, err)
	}
	frag := u.Fragment
	u.Fragment = ""
	doc, err := c.set.Document(u.String())
	if err != nil {
		return nil, err
	}
	docURL := u.String()
	if m, ok := doc.(map[string]any); ok {
		if id, ok := m["$id"].(string); ok && id != "" {
			if r, err := u.Parse(id); err == nil {
				r.Fragment = ""
				docURL = r.String()
			}
		}
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return nil, fmt.Errorf("schema location %s: only JSON-pointer fragments are supported", loc)
	}
	raw, err := pointerGet(doc, frag)
	if err != nil {
		return nil, fmt.Errorf("schema location %s: %w", loc, err)
	}
	canon := docURL
	if frag != "" {
		canon += "#" + frag
	}
	if n, ok := c.nodes[canon]; ok {
		c.nodes[loc] = n
		return n, nil
	}
	n, err := c.build(raw, canon, docURL)
	if err != nil {
		return nil, err
	}
	c.nodes[loc] = n
	return n, nil
}

// pointerGet resolves a fragment's JSON pointer in a schema document.
func pointerGet(doc any, ptr string) (any, error) {
	v, ok := rawjson.Resolve(doc, ptr)
	if !ok {
		return nil, fmt.Errorf("%s names nothing in the document", ptr)
	}
	return v, nil
}

// childLoc is the location of a value below loc: its pointer fragment
// extended by the tokens.
func childLoc(loc string, toks ...string) string {
	if !strings.Contains(loc, "#") {
		loc += "#"
	}
	return rawjson.Pointer(loc, toks...)
}

// build parses the schema raw found at loc; base is the URL its $refs
// resolve against.
func (c *compiler) build(raw any, loc, base string) (*node, error) {
	n := &node{loc: loc, types: tAll, maxProps: -1, maxItems: -1, maxLen: -1}
	c.nodes[loc] = n // before the children: a cycle through $ref meets this node
	switch x := raw.(type) {
	case bool:
		n.boolean = &x
		return n, nil
	case map[string]any:
		return n, c.fill(n, x, base)
	}
	return nil, fmt.Errorf("schema at %s is neither an object nor a boolean", trimLoc(loc))
}

func (c *compiler) fill(n *node, m map[string]any, base string) error {
	if id, ok := m["$id"].(string); ok && id != "" {
		if b, err := url.Parse(base); err == nil {
			if r, err := b.Parse(id); err == nil {
				r.Fragment = ""
				base = r.String()
			}
		}
	}
	n.entity, _ = m["x-entity"].(string)
	n.mutates, _ = m["x-mutates-state"].(bool)
	if ref, ok := m["$ref"].(string); ok {
		b, err := url.Parse(base)
		if err != nil {
			return err
		}
		target, err := b.Parse(ref)
		if err != nil {
			return fmt.Errorf("$ref %q at %s: %w", ref, trimLoc(n.loc), err)
		}
		t, err := c.atLocked(target.String())
		if err != nil {
			return fmt.Errorf("$ref %q at %s: %w", ref, trimLoc(n.loc), err)
		}
		n.ref = t
		return nil
	}
	sub := func(key string, toks ...string) (*node, error) {
		var raw any = m[key]
		for _, t := range toks {
			switch x := raw.(type) {
			case map[string]any:
				raw = x[t]
			case []any:
				var i int
				fmt.Sscanf(t, "%d", &i)
				raw = x[i]
			}
		}
		return c.build(raw, childLoc(n.loc, append([]string{key}, toks...)...), base)
	}
	one := func(key string) (*node, error) {
		if _, ok := m[key]; !ok {
			return nil, nil
		}
		return sub(key)
	}
	list := func(key string) ([]*node, error) {
		arr, _ := m[key].([]any)
		out := make([]*node, 0, len(arr))
		for i := range arr {
			s, err := sub(key, fmt.Sprint(i))
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	var err error
	switch t := m["type"].(type) {
	case string:
		n.hasType, n.types = true, typeNames[t]
	case []any:
		n.hasType, n.types = true, 0
		for _, x := range t {
			if s, ok := x.(string); ok {
				n.types |= typeNames[s]
			}
		}
	}
	if e, ok := m["enum"].([]any); ok {
		n.hasEnum, n.enum = true, e
	}
	if v, ok := m["const"]; ok {
		n.hasEnum, n.enum = true, []any{v}
	}
	if n.allOf, err = list("allOf"); err != nil {
		return err
	}
	if n.anyOf, err = list("anyOf"); err != nil {
		return err
	}
	if n.oneOf, err = list("oneOf"); err != nil {
		return err
	}
	for _, kw := range []struct {
		key string
		dst **node
	}{{"not", &n.not}, {"if", &n.ifS}, {"then", &n.thenS}, {"else", &n.elsS}, {"additionalProperties", &n.addl},
		{"propertyNames", &n.propNames}, {"additionalItems", &n.addItems}, {"contains", &n.contains}} {
		if *kw.dst, err = one(kw.key); err != nil {
			return err
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		n.props = map[string]*node{}
		for k := range props {
			n.propKeys = append(n.propKeys, k)
		}
		sort.Strings(n.propKeys)
		for _, k := range n.propKeys {
			if n.props[k], err = sub("properties", k); err != nil {
				return err
			}
		}
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		keys := make([]string, 0, len(pp))
		for k := range pp {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s, err := sub("patternProperties", k)
			if err != nil {
				return err
			}
			p, err := compilePattern(k)
			if err != nil {
				return fmt.Errorf("patternProperties %q at %s: %w", k, trimLoc(n.loc), err)
			}
			n.patProps = append(n.patProps, patProp{p, s})
		}
	}
	if deps, ok := m["dependencies"].(map[string]any); ok {
		n.depKeys, n.depSchemas = map[string][]string{}, map[string]*node{}
		for k, d := range deps {
			n.depOrder = append(n.depOrder, k)
			if arr, ok := d.([]any); ok {
				n.depKeys[k] = strs(arr)
			} else if n.depSchemas[k], err = sub("dependencies", k); err != nil {
				return err
			}
		}
		sort.Strings(n.depOrder)
	}
	if r, ok := m["required"].([]any); ok {
		n.required = strs(r)
	}
	switch it := m["items"].(type) {
	case map[string]any, bool:
		if n.items, err = sub("items"); err != nil {
			return err
		}
	case []any:
		for i := range it {
			s, err := sub("items", fmt.Sprint(i))
			if err != nil {
				return err
			}
			n.tuple = append(n.tuple, s)
		}
	}
	n.unique, _ = m["uniqueItems"].(bool)
	n.minProps, n.maxProps = intKW(m, "minProperties", 0), intKW(m, "maxProperties", -1)
	n.minItems, n.maxItems = intKW(m, "minItems", 0), intKW(m, "maxItems", -1)
	n.minLen, n.maxLen = intKW(m, "minLength", 0), intKW(m, "maxLength", -1)
	if p, ok := m["pattern"].(string); ok {
		if n.pattern, err = compilePattern(p); err != nil {
			return fmt.Errorf("pattern %q at %s: %w", p, trimLoc(n.loc), err)
		}
	}
	n.format, _ = m["format"].(string)
	n.min, n.max = ratKW(m, "minimum"), ratKW(m, "maximum")
	if r := ratKW(m, "exclusiveMinimum"); r != nil && (n.min == nil || r.Cmp(n.min) >= 0) {
		n.min, n.exMin = r, true
	}
	if r := ratKW(m, "exclusiveMaximum"); r != nil && (n.max == nil || r.Cmp(n.max) <= 0) {
		n.max, n.exMax = r, true
	}
	if r := ratKW(m, "multipleOf"); r != nil && r.Sign() > 0 {
		n.multiple = r
	}
	n.hasObjKW = n.props != nil || n.required != nil || n.addl != nil || n.patProps != nil || n.propNames != nil ||
		n.depOrder != nil || m["minProperties"] != nil || m["maxProperties"] != nil
	n.hasArrKW = n.items != nil || n.tuple != nil || n.contains != nil || m["minItems"] != nil || m["maxItems"] != nil || n.unique
	n.hasStrKW = n.pattern != nil || n.format != "" || m["minLength"] != nil || m["maxLength"] != nil
	n.hasNumKW = n.min != nil || n.max != nil || n.multiple != nil
	return nil
}

func strs(arr []any) []string {
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func intKW(m map[string]any, key string, def int) int {
	if r := ratKW(m, key); r != nil && r.IsInt() && r.Num().IsInt64() {
		return int(r.Num().Int64())
	}
	return def
}

func ratKW(m map[string]any, key string) *big.Rat {
	num, ok := m[key].(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(num))
	if !ok {
		return nil
	}
	return r
}

// resolve follows $ref to the node whose keywords apply.
func (n *node) resolve() *node {
	for i := 0; n.ref != nil && i < 64; i++ {
		n = n.ref
	}
	return n
}

// valid reports whether v is valid against the whole schema at n's
// location, by the project's validator (probes/schemas).
func (c *compiler) valid(n *node, v any) bool {
	n.checkOnce.Do(func() { n.check, n.checkErr = c.set.Checker(n.loc) })
	if n.checkErr != nil {
		return false
	}
	return n.check(v)
}

// trimLoc shortens a location for messages: the path from /schemas/ on.
func trimLoc(loc string) string {
	if i := strings.Index(loc, "/schemas/"); i >= 0 {
		return loc[i:]
	}
	return loc
}
