package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/report"
)

func TestParseAgentsReadsNamesURLsAndTheirOwnTokens(t *testing.T) {
	env := map[string]string{"GOV_TOKEN": "gov-secret-1"}
	getenv := func(k string) string { return env[k] }
	env["CREATIVE_TOKEN"] = "creative-secret-2"
	got, err := parseAgents([]string{"governance=https://gov.example/mcp", "nyt_sales=http://127.0.0.1:9/mcp", "creative=a2a:https://creative.example/a2a/"},
		[]string{"governance=GOV_TOKEN", "creative=CREATIVE_TOKEN"}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Name != "governance" || got[0].MCP.Endpoint != "https://gov.example/mcp" || got[0].MCP.BearerToken != "gov-secret-1" ||
		got[0].Transport() != evidence.MCP || got[1].Name != "nyt_sales" || got[1].MCP.BearerToken != "" {
		t.Errorf("parseAgents = %+v", got)
	}
	// An A2A agent: its base URL (as --a2a takes it) and its own token,
	// nothing of an MCP endpoint.
	if a := got[2]; a.Name != "creative" || a.Transport() != evidence.A2A || a.A2A.BaseURL != "https://creative.example/a2a" ||
		a.A2A.BearerToken != "creative-secret-2" || a.MCP.Endpoint != "" || a.MCP.BearerToken != "" || a.URL() != "https://creative.example/a2a" {
		t.Errorf("the A2A agent = %+v", a)
	}
	for _, tc := range []struct {
		name            string
		agents, bearers []string
		want            string // in the usage error
	}{
		{"no equals sign", []string{"governance"}, nil, "want NAME=URL"},
		{"an empty name", []string{"=https://gov.example/mcp"}, nil, "want NAME=URL"},
		{"a name that is no identifier", []string{"gov ernance=https://gov.example/mcp"}, nil, "want NAME=URL"},
		{"a relative URL", []string{"governance=/mcp"}, nil, "absolute http or https URL"},
		{"another scheme", []string{"governance=ftp://gov.example/mcp"}, nil, "absolute http or https URL"},
		{"an A2A agent with a relative URL", []string{"governance=a2a:/a2a"}, nil, "a2a: then the absolute http or https base URL"},
		{"an A2A agent with another scheme", []string{"governance=a2a:ftp://gov.example"}, nil, "a2a: then the absolute http or https base URL"},
		{"an A2A agent with no URL", []string{"governance=a2a:"}, nil, "a2a: then the absolute http or https base URL"},
		{"an A2A agent named twice", []string{"governance=https://a.example/mcp", "governance=a2a:https://b.example"}, nil, "given twice"},
		{"credentials in an A2A agent's URL", []string{"governance=a2a:https://u:p@gov.example"}, nil, "--agent-bearer-env"},
		{"credentials in the URL", []string{"governance=https://u:p@gov.example/mcp"}, nil, "--agent-bearer-env"},
		{"a name given twice", []string{"governance=https://a.example/mcp", "governance=https://b.example/mcp"}, nil, "given twice"},
		{"a token for no agent", []string{"governance=https://gov.example/mcp"}, []string{"creative=GOV_TOKEN"}, "no --agent creative=URL"},
		{"a token given twice", []string{"governance=https://gov.example/mcp"}, []string{"governance=GOV_TOKEN", "governance=GOV_TOKEN"}, "given twice"},
		{"the token itself", []string{"governance=https://gov.example/mcp"}, []string{"governance=sk_Live9aZ3kQ7mN2pX8vB4cT6"}, "not the token itself"},
		{"an unset variable", []string{"governance=https://gov.example/mcp"}, []string{"governance=NOPE"}, "empty or unset"},
		{"no equals sign in the token flag", []string{"governance=https://gov.example/mcp"}, []string{"GOV_TOKEN"}, "want NAME=ENVVAR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseAgents(tc.agents, tc.bearers, getenv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if exitCodeOf(err) != ExitUsage {
				t.Errorf("exit %d, want %d", exitCodeOf(err), ExitUsage)
			}
			if strings.Contains(err.Error(), "sk_Live9aZ3kQ7mN2pX8vB4cT6") {
				t.Errorf("the error repeats the token: %v", err)
			}
		})
	}
}

func TestAgentNeedsOneAgentUnderTest(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--agent", "other=http://127.0.0.1:9/mcp"},
		{"run", "--agent", "other=http://127.0.0.1:9/mcp", "--targets", "targets.yaml"},
	} {
		code, _, errOut := run(t, nil, "", append(args, "--out", t.TempDir())...)
		if code != ExitUsage || !strings.Contains(errOut, "--agent names the other agents of one agent under test") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
}

// countingSeller serves a reference seller whose bearer token is token,
// keeping the tools each tools/call (or A2A message) named, every
// Authorization header, the requests' paths and the requests that carried
// the run's --header X-Run.
type countingSeller struct {
	URL string
	// Endpoints are all the seller's faces (URL is its MCP endpoint).
	Endpoints seller.Endpoints
	mu        sync.Mutex
	tools     []string
	auth      []string
	paths     []string
	xRun      int
}

func startCountingSeller(t *testing.T, token string) *countingSeller {
	t.Helper()
	cs := &countingSeller{}
	h := seller.New(seller.Options{BearerToken: token})
	srv := httptest.NewServer(observeToolCalls(h, func(tool string, r *http.Request) {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		if tool != "" {
			cs.tools = append(cs.tools, tool)
		}
		if a := r.Header.Get("Authorization"); a != "" {
			cs.auth = append(cs.auth, a)
		}
		if r.Header.Get("X-Run") != "" {
			cs.xRun++
		}
		cs.paths = append(cs.paths, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	cs.Endpoints = seller.EndpointsAt(srv.URL)
	cs.URL = cs.Endpoints.MCP
	return cs
}

// observeToolCalls serves h, first telling see about every request: the
// tool a JSON-RPC tools/call names, or the skill of an A2A message/send or
// SendMessage ("" for any other request).
func observeToolCalls(h http.Handler, see func(tool string, r *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name    string `json:"name"`
				Message struct {
					Parts []struct {
						Data struct {
							Skill string `json:"skill"`
						} `json:"data"`
					} `json:"parts"`
				} `json:"message"`
			} `json:"params"`
		}
		tool := ""
		if json.Unmarshal(body, &msg) == nil {
			switch msg.Method {
			case "tools/call":
				tool = msg.Params.Name
			case "message/send", "SendMessage":
				if len(msg.Params.Message.Parts) > 0 {
					tool = msg.Params.Message.Parts[0].Data.Skill
				}
			}
		}
		see(tool, r)
		h.ServeHTTP(w, r)
	})
}

func (cs *countingSeller) calls(tool string) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := 0
	for _, t := range cs.tools {
		if t == tool {
			n++
		}
	}
	return n
}

// checkCredentialsRouted fails t unless each agent saw only its own
// bearer token and the run's --header reached the seller alone.
func checkCredentialsRouted(t *testing.T, sales, other *countingSeller) {
	t.Helper()
	if !sales.sawOnly("Bearer sales-token-1") || !other.sawOnly("Bearer other-token-2") {
		t.Errorf("Authorization: the seller saw %v, the other agent %v", sales.auth, other.auth)
	}
	if sales.xRun == 0 || other.xRun != 0 {
		t.Errorf("--header reached the seller %d times, the other agent %d times", sales.xRun, other.xRun)
	}
}

// twoAgentsPassed reports whether r holds the one two_agents storyboard,
// passed on its three steps.
func twoAgentsPassed(r report.Run) bool {
	return len(r.Storyboards) == 1 && r.Storyboards[0].Outcome == "passed" && r.Storyboards[0].Counts["passed"] == 3
}

func (cs *countingSeller) sawOnly(auth string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.auth) > 0 && !slices.ContainsFunc(cs.auth, func(a string) bool { return a != auth })
}

// multiAgentRelease is the crafted release of the routing tests.
var multiAgentRelease = filepath.Join("..", "..", "suites", "storyboard", "testdata", "multiagent")

func TestAMultiAgentStoryboardReachesEachAgentWithItsOwnToken(t *testing.T) {
	sales, other := startCountingSeller(t, "sales-token-1"), startCountingSeller(t, "other-token-2")
	env := map[string]string{"SALES_TOKEN": "sales-token-1", "OTHER_TOKEN": "other-token-2"}
	out := t.TempDir()
	code, so, se := run(t, env, "", "run", "--mcp", sales.URL, "--bearer-env", "SALES_TOKEN", "--header", "X-Run: sales-only",
		"--agent", "other="+other.URL, "--agent-bearer-env", "other=OTHER_TOKEN",
		"--storyboards", multiAgentRelease, "--storyboard", "two_agents", "--schemas", "off", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	// get_products and one list_creative_formats on the seller; the other
	// agent's list_creative_formats alone on the other.
	if sales.calls("get_products") != 1 || sales.calls("list_creative_formats") != 1 {
		t.Errorf("the seller got %v", sales.tools)
	}
	if other.calls("list_creative_formats") != 1 || len(other.tools) != 1 {
		t.Errorf("the other agent got %v", other.tools)
	}
	checkCredentialsRouted(t, sales, other)
	r := readResults(t, out)
	if !twoAgentsPassed(r) {
		t.Fatalf("storyboards = %+v", r.Storyboards)
	}
	noticed := 0
	for _, st := range r.Steps {
		routed := slices.ContainsFunc(st.Notices, func(n report.Notice) bool {
			return n.Code == "routed_agent" && strings.Contains(n.Message, "agent other")
		})
		if st.StoryboardID == "two_agents" && routed != (st.StepID == "other_formats") {
			t.Errorf("%s: routed_agent notice %v", st.StepID, routed)
		}
		if routed {
			noticed++
		}
	}
	if noticed != 1 {
		t.Errorf("%d steps say they went to the other agent, want 1", noticed)
	}
	_, calls := evidenceWithout(t, out, "sales-token-1", "other-token-2")
	agents := map[string]string{}
	for _, c := range calls {
		if c.Kind == evidence.KindToolCall && c.IsStoryboard() {
			agents[c.ProbeID] = c.Agent
		}
	}
	want := map[string]string{"storyboard/two_agents/discover/sales_products": "", "storyboard/two_agents/discover/other_formats": "other",
		"storyboard/two_agents/discover/sales_formats": ""}
	for id, a := range want {
		if got, ok := agents[id]; !ok || got != a {
			t.Errorf("%s: agent %q (recorded %v), want %q", id, got, ok, a)
		}
	}

	// judge routes and grades the recorded run again, with no seller.
	judged := t.TempDir()
	code, so, se = run(t, nil, "", "judge", "--storyboards", multiAgentRelease, "--out", judged, out)
	if code != ExitOK || !strings.Contains(so, "agree: every verdict judged again is the submitted one") {
		t.Fatalf("judge: exit %d\n%s%s", code, so, se)
	}
	j := readResults(t, judged)
	if !twoAgentsPassed(j) {
		t.Errorf("judged storyboards = %+v", j.Storyboards)
	}
}

func TestAMultiAgentStoryboardIsSkippedWithOneAgent(t *testing.T) {
	sales := startCountingSeller(t, "")
	out := t.TempDir()
	code, so, se := run(t, nil, "", "run", "--mcp", sales.URL, "--storyboards", multiAgentRelease, "--storyboard", "two_agents",
		"--schemas", "off", "--out", out)
	r := readResults(t, out)
	if len(r.Storyboards) != 1 || r.Storyboards[0].Skip == nil || r.Storyboards[0].Skip.Reason != "requirement_unmet" ||
		!strings.Contains(r.Storyboards[0].Skip.Detail, "multi_agent") {
		t.Fatalf("exit %d, storyboards = %+v\n%s%s", code, r.Storyboards, so, se)
	}
	if sales.calls("get_products") != 0 {
		t.Errorf("a skipped storyboard called %v", sales.tools)
	}
}

// TestAMultiAgentStoryboardReachesAnA2AAgentOnItsOwnFace routes the other
// agent's step to the reference seller's A2A 1.0 face, the agent under
// test being reached over MCP or over A2A: each agent's card is fetched
// once, as that agent's, and the routed call goes to its face alone, with
// its token alone; judge routes and grades the recorded run again.
func TestAMultiAgentStoryboardReachesAnA2AAgentOnItsOwnFace(t *testing.T) {
	for _, face := range []string{"mcp", "a2a"} {
		t.Run("the agent under test over "+face, func(t *testing.T) {
			sales, other := startCountingSeller(t, "sales-token-1"), startCountingSeller(t, "other-token-2")
			target := []string{"--mcp", sales.URL}
			if face == "a2a" {
				target = []string{"--a2a", sales.Endpoints.A2A10}
			}
			env := map[string]string{"SALES_TOKEN": "sales-token-1", "OTHER_TOKEN": "other-token-2"}
			out := t.TempDir()
			args := append([]string{"run"}, target...)
			args = append(args, "--bearer-env", "SALES_TOKEN", "--header", "X-Run: sales-only",
				"--agent", "other=a2a:"+other.Endpoints.A2A10, "--agent-bearer-env", "other=OTHER_TOKEN",
				"--storyboards", multiAgentRelease, "--storyboard", "two_agents", "--schemas", "off", "--out", out)
			code, so, se := run(t, env, "", args...)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s%s", code, so, se)
			}
			if sales.calls("get_products") != 1 || sales.calls("list_creative_formats") != 1 {
				t.Errorf("the seller got %v", sales.tools)
			}
			// The other agent: its card once, then the one routed
			// message, both on its A2A 1.0 face, and nothing else.
			cards, face10 := 0, 0
			for _, p := range other.paths {
				if strings.HasSuffix(p, "/.well-known/agent-card.json") {
					cards++
				}
				if strings.HasPrefix(p, "/a2a/v1") {
					face10++
				}
			}
			if len(other.paths) != 2 || cards != 1 || face10 != 2 || other.calls("list_creative_formats") != 1 || len(other.tools) != 1 {
				t.Errorf("the other agent got %v (requests %v)", other.tools, other.paths)
			}
			checkCredentialsRouted(t, sales, other)
			if len(other.auth) != 1 {
				t.Errorf("Authorization: the other agent saw %v, want one value", other.auth)
			}
			r := readResults(t, out)
			if !twoAgentsPassed(r) {
				t.Fatalf("storyboards = %+v", r.Storyboards)
			}
			_, calls := evidenceWithout(t, out, "sales-token-1", "other-token-2")
			byID := map[string]evidence.Call{}
			for _, c := range calls {
				byID[c.ProbeID] = c
			}
			if c, ok := byID["storyboard/card@other"]; !ok || c.Agent != "other" || c.Transport != evidence.A2A || c.Kind != evidence.KindHTTPGet ||
				c.URL != other.Endpoints.A2A10+"/.well-known/agent-card.json" || c.HTTPStatus != http.StatusOK {
				t.Errorf("the other agent's card: %+v (recorded %v)", c, ok)
			}
			if c := byID["storyboard/two_agents/discover/other_formats"]; c.Agent != "other" || c.Transport != evidence.A2A || c.Method != "SendMessage" {
				t.Errorf("the routed call: agent %q over %s (%s)", c.Agent, c.Transport, c.Method)
			}
			for _, id := range []string{"storyboard/two_agents/discover/sales_products", "storyboard/two_agents/discover/sales_formats"} {
				if c := byID[id]; c.Agent != "" || string(c.Transport) != face {
					t.Errorf("%s: agent %q over %s", id, c.Agent, c.Transport)
				}
			}
			if c := byID["storyboard/card"]; (face == "a2a") != (c.ProbeID != "") || c.Agent != "" {
				t.Errorf("the agent under test's card: %+v", c)
			}
			a := byID["storyboard/#agents"]
			var recs []map[string]string
			if err := json.Unmarshal(a.Arguments, &recs); err != nil || len(recs) != 1 || string(a.Transport) != face ||
				recs[0]["name"] != "other" || recs[0]["url"] != other.Endpoints.A2A10 || recs[0]["transport"] != "a2a" {
				t.Errorf("the agents record: %s over %s", a.Arguments, a.Transport)
			}

			judged := t.TempDir()
			code, so, se = run(t, nil, "", "judge", "--storyboards", multiAgentRelease, "--out", judged, out)
			if code != ExitOK || !strings.Contains(so, "agree: every verdict judged again is the submitted one") {
				t.Fatalf("judge: exit %d\n%s%s", code, so, se)
			}
			j := readResults(t, judged)
			if !twoAgentsPassed(j) {
				t.Errorf("judged storyboards = %+v", j.Storyboards)
			}
		})
	}
}

// evidenceWithout reads a run's evidence.json, failing the test for every
// secret it holds, and returns its bytes and calls.
func evidenceWithout(t *testing.T, dir string, secrets ...string) ([]byte, []evidence.Call) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileEvidence))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range secrets {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("evidence.json holds a token (%s…)", secret[:min(4, len(secret))])
		}
	}
	var doc struct {
		Calls []evidence.Call `json:"calls"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return b, doc.Calls
}
