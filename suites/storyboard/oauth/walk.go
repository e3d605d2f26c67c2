package oauth

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// The kit's graph_limits the walk enforces (max_authorization_servers
// and max_unique_urls are the evaluation's).
const (
	maxOAuthRequests   = 64
	maxOAuthTotalBytes = 2 << 20
	oauthConcurrency   = 4
	oauthWalkTimeout   = 60 * time.Second
)

// Walk fetches the discovery graph of agentURL until the
// evaluation needs nothing more, from: its Local and Metadata say how and
// where the walk starts (its Responses are ignored). Each round fetches
// what the last evaluation asked for, four at a time, under probe IDs
// numbered in that order (so a replay asks for the same calls). Requests
// beyond 64, bytes beyond 2 MiB and a walk beyond 60 s are answered with
// the limit, which the evaluation reports as oauth_graph_limit_exceeded.
func Walk(ctx context.Context, pf spec.PublicFetcher, probeID, agentURL string, from Graph) *Graph {
	ctx, cancel := context.WithTimeout(ctx, oauthWalkTimeout)
	defer cancel()
	g := &Graph{Responses: map[string]*spec.Response{}, Local: from.Local, Metadata: from.Metadata}
	sent, total := 0, 0
	for {
		needs := Fetches(agentURL, *g)
		if len(needs) == 0 {
			return g
		}
		got := make([]*spec.Response, len(needs))
		sem := make(chan struct{}, oauthConcurrency)
		var wg sync.WaitGroup
		for i, u := range needs {
			n := sent + i
			switch {
			case n >= maxOAuthRequests:
				got[i] = &spec.Response{Limit: fmt.Sprintf("more than %d requests", maxOAuthRequests)}
				continue
			case ctx.Err() != nil:
				got[i] = &spec.Response{Limit: fmt.Sprintf("the walk took over %s", oauthWalkTimeout)}
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				got[i] = pf.FetchPublic(ctx, fmt.Sprintf("%s#oauth/%d", probeID, n), u, spec.FetchOptions{})
			}()
		}
		wg.Wait()
		sent += len(needs)
		for i, u := range needs {
			r := got[i]
			if r == nil {
				r = &spec.Response{}
			}
			if total += len(r.Body); total > maxOAuthTotalBytes && r.Limit == "" {
				r = &spec.Response{Limit: fmt.Sprintf("more than %d bytes in all", maxOAuthTotalBytes)}
			}
			g.Responses[u] = r
		}
	}
}
