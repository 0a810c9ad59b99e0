package region

import (
	"os"
	"path/filepath"

	"github.com/cockroachdb/errors"
)

// ErrLocked is returned when another Region (in this or another process)
// has the directory open: two writers would corrupt its WAL and files.
var ErrLocked = errors.New("region: directory is in use by another open region")

// lockDir takes an exclusive advisory lock on dir/.lock. The kernel drops
// it when the process dies, so a crash never leaves the region locked.
//
// The lock is on the operating system's filesystem whatever Options.FS is,
// so the directory is made there too (with another FS it holds only the
// lock).
func lockDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, errors.Wrap(err, "region: lock")
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, errors.Wrap(err, "region: lock")
	}
	held, err := tryLock(f)
	if err != nil || held {
		f.Close()
		if held {
			return nil, errors.Wrapf(ErrLocked, "%s", dir)
		}
		return nil, errors.Wrap(err, "region: lock")
	}
	return f, nil
}
