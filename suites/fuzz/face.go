package fuzz

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// Face is one protocol face of the seller, as one principal: it makes tool
// calls over the project's raw-byte clients and says which tools it has.
type Face interface {
	// Transport is the face's transport.
	Transport() evidence.Transport
	// Tools are the tools (MCP) or skills (A2A) the seller lists.
	Tools() []string
	// Call sends one tool call and returns it as recorded raw bytes.
	Call(ctx context.Context, probeID, tool string, args json.RawMessage, purposes ...evidence.Purpose) evidence.Call
	// Close ends the face's session.
	Close() error
}

// mcpFace is a Streamable HTTP session.
type mcpFace struct {
	s     *mcp.Session
	tools []string
}

// DialMCP opens an MCP session (initialize, tools/list), recording both
// through add under prefix ("fuzz/" or "fuzz/tenant2/").
func DialMCP(ctx context.Context, cfg mcp.Config, prefix string, add func(evidence.Call)) (Face, error) {
	s, init, err := mcp.Dial(ctx, cfg, prefix+"initialize")
	add(init)
	if err != nil {
		return nil, err
	}
	list := s.ListTools(ctx, prefix+"tools/list")
	add(list)
	names := plan.ToolNames(list.Result) // nil: no readable list
	if list.Result == nil || names == nil {
		s.Close()
		return nil, fmt.Errorf("tools/list: no readable list of tools (HTTP %d%s)", list.HTTPStatus, harness(list))
	}
	return &mcpFace{s: s, tools: names}, nil
}

func harness(c evidence.Call) string {
	if c.HarnessError != "" {
		return ": " + wire.Sanitize(c.HarnessError, 200)
	}
	return ""
}

func (f *mcpFace) Transport() evidence.Transport { return evidence.MCP }
func (f *mcpFace) Tools() []string               { return f.tools }
func (f *mcpFace) Close() error                  { return f.s.Close() }

func (f *mcpFace) Call(ctx context.Context, probeID, tool string, args json.RawMessage, purposes ...evidence.Purpose) evidence.Call {
	c := f.s.CallTool(ctx, probeID, tool, args, purposes...)
	c.Arguments, c.Context = recordedArgs(args)
	c.Credential = "configured"
	return c
}

// a2aFace is an A2A client of the card's interface.
type a2aFace struct {
	c     *a2a.Client
	tools []string
}

// DialA2A reads the agent card, recording it through add under prefix.
func DialA2A(ctx context.Context, cfg a2a.Config, prefix string, add func(evidence.Call)) (Face, error) {
	card, call, err := a2a.Discover(ctx, cfg, "a2a/"+prefix+"card")
	add(call)
	if err != nil {
		return nil, err
	}
	tools := slices.Clone(card.Skills)
	if !slices.Contains(tools, "get_adcp_capabilities") { // every agent's task (CAP-01), listed or not
		tools = append(tools, "get_adcp_capabilities")
	}
	return &a2aFace{c: a2a.NewClient(cfg, card), tools: tools}, nil
}

func (f *a2aFace) Transport() evidence.Transport { return evidence.A2A }
func (f *a2aFace) Tools() []string               { return f.tools }
func (f *a2aFace) Close() error                  { return nil }

func (f *a2aFace) Call(ctx context.Context, probeID, tool string, args json.RawMessage, purposes ...evidence.Purpose) evidence.Call {
	c := f.c.Send(ctx, probeID, tool, args, purposes...)
	c.Arguments, c.Context = recordedArgs(args)
	c.Credential = "configured"
	return c
}

// recordedArgs are the arguments as the evidence keeps them: the JSON
// sent, with credential-named members redacted, and the context among
// them.
func recordedArgs(args json.RawMessage) (arguments, context json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) == nil {
		context = m["context"]
	}
	return wire.RedactJSON(args), context
}
