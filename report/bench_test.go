package report

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// largeRun is a run against a seller that fails many rules and
// storyboards, in the shape of a real one (about 1.3 MB of report.html):
// 80 rules, a third failed with findings and SSE exchanges of 3 KB,
// 180 storyboards, three in four skipped as a whole, the others with 6
// steps each: 2 passed, 2 skipped, 2 failed with their failed validations
// and their request and response payloads.
func largeRun() *Run {
	r := &Run{Tool: "adcp-conform", Version: "0.1.0", AdcpRelease: "3.1.19", Target: "http://127.0.0.1:40653/mcp",
		Transports: []string{"mcp"}, StartedAt: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), DurationMS: 61234.5}
	products := make([]string, 8)
	for i := range products {
		products[i] = fmt.Sprintf(`{"product_id":"prod-%d","name":"Premium display \u00e9 %d","description":"Run of network <b>display</b> & video","pricing_options":[{"pricing_option_id":"cpm-%d","model":"cpm","rate":%d.5,"currency":"USD"}],"formats":["display_300x250","video_15s"],"delivery_type":"guaranteed"}`, i, i, i, 10+i)
	}
	replyOf := func(n int) string {
		return `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Found products"}],"structuredContent":{"products":[` +
			strings.Join(products[:n], ",") + `],"context":{"trace":"t-1"}}}}`
	}
	reply, short := replyOf(len(products)), replyOf(2)
	families := []string{"ENV", "ERR", "CTX", "A2A", "MCP", "AUTH", "IDEM", "PAGE", "TLS", "SSE"}
	for i := range 80 {
		fam := families[i%len(families)]
		id := fmt.Sprintf("%s-%02d", fam, i)
		outcome := []Outcome{Passed, Skipped, Failed}[i%3]
		rule := RuleResult{ID: id, Family: fam, Level: Must, Transports: []string{"mcp"}, Outcome: outcome,
			Statement: "Every reply echoes the request's `context` **unchanged**, at any depth.",
			Source:    "https://docs.adcontextprotocol.org/docs/building/implementation/error-handling"}
		for t := range 3 {
			rule.Specs = append(rule.Specs, SpecResult{Name: id + " spec", Transport: "mcp", Outcome: outcome,
				Message: fmt.Sprintf("%s: mcp/get_products/p%d: the reply's context differs <b>%d</b>", id, t, t), DurationMS: 1.5})
		}
		if outcome == Failed {
			for f := range 4 {
				probe := fmt.Sprintf("mcp/get_products/p%d", f%3)
				pointer := fmt.Sprintf("/result/structuredContent/products/%d/pricing_options/0/rate", f)
				rule.Findings = append(rule.Findings, Finding{Transport: "mcp", ProbeID: probe, JSONPointer: pointer, Message: "is not a number <i>x</i>"})
				r.Steps = append(r.Steps, Step{StoryboardID: StoryboardID, PhaseID: "mcp_get_products", StepID: probe, Task: "get_products",
					Request:     &Request{Transport: "mcp", Operation: "get_products", Payload: json.RawMessage(`{"brief":"shoes","context":{"trace":"t-1","nested":{"list":["a",1.5,null]}}}`)},
					Validations: []Validation{{Check: "rule", Rule: id, Description: "rates are numbers", JSONPointer: &pointer, Expected: map[string]any{"type": "number"}, Actual: json.RawMessage(products[f])}}})
			}
			for e := range 2 {
				probe := fmt.Sprintf("mcp/get_products/p%d", e)
				rule.Evidence = append(rule.Evidence, Evidence{Transport: "mcp", ProbeID: probe, Exchanges: []wire.Exchange{{
					Method: "POST", URL: "http://127.0.0.1:40653/mcp", Status: 200, DurationMS: 12.5,
					RequestBody:     wire.Bytes(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_products","arguments":{"brief":"shoes"}}}`),
					ResponseHeaders: http.Header{"Content-Type": {"text/event-stream"}, "X-Request-Id": {"req-1"}},
					ResponseBody:    wire.Bytes("event: message\ndata: " + reply + "\n\n"),
					Events:          []wire.Event{{Type: "message", Data: reply}},
				}}})
			}
		}
		r.Rules = append(r.Rules, rule)
	}
	for s := range 180 {
		id := fmt.Sprintf("storyboard_%03d", s)
		sb := StoryboardResult{ID: id, Title: "Media buy <b>seller</b> " + id, Category: []string{"universal", "media-buy", "specialism/signals"}[s%3],
			Path: "protocols/media-buy/" + id + ".yaml", Track: "media_buy", DurationMS: 80}
		if s%4 != 0 {
			sb.Skip = &Skip{Reason: "not_applicable", Detail: "the agent does not declare the signals protocol"}
			r.Storyboards = append(r.Storyboards, sb)
			continue
		}
		r.Storyboards = append(r.Storyboards, sb)
		for k := range 6 {
			st := Step{StoryboardID: id, PhaseID: "create", StepID: fmt.Sprintf("step_%d", k), Task: "create_media_buy", Title: "Create a buy",
				DurationMS: 40, Extraction: Extraction{Path: "structured_content"}, Passed: k < 2,
				Validations: []Validation{{Check: "response_schema", Passed: true, Description: "matches the schema"}}}
			switch k {
			case 2, 3:
				st.Skip = &Skip{Reason: "prerequisite_failed", Detail: "create/step_1 did not pass"}
			case 4, 5:
				pointer := fmt.Sprintf("/products/%d/pricing_options", k)
				st.Validations = append(st.Validations,
					Validation{ID: "v1", Check: "field_value", Description: "the buy is pending <script>x</script>", JSONPointer: &pointer,
						Expected: "pending_activation", Actual: json.RawMessage(products[k]), Message: `status is "active"`},
					Validation{Check: "field_present", Severity: Advisory, Description: "names are readable", JSONPointer: &pointer,
						Expected: map[string]any{"pattern": "^[A-Z]", "min": 1}, Actual: json.RawMessage(`null`), Message: "missing"})
				st.Request = &Request{Transport: "mcp", Operation: "create_media_buy", URL: "http://127.0.0.1:40653/mcp",
					Payload: json.RawMessage(`{"buyer_ref":"b-1","packages":[{"product_id":"p1","budget":1000,"pricing_option_id":"cpm-1"}],"brand":{"name":"Acme"},"context":{"trace":"t-1"}}`)}
				st.Response = &Response{Transport: "mcp", Status: 200, DurationMS: 40, Payload: json.RawMessage(short)}
			}
			r.Steps = append(r.Steps, st)
		}
	}
	r.Settle()
	return r
}

// BenchmarkWriteHTML writes report.html for largeRun, the time the seller
// idles while the run's reports are written: to io.Discard, and through
// a redacting writer with two secrets, as a run writes it (writes/op
// counts the writes that reach the sink).
func BenchmarkWriteHTML(b *testing.B) {
	r := largeRun()
	red := wire.NewRedactor([]string{"sk-live-4f9a2c7e1b8d3a6f", "sb/Leak+Tok3n-7d1c"}, nil)
	for _, sink := range []struct {
		name string
		wrap func(io.Writer) io.WriteCloser
	}{
		{"discard", func(w io.Writer) io.WriteCloser { return nopCloser{w} }},
		{"redacted", red.Writer},
	} {
		b.Run(sink.name, func(b *testing.B) {
			var n countingWriter
			w := sink.wrap(&n)
			if err := WriteHTML(w, r); err != nil {
				b.Fatal(err)
			}
			w.Close()
			b.SetBytes(n.bytes)
			b.ReportAllocs()
			for b.Loop() {
				w := sink.wrap(io.Discard)
				if err := WriteHTML(w, r); err != nil {
					b.Fatal(err)
				}
				w.Close()
			}
			b.ReportMetric(float64(n.writes), "writes/op")
		})
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// countingWriter counts the bytes and the calls written to it.
type countingWriter struct{ bytes, writes int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.bytes += int64(len(p))
	c.writes++
	return len(p), nil
}
