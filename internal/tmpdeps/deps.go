package tmpdeps

import (
	_ "github.com/a2aproject/a2a-go/a2a"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/gomega"
	_ "sigs.k8s.io/yaml"
)
