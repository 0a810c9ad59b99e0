//go:build race

package server

// raceEnabled is true under -race, whose instrumentation allocates.
const raceEnabled = true
