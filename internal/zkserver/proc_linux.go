//go:build linux

package zkserver

import (
	"os"
	"syscall"
)

// sysProcAttr makes the child die with the parent (SIGKILL when the parent
// dies, however it dies) and puts it in its own process group, so that a
// terminal's Ctrl-C goes to the parent alone and the parent decides when
// ZooKeeper stops.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// terminate asks the child to shut down.
func terminate(p *os.Process) error {
	return p.Signal(syscall.SIGTERM)
}
