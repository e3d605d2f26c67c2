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
	got, err := parseAgents([]string{"governance=https://gov.example/mcp", "nyt_sales=http://127.0.0.1:9/mcp"}, []string{"governance=GOV_TOKEN"}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "governance" || got[0].MCP.Endpoint != "https://gov.example/mcp" || got[0].MCP.BearerToken != "gov-secret-1" ||
		got[1].Name != "nyt_sales" || got[1].MCP.BearerToken != "" {
		t.Errorf("parseAgents = %+v", got)
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
		{"an A2A agent", []string{"governance=a2a:https://gov.example"}, nil, "only MCP endpoints"},
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
// keeping the tools each tools/call named, every Authorization header and
// the requests that carried the run's --header X-Run.
type countingSeller struct {
	URL   string
	mu    sync.Mutex
	tools []string
	auth  []string
	xRun  int
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
	}))
	t.Cleanup(srv.Close)
	cs.URL = srv.URL + "/mcp"
	return cs
}

// observeToolCalls serves h, first telling see about every request: the
// tool a JSON-RPC tools/call names ("" for any other request).
func observeToolCalls(h http.Handler, see func(tool string, r *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		tool := ""
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			tool = msg.Params.Name
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
	if !sales.sawOnly("Bearer sales-token-1") || !other.sawOnly("Bearer other-token-2") {
		t.Errorf("Authorization: the seller saw %v, the other agent %v", sales.auth, other.auth)
	}
	if sales.xRun == 0 || other.xRun != 0 {
		t.Errorf("--header reached the seller %d times, the other agent %d times", sales.xRun, other.xRun)
	}
	r := readResults(t, out)
	if len(r.Storyboards) != 1 || r.Storyboards[0].Outcome != "passed" || r.Storyboards[0].Counts["passed"] != 3 {
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
	b, err := os.ReadFile(filepath.Join(out, FileEvidence))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"sales-token-1", "other-token-2"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("evidence.json holds %s", secret)
		}
	}
	var doc struct {
		Calls []evidence.Call `json:"calls"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	agents := map[string]string{}
	for _, c := range doc.Calls {
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
	if len(j.Storyboards) != 1 || j.Storyboards[0].Outcome != "passed" || j.Storyboards[0].Counts["passed"] != 3 {
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
