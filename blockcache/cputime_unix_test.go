//go:build unix

package blockcache

import "syscall"

// processCPU returns the CPU time (user + system) this process has used, in
// nanoseconds: benchmarks report it per op because wall time is unreliable
// on a machine shared with other work.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
