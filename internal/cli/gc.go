package cli

import (
	"os"
	"runtime/debug"
)

// GCPercent is the command's GOGC unless the environment sets one: a run
// keeps little alive (the release, the evidence), so collecting at 60 %
// growth rather than 100 % takes about a sixth off its peak RSS for about
// a tenth more CPU (docs/performance.md, storyboards at the seller's pace).
const GCPercent = 60

// SetGC applies GCPercent unless GOGC is set: the binary's main calls it,
// and so do the tests that run the command in-process, whose memory
// targets are the binary's.
func SetGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}
