package storyboard

import (
	"context"
	"fmt"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Replay is a Dispatcher over a recorded run: each step gets the call the
// run recorded under its probe ID, read again by Observe, so `adcp-conform
// judge` grades the storyboards of a recorded run with no seller. A step
// the run never recorded proves nothing: its observation is a failure.
type Replay struct{ Store *evidence.Store }

// Call returns the recorded call of req.ProbeID.
func (r Replay) Call(_ context.Context, req Request) *spec.Observation {
	c, ok := r.Store.Call(req.ProbeID)
	if !ok {
		return &spec.Observation{Task: req.Task, Transport: "", Request: req.Args, Failure: "not recorded in the evidence"}
	}
	if c.Agent != req.Agent {
		// The storyboard routes the step elsewhere than the run did.
		return &spec.Observation{Task: req.Task, Transport: "", Request: req.Args, Failure: fmt.Sprintf("recorded for agent %q, routed to %q", c.Agent, req.Agent)}
	}
	if face := replayAgentFaces(r.Store)[c.Agent]; c.Agent != "" && face != "" && c.Transport != face {
		// The run reached the agent on one face and recorded the call
		// as another's: the evidence does not say what the agent did.
		return &spec.Observation{Task: req.Task, Transport: "", Request: req.Args,
			Failure: fmt.Sprintf("recorded over %s for agent %q, which the run reached over %s", c.Transport, c.Agent, face)}
	}
	override := req.Auth != nil && (req.Auth.None || req.Auth.ValueStrategy != "")
	return spec.Observe(c, req.Task, req.Args, override)
}

// Get returns the recorded fetch of probeID.
func (r Replay) Get(_ context.Context, probeID, _ string) *spec.Observation {
	c, ok := r.Store.Call(probeID)
	if !ok {
		return &spec.Observation{Transport: "http", Failure: "not recorded in the evidence"}
	}
	return spec.Observe(c, "", nil, true)
}

// FetchPublic returns the recorded fetch of probeID, as the live walk saw
// it; one the run never made answers nothing (graded fail-closed).
func (r Replay) FetchPublic(_ context.Context, probeID, _ string, _ spec.FetchOptions) *spec.Response {
	c, ok := r.Store.Call(probeID)
	if !ok {
		return &spec.Response{}
	}
	return spec.ResponseOf(c)
}
