//go:build !adcpmutation

package suites

// mutate is the identity: only a build with the adcpmutation tag (the
// mutation check, .ci/mutants) replaces a judge's verdict.
func mutate(_ Check, v Verdict) Verdict { return v }
