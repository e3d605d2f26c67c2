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
			m["https://id.example.net/.well-known/oauth-authorization-server"].Limit = "a response over 262144 bytes"
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
