package storyboard

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// RouteKeys returns the logical agent keys a storyboard routes its calls
// to (storyboard-schema.yaml, default_agent and step-level agent:): its
// default_agent, then each step's agent:, once each, in order.
func RouteKeys(sb *Storyboard) []string {
	var keys []string
	add := func(k string) {
		if k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	add(sb.DefaultAgent)
	for _, ph := range sb.Phases {
		for _, st := range ph.Steps {
			add(st.Agent)
		}
	}
	return keys
}

// Route returns the logical agent a step's call goes to: "" is the agent
// under test, which answers for the storyboard's default_agent (and for
// every step of a single-agent run, which ignores routing: "there is no
// map to resolve against"); a step whose agent: names another key goes to
// the run's agent of that name. ok is false when the run names no such
// agent (unrouted_step).
func Route(sb *Storyboard, st *Step, env *Env) (agent string, ok bool) {
	if len(env.Agents) == 0 || st.Agent == "" || st.Agent == sb.DefaultAgent {
		return "", true
	}
	return st.Agent, slices.Contains(env.Agents, st.Agent)
}

// multiAgentUnmet says why a storyboard's requires: [multi_agent] is unmet
// ("" when it is met): the run has at least two logical agents (the
// agent under test and one --agent) and every route key resolves, the
// default_agent to the agent under test, the others to --agent names.
func multiAgentUnmet(sb *Storyboard, env *Env) string {
	if len(env.Agents) == 0 {
		return "multi_agent: the run was given one agent (name the others with --agent NAME=URL)"
	}
	var missing []string
	for _, k := range RouteKeys(sb) {
		if k != sb.DefaultAgent && !slices.Contains(env.Agents, k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("multi_agent: the run names no agent %s (--agent NAME=URL; the agent under test is %s)",
			strings.Join(missing, ", "), defaultAgentName(sb))
	}
	return ""
}

func defaultAgentName(sb *Storyboard) string {
	if sb.DefaultAgent == "" {
		return "the storyboard's default (it declares no default_agent)"
	}
	return "its default_agent " + sb.DefaultAgent
}

// AgentsProbeID is the probe ID of the record of a run's further logical
// agents (their names, in Arguments): a re-judging gives the multi-agent
// storyboards the same gates and routes.
const AgentsProbeID = evidence.StoryboardPrefix + "#agents"

// AgentsCall is the record that the run's storyboards had the further
// logical agents names.
func AgentsCall(names []string, t evidence.Transport) evidence.Call {
	b, _ := json.Marshal(names)
	return evidence.Call{ProbeID: AgentsProbeID, Transport: t, Kind: evidence.KindStoryboardContext, Arguments: b}
}

// ReplayAgents returns the further logical agents a recorded run named
// (nil when it named none).
func ReplayAgents(store *evidence.Store) []string {
	c, ok := store.Call(AgentsProbeID)
	if !ok {
		return nil
	}
	var names []string
	if json.Unmarshal(c.Arguments, &names) != nil {
		return nil
	}
	return names
}
