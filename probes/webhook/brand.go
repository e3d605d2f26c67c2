package webhook

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// BrandAgent is an agents[] entry of a brand.json (security.mdx, "Agent
// key publication"): the agent's URL and where its signing keys are.
type BrandAgent struct {
	URL     string `json:"url"`
	JWKSURI string `json:"jwks_uri"`
}

// ParseBrandAgents reads the agents[] of a brand.json document. The error
// says why the bytes are no brand.json: not JSON, not an object, or
// agents not an array of objects. A document without agents has none.
func ParseBrandAgents(b []byte) ([]BrandAgent, error) {
	var doc struct {
		Agents []BrandAgent `json:"agents"`
	}
	if _, err := rawjson.ParseObject(b); err != nil {
		return nil, fmt.Errorf("brand.json: %w", err)
	}
	if err := rawjson.Decode(b, &doc); err != nil {
		return nil, fmt.Errorf("brand.json: %w", err)
	}
	return doc.Agents, nil
}

// ErrNoJWKSURI says no agents[] entry of a brand.json names a jwks_uri
// (for the agent, when the caller asks for its own entry only).
var ErrNoJWKSURI = errors.New("no agents[] entry names a jwks_uri")

// AgentJWKSURI picks the agent's jwks_uri among a brand.json's agents: the
// entry whose url is agent (a trailing slash aside) and names a jwks_uri;
// else, with anyAgent, the first entry naming one. The jwks_uri is
// resolved against brandURL, where the brand.json was fetched. own says
// the entry was the agent's. ErrNoJWKSURI when no entry qualifies; an
// error naming the value when the jwks_uri is no URL.
func AgentJWKSURI(agents []BrandAgent, brandURL, agent string, anyAgent bool) (uri string, own bool, err error) {
	pick := -1
	for i, a := range agents {
		if a.JWKSURI == "" {
			continue
		}
		if strings.TrimRight(a.URL, "/") == strings.TrimRight(agent, "/") {
			pick, own = i, true
			break
		}
		if pick < 0 && anyAgent {
			pick = i
		}
	}
	if pick < 0 {
		return "", false, ErrNoJWKSURI
	}
	base, err := url.Parse(brandURL)
	if err != nil {
		return "", own, fmt.Errorf("brand.json URL: %w", err)
	}
	ref, err := base.Parse(agents[pick].JWKSURI)
	if err != nil || (ref.Scheme != "https" && ref.Scheme != "http") || ref.Host == "" {
		return "", own, fmt.Errorf("jwks_uri %q is not an http(s) URL", wire.Sanitize(agents[pick].JWKSURI, 120))
	}
	return ref.String(), own, nil
}
