// Package schema holds the JSON Schema of results.json (draft 2020-12) and
// validates reports against it. The schema ships in the repository and in
// the binary, so a registry can check a submitted report with the same
// artifact the harness was built with.
//
//	b, _ := os.ReadFile("adcp-conform-report/results.json")
//	if err := schema.Validate(b); err != nil { ... }
package schema

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// JSON is the schema of results.json, as shipped in results.schema.json.
//
//go:embed results.schema.json
var JSON []byte

// ID is the schema's $id.
const ID = "https://github.com/adcp-conform/adcp-conform/report/schema/results.schema.json"

var (
	once     sync.Once
	resolved *jsonschema.Resolved
	loadErr  error
)

func load() (*jsonschema.Resolved, error) {
	once.Do(func() {
		var s jsonschema.Schema
		if loadErr = json.Unmarshal(JSON, &s); loadErr != nil {
			return
		}
		resolved, loadErr = s.Resolve(nil)
	})
	return resolved, loadErr
}

// Validate checks a results.json document against the schema. It returns
// an error naming the first violation, or the JSON syntax error.
func Validate(doc []byte) error {
	rs, err := load()
	if err != nil {
		return fmt.Errorf("results schema: %w", err)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Errorf("results.json does not match %s: %w", ID, err)
	}
	return nil
}
