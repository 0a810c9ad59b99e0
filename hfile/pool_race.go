//go:build race

package hfile

// poisonReleased: under the race detector, released pooled blocks are
// overwritten, so that a use after release shows up in tests.
const poisonReleased = true
