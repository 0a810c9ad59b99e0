package testutil

import (
	"runtime"
	"strings"
	"time"
)

// GoroutineStacks returns the stacks of all goroutines, one string each,
// as runtime.Stack prints them (the first line names the goroutine).
func GoroutineStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Split(string(buf), "\n\n")
}

// LeakedGoroutines returns the stacks of the goroutines running a function
// whose name contains one of funcs, once those still running after grace
// are known to be left over; "" if none is. A package's TestMain calls it
// after its tests have passed, so that a region or server a test forgot to
// close (whose background work, compactions and allocations, falls into
// later tests, such as AllocsPerRun ones) fails the package rather than
// some later test, now and then. The grace covers goroutines a Close
// signals and does not wait for.
func LeakedGoroutines(grace time.Duration, funcs ...string) string {
	var leaked []string
	for deadline := time.Now().Add(grace); ; time.Sleep(50 * time.Millisecond) {
		leaked = leaked[:0]
		for _, g := range GoroutineStacks() {
			for _, f := range funcs {
				if strings.Contains(g, f) {
					leaked = append(leaked, g)
					break
				}
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
	}
}
