//go:build race

package wal

// raceEnabled is true when the package is built with -race, which makes
// sync primitives allocate.
const raceEnabled = true
