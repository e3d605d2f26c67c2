package storyboard

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// routeKeys returns the logical agent keys a storyboard routes its calls
// to (storyboard-schema.yaml, default_agent and step-level agent:): its
// default_agent, then each step's agent:, once each, in order.
func routeKeys(sb *spec.Storyboard) []string {
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

// route returns the logical agent a step's call goes to: "" is the agent
// under test, which answers for the storyboard's default_agent (and for
// every step of a single-agent run, which ignores routing: "there is no
// map to resolve against"); a step whose agent: names another key goes to
// the run's agent of that name. ok is false when the run names no such
// agent (unrouted_step).
func route(sb *spec.Storyboard, st *spec.Step, env *Env) (agent string, ok bool) {
	if len(env.Agents) == 0 || st.Agent == "" || st.Agent == sb.DefaultAgent {
		return "", true
	}
	return st.Agent, slices.Contains(env.Agents, st.Agent)
}

// multiAgentUnmet says why a storyboard's requires: [multi_agent] is unmet
// ("" when it is met): the run has at least two logical agents (the
// agent under test and one --agent) and every route key resolves, the
// default_agent to the agent under test, the others to --agent names.
func multiAgentUnmet(sb *spec.Storyboard, env *Env) string {
	if len(env.Agents) == 0 {
		return "multi_agent: the run was given one agent (name the others with --agent NAME=URL)"
	}
	var missing []string
	for _, k := range routeKeys(sb) {
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

func defaultAgentName(sb *spec.Storyboard) string {
	if sb.DefaultAgent == "" {
		return "the storyboard's default (it declares no default_agent)"
	}
	return "its default_agent " + sb.DefaultAgent
}

// agentsProbeID is the probe ID of the record of a run's further logical
// agents (their names, URLs and faces, in Arguments): a re-judging gives
// the multi-agent storyboards the same gates, routes and context, and
// takes each routed step's call only from the face its agent was reached
// on.
const agentsProbeID = evidence.StoryboardPrefix + "#agents"

// agentRecord is one further logical agent as the run recorded it.
type agentRecord struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
	// Transport is the agent's face, mcp or a2a; a run recorded before
	// A2A agents were routed gives none (its agents were MCP's).
	Transport evidence.Transport `json:"transport,omitempty"`
}

// AgentsCall is the record that the run's storyboards had the further
// logical agents names, each reached at urls[name] over faces[name] (mcp:
// its MCP endpoint, a2a: its A2A base URL).
func AgentsCall(names []string, urls map[string]string, faces map[string]evidence.Transport, t evidence.Transport) evidence.Call {
	recs := make([]agentRecord, len(names))
	for i, n := range names {
		recs[i] = agentRecord{Name: n, URL: urls[n], Transport: faces[n]}
	}
	b, _ := json.Marshal(recs)
	return evidence.Call{ProbeID: agentsProbeID, Transport: t, Kind: evidence.KindStoryboardContext, Arguments: b}
}

// replayAgentRecords reads the record: objects with name and url, or (a
// run recorded before the URLs were) names alone.
func replayAgentRecords(store *evidence.Store) []agentRecord {
	c, ok := store.Call(agentsProbeID)
	if !ok {
		return nil
	}
	var recs []agentRecord
	if json.Unmarshal(c.Arguments, &recs) == nil {
		return recs
	}
	var names []string
	if json.Unmarshal(c.Arguments, &names) != nil {
		return nil
	}
	recs = nil
	for _, n := range names {
		recs = append(recs, agentRecord{Name: n})
	}
	return recs
}

// ReplayAgents returns the further logical agents a recorded run named
// (nil when it named none).
func ReplayAgents(store *evidence.Store) []string {
	var names []string
	for _, r := range replayAgentRecords(store) {
		names = append(names, r.Name)
	}
	return names
}

// ReplayAgentURLs returns the URLs of the further logical agents a
// recorded run named, by name (nil when it recorded none).
func ReplayAgentURLs(store *evidence.Store) map[string]string {
	var urls map[string]string
	for _, r := range replayAgentRecords(store) {
		if r.URL != "" {
			if urls == nil {
				urls = map[string]string{}
			}
			urls[r.Name] = r.URL
		}
	}
	return urls
}

// replayAgentFaces returns the faces (mcp, a2a) of the further logical
// agents a recorded run named, by name; an agent recorded without one is
// left out.
func replayAgentFaces(store *evidence.Store) map[string]evidence.Transport {
	var faces map[string]evidence.Transport
	for _, r := range replayAgentRecords(store) {
		if r.Transport != "" {
			if faces == nil {
				faces = map[string]evidence.Transport{}
			}
			faces[r.Name] = r.Transport
		}
	}
	return faces
}

// agentURLSuffix ends the root context keys a run's --agent overrides.
const agentURLSuffix = "_agent_url"

// overrideAgentURLs puts the URLs of the run's further logical agents into
// a storyboard's initial context. The governance storyboards name their
// governance agent by a root context key, governance_agent_url, whose
// default is a public training agent, and say to override it "in the
// run's initial context". A run that names --agent K=URL is that
// override: every root context key K_agent_url the storyboard declares
// becomes URL, so the agent the runner routes K's steps to is the one the
// storyboard's requests name (a sync_governance registers it with the
// seller). Keys the storyboard does not declare are not added, and a
// run with no --agent K keeps the storyboard's default.
func overrideAgentURLs(sb *spec.Storyboard, env *Env, ctx map[string]any) {
	for k := range sb.Context {
		name, ok := strings.CutSuffix(k, agentURLSuffix)
		if !ok || name == "" {
			continue
		}
		if u := env.AgentURLs[name]; u != "" && slices.Contains(env.Agents, name) {
			ctx[k] = u
		}
	}
}
