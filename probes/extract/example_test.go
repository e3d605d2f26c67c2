package extract_test

import (
	"encoding/json"
	"fmt"

	"github.com/adcp-conform/adcp-conform/probes/extract"
)

func ExampleMCPSuccess() {
	result := []byte(`{"content":[{"type":"text","text":"Found 1 product."}],"structuredContent":{"products":[{"product_id":"ctv"}]}}`)
	x, err := extract.MCPSuccess(result)
	if err != nil {
		panic(err)
	}
	fmt.Println(x.Path, x.Pointer, string(x.Data))
	// Output: structured_content /structuredContent {"products":[{"product_id":"ctv"}]}
}

func ExampleDescribe() {
	response := []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32029,"message":"Rate limit exceeded","data":{"adcp_error":{"code":"RATE_LIMITED","retry_after":86400,"recovery":"transient"}}}}`)
	v, err := extract.Describe(extract.TransportMCP, true, response)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
	// Output: {"path":"jsonrpc_error","data":null,"error":{"code":"RATE_LIMITED","retry_after":86400,"recovery":"transient"},"action":{"kind":"retry","delay_seconds":3600}}
}
