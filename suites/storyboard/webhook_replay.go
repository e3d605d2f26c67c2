package storyboard

import (
	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// receiverProbeID is the probe ID of the record that a run's storyboards
// had a webhook receiver (its base URL in URL): a re-judging gives the
// webhook storyboards the same gates.
const receiverProbeID = evidence.StoryboardPrefix + "#webhook_receiver"

// ReceiverCall is the record that the run's storyboards had the receiver
// at base.
func ReceiverCall(base string, t evidence.Transport) evidence.Call {
	return evidence.Call{ProbeID: receiverProbeID, Transport: t, Kind: evidence.KindStoryboardContext, URL: base}
}

// recordedWebhooks returns the deliveries a webhook step read, as the run
// recorded them under its probe ID.
func (r Replay) recordedWebhooks(probeID string) (evidence.Call, bool) {
	c, ok := r.Store.Call(probeID)
	if !ok || c.Kind != evidence.KindWebhook {
		return evidence.Call{}, false
	}
	return c, true
}

// ReplayWebhooks is the receiver of a recorded run, for a re-judging over
// Replay: the same gates as the run (nil when the run had no receiver);
// its steps read the recorded deliveries, never this receiver.
func ReplayWebhooks(store *evidence.Store) Webhooks {
	c, ok := store.Call(receiverProbeID)
	if !ok {
		return nil
	}
	return replayHooks{base: c.URL}
}

type replayHooks struct{ base string }

func (h replayHooks) Base() string               { return h.base }
func (h replayHooks) URL(key string) string      { return h.base + "/hooks/" + key }
func (replayHooks) Fail(string, int, int)        {}
func (replayHooks) Deliveries(string) []Delivery { return nil }
func (replayHooks) Record(evidence.Call)         {}
