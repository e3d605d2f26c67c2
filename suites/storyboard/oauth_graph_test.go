package storyboard

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

type oauthVector struct {
	ID        string                     `json:"id"`
	AgentURL  string                     `json:"agent_url"`
	DNS       json.RawMessage            `json:"dns"`
	Responses map[string]json.RawMessage `json:"responses"`
	Expected  struct {
		Success   bool   `json:"success"`
		ErrorCode string `json:"error_code"`
	} `json:"expected_outcome"`
}

// TestOAuthGraphVectors runs the deterministic corpus of
// test-vectors/oauth-setup/vectors.json (3.2.0-beta.5) through the
// oauth_metadata_graph grader: every positive vector passes, every
// negative one fails with its exact code. Vectors that exercise DNS
// answers test the engine's fetcher (address validation after
// resolution), not the grader, and are fed as the fetcher reports them:
// a blocked response.
func TestOAuthGraphVectors(t *testing.T) {
	path := specDir(t, filepath.Join("3.2.0-beta.5", "test-vectors", "oauth-setup", "vectors.json"))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Positive, Negative []oauthVector
	}
	if err := json.Unmarshal(data, &corpus); err != nil {
		t.Fatal(err)
	}
	for _, v := range append(corpus.Positive, corpus.Negative...) {
		t.Run(v.ID, func(t *testing.T) {
			have := map[string]*OAuthResponse{}
			for k, raw := range v.Responses {
				var x struct {
					Status      int               `json:"status"`
					ContentType string            `json:"content_type"`
					JSON        json.RawMessage   `json:"json"`
					Body        *string           `json:"body"`
					Headers     map[string]string `json:"headers"`
				}
				if err := json.Unmarshal(raw, &x); err != nil {
					t.Fatal(err)
				}
				r := &OAuthResponse{Status: x.Status, ContentType: x.ContentType, Location: x.Headers["location"], Body: x.JSON}
				if x.Body != nil {
					r.Body = []byte(*x.Body)
				}
				have[k[len("GET "):]] = r
			}
			// The engine's loop: fetch what the evaluation needs until
			// nothing is missing. A host with DNS fixtures is one whose
			// answers the fetcher refuses (a private answer, a rebinding
			// peer): the fetcher reports it blocked. Any other request
			// missing from the map fails closed (no response).
			var dnsHosts map[string]json.RawMessage
			_ = json.Unmarshal(v.DNS, &dnsHosts)
			for range maxOAuthURLs {
				needs := OAuthGraphFetches(v.AgentURL, have)
				if len(needs) == 0 {
					break
				}
				for _, u := range needs {
					pu, _ := url.Parse(u)
					if _, ok := dnsHosts[pu.Hostname()]; ok {
						have[u] = &OAuthResponse{Blocked: "the resolved or connected address is not globally routable"}
						continue
					}
					have[u] = &OAuthResponse{}
				}
			}
			for k, r := range have {
				pu, _ := url.Parse(k)
				if _, ok := dnsHosts[pu.Hostname()]; ok {
					r.Blocked = "the resolved or connected address is not globally routable"
				}
			}
			first, needs := evalOAuthGraph(v.AgentURL, have)
			if len(needs) > 0 {
				t.Fatalf("the fetch loop left needs: %v", needs)
			}
			switch {
			case v.Expected.Success && first != nil:
				t.Fatalf("positive vector failed: %+v", *first)
			case !v.Expected.Success && first == nil:
				t.Fatalf("negative vector passed, want %s", v.Expected.ErrorCode)
			case !v.Expected.Success && first.code != v.Expected.ErrorCode:
				t.Fatalf("code %s (%+v), want %s", first.code, *first, v.Expected.ErrorCode)
			}
		})
	}
}
