//go:build !race

package hfileadapter

// raceEnabled is true when the package is built with -race, which adds
// allocations and slows everything down by an order of magnitude.
const raceEnabled = false
