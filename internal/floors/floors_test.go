package floors

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/adcp-conform/adcp-conform/"

// allowed lists, for each package held here, the packages of the module
// its non-test files may import.
var allowed = map[string][]string{
	"probes/rawjson": nil,
	"probes/release": {"probes/fetch"},
	"probes/wire":    {"probes/rawjson"},
	"probes/extract": {"probes/rawjson"},
}

func TestTheLowerFloorsImportOnlyBelowThem(t *testing.T) {
	for pkg, ok := range allowed {
		dir := filepath.Join("..", "..", filepath.FromSlash(pkg))
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", pkg, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if inner, ours := strings.CutPrefix(p, module); ours && !slices.Contains(ok, inner) {
					t.Errorf("%s imports %s; it may import %v of the harness", filepath.ToSlash(f), inner, ok)
				}
			}
		}
	}
}
