//go:build adcpmutation

package suites

import (
	"os"
	"strings"
)

// MutantEnv names the judge to mutate and how, in a build with the
// adcpmutation tag: "RULE transport pass" makes that judge always pass,
// "RULE transport fail" always fail. .ci/mutants sets it, one mutant a run,
// to prove the judge tables notice either.
const MutantEnv = "ADCP_CONFORM_MUTANT"

func mutate(c Check, v Verdict) Verdict {
	f := strings.Fields(os.Getenv(MutantEnv))
	if len(f) != 3 || f[0] != c.ID || f[1] != string(c.Transport) {
		return v
	}
	switch f[2] {
	case "pass":
		return Verdict{Rule: c.ID, Transport: c.Transport, Outcome: Pass, Examined: v.Examined, Calls: v.Calls}
	case "fail":
		return Verdict{Rule: c.ID, Transport: c.Transport, Outcome: Fail, Message: c.ID + ": mutant",
			Findings: []Finding{{ProbeID: "mutant", What: "mutant"}}, Examined: v.Examined, Calls: v.Calls}
	}
	return v
}
