// Package schema holds the JSON Schema of results.json (draft 2020-12) and
// validates reports against it. The schema ships in the repository and in
// the binary, so a registry can check a submitted report with the same
// artifact the harness was built with.
//
//	b, _ := os.ReadFile("adcp-conform-report/results.json")
//	if err := schema.Validate(b); err != nil { ... }
package schema

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// JSON is the schema of results.json, as shipped in results.schema.json.
//
//go:embed results.schema.json
var JSON []byte

// ID is the schema's $id.
const ID = "https://github.com/adcp-conform/adcp-conform/report/schema/results.schema.json"

var (
	once     sync.Once
	compiled *jsonschema.Schema
	loadErr  error
)

// load compiles the schema once, with the validator that reads the
// release's schemas (probes/schemas): one JSON Schema library in the
// harness.
func load() (*jsonschema.Schema, error) {
	once.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSON))
		if err != nil {
			loadErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if loadErr = c.AddResource(ID, doc); loadErr != nil {
			return
		}
		compiled, loadErr = c.Compile(ID)
	})
	return compiled, loadErr
}

// Validate checks a results.json document against the schema. It returns
// an error naming the first violation, or the JSON syntax error.
func Validate(doc []byte) error {
	s, err := load()
	if err != nil {
		return fmt.Errorf("results schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("results.json does not match %s: %w", ID, err)
	}
	return nil
}
