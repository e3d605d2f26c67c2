package oauth

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// docFetcher answers a walk's fetches from a map of documents by URL
// (nothing for any other) and counts them.
type docFetcher struct {
	docs map[string]*spec.Response
	n    atomic.Int64
}

func (g *docFetcher) FetchPublic(_ context.Context, _, url string, _ spec.FetchOptions) *spec.Response {
	g.n.Add(1)
	if r := g.docs[url]; r != nil {
		return r
	}
	return &spec.Response{}
}

func jsonResponse(body string) *spec.Response {
	return &spec.Response{Status: 200, ContentType: "application/json", Body: []byte(body)}
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
	docs["https://agent.example.com/.well-known/oauth-protected-resource/mcp"] = jsonResponse(`{"resource":"https://agent.example.com/mcp","authorization_servers":[` + strings.Join(servers, ",") + `]}`)
	g := &docFetcher{docs: docs}
	graph := Walk(context.Background(), g, "p", "https://agent.example.com/mcp", Graph{})
	first, needs := evalOAuthGraph("https://agent.example.com/mcp", *graph)
	if len(needs) != 0 || first == nil || first.code != "oauth_graph_limit_exceeded" || !strings.Contains(first.detail, "bytes in all") {
		t.Fatalf("16 documents of 200 KiB: %+v (needs %v), want the 2 MiB limit", first, needs)
	}
	if g.n.Load() > maxOAuthRequests {
		t.Fatalf("%d fetches, more than %d", g.n.Load(), maxOAuthRequests)
	}
}

// TestWalkFromNamedMetadata: a walk given the metadata URL a
// challenge named (RFC 9728 §5.1) reads it there, not at the well-known
// location, and Failures lists the graph's failures in the kit's
// precedence.
func TestWalkFromNamedMetadata(t *testing.T) {
	const agent = "https://agent.example.com/mcp"
	const named = "https://meta.example.com/prm"
	g := &docFetcher{docs: map[string]*spec.Response{
		named: {Status: 200, ContentType: "application/json", Body: []byte(`{"resource":"https://agent.example.com/mcp","authorization_servers":["https://as.example.com"]}`)},
		"https://as.example.com/.well-known/oauth-authorization-server": {Status: 200, ContentType: "application/json",
			Body: []byte(`{"issuer":"https://as.example.com/","token_endpoint":"https://as.example.com/token","grant_types_supported":["client_credentials"]}`)},
	}}
	graph := Walk(context.Background(), g, "p", agent, Graph{Metadata: named})
	if _, ok := graph.Responses["https://agent.example.com/.well-known/oauth-protected-resource/mcp"]; ok {
		t.Error("the walk read the well-known location although the challenge named the metadata")
	}
	fails := Failures(agent, *graph)
	if len(fails) != 1 || fails[0].Code != "oauth_issuer_mismatch" || fails[0].Field != "issuer" {
		t.Errorf("failures %+v, want one oauth_issuer_mismatch on issuer", fails)
	}
	if !SameResource("HTTPS://Agent.Example.com:443/mcp", agent) || SameResource(agent+"/", agent) {
		t.Error("SameResource does not compare as RFC 9728 §3.3 does")
	}
}
