package region

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/cockroachdb/errors"
)

// ErrLocked is returned when another Region (in this or another process)
// has the directory open: two writers would corrupt its WAL and files.
var ErrLocked = errors.New("region: directory is in use by another open region")

// lockDir takes an exclusive advisory lock on dir/.lock. The kernel drops
// it when the process dies, so a crash never leaves the region locked.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, errors.Wrap(err, "region: lock")
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errors.Wrapf(ErrLocked, "%s", dir)
		}
		return nil, errors.Wrap(err, "region: lock")
	}
	return f, nil
}
