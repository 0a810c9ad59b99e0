//go:build !race

package hfile

// poisonReleased: released pooled blocks are left as they are.
const poisonReleased = false
