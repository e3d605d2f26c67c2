package wire_test

import (
	"fmt"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

func ExampleSplitResponse() {
	result, rpcErr, id, _ := wire.SplitResponse([]byte(`{"jsonrpc":"2.0","id":3,"result":null}`))
	fmt.Printf("result %s, error absent %v, id %s\n", result, rpcErr == nil, id)
	// Output: result null, error absent true, id 3
}

func ExampleNewSSEReader() {
	stream := ": ping\r\nevent: message\r\ndata: {\"id\":1,\r\ndata:\"result\":{}}\r\n\r\n"
	r := wire.NewSSEReader(strings.NewReader(stream), 0)
	ev, _ := r.Next()
	fmt.Printf("%s %q %v\n", ev.Type, ev.Data, ev.Dispatch)
	// Output: message "{\"id\":1,\n\"result\":{}}" true
}

func ExampleRedactJSON() {
	fmt.Printf("%s\n", wire.RedactJSON([]byte(`{"b":1,"auth":{"API_KEY":"k","scopes":["read"]},"a":2}`)))
	// Output: {"b":1,"auth":{"API_KEY":"[redacted]","scopes":["read"]},"a":2}
}
