package storyboard

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// graphFake answers the OAuth discovery graph's fetches from a map and
// counts them.
type graphFake struct {
	fake
	mu      sync.Mutex
	docs    map[string]*spec.Response
	fetched []string
}

func (g *graphFake) Get(_ context.Context, _, path string) *spec.Observation {
	return &spec.Observation{Transport: "http", HTTPStatus: 200, Payload: spec.Normalize(map[string]any{
		"resource": "https://agent.example.com/mcp", "authorization_servers": []any{"https://id.example.net"}})}
}

func (g *graphFake) FetchPublic(_ context.Context, probeID, url string, _ spec.FetchOptions) *spec.Response {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fetched = append(g.fetched, probeID+" "+url)
	if r, ok := g.docs[url]; ok {
		return r
	}
	return &spec.Response{}
}

const oauthSB = `
id: oauth_setup
version: "1.0.0"
title: t
category: oauth_setup
narrative: t
phases:
  - id: metadata_graph
    title: graph
    steps:
      - id: evaluate_oauth_metadata
        title: graph
        task: protected_resource_metadata
        stateful: false
        validations:
          - check: field_present
            path: resource
            description: resource
          - check: oauth_metadata_graph
            description: graph
      - id: again_without_the_check
        title: no graph
        task: protected_resource_metadata
        stateful: false
        validations:
          - check: field_present
            path: resource
            description: resource
`

func jsonDoc(body string) *spec.Response {
	return &spec.Response{Status: 200, ContentType: "application/json", Body: []byte(body)}
}

// The engine walks the graph for a step that grades oauth_metadata_graph,
// through the dispatcher's fetcher, under probe IDs numbered from the
// step's, and only there; the verdict is the graph's.
func TestEngineWalksTheOAuthGraph(t *testing.T) {
	good := func() map[string]*spec.Response {
		return map[string]*spec.Response{
			"https://agent.example.com/.well-known/oauth-protected-resource/mcp": jsonDoc(`{"resource":"https://agent.example.com/mcp","authorization_servers":["https://id.example.net"]}`),
			"https://id.example.net/.well-known/oauth-authorization-server":      jsonDoc(`{"issuer":"https://id.example.net","token_endpoint":"https://id.example.net/token","grant_types_supported":["client_credentials"]}`),
			"https://id.example.net/token":                                       {Status: 405},
		}
	}
	for _, tc := range []struct {
		name    string
		edit    func(map[string]*spec.Response)
		want    string
		fetches int
	}{
		{"a consistent graph", func(map[string]*spec.Response) {}, "metadata_graph.evaluate_oauth_metadata=pass metadata_graph.again_without_the_check=pass => passed", 3},
		{"an issuer mismatch", func(m map[string]*spec.Response) {
			m["https://id.example.net/.well-known/oauth-authorization-server"] = jsonDoc(`{"issuer":"https://id.example.net/","token_endpoint":"https://id.example.net/token","grant_types_supported":["client_credentials"]}`)
		}, "metadata_graph.evaluate_oauth_metadata=fail metadata_graph.again_without_the_check=pass => failed", 2},
		{"a blocked fetch", func(m map[string]*spec.Response) {
			m["https://id.example.net/token"] = &spec.Response{Blocked: "id.example.net resolves to 10.0.0.7"}
		}, "metadata_graph.evaluate_oauth_metadata=fail metadata_graph.again_without_the_check=pass => failed", 3},
		{"an oversized document", func(m map[string]*spec.Response) {
			m["https://id.example.net/.well-known/oauth-authorization-server"].Limit = spec.OverLimit
		}, "metadata_graph.evaluate_oauth_metadata=fail metadata_graph.again_without_the_check=pass => failed", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &graphFake{docs: good()}
			tc.edit(g.docs)
			e := env()
			e.AgentURL = "https://agent.example.com/mcp"
			res := Run(context.Background(), parse(t, oauthSB), e, g)
			if got := outcomes(res); got != tc.want {
				t.Fatalf("outcomes %s, want %s", got, tc.want)
			}
			if len(g.fetched) != tc.fetches {
				t.Fatalf("fetched %d URLs, want %d, each once: %v", len(g.fetched), tc.fetches, g.fetched)
			}
			for _, f := range g.fetched {
				if !strings.HasPrefix(f, "storyboard/oauth_setup/metadata_graph/evaluate_oauth_metadata#oauth/") {
					t.Fatalf("fetch %s is not under the step's probe ID", f)
				}
			}
		})
	}
}

// Limits the walk enforces: more than 64 requests, and 2 MiB in all.
func TestOAuthWalkEnforcesTheGraphLimits(t *testing.T) {
	servers := []string{}
	docs := map[string]*spec.Response{}
	for i := range 16 {
		issuer := "https://as" + string(rune('a'+i)) + ".example.net"
		servers = append(servers, `"`+issuer+`"`)
		docs[issuer+"/.well-known/oauth-authorization-server"] = &spec.Response{Status: 200, ContentType: "application/json",
			Body: []byte(`{"issuer":"` + issuer + `","token_endpoint":"` + issuer + `/t","grant_types_supported":["client_credentials"],"pad":"` + strings.Repeat("x", 200<<10) + `"}`)}
		docs[issuer+"/t"] = &spec.Response{Status: 400}
	}
	docs["https://agent.example.com/.well-known/oauth-protected-resource/mcp"] = jsonDoc(`{"resource":"https://agent.example.com/mcp","authorization_servers":[` + strings.Join(servers, ",") + `]}`)
	g := &graphFake{docs: docs}
	graph := WalkOAuthGraph(context.Background(), g, "p", "https://agent.example.com/mcp", OAuthGraph{})
	first, needs := evalOAuthGraph("https://agent.example.com/mcp", *graph)
	if len(needs) != 0 || first == nil || first.code != "oauth_graph_limit_exceeded" || !strings.Contains(first.detail, "bytes in all") {
		t.Fatalf("16 documents of 200 KiB: %+v (needs %v), want the 2 MiB limit", first, needs)
	}
	if len(g.fetched) > maxOAuthRequests {
		t.Fatalf("%d fetches, more than %d", len(g.fetched), maxOAuthRequests)
	}
}

// TestWalkOAuthGraphFromNamedMetadata: a walk given the metadata URL a
// challenge named (RFC 9728 §5.1) reads it there, not at the well-known
// location, and OAuthGraphFailures lists the graph's failures in the kit's
// precedence.
func TestWalkOAuthGraphFromNamedMetadata(t *testing.T) {
	const agent = "https://agent.example.com/mcp"
	const named = "https://meta.example.com/prm"
	g := &graphFake{docs: map[string]*spec.Response{
		named: {Status: 200, ContentType: "application/json", Body: []byte(`{"resource":"https://agent.example.com/mcp","authorization_servers":["https://as.example.com"]}`)},
		"https://as.example.com/.well-known/oauth-authorization-server": {Status: 200, ContentType: "application/json",
			Body: []byte(`{"issuer":"https://as.example.com/","token_endpoint":"https://as.example.com/token","grant_types_supported":["client_credentials"]}`)},
	}}
	graph := WalkOAuthGraph(context.Background(), g, "p", agent, OAuthGraph{Metadata: named})
	if _, ok := graph.Responses["https://agent.example.com/.well-known/oauth-protected-resource/mcp"]; ok {
		t.Error("the walk read the well-known location although the challenge named the metadata")
	}
	fails := OAuthGraphFailures(agent, *graph)
	if len(fails) != 1 || fails[0].Code != "oauth_issuer_mismatch" || fails[0].Field != "issuer" {
		t.Errorf("failures %+v, want one oauth_issuer_mismatch on issuer", fails)
	}
	if !SameResource("HTTPS://Agent.Example.com:443/mcp", agent) || SameResource(agent+"/", agent) {
		t.Error("SameResource does not compare as RFC 9728 §3.3 does")
	}
}
