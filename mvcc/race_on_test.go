//go:build race

package mvcc

// raceEnabled is true when the package is built with -race, which slows
// everything down.
const raceEnabled = true
