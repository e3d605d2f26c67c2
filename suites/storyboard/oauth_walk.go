package storyboard

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
)

// PublicFetcher is a Dispatcher that also GETs public URLs an agent names
// (its OAuth discovery graph, a creative's preview_url), under the fetch
// policy of test-kits/oauth-setup-runner.yaml (probes/fetch): no
// credentials, the SSRF rules, no redirect followed; opt tightens it. The
// live dispatcher fetches and records each under probeID; a Replay
// returns the recorded one.
type PublicFetcher interface {
	FetchPublic(ctx context.Context, probeID, url string, opt FetchOptions) *OAuthResponse
}

// FetchOptions tighten the fetch policy for one kind of fetch.
type FetchOptions struct {
	// NoIPLiterals refuses any IP-literal host (a local run excepted),
	// DenyHosts refuses hosts by name.
	NoIPLiterals bool
	DenyHosts    []string
}

// The kit's graph_limits the walk enforces (max_authorization_servers
// and max_unique_urls are the evaluation's).
const (
	maxOAuthRequests   = 64
	maxOAuthTotalBytes = 2 << 20
	oauthConcurrency   = 4
	oauthWalkTimeout   = 60 * time.Second
)

// OverLimit is the Limit of a response cut at the kit's
// max_response_bytes.
var OverLimit = fmt.Sprintf("a response over %d bytes", fetch.MaxBytes)

// WalkOAuthGraph fetches the discovery graph of agentURL until the
// evaluation needs nothing more, from: its Local and Metadata say how and
// where the walk starts (its Responses are ignored). Each round fetches
// what the last evaluation asked for, four at a time, under probe IDs
// numbered in that order (so a replay asks for the same calls). Requests
// beyond 64, bytes beyond 2 MiB and a walk beyond 60 s are answered with
// the limit, which the evaluation reports as oauth_graph_limit_exceeded.
func WalkOAuthGraph(ctx context.Context, pf PublicFetcher, probeID, agentURL string, from OAuthGraph) *OAuthGraph {
	ctx, cancel := context.WithTimeout(ctx, oauthWalkTimeout)
	defer cancel()
	g := &OAuthGraph{Responses: map[string]*OAuthResponse{}, Local: from.Local, Metadata: from.Metadata}
	sent, total := 0, 0
	for {
		needs := OAuthGraphFetches(agentURL, *g)
		if len(needs) == 0 {
			return g
		}
		got := make([]*OAuthResponse, len(needs))
		sem := make(chan struct{}, oauthConcurrency)
		var wg sync.WaitGroup
		for i, u := range needs {
			n := sent + i
			switch {
			case n >= maxOAuthRequests:
				got[i] = &OAuthResponse{Limit: fmt.Sprintf("more than %d requests", maxOAuthRequests)}
				continue
			case ctx.Err() != nil:
				got[i] = &OAuthResponse{Limit: fmt.Sprintf("the walk took over %s", oauthWalkTimeout)}
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				got[i] = pf.FetchPublic(ctx, fmt.Sprintf("%s#oauth/%d", probeID, n), u, FetchOptions{})
			}()
		}
		wg.Wait()
		sent += len(needs)
		for i, u := range needs {
			r := got[i]
			if r == nil {
				r = &OAuthResponse{}
			}
			if total += len(r.Body); total > maxOAuthTotalBytes && r.Limit == "" {
				r = &OAuthResponse{Limit: fmt.Sprintf("more than %d bytes in all", maxOAuthTotalBytes)}
			}
			g.Responses[u] = r
		}
	}
}

// OAuthResponseFrom is a live fetch as the walk sees it.
func OAuthResponseFrom(r fetch.Response) *OAuthResponse {
	o := &OAuthResponse{Status: r.Status, ContentType: r.ContentType, Location: r.Location, Body: r.Body, Blocked: r.Blocked, Failed: r.Failed}
	if r.TooLarge {
		o.Limit = OverLimit
	}
	return o
}

// OAuthResponseOf reads a recorded fetch back as the walk saw it: the
// status, the policy's refusal, and from its exchange the content type,
// the redirect target and the body (cut at the limit: the limit).
func OAuthResponseOf(c evidence.Call) *OAuthResponse {
	r := &OAuthResponse{Status: c.HTTPStatus, Blocked: c.Blocked, Failed: c.HarnessError}
	if n := len(c.Exchanges); n > 0 {
		x := c.Exchanges[n-1]
		r.ContentType = x.ResponseHeaders.Get("Content-Type")
		r.Location = x.ResponseHeaders.Get("Location")
		r.Body = x.ResponseBody
		if x.Truncated {
			r.Limit = OverLimit
		}
	}
	return r
}
