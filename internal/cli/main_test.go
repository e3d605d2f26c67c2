package cli

import (
	"errors"
	"os"
	"testing"
)

// TestMain keeps the package's tests off the network: a run that would
// fetch the published schemas finds no cache folder and skips SCHEMA-01/02
// with that reason. Tests of the fetch point the cache at a temporary
// folder and the source at a local server (withCache).
func TestMain(m *testing.M) {
	cacheRoot = func() (string, error) { return "", errors.New("tests do not fetch the published schemas") }
	os.Exit(m.Run())
}
