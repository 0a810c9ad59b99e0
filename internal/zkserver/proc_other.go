//go:build !linux

package zkserver

import (
	"os"
	"runtime"
	"syscall"
)

// sysProcAttr returns nil: only Linux can tie the child's life to the
// parent's, so elsewhere a parent killed with SIGKILL leaves ZooKeeper
// running.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminate asks the child to shut down; Windows has no SIGTERM, so there
// it kills the child.
func terminate(p *os.Process) error {
	if runtime.GOOS == "windows" {
		return p.Kill()
	}
	return p.Signal(syscall.SIGTERM)
}
