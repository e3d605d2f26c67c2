package cli

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/probes/release"
)

// TestMain keeps the package's tests off the network: a run that would
// fetch the published schemas (or storyboards) finds no cache folder and
// skips SCHEMA-01/02 (the storyboards) with that reason, and the published
// release index is never read. Tests of the fetch point the cache at a temporary
// folder and the source at a local server (withCache).
func TestMain(m *testing.M) {
	if args := os.Getenv(childArgsEnv); args != "" {
		os.Exit(int(childMain(args)))
	}
	material.SchemasCache = func() (string, error) { return "", errors.New("tests do not fetch the published schemas") }
	material.StoryboardsCache = func() (string, error) { return "", errors.New("tests do not fetch the published storyboards") }
	material.FetchIndex = func(ctx context.Context, c *http.Client, m release.Mirror) ([]string, error) {
		if m.URL == release.Published {
			return nil, errors.New("tests do not read the published release index")
		}
		return release.FetchIndex(ctx, c, m)
	}
	os.Exit(m.Run())
}

// childArgsEnv, when set, makes the test binary run cli.Main with the
// arguments it holds (a JSON array) instead of the tests: how a test drives
// the real process, for what only a process shows (signals, exit codes).
const childArgsEnv = "ADCP_CONFORM_TEST_CHILD_ARGS"

func childMain(args string) ExitCode {
	var argv []string
	if err := json.Unmarshal([]byte(args), &argv); err != nil {
		return ExitUsage
	}
	return Main(argv, Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv})
}
