//go:build pins

// Package pins records the project's fixed dependencies (DEVELOPERS.md) in
// go.mod before every one of them has an importer in the tree: the build tag
// keeps it out of every build, while `go mod tidy` still sees the imports.
// Drop an import here once a real package uses that module.
package pins

import _ "github.com/a2aproject/a2a-go/a2a"
