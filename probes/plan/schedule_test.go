package plan

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
)

// ids are the probe IDs the store holds, in its order.
func ids(store *evidence.Store) []string {
	var out []string
	for _, c := range store.Calls() {
		out = append(out, c.ProbeID)
	}
	return out
}

// discovery says whether the probe ID is one of discovery's: the server
// cards, initialize, tools/list, the valid get_adcp_capabilities call.
func discovery(id string) bool {
	return strings.HasPrefix(id, "mcp/server_card") || slices.Contains([]string{"mcp/initialize", "mcp/tools/list", "mcp/get_adcp_capabilities/valid"}, id)
}

// Discovered sees discovery alone and holds the rest of the probes until it
// returns; ProbesDone comes after every probe but the burst, which waits
// for it (a run's storyboards go between the two).
func TestDiscoveredHoldsTheProbesAndTheBurstWaitsForProbesDone(t *testing.T) {
	ctx := context.Background()
	url, stop, err := seller.Start(ctx, seller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var atDiscovery, heldAfter, atDone []string
	var discoveryErr error
	var seen *evidence.Store
	cfg := Config{MCP: mcp.Config{Endpoint: url, Timeout: 5 * time.Second}, Seed: 1, RateBurst: 3}
	cfg.Discovered = func(store *evidence.Store, err error) {
		seen, atDiscovery, discoveryErr = store, ids(store), err
		time.Sleep(100 * time.Millisecond) // a probe not held would land now
		heldAfter = ids(store)
	}
	cfg.ProbesDone = func() { atDone = ids(seen) }
	store, err := Execute(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if discoveryErr != nil {
		t.Fatalf("Discovered got %v against a reachable seller", discoveryErr)
	}
	for _, id := range []string{"mcp/initialize", "mcp/tools/list", "mcp/get_adcp_capabilities/valid"} {
		if !slices.Contains(atDiscovery, id) {
			t.Errorf("at discovery the store lacks %s: %v", id, atDiscovery)
		}
	}
	for _, id := range atDiscovery {
		if !discovery(id) {
			t.Errorf("at discovery the store holds %s, no discovery call", id)
		}
	}
	if !slices.Equal(atDiscovery, heldAfter) {
		t.Errorf("while Discovered runs the store grows from %v to %v: the probes are not held", atDiscovery, heldAfter)
	}
	if seen != store {
		t.Error("Discovered saw another store than Execute returned")
	}
	burst := func(id string) bool { return strings.HasPrefix(id, "mcp/rate_burst") }
	if !slices.Contains(atDone, "mcp/get_products/valid") || slices.ContainsFunc(atDone, burst) {
		t.Errorf("at ProbesDone the store holds %v; want the probes without the burst", atDone)
	}
	if !slices.ContainsFunc(ids(store), burst) {
		t.Errorf("the burst did not run after ProbesDone: %v", ids(store))
	}
}
