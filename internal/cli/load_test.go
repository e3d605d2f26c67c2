package cli

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// maxLoadScale bounds loadScaled: past it a machine is too busy for a
// timing to mean anything, and a hang must still fail.
const maxLoadScale = 6

// loadScaled is d stretched by how busy the machine is: the one-minute
// load average per CPU (/proc/loadavg; 1 where it cannot be read), at
// least 1 and at most maxLoadScale. The time a run spends after its
// deadline, or after a signal, is CPU work (judging, writing the
// reports): on a machine whose cores are shared by several runs it takes
// that much longer, though the run does the same. The tests hold the
// harness to d scaled; the figures they log are what was measured, with
// the factor.
func loadScaled(d time.Duration) (time.Duration, float64) {
	f := 1.0
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if fields := strings.Fields(string(b)); len(fields) > 0 {
			if load, err := strconv.ParseFloat(fields[0], 64); err == nil {
				f = min(max(load/float64(runtime.NumCPU()), 1), maxLoadScale)
			}
		}
	}
	return time.Duration(float64(d) * f), f
}
