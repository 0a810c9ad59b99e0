//go:build !race

package blockcache

// raceEnabled is true when the package is built with -race, which adds
// allocations and slows everything down by an order of magnitude.
const raceEnabled = false
