package suites

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
)

// TestTaskNamesFollowTheManifest holds the transcription to the release's
// own lists: manifest.json's tools, and the task names required-tasks.mdx
// adds.
func TestTaskNamesFollowTheManifest(t *testing.T) {
	b, err := os.ReadFile(shared.File(t, "spec/schemas/3.1.19/manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Tools map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for name := range m.Tools {
		tools = append(tools, name)
	}
	slices.Sort(tools)
	got := slices.Sorted(slices.Values(release31Tasks))
	if !slices.Equal(got, tools) {
		t.Errorf("release31Tasks differ from the manifest's tools:\n got  %v\n want %v", got, tools)
	}
	page, err := os.ReadFile(shared.File(t, "spec/docs/protocol/required-tasks.mdx"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range requiredTaskPageTasks {
		if !strings.Contains(string(page), "`"+name+"`") {
			t.Errorf("%s is not named by required-tasks.mdx", name)
		}
	}
	for _, name := range slices.Concat(requiredSalesTools, accountTools) {
		if !isAdcpTask(name) || !strings.Contains(string(page), "`"+name+"`") {
			t.Errorf("required sales tool %s is not a task name of the page", name)
		}
	}
}

// TestTaskNamesOfTheRun: the loaded schema set's manifest adds its tasks.
func TestTaskNamesOfTheRun(t *testing.T) {
	dir := t.TempDir()
	rel := filepath.Join(dir, "9.9.0")
	if err := os.MkdirAll(filepath.Join(rel, "core"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(rel, "core", "error.json"), []byte(`{"type":"object"}`), 0o644)
	_ = os.WriteFile(filepath.Join(rel, "manifest.json"), []byte(`{"tools":{"get_widgets":{"response_schema":"x.json"}}}`), 0o644)
	set, err := schemas.Load(rel)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"get_widgets": true, "get_products": true, "validate_property_delivery": true, "getProducts": false} {
		if got := isTaskOf(set, name); got != want {
			t.Errorf("isTaskOf(%s) = %v, want %v", name, got, want)
		}
	}
	if isTaskOf(nil, "get_widgets") {
		t.Error("without a schema set, get_widgets is no task")
	}
}
