package conform

import (
	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/live"
)

// agentsFor returns the agents as a run reaches them: the run's client
// settings of the agent's transport (timeout, limits, transport), each
// with its own endpoint and credential and no --header, every client
// redacting every credential of the run.
func agentsFor(agents []live.Agent, runMCP mcp.Config, runA2A a2a.Config) []live.Agent {
	out := make([]live.Agent, len(agents))
	for i, a := range agents {
		if a.Transport() == evidence.A2A {
			c := runA2A
			c.BaseURL, c.BearerToken, c.Header = a.A2A.BaseURL, a.A2A.BearerToken, nil
			out[i] = live.Agent{Name: a.Name, A2A: c}
			continue
		}
		c := runMCP
		c.Endpoint, c.BearerToken, c.Header = a.MCP.Endpoint, a.MCP.BearerToken, nil
		out[i] = live.Agent{Name: a.Name, MCP: c}
	}
	return out
}

// agentSecrets are the agents' credentials.
func agentSecrets(agents []live.Agent) []string {
	var out []string
	for _, a := range agents {
		out = append(out, wire.Secrets(a.MCP.BearerToken, nil)...)
		out = append(out, wire.Secrets(a.A2A.BearerToken, nil)...)
	}
	return out
}

// agentURLs are the agents' URLs, for the run's guard: each is an agent
// the user named.
func agentURLs(agents []live.Agent) []string {
	var out []string
	for _, a := range agents {
		out = append(out, a.URL())
	}
	return out
}
