//go:build race

package region

// writeRaceEnabled is true under -race, which makes sync primitives and
// sync.Pool allocate (the pool drops items at random), so allocation
// ceilings do not hold.
const writeRaceEnabled = true
