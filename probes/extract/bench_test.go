package extract

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// bigProducts returns a get_products-like object of at least n bytes.
func bigProducts(n int) string {
	var b strings.Builder
	b.WriteString(`{"status":"completed","products":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"product_id":"ctv_` + strconv.Itoa(i) + `","name":"Premium Sports CTV – prime time","cpm":35.5,"formats":["video_15s","video_30s"],"delivery_type":"guaranteed"}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

func quoted(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

const small = `{"status":"completed","products":[{"product_id":"ctv_premium","name":"Premium CTV","cpm":35.0}]}`

var (
	big = bigProducts(1 << 20)

	benchMCP = map[string]string{
		"structured/small": `{"content":[{"type":"text","text":"Found 1 product."}],"structuredContent":` + small + `}`,
		"structured/1MB":   `{"content":[{"type":"text","text":"Found products."}],"structuredContent":` + big + `}`,
		"text/small":       `{"content":[{"type":"text","text":"Found."},{"type":"text","text":` + quoted(small) + `}]}`,
		"text/1MB":         `{"content":[{"type":"text","text":"Found."},{"type":"text","text":` + quoted(bigProducts(TextLimit-400)) + `}]}`,
	}
	benchMCPError = map[string]string{
		"structured/small": `{"isError":true,"content":[{"type":"text","text":"Rate limited."}],"structuredContent":{"adcp_error":{"code":"RATE_LIMITED","message":"Request rate exceeded","retry_after":5,"recovery":"transient"}}}`,
		"text/1MB":         `{"isError":true,"content":[{"type":"text","text":` + quoted(strings.Repeat("Rate limited. ", 1<<20/14)) + `},{"type":"text","text":"{\"adcp_error\":{\"code\":\"RATE_LIMITED\",\"recovery\":\"transient\"}}"}]}`,
	}
	benchA2A = map[string]string{
		"artifact/small": `{"id":"t","status":{"state":"completed"},"artifacts":[{"parts":[{"kind":"text","text":"Found."},{"kind":"data","data":` + small + `}]}]}`,
		"artifact/1MB":   `{"id":"t","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"parts":[{"text":"Found."},{"data":` + big + `}]}]}`,
	}
	benchA2AError = map[string]string{
		"artifact/small": `{"id":"t","status":{"state":"failed"},"artifacts":[{"parts":[{"kind":"text","text":"Rate limited."},{"kind":"data","data":{"adcp_error":{"code":"RATE_LIMITED","retry_after":5,"recovery":"transient"}}}]}]}`,
		"none/1MB":       `{"id":"t","status":{"state":"completed"},"artifacts":[{"parts":[{"data":` + big + `}]}]}`,
	}
)

func benchInputs(b *testing.B, inputs map[string]string, fn func([]byte) error) {
	for _, name := range []string{"structured/small", "structured/1MB", "text/small", "text/1MB", "artifact/small", "artifact/1MB", "none/1MB"} {
		in, ok := inputs[name]
		if !ok {
			continue
		}
		data := []byte(in)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := fn(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMCPSuccess(b *testing.B) {
	benchInputs(b, benchMCP, func(in []byte) error {
		x, err := MCPSuccess(in)
		if err == nil && x.Path == PathNone {
			b.Fatal("no data")
		}
		return err
	})
}

func BenchmarkMCPError(b *testing.B) {
	benchInputs(b, benchMCPError, func(in []byte) error {
		x, err := MCPError(in)
		if err == nil && x.Error == nil {
			b.Fatal("no error")
		}
		return err
	})
}

func BenchmarkA2A(b *testing.B) {
	benchInputs(b, benchA2A, func(in []byte) error {
		x, err := A2A(in)
		if err == nil && x.Path == PathNone {
			b.Fatal("no data")
		}
		return err
	})
}

func BenchmarkA2AError(b *testing.B) {
	benchInputs(b, benchA2AError, func(in []byte) error {
		_, err := A2AError(in)
		return err
	})
}

func BenchmarkFromJSONRPCResponse(b *testing.B) {
	inputs := map[string]string{
		"structured/small": `{"jsonrpc":"2.0","id":1,"result":` + benchMCP["structured/small"] + `}`,
		"structured/1MB":   `{"jsonrpc":"2.0","id":1,"result":` + benchMCP["structured/1MB"] + `}`,
	}
	benchInputs(b, inputs, func(in []byte) error {
		_, err := FromJSONRPCResponse(TransportMCP, in)
		return err
	})
}

func BenchmarkValidateError(b *testing.B) {
	inputs := map[string]string{
		"structured/small": `{"code":"BUDGET_TOO_LOW","message":"Budget is below the seller's minimum","recovery":"correctable","details":{"minimum_budget":500,"currency":"USD"}}`,
		"structured/1MB":   `{"code":"X","details":` + big + `}`,
	}
	benchInputs(b, inputs, func(in []byte) error {
		err := ValidateError(in)
		if len(in) > MaxErrorLength && err == nil {
			b.Fatal("oversized error validated")
		}
		return nil
	})
}

// BenchmarkStdlibBaseline decodes the 1 MB structuredContent reply into
// map[string]any, for comparison.
func BenchmarkStdlibBaseline(b *testing.B) {
	data := []byte(benchMCP["structured/1MB"])
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}
