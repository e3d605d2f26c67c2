package storyboard

import (
	"context"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Request is one call a step asks the dispatcher to make.
type Request struct {
	// ProbeID names the call in the evidence store:
	// "storyboard/<storyboard>/<phase>/<step>".
	ProbeID string
	// Storyboard is the storyboard's id: each storyboard run is one
	// buyer's conversation (one MCP session, one A2A context).
	Storyboard string
	// Task is the AdCP task (MCP tool, A2A skill).
	Task string
	// Args is the resolved request payload.
	Args map[string]any
	// Auth overrides the run's credentials for this call; nil keeps them.
	Auth *spec.Auth
	// TestKit is the storyboard's test kit (credentials for
	// auth.from_test_kit), nil when none.
	TestKit map[string]any
	// Agent is the logical agent the step routes to (its `agent:` key,
	// see route); "" is the agent under test.
	Agent string
	// Live says the step authenticates as the test kit's live-mode
	// principal (sandbox: false): the dispatcher sends it with the run's
	// live-mode credential (Env.LiveCredential) instead of its own.
	Live bool
}

// Dispatcher makes a storyboard's calls through the project's raw-byte
// clients and records them; every call lands in the evidence store.
type Dispatcher interface {
	// Call sends one AdCP task and returns what came back.
	Call(ctx context.Context, req Request) *spec.Observation
	// Get fetches a well-known HTTP document of the agent (the security
	// storyboard's protected_resource_metadata and
	// oauth_auth_server_metadata); path is absolute ("/.well-known/…") or
	// a full URL taken from an earlier reply.
	Get(ctx context.Context, probeID, path string) *spec.Observation
}
