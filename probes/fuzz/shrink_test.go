package fuzz

import (
	"encoding/json"
	"strings"
	"testing"
)

const shrinkSchema = `{"type":"object","required":["id","items"],"properties":{
	"id":{"type":"string","minLength":2,"pattern":"^[a-z0-9]+$"},
	"note":{"type":"string"},
	"mode":{"oneOf":[{"type":"string","enum":["a-long-mode-name"]},{"type":"object","required":["deep"],"properties":{"deep":{"type":"array","items":{"type":"integer"}}}},{"type":"integer","minimum":5}]},
	"items":{"type":"array","minItems":1,"items":{"type":"object","required":["n"],"properties":{"n":{"type":"number","minimum":-100,"maximum":100},"tag":{"type":"string"}}}}}}`

func decode(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestShrinkReducesToTheMinimalValueThatStillFails: a predicate failing on
// any item with n > 10 shrinks a large value to one item with the
// smallest such n, nothing optional, id at its minimum length.
func TestShrinkReducesToTheMinimalValueThatStillFails(t *testing.T) {
	task, _ := inline(t, shrinkSchema)
	big := decode(t, `{"id":"abcdef123","note":"hello world","mode":{"deep":[1,2,3]},
		"items":[{"n":3,"tag":"x"},{"n":57.25,"tag":"yy"},{"n":-4},{"n":99}]}`)
	fails := func(v any) bool {
		for _, it := range arr(obj(v)["items"]) {
			if num(obj(it)["n"]) > 10 {
				return true
			}
		}
		return false
	}
	got, stats, err := task.Shrink(big, fails, ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Marshal(got)
	if !task.Valid(got) || !fails(got) {
		t.Fatalf("the shrunk value %s is invalid or passes", b)
	}
	items := arr(obj(got)["items"])
	if len(obj(got)) != 2 || len(items) != 1 || len(obj(items[0])) != 1 || len(str(obj(got)["id"])) != 2 {
		t.Errorf("not minimal: %s (%+v)", b, stats)
	}
	if n := num(obj(items[0])["n"]); n <= 10 || n > 20 {
		t.Errorf("n shrank to %v, want just above 10: %s", n, b)
	}
	if stats.Calls > 400 {
		t.Errorf("%d predicate calls, past the default bound", stats.Calls)
	}
	t.Logf("shrunk to %s in %d calls, %d steps", b, stats.Calls, stats.Steps)
}

// TestShrinkPicksASimplerOneOfBranch: a failure that needs only "mode"
// present ends at its smallest branch.
func TestShrinkPicksASimplerOneOfBranch(t *testing.T) {
	task, _ := inline(t, shrinkSchema)
	v := decode(t, `{"id":"zz","mode":{"deep":[1,2,3,4,5]},"items":[{"n":1}]}`)
	got, _, err := task.Shrink(v, func(v any) bool { _, ok := obj(v)["mode"]; return ok }, ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := obj(got)["mode"]; m != json.Number("5") {
		b, _ := Marshal(got)
		t.Errorf("mode shrank to %v, want the integer branch's 5: %s", m, b)
	}
}

func TestShrinkIsDeterministicAndBoundedInCalls(t *testing.T) {
	task, _ := inline(t, shrinkSchema)
	v := decode(t, `{"id":"abcdef123","note":"hello","items":[{"n":50},{"n":60},{"n":70}]}`)
	calls := 0
	fails := func(v any) bool { calls++; return len(arr(obj(v)["items"])) >= 2 }
	a, sa, _ := task.Shrink(v, fails, ShrinkOptions{MaxCalls: 5})
	if sa.Calls > 5 || calls != sa.Calls {
		t.Errorf("%d calls counted, %d made; bound 5", sa.Calls, calls)
	}
	x, _, _ := task.Shrink(v, fails, ShrinkOptions{})
	y, _, _ := task.Shrink(v, fails, ShrinkOptions{})
	if marshalString(x) != marshalString(y) {
		t.Errorf("two shrinks differ: %s vs %s", marshalString(x), marshalString(y))
	}
	if !task.Valid(a) || !fails(a) {
		t.Errorf("a budget-bounded shrink returned %s", marshalString(a))
	}
}

func TestShrinkRefusesAValidPassingOrInvalidValue(t *testing.T) {
	task, _ := inline(t, shrinkSchema)
	if _, _, err := task.Shrink(decode(t, `{"id":"x"}`), func(any) bool { return true }, ShrinkOptions{}); err == nil {
		t.Error("an invalid value was shrunk")
	}
	if _, _, err := task.Shrink(decode(t, `{"id":"xy","items":[{"n":1}]}`), func(any) bool { return false }, ShrinkOptions{}); err == nil {
		t.Error("a value the predicate passes was shrunk")
	}
}
