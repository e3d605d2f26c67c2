package check_test

import (
	"fmt"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/check"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Grade one validation against what a step observed: the verdict is a
// function of the validation and the facts, with no I/O.
func ExampleGrade() {
	path := "media_buy_id"
	v := spec.Validation{Check: "field_present", Path: &path, Description: "the buy has an id"}
	obs := &spec.Observation{Task: "create_media_buy", Transport: "mcp", Payload: map[string]any{"status": "submitted"}}
	res := check.Grade(v, check.Facts{Obs: obs}, "3.1.19")
	fmt.Println(res.Check, res.Passed, res.Message)
	// Output:
	// field_present false media_buy_id is missing
}
