package cli

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/report"
)

// noFailures checks that no rule of the run's report failed.
func noFailures(t *testing.T, dir string) {
	t.Helper()
	r := readResults(t, dir)
	for _, rule := range r.Rules {
		if rule.Outcome == report.Failed {
			t.Errorf("%s failed on a URL that is not the seller's endpoint: %s", rule.ID, rule.Message)
		}
	}
	if r.Verdict != report.HarnessError {
		t.Errorf("verdict %s, want %s", r.Verdict, report.HarnessError)
	}
}

func TestA2AGivenSomethingWithoutAnAgentCardSaysWhatItWants(t *testing.T) {
	eps, stop, err := seller.StartAll(t.Context(), seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	web := httptest.NewServer(http.FileServer(http.Dir(t.TempDir()))) // a plain web server: 404 for all
	defer web.Close()
	for name, url := range map[string]string{
		"the card's own URL": eps.A2A10 + a2a.CardPath,
		"the MCP endpoint":   eps.MCP,
		"a plain web server": web.URL,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			code, out, errOut := run(t, nil, "", "run", "--a2a", url, "--out", dir, "--schemas", "off")
			if code != ExitHarness {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitHarness, out, errOut)
			}
			want := "adcp-conform: harness error: no agent card at " + strings.TrimRight(url, "/") + a2a.CardPath + " (HTTP 404): --a2a wants the agent's base URL\n"
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr lacks the line %q:\n%s", want, errOut)
			}
			noFailures(t, dir)
		})
	}
}

func TestA2AGivenAWebPageSaysItIsNoAgentCard(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<!doctype html><title>Welcome</title>"))
	}))
	defer page.Close()
	dir := t.TempDir()
	code, out, errOut := run(t, nil, "", "run", "--a2a", page.URL, "--out", dir, "--schemas", "off")
	if code != ExitHarness {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitHarness, out, errOut)
	}
	want := "adcp-conform: harness error: no agent card at " + page.URL + a2a.CardPath + " (HTTP 200, not a JSON document): --a2a wants the agent's base URL\n"
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks the line %q:\n%s", want, errOut)
	}
	noFailures(t, dir)
}

func TestMCPGivenAServerThatDoesNotSpeakItSaysSo(t *testing.T) {
	for _, status := range []int{http.StatusNotImplemented, http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "no", status)
			}))
			defer srv.Close()
			dir := t.TempDir()
			code, out, errOut := run(t, nil, "", "run", "--mcp", srv.URL+"/mcp", "--out", dir, "--schemas", "off")
			if code != ExitHarness {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitHarness, out, errOut)
			}
			want := "adcp-conform: harness error: " + srv.URL + "/mcp answered initialize with HTTP " +
				strconv.Itoa(status) + " " + http.StatusText(status) + ": it does not speak MCP Streamable HTTP at this URL (--mcp wants the seller's MCP endpoint)\n"
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr lacks the line %q:\n%s", want, errOut)
			}
			noFailures(t, dir)
		})
	}
}
