//go:build !race

package region

const writeRaceEnabled = false
