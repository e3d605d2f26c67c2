package storyboard

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// multiSB routes its plan step to a governance agent and its other steps
// to the seller (default_agent, explicitly and by default).
const multiSB = `
id: m
version: "1.0.0"
title: m
category: t
narrative: t
requires: [multi_agent]
default_agent: sales
phases:
  - id: setup
    title: setup
    steps:
      - id: plan
        title: plan
        agent: governance
        task: sync_plans
        sample_request: {plans: [{plan_id: p1}]}
        validations:
          - check: field_present
            path: plans
            description: plans
      - id: products
        title: products
        agent: sales
        task: get_products
        sample_request: {brief: x}
        validations:
          - check: field_present
            path: products
            description: products
  - id: buy
    title: buy
    steps:
      - id: formats
        title: formats
        task: list_creative_formats
        validations:
          - check: field_present
            path: formats
            description: formats
`

func TestGateMeetsMultiAgentWhenEveryRouteKeyResolves(t *testing.T) {
	defaultOnly := strings.Replace(multiSB, "        agent: governance\n", "", 1)
	noDefault := strings.Replace(strings.Replace(multiSB, "default_agent: sales\n", "", 1), "        agent: sales\n", "", 1)
	for _, tc := range []struct {
		name   string
		yaml   string
		agents []string
		unmet  []string // substrings of the skip detail; nil: the gate is met
	}{
		{"the run names every other key", multiSB, []string{"governance"}, nil},
		{"the run names more agents than the storyboard uses", multiSB, []string{"creative", "governance"}, nil},
		{"the run was given one agent", multiSB, nil, []string{"multi_agent", "one agent", "--agent NAME=URL"}},
		{"a route key the run does not name", multiSB, []string{"creative"}, []string{"multi_agent", "no agent governance", "default_agent sales"}},
		{"a storyboard that routes to its default only, with two agents", defaultOnly, []string{"governance"}, nil},
		{"a storyboard that routes to its default only, with one agent", defaultOnly, nil, []string{"multi_agent"}},
		{"a step key without a default_agent resolves to --agent names alone", noDefault, []string{"governance"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := env("get_products", "list_creative_formats")
			e.Agents = tc.agents
			skip := Gate(parse(t, tc.yaml), e)
			if tc.unmet == nil {
				if skip != nil {
					t.Fatalf("Gate = %+v, want met", skip)
				}
				return
			}
			if skip == nil || skip.Reason != spec.RequirementUnmet {
				t.Fatalf("Gate = %+v, want %s", skip, spec.RequirementUnmet)
			}
			for _, want := range tc.unmet {
				if !strings.Contains(skip.Detail, want) {
					t.Errorf("detail %q does not name %q", skip.Detail, want)
				}
			}
		})
	}
}

func TestRouteKeysListsDefaultThenStepKeysOnce(t *testing.T) {
	if got := strings.Join(routeKeys(parse(t, multiSB)), ","); got != "sales,governance" {
		t.Errorf("RouteKeys = %s, want sales,governance", got)
	}
}

// multiFake answers as the agent under test or the governance agent, and
// refuses a call that reaches the wrong one.
func multiFake() *fake {
	as := func(agent string, payload map[string]any) func(Request) *spec.Observation {
		return func(req Request) *spec.Observation {
			if req.Agent != agent {
				return &spec.Observation{Failure: "routed to " + req.Agent + ", not " + agent}
			}
			return ok(payload)(req)
		}
	}
	return &fake{answers: map[string]func(Request) *spec.Observation{
		"sync_plans":            as("governance", map[string]any{"plans": []any{}}),
		"get_products":          as("", map[string]any{"products": []any{}}),
		"list_creative_formats": as("", map[string]any{"formats": []any{}}),
	}}
}

func TestRunRoutesEachStepToItsAgent(t *testing.T) {
	f := multiFake()
	e := env("get_products", "list_creative_formats") // sync_plans is the governance agent's, not the seller's
	e.Agents = []string{"governance"}
	res := Run(context.Background(), parse(t, multiSB), e, f)
	if got := outcomes(res); got != "setup.plan=pass setup.products=pass buy.formats=pass => passed" {
		t.Fatalf("outcomes = %s", got)
	}
	var routes []string
	for _, r := range f.got {
		routes = append(routes, r.Task+"@"+r.Agent)
	}
	if got := strings.Join(routes, " "); got != "sync_plans@governance get_products@ list_creative_formats@" {
		t.Errorf("calls = %s", got)
	}
	if res.Steps[0].Agent != "governance" || res.Steps[1].Agent != "" {
		t.Errorf("step agents = %q, %q", res.Steps[0].Agent, res.Steps[1].Agent)
	}
}

func TestRunMakesAnUnroutedStepAnError(t *testing.T) {
	// A storyboard without requires: [multi_agent] is not gated; in a
	// multi-agent run its step naming an agent the run lacks goes nowhere.
	sb := parse(t, strings.Replace(multiSB, "requires: [multi_agent]\n", "", 1))
	e := env("get_products", "list_creative_formats")
	e.Agents = []string{"creative"}
	f := multiFake()
	res := Run(context.Background(), sb, e, f)
	if got := outcomes(res); !strings.HasPrefix(got, "setup.plan=error ") {
		t.Fatalf("outcomes = %s", got)
	}
	if !strings.Contains(res.Steps[0].Error, "unrouted_step") {
		t.Errorf("error = %q", res.Steps[0].Error)
	}
	for _, r := range f.got {
		if r.Task == "sync_plans" {
			t.Errorf("an unrouted step was sent to %q", r.Agent)
		}
	}
}

func TestRunIgnoresRoutingInASingleAgentRun(t *testing.T) {
	sb := parse(t, strings.Replace(multiSB, "requires: [multi_agent]\n", "", 1))
	f := &fake{answers: map[string]func(Request) *spec.Observation{"sync_plans": ok(map[string]any{"plans": []any{}})}}
	Run(context.Background(), sb, env("sync_plans"), f)
	if len(f.got) == 0 || f.got[0].Agent != "" {
		t.Errorf("the single agent's calls = %+v", f.got)
	}
}

func TestReplayTakesARoutedCallOnlyFromItsAgentsFace(t *testing.T) {
	store := evidence.NewStore(evidence.Target{})
	store.Add(AgentsCall([]string{"creative"}, map[string]string{"creative": "https://c.example"},
		map[string]evidence.Transport{"creative": evidence.A2A}, evidence.MCP))
	reply := `{"jsonrpc":"2.0","id":1,"result":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"data","data":{"formats":[]}}]}}`
	for _, tc := range []struct {
		face evidence.Transport
		want string // in the failure; "" is none
	}{
		{evidence.A2A, ""},
		{evidence.MCP, `recorded over mcp for agent "creative", which the run reached over a2a`},
	} {
		store.Add(evidence.Call{ProbeID: "storyboard/m/p/formats_" + string(tc.face), Transport: tc.face, Kind: evidence.KindToolCall,
			Tool: "list_creative_formats", Agent: "creative", Message: json.RawMessage(reply), HTTPStatus: 200})
		o := Replay{Store: store}.Call(context.Background(), Request{ProbeID: "storyboard/m/p/formats_" + string(tc.face), Task: "list_creative_formats", Agent: "creative"})
		if tc.want == "" && strings.Contains(o.Failure, "which the run reached") || tc.want != "" && !strings.Contains(o.Failure, tc.want) {
			t.Errorf("%s: failure = %q, want %q", tc.face, o.Failure, tc.want)
		}
	}
}

func TestReplayRefusesACallRecordedForAnotherAgent(t *testing.T) {
	store := evidence.NewStore(evidence.Target{})
	store.Add(evidence.Call{ProbeID: "storyboard/m/setup/plan", Kind: evidence.KindToolCall, Tool: "sync_plans", Agent: "governance"})
	o := Replay{Store: store}.Call(context.Background(), Request{ProbeID: "storyboard/m/setup/plan", Task: "sync_plans"})
	if !strings.Contains(o.Failure, `recorded for agent "governance"`) {
		t.Errorf("failure = %q", o.Failure)
	}
}

func TestAgentsRoundTripThroughTheStore(t *testing.T) {
	store := evidence.NewStore(evidence.Target{})
	if got := ReplayAgents(store); got != nil {
		t.Errorf("a run without agents replays %v", got)
	}
	store.Add(AgentsCall([]string{"governance", "creative"}, map[string]string{"governance": "https://gov.example/mcp", "creative": "https://c.example"},
		map[string]evidence.Transport{"governance": evidence.MCP, "creative": evidence.A2A}, evidence.MCP))
	if got := strings.Join(ReplayAgents(store), ","); got != "governance,creative" {
		t.Errorf("ReplayAgents = %s", got)
	}
	if got := ReplayAgentURLs(store); len(got) != 2 || got["governance"] != "https://gov.example/mcp" || got["creative"] != "https://c.example" {
		t.Errorf("ReplayAgentURLs = %v", got)
	}
	if got := replayAgentFaces(store); len(got) != 2 || got["governance"] != evidence.MCP || got["creative"] != evidence.A2A {
		t.Errorf("ReplayAgentFaces = %v", got)
	}
	c, _ := store.Call(agentsProbeID)
	if !json.Valid(c.Arguments) || !c.IsStoryboard() {
		t.Errorf("the record = %+v", c)
	}
	// A run recorded before the URLs were: names alone.
	old := evidence.NewStore(evidence.Target{})
	old.Add(evidence.Call{ProbeID: agentsProbeID, Kind: evidence.KindStoryboardContext, Arguments: json.RawMessage(`["governance"]`)})
	if got := ReplayAgents(old); len(got) != 1 || got[0] != "governance" || ReplayAgentURLs(old) != nil || replayAgentFaces(old) != nil {
		t.Errorf("an older record replays %v, %v, %v", got, ReplayAgentURLs(old), replayAgentFaces(old))
	}
}

func TestARunsAgentOverridesTheStoryboardsAgentURL(t *testing.T) {
	sb := &spec.Storyboard{ID: "g", Context: map[string]any{"governance_agent_url": "https://training.example", "other": "x", "creative_agent_url": "https://c.example"}}
	for _, tc := range []struct {
		name string
		env  Env
		want map[string]any
	}{
		{"a run naming the agent", Env{Agents: []string{"governance"}, AgentURLs: map[string]string{"governance": "https://127.0.0.1:9/mcp"}},
			map[string]any{"governance_agent_url": "https://127.0.0.1:9/mcp", "other": "x", "creative_agent_url": "https://c.example"}},
		{"a single-agent run", Env{}, map[string]any{"governance_agent_url": "https://training.example", "other": "x", "creative_agent_url": "https://c.example"}},
		{"an agent the storyboard names no URL for", Env{Agents: []string{"seller2"}, AgentURLs: map[string]string{"seller2": "https://s.example/mcp"}},
			map[string]any{"governance_agent_url": "https://training.example", "other": "x", "creative_agent_url": "https://c.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := map[string]any{}
			for k, v := range sb.Context {
				ctx[k] = v
			}
			overrideAgentURLs(sb, &tc.env, ctx)
			if !reflect.DeepEqual(ctx, tc.want) {
				t.Errorf("context = %v, want %v", ctx, tc.want)
			}
		})
	}
}
