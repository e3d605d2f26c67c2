package fuzz

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/schemas"
)

// TestTheSameSeedGivesTheSameBytes: two fuzzers over freshly loaded
// schemas, the same seed, the same values byte for byte; another seed,
// other values.
func TestTheSameSeedGivesTheSameBytes(t *testing.T) {
	set1, dir := loadRelease(t, "3.1.19")
	set2, err := schemas.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"get_products", "create_media_buy", "sync_creatives", "comply_test_controller"} {
		a, err := New(set1).Task(task)
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(set2).Task(task)
		if err != nil {
			t.Fatal(err)
		}
		var sa, sb, other []byte
		s1, s2, s3 := a.Stream(Options{Seed: 42}), b.Stream(Options{Seed: 42}), a.Stream(Options{Seed: 43})
		for i := 0; i < 25; i++ {
			x, err1 := s1.Next()
			y, err2 := s2.Next()
			z, err3 := s3.Next()
			if err := errors.Join(err1, err2, err3); err != nil {
				t.Fatal(err)
			}
			sa, sb, other = append(append(sa, x...), '\n'), append(append(sb, y...), '\n'), append(append(other, z...), '\n')
		}
		if !bytes.Equal(sa, sb) {
			t.Errorf("%s: seed 42 gave two different streams", task)
		}
		if bytes.Equal(sa, other) {
			t.Errorf("%s: seeds 42 and 43 gave the same stream", task)
		}
		// a value is reproduced from its seed and index alone
		v, err := a.Generate(Options{Seed: 42}, 7)
		if err != nil {
			t.Fatal(err)
		}
		if line, _ := Marshal(v); string(line) != strings.Split(string(sa), "\n")[7] {
			t.Errorf("%s: Generate(seed 42, 7) differs from the stream's 8th value", task)
		}
	}
}

// TestIdFieldsDrawFromPools: with pools, the request's id fields carry the
// pooled ids — by x-entity and by name — wherever the id fits the field's
// schema; without, random strings.
func TestIdFieldsDrawFromPools(t *testing.T) {
	set, _ := loadRelease(t, "3.1.19")
	f := New(set)
	pools := map[string][]string{"media_buy": {"mb_1001", "mb_1002"}, "property_list": {"pl_9"}, "package": {"pkg_7"}}
	for _, c := range []struct{ task, field, want string }{
		{"update_media_buy", `"media_buy_id":"`, "mb_100"},
		{"get_property_list", `"list_id":"`, "pl_9"},
		{"get_media_buy_delivery", `"media_buy_ids":["`, "mb_100"},
	} {
		task, err := f.Task(c.task)
		if err != nil {
			t.Fatal(err)
		}
		s := task.Stream(Options{Seed: 5, Pools: pools})
		hits, seen := 0, 0
		for i := 0; i < 30; i++ {
			b, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if vs, err := set.Validate(task.Schema, b); err != nil || len(vs) > 0 {
				t.Fatalf("%s: invalid with pools: %s", c.task, b)
			}
			if i := bytes.Index(b, []byte(c.field)); i >= 0 {
				seen++
				if bytes.HasPrefix(b[i+len(c.field):], []byte(c.want)) {
					hits++
				}
			}
		}
		if seen == 0 || hits != seen {
			t.Errorf("%s: %s carried a pooled id %d times of %d", c.task, c.field, hits, seen)
		}
		b, _ := task.Stream(Options{Seed: 5}).Next()
		if bytes.Contains(b, []byte(c.want)) {
			t.Errorf("%s: a pooled id without pools: %s", c.task, b)
		}
	}
}

// TestTiersFollowXMutatesStateAndRequiredIds: mutating per x-mutates-state
// (or the manifest), referential where the request requires an existing
// resource's id, else a stateless read; and the id fields are listed.
func TestTiersFollowXMutatesStateAndRequiredIds(t *testing.T) {
	for _, release := range releases {
		set, _ := loadRelease(t, release)
		f := New(set)
		for task, want := range map[string]Tier{
			"list_creative_formats": StatelessRead, "get_adcp_capabilities": StatelessRead,
			"get_media_buys": StatelessRead, "get_property_list": Referential, "get_content_standards": Referential,
			"get_creative_delivery": Referential, "create_media_buy": Mutating, "update_media_buy": Mutating,
			"sync_creatives": Mutating, "si_send_message": Mutating,
		} {
			tk, err := f.Task(task)
			if err != nil {
				t.Fatal(err)
			}
			if tk.Tier != want {
				t.Errorf("%s %s: tier %v, want %v", release, task, tk.Tier, want)
			}
		}
		tk, _ := f.Task("update_media_buy")
		found := false
		for _, r := range tk.Refs {
			found = found || (r.Path == "/media_buy_id" && r.Entity == "media_buy" && r.Required)
		}
		if !found {
			t.Errorf("%s update_media_buy: no required /media_buy_id ref in %+v", release, tk.Refs)
		}
	}
	// get_products reads in 3.1.19; the 3.2 beta's schema marks it
	// x-mutates-state, and the tier follows the schema
	for release, want := range map[string]Tier{"3.1.19": StatelessRead, "3.2.0-beta.5": Mutating} {
		set, _ := loadRelease(t, release)
		if tk, _ := New(set).Task("get_products"); tk == nil || tk.Tier != want {
			t.Errorf("%s get_products: %+v, want %v", release, tk, want)
		}
	}
	set, _ := loadRelease(t, "3.1.19")
	// the manifest marks verify_brand_claim mutating; its schema has no x-mutates-state
	if tk, _ := New(set).Task("verify_brand_claim"); tk == nil || tk.Tier != Mutating {
		t.Errorf("verify_brand_claim: %+v", tk)
	}
	if _, err := New(set).Task("no_such_task"); !errors.Is(err, schemas.ErrNoSchema) {
		t.Errorf("an unknown task: %v", err)
	}
}

// TestTheSizeBudgetBoundsValues: a tight budget yields smaller values,
// still valid.
func TestTheSizeBudgetBoundsValues(t *testing.T) {
	set, _ := loadRelease(t, "3.1.19")
	task, err := New(set).Task("create_media_buy")
	if err != nil {
		t.Fatal(err)
	}
	size := func(o Options) (total int) {
		s := task.Stream(o)
		for i := 0; i < 30; i++ {
			b, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if vs, _ := set.Validate(task.Schema, b); len(vs) > 0 {
				t.Fatalf("invalid under %+v: %s", o, b)
			}
			total += len(b)
		}
		return total
	}
	tight, loose := size(Options{Seed: 3, MaxDepth: 1, MaxBytes: 256}), size(Options{Seed: 3, MaxDepth: 8, MaxBytes: 1 << 16})
	if tight*2 > loose {
		t.Errorf("30 values take %d bytes under a tight budget, %d under a loose one", tight, loose)
	}
	t.Logf("30 create_media_buy values: %d bytes tight, %d loose", tight, loose)
}

// FuzzGenerate: for any seed, every task's value validates (or the
// generator says where it gave up, with a typed error).
func FuzzGenerate(f *testing.F) {
	set, dir := loadRelease(f, "3.1.19")
	fz := New(set)
	rels := requestSchemas(f, dir)
	for _, s := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, seed uint64, which uint8) {
		rel := rels[int(which)%len(rels)]
		task, err := fz.Schema(rel)
		if err != nil {
			t.Fatal(err)
		}
		v, err := task.Generate(Options{Seed: seed}, 0)
		if err != nil {
			var ge *Error
			if !errors.As(err, &ge) {
				t.Fatalf("%s: untyped error %v", rel, err)
			}
			return
		}
		b, _ := Marshal(v)
		if vs, err := set.Validate(rel, b); err != nil || len(vs) > 0 {
			t.Fatalf("%s seed %d: invalid value %s: %+v %v", rel, seed, b, vs, err)
		}
	})
}

// BenchmarkGenerate measures values per second for a few tasks of
// 3.1.19 (schemas compiled before the clock starts).
func BenchmarkGenerate(b *testing.B) {
	set, _ := loadRelease(b, "3.1.19")
	f := New(set)
	for _, name := range []string{"get_products", "create_media_buy", "sync_creatives"} {
		task, err := f.Task(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < 20; i++ { // warm the validator's compiled schemas
				_, _ = task.Generate(Options{Seed: 99}, uint64(i))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := task.Generate(Options{Seed: 1}, uint64(i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "values/s")
		})
	}
}
