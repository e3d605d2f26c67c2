//go:build !race

package cli

// raceEnabled says the tests run under the race detector, which makes
// CPU-bound work several times slower: timing targets are not checked.
const raceEnabled = false
