//go:build race

package conform

// raceEnabled says the tests run under the race detector, which makes
// each run several times slower: the registry tests run fewer sellers.
const raceEnabled = true
