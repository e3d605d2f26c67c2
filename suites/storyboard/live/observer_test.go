package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/observer"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// answer is a Dispatcher answering build_creative with one payload.
type answer struct{ payload map[string]any }

func (a answer) Call(_ context.Context, req storyboard.Request) *spec.Observation {
	return &spec.Observation{Task: req.Task, Transport: "mcp", Request: req.Args, HTTPStatus: 200, Payload: spec.Normalize(a.payload)}
}

func (a answer) Get(context.Context, string, string) *spec.Observation {
	return &spec.Observation{Transport: "http", Failure: "no GET"}
}

// Run loads the release's substitution fixture for the observer steps:
// a binding by vector name grades against it.
func TestRunLoadsTheSubstitutionVectors(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(observer.MacroVectorFile, `{"vectors":[{"name":"amp","macro":"{ID}","value":"a&b","template":"https://t.example/?i={ID}","expected":"https://t.example/?i=a%26b"}]}`)
	write("universal/observer.yaml", `
id: observer
version: "1.0.0"
title: t
category: universal
narrative: t
phases:
  - id: p
    title: p
    steps:
      - id: build
        title: build
        task: build_creative
        sample_request: {message: m}
      - id: expect
        title: expect
        task: expect_substitution_safe
        requires_contract: substitution_observer_runner
        source: html_inline
        source_path: /preview_html
        macro_template: "https://track.example/imp?sku={SKU}"
        catalog_bindings:
          - {macro: "{SKU}", catalog_item_id: i, vector_name: amp}
`)
	rel, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	store := evidence.NewStore(evidence.Target{})
	tools, _ := json.Marshal(map[string]any{"tools": []any{map[string]any{"name": "build_creative"}}})
	store.Add(evidence.Call{ProbeID: "tools", Transport: evidence.MCP, Kind: evidence.KindToolsList, Result: tools})
	for _, c := range []struct {
		html string
		pass bool
	}{
		{`<img src="https://track.example/imp?sku=a%26b">`, true},
		{`<img src="https://track.example/imp?sku=a&amp;b">`, false},
	} {
		res := Run(context.Background(), Config{Release: rel, Store: store, Transport: evidence.MCP, Env: storyboard.Env{AllowMutations: true},
			Dispatcher: answer{map[string]any{"preview_html": c.html}}})
		if len(res) != 1 || len(res[0].Steps) != 2 {
			t.Fatalf("results %+v %+v", res, res[0].NotSelected)
		}
		s := res[0].Steps[1]
		if s.Skip != nil || s.Passed != c.pass {
			t.Errorf("%s: skip %+v, passed %v, want %v: %+v", c.html, s.Skip, s.Passed, c.pass, s.Validations)
		}
	}
}
