package region

import (
	"sync"
	"time"

	"github.com/cockroachdb/errors"
)

// rowLocks are HBase's per-row read/write locks: puts and deletes share a
// row, increment / append / check-and-mutate take it exclusively. A waiter
// gives up after the configured wait (hbase.rowlock.wait.duration).
type rowLocks struct {
	mu    sync.Mutex
	locks map[string]*rowLock
}

type rowLock struct {
	readers int
	writer  bool
	waitCh  chan struct{} // closed and replaced when the lock is released
}

// ErrRowLockTimeout is returned when a row lock is not granted in time.
var ErrRowLockTimeout = errors.New("region: timed out waiting for row lock")

func (l *rowLocks) lock(row string, exclusive bool, timeout time.Duration) error {
	var deadline <-chan time.Time
	for {
		l.mu.Lock()
		if l.locks == nil {
			l.locks = map[string]*rowLock{}
		}
		rl := l.locks[row]
		if rl == nil {
			rl = &rowLock{}
			l.locks[row] = rl
		}
		if !rl.writer && (!exclusive || rl.readers == 0) {
			if exclusive {
				rl.writer = true
			} else {
				rl.readers++
			}
			l.mu.Unlock()
			return nil
		}
		if rl.waitCh == nil {
			rl.waitCh = make(chan struct{})
		}
		ch := rl.waitCh
		l.mu.Unlock()
		if deadline == nil {
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-ch:
		case <-deadline:
			return errors.Wrapf(ErrRowLockTimeout, "row %q after %s", row, timeout)
		}
	}
}

func (l *rowLocks) unlock(row string, exclusive bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rl := l.locks[row]
	if exclusive {
		rl.writer = false
	} else {
		rl.readers--
	}
	if rl.readers == 0 && !rl.writer {
		if rl.waitCh != nil {
			close(rl.waitCh)
		}
		delete(l.locks, row)
	}
}

// lockRows locks rows in sorted order, so two batches never deadlock. rows
// must be sorted and free of duplicates.
func (l *rowLocks) lockRows(rows []string, exclusive bool, timeout time.Duration) (func(), error) {
	for i, row := range rows {
		if err := l.lock(row, exclusive, timeout); err != nil {
			for _, r := range rows[:i] {
				l.unlock(r, exclusive)
			}
			return nil, err
		}
	}
	return func() {
		for _, r := range rows {
			l.unlock(r, exclusive)
		}
	}, nil
}
