//go:build race

package memstore

// raceEnabled is true when the package is built with -race, which makes
// sync.Pool drop objects at random and slows everything down.
const raceEnabled = true
