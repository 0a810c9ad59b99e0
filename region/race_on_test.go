//go:build race

package region

// raceEnabled is true when the package is built with -race, which makes
// sync.Pool drop objects at random: allocation counts do not hold then.
const raceEnabled = true
