package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden files")

// TestDescribeGolden runs Describe on every testdata/describe input. A file
// named <transport>-<bare|jsonrpc>-<name>.json gives the flags; its output
// (the JSON Describe's value prints as, or "input error: <message>") is
// compared with <name>.golden beside it. Regenerate with -update.
func TestDescribeGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "describe", "*.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			parts := strings.SplitN(name, "-", 3)
			tr, err := ParseTransport(parts[0])
			if err != nil {
				t.Fatal(err)
			}
			input, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			v, err := Describe(tr, parts[1] == "jsonrpc", input)
			var ie *InputError
			switch {
			case errors.As(err, &ie):
				got.WriteString("input error: " + ie.Error() + "\n")
			case err != nil:
				t.Fatalf("Describe: %v", err)
			default:
				enc := json.NewEncoder(&got)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				if err := enc.Encode(v); err != nil {
					t.Fatal(err)
				}
			}
			golden := strings.TrimSuffix(in, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got.String() != string(want) {
				t.Errorf("output differs from %s\ngot:\n%s\nwant:\n%s", golden, got.String(), want)
			}
		})
	}
}
