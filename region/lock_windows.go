//go:build windows

package region

import (
	"os"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/windows"
)

// tryLock takes an exclusive lock on f's first byte without waiting (a
// Windows lock is mandatory, but nothing reads .lock); held reports that
// another holder has it.
func tryLock(f *os.File) (held bool, err error) {
	var ol windows.Overlapped
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return true, nil
	}
	return false, err
}
