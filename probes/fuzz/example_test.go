package fuzz_test

import (
	"fmt"
	"testing/fstest"

	"github.com/adcp-conform/adcp-conform/probes/fuzz"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
)

func Example() {
	// A release of one task; a real one is schemas.Load("…/schemas/3.1.19").
	set, _ := schemas.LoadFS(fstest.MapFS{
		"manifest.json": {Data: []byte(`{"tools":{"get_widgets":{"request_schema":"w/get-widgets-request.json"}}}`)},
		"w/get-widgets-request.json": {Data: []byte(`{
			"$id": "/schemas/1.0.0/w/get-widgets-request.json",
			"type": "object", "required": ["list_id", "count"], "additionalProperties": false,
			"properties": {
				"list_id": {"type": "string", "x-entity": "widget_list"},
				"count": {"type": "integer", "minimum": 1, "maximum": 3},
				"color": {"enum": ["red", "green"]}
			}}`)},
	}, "1.0.0")
	task, _ := fuzz.New(set).Task("get_widgets")
	fmt.Println(task.Tier, task.Refs)

	stream := task.Stream(fuzz.Options{Seed: 1, Pools: map[string][]string{"widget_list": {"wl_1"}}})
	for i := 0; i < 3; i++ {
		b, _ := stream.Next()
		fmt.Println(string(b))
	}

	// the smallest value that still has a color
	v, _ := task.Generate(fuzz.Options{Seed: 1}, 1)
	hasColor := func(v any) bool { _, ok := v.(map[string]any)["color"]; return ok }
	small, _, _ := task.Shrink(v, hasColor, fuzz.ShrinkOptions{})
	b, _ := fuzz.Marshal(small)
	fmt.Println(string(b))
	// Output:
	// referential [{/list_id widget_list true}]
	// {"count":2,"list_id":"wl_1"}
	// {"color":"green","count":3,"list_id":"wl_1"}
	// {"count":3,"list_id":"wl_1"}
	// {"color":"red","count":1,"list_id":""}
}
