package spec

import (
	"context"
	"fmt"

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
	FetchPublic(ctx context.Context, probeID, url string, opt FetchOptions) *Response
}

// FetchOptions tighten the fetch policy for one kind of fetch.
type FetchOptions struct {
	// NoIPLiterals refuses any IP-literal host (a local run excepted),
	// DenyHosts refuses hosts by name.
	NoIPLiterals bool
	DenyHosts    []string
}

// Response is one public GET (of the OAuth discovery graph, of a
// preview_url) as the fetch policy left it.
type Response struct {
	Status      int
	ContentType string
	// Location is a redirect's target, "" otherwise.
	Location string
	// Body is the raw body (bounded by the kit's max_response_bytes).
	Body []byte
	// Blocked says the fetch policy refused the request (a blocked
	// address after DNS resolution, a rebinding peer): the reason.
	Blocked string
	// Limit says a graph limit stopped the fetch (graph_limits, or the
	// response over max_response_bytes): which.
	Limit string
	// Failed says the network failed (no response): why. The graph
	// grades it as no response; a preview fetch as fetch_timeout.
	Failed string
}

// overLimit is the Limit of a response cut at the kit's
// max_response_bytes.
var overLimit = fmt.Sprintf("a response over %d bytes", fetch.MaxBytes)

// ResponseFrom is a live fetch as the OAuth walk and the substitution
// observer see it.
func ResponseFrom(r fetch.Response) *Response {
	o := &Response{Status: r.Status, ContentType: r.ContentType, Location: r.Location, Body: r.Body, Blocked: r.Blocked, Failed: r.Failed}
	if r.TooLarge {
		o.Limit = overLimit
	}
	return o
}

// ResponseOf reads a recorded fetch back as the live run saw it: the
// status, the policy's refusal, and from its exchange the content type,
// the redirect target and the body (cut at the limit: the limit).
func ResponseOf(c evidence.Call) *Response {
	r := &Response{Status: c.HTTPStatus, Blocked: c.Blocked, Failed: c.HarnessError}
	if n := len(c.Exchanges); n > 0 {
		x := c.Exchanges[n-1]
		r.ContentType = x.ResponseHeaders.Get("Content-Type")
		r.Location = x.ResponseHeaders.Get("Location")
		r.Body = x.ResponseBody
		if x.Truncated {
			r.Limit = overLimit
		}
	}
	return r
}
