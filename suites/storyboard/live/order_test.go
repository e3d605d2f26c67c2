package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// recorder answers every call and keeps the storyboards in the order
// their first call came.
type recorder struct {
	mu    sync.Mutex
	first []string
}

func (r *recorder) Call(_ context.Context, req storyboard.Request) *spec.Observation {
	id := strings.Split(strings.TrimPrefix(req.ProbeID, evidence.StoryboardPrefix), "/")[0]
	r.mu.Lock()
	if !slices.Contains(r.first, id) {
		r.first = append(r.first, id)
	}
	r.mu.Unlock()
	return &spec.Observation{Task: req.Task, Transport: "mcp", Request: req.Args, HTTPStatus: 200, Payload: map[string]any{"success": true}}
}

func (r *recorder) Get(context.Context, string, string) *spec.Observation {
	return &spec.Observation{Transport: "http", Failure: "no GET"}
}

// The storyboard shaping the account's next call runs before any other,
// then the one that waits on purpose (a rate-limit trip), then the rest in
// the release's order; the results keep the release's order.
func TestStoryboardsThatWaitStartFirst(t *testing.T) {
	dir := t.TempDir()
	step := func(task, extra string) string {
		return "  - id: p\n    title: p\n    steps:\n      - id: s\n        title: s\n        task: get_products\n        sample_request: {brief: b}\n" +
			"      - id: t\n        title: t\n        task: " + task + "\n" + extra
	}
	for name, phases := range map[string]string{
		"a_plain":  step("get_products", "        sample_request: {brief: b}\n"),
		"b_shaper": step("comply_test_controller", "        sample_request: {scenario: force_get_products_arm, params: {arm: submitted}}\n"),
		"c_plain":  step("get_products", "        sample_request: {brief: b}\n"),
		"d_waiter": step("expect_rate_limit_not_replayed", "        rate_limit_trip: {trip_target_task: get_products, max_attempts: 50}\n"),
	} {
		body := "id: " + name + "\nversion: \"1\"\ntitle: t\ncategory: universal\nnarrative: t\nphases:\n" + phases
		if err := os.MkdirAll(filepath.Join(dir, "universal"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "universal", name+".yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	store := evidence.NewStore(evidence.Target{})
	tools, _ := json.Marshal(map[string]any{"tools": []any{map[string]any{"name": "get_products"}, map[string]any{"name": "comply_test_controller"}}})
	store.Add(evidence.Call{ProbeID: "tools", Transport: evidence.MCP, Kind: evidence.KindToolsList, Result: tools})
	rec := &recorder{}
	res := Run(context.Background(), Config{Release: rel, Store: store, Transport: evidence.MCP, Concurrency: 1,
		Env: storyboard.Env{AllowMutations: true, Sandbox: true}, Dispatcher: rec})
	if want := []string{"b_shaper", "d_waiter", "a_plain", "c_plain"}; !slices.Equal(rec.first, want) {
		t.Errorf("started in the order %v, want %v", rec.first, want)
	}
	var ids []string
	for _, r := range res {
		ids = append(ids, r.Storyboard.ID)
		if r.Skip != nil || r.NotSelected != nil {
			t.Errorf("%s did not run: %+v %+v", r.Storyboard.ID, r.Skip, r.NotSelected)
		}
	}
	if !slices.Equal(ids, []string{"a_plain", "b_shaper", "c_plain", "d_waiter"}) {
		t.Errorf("results in the order %v, want the release's", ids)
	}
}
