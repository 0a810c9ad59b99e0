//go:build !windows

package region

import (
	"os"
	"syscall"

	"github.com/cockroachdb/errors"
)

// tryLock takes an exclusive flock on f without waiting; held reports that
// another holder has it.
func tryLock(f *os.File) (held bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}
