package suites

import (
	"testing"

	"encoding/json"
	"net/http"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// Builders of the CAP, TOL, VER, IDEM and AUTH tables: the same AdCP body on
// either transport, so one table serves the MCP and the A2A judge of a rule.

// cvOK records a call of probe id ("<tool>/<what>", without the transport)
// answered with the success body: MCP structuredContent and its text
// fallback; an A2A task completed with the body as its artifact's DataPart.
func cvOK(on catalogue.Transport, id, tool, body string, ps ...evidence.Purpose) evidence.Call {
	if on == catalogue.A2A {
		return a2aResult("a2a/"+id, tool, a2aTask("completed", body), ps...)
	}
	return mcpBody("mcp/"+id, tool, body, false, ps...)
}

// cvErr records a call answered with the error body: an MCP isError result
// (mcp-response-extraction.mdx/001), an A2A task failed with the body as its DataPart
// (a2a-response-extraction.mdx).
func cvErr(on catalogue.Transport, id, tool, body string, ps ...evidence.Purpose) evidence.Call {
	if on == catalogue.A2A {
		return a2aResult("a2a/"+id, tool, a2aTask("failed", body), ps...)
	}
	return mcpBody("mcp/"+id, tool, body, true, ps...)
}

// cvRPCResult records a call answered with the JSON-RPC result member
// result as it stands (on A2A a result that is no Task either).
func cvRPCResult(on catalogue.Transport, id, result string, ps ...evidence.Purpose) evidence.Call {
	c := mcpResult(string(on)+"/"+id, "", result, ps...)
	c.Transport = evidence.Transport(on)
	return c
}

// cvRPCErr records a call answered with the JSON-RPC error rpcErr.
func cvRPCErr(on catalogue.Transport, id, tool, rpcErr string, ps ...evidence.Purpose) evidence.Call {
	c := mcpRPCError(string(on)+"/"+id, tool, rpcErr, ps...)
	c.Transport = evidence.Transport(on)
	return c
}

// cvHTTP records a call answered with HTTP status, body and the response
// headers given as name, value pairs, and no JSON-RPC message.
func cvHTTP(on catalogue.Transport, id, tool string, status int, body string, headers ...string) evidence.Call {
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Add(headers[i], headers[i+1])
	}
	return evidence.Call{ProbeID: string(on) + "/" + id, Transport: evidence.Transport(on), Kind: evidence.KindToolCall, Tool: tool,
		HTTPStatus: status, Credential: "configured",
		Exchanges: []wire.Exchange{{Method: "POST", Status: status, ResponseHeaders: h, ResponseBody: []byte(body)}}}
}

// cvData is the pointer of the body cvOK and cvErr record.
func cvData(on catalogue.Transport) string {
	if on == catalogue.A2A {
		return "/result/artifacts/0/parts/0/data"
	}
	return "/result/structuredContent"
}

// cvTool names a call of the tables by its transport's probe ID.
func cvID(on catalogue.Transport, id string) string { return string(on) + "/" + id }

// cvWith returns c with its recorded arguments set.
func cvWith(c evidence.Call, args string) evidence.Call {
	c.Arguments = json.RawMessage(args)
	return c
}

// cvPurposes returns c with purposes ps.
func cvPurposes(c evidence.Call, ps ...evidence.Purpose) evidence.Call {
	c.Purposes = ps
	return c
}

// cvToolsList records the MCP tools/list answered with the tools array.
func cvToolsList(tools string) evidence.Call {
	result := `{"tools":` + tools + `}`
	return evidence.Call{ProbeID: "mcp/tools/list", Transport: evidence.MCP, Kind: evidence.KindToolsList, Method: "tools/list",
		Purposes: []evidence.Purpose{evidence.PurposeDiscovery}, HTTPStatus: 200,
		Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":` + result + `}`), Result: json.RawMessage(result)}
}

// cvCard records the A2A agent card with the skills array.
func cvCard(skills string) evidence.Call {
	card := `{"name":"Seller","description":"An AdCP seller","url":"https://seller.example.com/a2a","version":"1.0.0",` +
		`"protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":["application/json"],"defaultOutputModes":["application/json"],` +
		`"skills":` + skills + `}`
	return httpGet("a2a/card", evidence.A2A, "https://seller.example.com/.well-known/agent-card.json", 200, card, evidence.PurposeDiscovery)
}

// cvListing records the tool listing of a transport: tools/list over MCP,
// the agent card over A2A, naming the tools given. MCP tools carry an open
// inputSchema (tools/list requires one).
func cvListing(on catalogue.Transport, names ...string) evidence.Call {
	var items []string
	for _, n := range names {
		if on == catalogue.A2A {
			items = append(items, `{"id":`+quoteJSON(n)+`,"name":`+quoteJSON(n)+`,"description":"AdCP task","tags":["adcp"]}`)
		} else {
			items = append(items, `{"name":`+quoteJSON(n)+`,"inputSchema":{"type":"object"}}`)
		}
	}
	list := "[" + cvJoin(items) + "]"
	if on == catalogue.A2A {
		return cvCard(list)
	}
	return cvToolsList(list)
}

// cvList is the pointer of the listing's array.
func cvList(on catalogue.Transport) string {
	if on == catalogue.A2A {
		return "/skills"
	}
	return "/result/tools"
}

func cvJoin(items []string) string {
	out := ""
	for i, it := range items {
		if i > 0 {
			out += ","
		}
		out += it
	}
	return out
}

// cvBoth are the transports a rule covering both is judged on.
var cvBoth = []catalogue.Transport{catalogue.MCP, catalogue.A2A}

// cvTable runs the table of rule on transport on as a subtest named after
// the transport.
func cvTable(t *testing.T, rule string, on catalogue.Transport, cases []judgeCase) {
	t.Helper()
	t.Run(string(on), func(t *testing.T) { runJudgeTable(t, rule, on, cases) })
}
