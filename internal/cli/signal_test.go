package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/hostile"
	"github.com/adcp-conform/adcp-conform/report"
)

// Ctrl-C (or SIGTERM) ends a run within 2 s, whatever it is doing: the run
// writes the reports it can, says it was interrupted, and exits with the
// shell's code for the signal. The seller here never answers a tool call,
// so without the signal the run would wait out its 30 s timeout per call.
func TestASignalEndsTheRunAndWritesTheReports(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
		code ExitCode
	}{
		{syscall.SIGINT, "SIGINT", ExitInterrupted},
		{syscall.SIGTERM, "SIGTERM", ExitTerminated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hostile.StartMCP(hostile.NoAnswer)
			defer h.Stop()
			dir := t.TempDir()
			args, _ := json.Marshal([]string{"run", "--mcp", h.URL, "--out", dir, "--timeout", "30s", "--deadline", "60s", "--schemas", "off"})
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childArgsEnv+"="+string(args))
			var stderr lockedBuffer
			cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the run is probing, then signal it.
			for i := 0; i < 200 && !strings.Contains(stderr.String(), "probing"); i++ {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			sent := time.Now()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("the run was still going 10 s after %s\n%s", tc.name, stderr.String())
			}
			took := time.Since(sent)
			if got := ExitCode(cmd.ProcessState.ExitCode()); got != tc.code {
				t.Errorf("exit %d, want %d\n%s", got, tc.code, stderr.String())
			}
			if took > 2*time.Second {
				t.Errorf("the run took %v to end after %s, want at most 2 s", took, tc.name)
			}
			b, err := os.ReadFile(filepath.Join(dir, FileResults))
			if err != nil {
				t.Fatalf("no results.json after %s: %v", tc.name, err)
			}
			var run report.Run
			if err := json.Unmarshal(b, &run); err != nil {
				t.Fatal(err)
			}
			if run.Verdict != report.HarnessError || !strings.Contains(run.HarnessError, "interrupted by "+tc.name) {
				t.Errorf("verdict %s, harness error %q; want harness_error naming %s", run.Verdict, run.HarnessError, tc.name)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer a child process writes while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
