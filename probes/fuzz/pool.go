package fuzz

import (
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// Id fields are recognised as the schemas mark them: a string (or an
// array of strings) annotated x-entity names the kind of resource it
// refers to ("media_buy_id": x-entity "media_buy"). Where a field lacks
// the annotation, its name does: a property name the release annotates
// elsewhere ("standards_id" is x-entity "content_standards" in other
// schemas) takes that entity, and failing that <entity>_id and
// <entity>_ids draw from the pool of <entity> when the caller supplied one.

// entityNames maps each property name the release annotates with x-entity
// (on the property, its items, or the schema it references) to the
// entities it names, sorted; read once per Fuzzer from every schema file.
func (f *Fuzzer) entityNames() map[string][]string {
	f.namesOnce.Do(func() {
		seen := map[string]map[string]bool{}
		entityOf := func(base string, v any) string {
			m, _ := v.(map[string]any)
			for depth := 0; m != nil && depth < 4; depth++ {
				if e, ok := m["x-entity"].(string); ok {
					return e
				}
				if it, ok := m["items"].(map[string]any); ok {
					m = it
					continue
				}
				ref, _ := m["$ref"].(string)
				if ref == "" || strings.HasPrefix(ref, "#") {
					return ""
				}
				b, err := url.Parse(base)
				if err != nil {
					return ""
				}
				u, err := b.Parse(ref)
				if err != nil {
					return ""
				}
				doc, err := f.set.Document(u.String())
				if err != nil {
					return ""
				}
				m, _ = doc.(map[string]any)
				if u.Fragment != "" {
					sub, _ := pointerGet(doc, u.Fragment)
					m, _ = sub.(map[string]any)
				}
			}
			return ""
		}
		var walk func(base string, v any)
		walk = func(base string, v any) {
			switch x := v.(type) {
			case map[string]any:
				if props, ok := x["properties"].(map[string]any); ok {
					for k, p := range props {
						if e := entityOf(base, p); e != "" {
							if seen[k] == nil {
								seen[k] = map[string]bool{}
							}
							seen[k][e] = true
						}
					}
				}
				for k, c := range x {
					if k != "examples" && k != "enum" && k != "const" && k != "default" {
						walk(base, c)
					}
				}
			case []any:
				for _, c := range x {
					walk(base, c)
				}
			}
		}
		for _, rel := range f.set.Files() {
			loc := f.set.Location(rel)
			if doc, err := f.set.Document(loc); err == nil {
				walk(loc, doc)
			}
		}
		f.names = map[string][]string{}
		for k, es := range seen {
			f.names[k] = sortedKeys(es)
		}
	})
	return f.names
}

// pool returns the ids of the entity, by annotation or by the property
// name's convention.
func (st *state) pool(entity, hint string) []string {
	if len(st.opts.Pools) == 0 {
		return nil
	}
	if entity != "" {
		if p := st.opts.Pools[entity]; len(p) > 0 {
			return p
		}
	}
	for _, e := range st.names[hint] {
		if p := st.opts.Pools[e]; len(p) > 0 {
			return p
		}
	}
	for _, suffix := range []string{"_ids", "_id"} {
		if e, ok := strings.CutSuffix(hint, suffix); ok && e != "" {
			return st.opts.Pools[e]
		}
	}
	return nil
}

// Ref is one id field of a request that names an existing resource.
type Ref struct {
	// Path is where the field sits, as a JSON pointer with "*" for any
	// array index ("/packages/*/creative_ids/*").
	Path string
	// Entity is the kind of resource (its x-entity; for a name the
	// release annotates with several, them all, "|"-separated).
	Entity string
	// Required: the request always carries it (the field and every
	// object on its way are required).
	Required bool
}

// refs lists the request's id fields — annotated with x-entity, or named
// as the release annotates that name elsewhere — reading properties, items
// and every combinator branch, to a bounded depth.
func (t *Task) refs() []Ref {
	names := t.f.entityNames()
	found := map[string]Ref{}
	var walk func(n *node, path string, required bool, depth int, seen map[*node]bool)
	walk = func(n *node, path string, required bool, depth int, seen map[*node]bool) {
		if depth > 10 || n == nil {
			return
		}
		n = n.resolve()
		if seen[n] {
			return
		}
		seen[n] = true
		defer delete(seen, n)
		entity := n.entity
		if name := path[strings.LastIndexByte(path, '/')+1:]; entity == "" && name != "*" {
			entity = strings.Join(names[name], "|")
		}
		if entity != "" && path != "" && staticTypes(n, 0)&(tString|tArray) != 0 {
			r := found[path]
			if r.Path == "" || required {
				found[path] = Ref{Path: path, Entity: entity, Required: required || r.Required}
			}
			if n.items != nil {
				return // the items are the same ids
			}
		}
		for _, k := range n.propKeys {
			walk(n.props[k], path+"/"+rawjson.EscapeToken(k), required && contains(n.required, k), depth+1, seen)
		}
		if n.items != nil {
			walk(n.items, path+"/*", required && n.minItems > 0, depth+1, seen)
		}
		for _, b := range n.allOf {
			walk(b, path, required, depth+1, seen)
		}
		for _, alts := range [][]*node{n.anyOf, n.oneOf} {
			for _, b := range alts {
				walk(b, path, required && len(alts) == 1, depth+1, seen)
			}
		}
		for _, b := range []*node{n.thenS, n.elsS} {
			walk(b, path, false, depth+1, seen)
		}
	}
	walk(t.root, "", true, 0, map[*node]bool{})
	out := make([]Ref, 0, len(found))
	for _, r := range found {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// tier: mutating where the schema or the manifest says so; referential
// where the request requires an id of an existing resource at its top
// level (an id every anyOf/oneOf branch requires counts); else a
// stateless read.
func (t *Task) tier() Tier {
	if t.Mutating {
		return Mutating
	}
	root := t.root.resolve()
	// the property itself names a resource, or its items do (an id nested
	// in a required object is not itself required)
	isRef := func(k string) bool {
		for _, r := range t.Refs {
			if r.Path == "/"+rawjson.EscapeToken(k) || r.Path == "/"+rawjson.EscapeToken(k)+"/*" {
				return true
			}
		}
		return false
	}
	nodes := append([]*node{root}, root.allOf...)
	for _, n := range nodes {
		n = n.resolve()
		for _, k := range n.required {
			if isRef(k) {
				return Referential
			}
		}
		for _, alts := range [][]*node{n.anyOf, n.oneOf} {
			if len(alts) == 0 {
				continue
			}
			every := true
			for _, b := range alts {
				hit := false
				for _, k := range b.resolve().required {
					hit = hit || isRef(k)
				}
				every = every && hit
			}
			if every {
				return Referential
			}
		}
	}
	return StatelessRead
}

// Entities returns the entities the release annotates a property of this
// name with (x-entity, on the property, its items or the schema it
// references), sorted; nil for a name it never annotates. A caller
// harvesting ids from replies files them under these pools.
func (f *Fuzzer) Entities(property string) []string {
	return slices.Clone(f.entityNames()[property])
}
