//go:build unix

package server

import "syscall"

// defaultMaxConnections is three quarters of the open-file limit: the rest
// is for store files, WAL segments and ZooKeeper, which EMFILE would break.
func defaultMaxConnections() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 || rl.Cur > 1<<20 {
		return 10000
	}
	return max(int(rl.Cur*3/4), 64)
}
