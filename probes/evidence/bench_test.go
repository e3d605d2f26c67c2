package evidence

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// BenchmarkWriteJSON writes the evidence of calls whose replies are just
// under the default --max-body (8 MiB of string), each kept three times
// (the exchange's body, the message, the result), as evidence.json is
// written at the end of a run; the throughput is of the bytes written:
//
//	go test -run '^$' -bench WriteJSON -benchtime 3x ./probes/evidence/
func BenchmarkWriteJSON(b *testing.B) {
	const calls = 8
	s := NewStore(Target{MCP: "http://127.0.0.1:1/mcp"})
	pad, _ := json.Marshal(strings.Repeat("p", 8<<20-64<<10))
	for i := range calls {
		result := `{"content":[],"structuredContent":{"padding":` + string(pad) + `}}`
		msg := []byte(`{"jsonrpc":"2.0","id":1,"result":` + result + `}`)
		s.Add(Call{ProbeID: "mcp/p" + strconv.Itoa(i), Transport: MCP, Kind: KindToolCall, Tool: "get_products",
			Arguments: json.RawMessage(`{"brief":"video"}`), Message: msg, Result: msg[len(msg)-len(result)-1 : len(msg)-1], HTTPStatus: 200,
			Exchanges: []wire.Exchange{{Method: "POST", URL: "http://127.0.0.1:1/mcp", RequestBody: wire.Bytes(`{"jsonrpc":"2.0"}`),
				Status: 200, ResponseBody: wire.Bytes(msg), ResponseBodySize: int64(len(msg)), Finished: true, Complete: true}}})
	}
	var n countingWriter
	for b.Loop() {
		n = 0
		if err := s.WriteJSON(&n); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(n))
}

type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)
