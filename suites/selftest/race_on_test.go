//go:build race

package selftest

// raceEnabled says the tests run under the race detector, which makes each
// run of the harness several times slower.
const raceEnabled = true
