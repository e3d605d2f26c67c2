package cli

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// assertNoSecret fails when any of the secrets appears, in any letter case,
// in a file under dir or in one of the texts (the terminal's streams).
func assertNoSecret(t *testing.T, dir string, secrets []string, texts ...string) {
	t.Helper()
	check := func(where, s string) {
		for _, sec := range secrets {
			if i := strings.Index(strings.ToLower(s), strings.ToLower(sec)); i >= 0 {
				t.Errorf("%s holds a credential: …%s…", where, s[max(0, i-60):min(len(s), i+len(sec)+20)])
			}
		}
	}
	for i, s := range texts {
		check([]string{"stdout", "stderr", "step summary"}[min(i, 2)], s)
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		check(path, string(b))
		return nil
	})
}

// A seller that echoes the caller's credentials in its JSON-RPC error at
// initialize: the error reaches the harness error of every report and the
// terminal, redacted.
func TestACredentialEchoedInAnInitializeErrorIsRedacted(t *testing.T) {
	const token = "leak-test-token-0123456789abcdef"
	const apiKey = "leak-test-api-key-fedcba9876543210"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &req)
		if len(req.ID) == 0 {
			req.ID = json.RawMessage("null")
		}
		msg, _ := json.Marshal("refused " + r.Header.Get("Authorization") + " and key " + r.Header.Get("X-Api-Key"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32603,"message":`+string(msg)+`}}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	summary := filepath.Join(t.TempDir(), "summary.md")
	code, out, errOut := run(t, map[string]string{"SELLER_TOKEN": token, "GITHUB_STEP_SUMMARY": summary}, "",
		"run", "--mcp", srv.URL+"/mcp", "--bearer-env", "SELLER_TOKEN", "--header", "X-Api-Key: "+apiKey, "--out", dir, "--schemas", "off")
	if code != ExitHarness {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitHarness, out, errOut)
	}
	if !strings.Contains(errOut, "refused") {
		t.Errorf("the harness error does not quote the seller's refusal: %s", errOut)
	}
	sum, _ := os.ReadFile(summary)
	assertNoSecret(t, dir, []string{token, apiKey}, out, errOut, string(sum))
}
