package fetch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The ways of reaching the network around the Guard: an http.Client,
// http.Transport, dialer or resolver of one's own (made, by a literal,
// new or a zero-value variable), Go's default client, transport, dial and
// resolver functions. Only this package (the guard) uses them; probes/wire
// keeps its default transport for its own tests, reached through a nil
// Base that no other package may leave.
var (
	made = map[string]map[string]string{
		"net/http":   {"Client": "an http.Client of its own", "Transport": "an http.Transport of its own"},
		"net":        {"Dialer": "a dialer of its own", "Resolver": "a resolver of its own"},
		"crypto/tls": {"Dialer": "a dialer of its own"},
	}
	used = map[string]map[string]string{
		"net/http": {"DefaultClient": "Go's default client", "DefaultTransport": "Go's default transport",
			"Get": "Go's default client", "Head": "Go's default client", "Post": "Go's default client", "PostForm": "Go's default client"},
		"net": {"Dial": "a dial of its own", "DialTimeout": "a dial of its own", "DialTCP": "a dial of its own", "DialUDP": "a dial of its own",
			"DialIP": "a dial of its own", "DefaultResolver": "a resolver of its own",
			"LookupHost": "a lookup of its own", "LookupIP": "a lookup of its own", "LookupNetIP": "a lookup of its own"},
		"crypto/tls": {"Dial": "a dial of its own", "DialWithDialer": "a dial of its own"},
	}
)

// mustName are struct types whose literals must set a field, or they
// connect around the guard: a wire.Transport with no Base uses Go's
// default transport, an MCP client transport with no HTTPClient Go's
// default client.
var mustName = map[string]map[string]string{
	"github.com/adcp-conform/adcp-conform/probes/wire": {"Transport": "Base"},
	"github.com/modelcontextprotocol/go-sdk/mcp":       {"StreamableClientTransport": "HTTPClient", "SSEClientTransport": "HTTPClient"},
}

// TestEveryRequestGoesThroughTheGuard reads every non-test Go file of the
// harness (not the fixture sellers) and fails on any way of reaching the
// network that does not go through Guard: so a client added later cannot
// forget the policy.
func TestEveryRequestGoesThroughTheGuard(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "fixtures" || rel == "probes/fetch" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, problem := range bypasses(f, rel == "probes/wire/transport.go") {
			t.Errorf("%s:%d: %s", rel, fset.Position(problem.pos).Line, problem.what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read %d files under %s: not the module", files, root)
	}
}

type bypass struct {
	pos  token.Pos
	what string
}

// bypasses lists f's ways around the guard; wireDefault allows the wire
// package its default transport.
func bypasses(f *ast.File, wireDefault bool) []bypass {
	names := map[string]string{} // local name → import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
	var out []bypass
	// sel names a selector's package path and name.
	sel := func(e ast.Expr) (path, name string, ok bool) {
		se, isSel := e.(*ast.SelectorExpr)
		if !isSel {
			return "", "", false
		}
		id, isID := se.X.(*ast.Ident)
		if !isID {
			return "", "", false
		}
		return names[id.Name], se.Sel.Name, true
	}
	flag := func(pos token.Pos, e ast.Expr, what string) {
		out = append(out, bypass{pos, types.ExprString(e) + ": " + what + " connects around fetch.Guard (use fetch.Client over a guard's Transport)"})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if p, name, ok := sel(n); ok {
				if what, bad := used[p][name]; bad && !(wireDefault && name == "DefaultTransport") {
					flag(n.Pos(), n, what)
				}
			}
		case *ast.CompositeLit:
			p, name, ok := sel(n.Type)
			if !ok {
				return true
			}
			if what, bad := made[p][name]; bad {
				flag(n.Pos(), n.Type, what)
			}
			if field, must := mustName[p][name]; must && !hasKey(n, field) {
				flag(n.Pos(), n.Type, "a literal without "+field)
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
				if p, name, ok := sel(n.Args[0]); ok && made[p][name] != "" {
					flag(n.Pos(), n.Args[0], made[p][name])
				}
			}
		case *ast.ValueSpec:
			if p, name, ok := sel(n.Type); ok && made[p][name] != "" {
				flag(n.Pos(), n.Type, made[p][name])
			}
		}
		return true
	})
	return out
}

func hasKey(lit *ast.CompositeLit, field string) bool {
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == field {
				return true
			}
		}
	}
	return false
}
