package live

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/storyboard"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

func TestBogusCredentialsHaveTheShapeTheStepAsks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		auth  *spec.Auth
		check func(token string, basic string) bool
	}{
		{"auth: none sends nothing", &spec.Auth{None: true}, func(tok, basic string) bool { return tok == "" && basic == "" }},
		{"a random api key", &spec.Auth{Type: "api_key", ValueStrategy: "random_invalid"}, func(tok, basic string) bool {
			return strings.HasPrefix(tok, "invalid-") && len(tok) == len("invalid-")+64 && basic == ""
		}},
		{"a random Basic credential", &spec.Auth{Type: "basic", ValueStrategy: "random_invalid"}, func(tok, basic string) bool {
			b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(basic, "Basic "))
			return tok == "" && err == nil && strings.Count(string(b), ":") == 1
		}},
		{"a JWT-shaped bearer", &spec.Auth{Type: "oauth_bearer", ValueStrategy: "random_invalid_jwt"}, func(tok, basic string) bool {
			parts := strings.Split(tok, ".")
			if len(parts) != 3 || basic != "" {
				return false
			}
			h, err := base64.RawURLEncoding.DecodeString(parts[0])
			return err == nil && json.Valid(h)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, h := bogus(tc.auth)
			if !tc.check(tok, h.Get("Authorization")) {
				t.Errorf("token %q, Authorization %q", tok, h.Get("Authorization"))
			}
			tok2, _ := bogus(tc.auth)
			if tok != "" && tok == tok2 {
				t.Errorf("the same bogus token twice: %q", tok)
			}
		})
	}
}

func TestOriginIsSchemeAndHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://seller.example/mcp":         "https://seller.example",
		"http://127.0.0.1:8080/a2a/v1/":      "http://127.0.0.1:8080",
		"https://seller.example":             "https://seller.example",
		"https://seller.example:8443/x?y=/z": "https://seller.example:8443",
	} {
		if got := origin(in); got != want {
			t.Errorf("origin(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGeneratedValuesRoundTripThroughTheStore(t *testing.T) {
	store := evidence.NewStore(evidence.Target{})
	b, _ := json.Marshal(map[string]string{"k": "00000000-0000-4000-8000-000000000001"})
	store.Add(evidence.Call{ProbeID: GeneratedProbeID("media_buy_seller/x"), Kind: evidence.KindStoryboardContext, Arguments: b})
	store.Add(evidence.Call{ProbeID: "storyboard/media_buy_seller/x/p/s", Kind: evidence.KindToolCall, Arguments: b})
	got := Generated(store)
	if len(got) != 1 || got["media_buy_seller/x"]["k"] != "00000000-0000-4000-8000-000000000001" {
		t.Errorf("Generated = %v", got)
	}
}

func TestEachAgentHasASessionOfItsOwn(t *testing.T) {
	if got := sessionKey("media_buy_seller/x", ""); got != "media_buy_seller/x" {
		t.Errorf("the agent under test's session = %q", got)
	}
	if got := sessionKey("media_buy_seller/x", "governance"); got != "media_buy_seller/x@governance" {
		t.Errorf("another agent's session = %q", got)
	}
	d := &dispatcher{sessions: map[string]*session{"a": {}, "a@governance": {}, "ab": {}, "ab@governance": {}}}
	d.end("a")
	if _, ok := d.sessions["ab"]; !ok || len(d.sessions) != 2 {
		t.Errorf("after end(a) the sessions are %v", d.sessions)
	}
}

func TestAnUnknownAgentIsAHarnessError(t *testing.T) {
	var got []evidence.Call
	d := &dispatcher{add: func(c evidence.Call) evidence.Call { got = append(got, c); return c }}
	o := d.Call(t.Context(), storyboard.Request{ProbeID: "storyboard/x/p/s", Storyboard: "x", Task: "sync_plans", Agent: "governance"})
	if o.Failure == "" || len(got) != 1 || got[0].Agent != "governance" || !strings.Contains(got[0].HarnessError, "no agent governance") {
		t.Errorf("observation %+v, recorded %+v", o, got)
	}
}
