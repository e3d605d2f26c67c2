package cli

import (
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/live"
)

// The help of run's --agent and --agent-bearer-env flags.
const (
	agentHelp = "a further logical agent for multi-agent storyboards (requires: [multi_agent]), as `NAME=URL` with the URL of its MCP endpoint, or NAME=a2a:URL with its A2A base URL (its agent card at URL/.well-known/agent-card.json, as for --a2a), repeatable: " +
		"a step whose agent: is NAME goes to it; the agent under test answers for the storyboard's default_agent. The run's --bearer-env and --header go to the agent under test only"
	agentBearerHelp = "the bearer token of an --agent, as `NAME=ENVVAR`: the name of the environment variable holding it (not the token itself), repeatable"
)

// agentNameRE is an --agent NAME: a storyboard's route key (default_agent,
// a step's agent:), such as sales, governance or nyt_sales.
var agentNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)

// parseAgents reads --agent NAME=URL (an MCP endpoint), --agent
// NAME=a2a:URL (an A2A base URL) and --agent-bearer-env NAME=ENVVAR into
// the run's further logical agents, in the order given. Each agent gets
// its own credential or none: never the run's.
func parseAgents(agents, bearers []string, getenv func(string) string) ([]live.Agent, error) {
	var out []live.Agent
	for _, v := range agents {
		name, u, ok := strings.Cut(v, "=")
		if !ok || !agentNameRE.MatchString(name) {
			return nil, usagef("--agent %q: want NAME=URL, NAME a route key such as governance (letters, digits, _ . -)", wire.Sanitize(v, 80))
		}
		u, isA2A := strings.CutPrefix(u, "a2a:")
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			if isA2A {
				return nil, usagef("--agent %s: want a2a: then the absolute http or https base URL of its A2A face", name)
			}
			return nil, usagef("--agent %s: want an absolute http or https URL of its MCP endpoint (a2a:URL for an A2A agent)", name)
		}
		if p.User != nil {
			return nil, usagef("--agent %s: put its credential in --agent-bearer-env, not in the URL", name)
		}
		if slices.ContainsFunc(out, func(a live.Agent) bool { return a.Name == name }) {
			return nil, usagef("--agent %s: given twice", name)
		}
		if isA2A {
			out = append(out, live.Agent{Name: name, A2A: a2a.Config{BaseURL: strings.TrimRight(u, "/")}})
		} else {
			out = append(out, live.Agent{Name: name, MCP: mcp.Config{Endpoint: u}})
		}
	}
	seen := map[string]bool{}
	for _, v := range bearers {
		name, env, ok := strings.Cut(v, "=")
		if !ok || !agentNameRE.MatchString(name) {
			return nil, usagef("--agent-bearer-env: want NAME=ENVVAR, the name of the variable holding the token; the value given is not repeated here")
		}
		if !envNameRE.MatchString(env) || looksLikeSecret(env) {
			return nil, usagef("--agent-bearer-env %s: want the name of an environment variable holding the token (e.g. %s=GOVERNANCE_TOKEN), not the token itself; the value given is not repeated here", name, name)
		}
		i := slices.IndexFunc(out, func(a live.Agent) bool { return a.Name == name })
		if i < 0 {
			return nil, usagef("--agent-bearer-env %s: no --agent %s=URL", name, name)
		}
		if seen[name] {
			return nil, usagef("--agent-bearer-env %s: given twice", name)
		}
		seen[name] = true
		tok := getenv(env)
		if tok == "" {
			return nil, usagef("--agent-bearer-env %s: the variable %s is empty or unset", name, env)
		}
		if out[i].Transport() == evidence.A2A {
			out[i].A2A.BearerToken = tok
		} else {
			out[i].MCP.BearerToken = tok
		}
	}
	return out, nil
}
