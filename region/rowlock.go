package region

import (
	"bytes"
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
)

// rowLocks are HBase's per-row read/write locks: puts and deletes share a
// row, increment / append / check-and-mutate take it exclusively. A waiter
// gives up after the configured wait (hbase.rowlock.wait.duration).
//
// The table of held locks is split into shards by a hash of the row, each
// with its own mutex, so writers of different rows rarely meet on one; a
// shard's map is keyed by the hash (rows that collide are chained), and
// released lock objects are kept for reuse with their row buffers, so taking
// an uncontended lock allocates nothing. The zero value is ready for use.
type rowLocks struct {
	// The Go allocator puts an 8-byte header before an object of more
	// than 512 bytes with pointers, and starts the header on a line
	// boundary (a size class that is a multiple of the line): the pad
	// takes the shards to the next boundary, so that each is a line of its
	// own (see TestWriteLinesLayout).
	_      [cacheLine - 8]byte
	shards [rowLockShards]rowLockShard
}

const (
	rowLockShards = 64
	// maxFreeRowLocks bounds a shard's reusable lock objects, and
	// maxReusedRowKey the row buffer one keeps.
	maxFreeRowLocks = 32
	maxReusedRowKey = 256
)

type rowLockShard struct {
	mu sync.Mutex
	// slots and locks map a row hash to the held locks of rows with that
	// hash. A shard most often holds one lock or two at a time, so their
	// chains sit in slots, and only more go to the map: a lone writer
	// takes and drops its locks without a map insert and delete.
	slots [rowLockSlots]*rowLock
	locks map[uint64]*rowLock
	free  []*rowLock
	// Pads the shard to a cache line, so shards do not share one.
	_ [cacheLine - 8 - 8*rowLockSlots - 8 - 24]byte
}

// rowLockSlots is how many hash chains a shard keeps out of its map.
const rowLockSlots = 2

// rowLock is one row's lock while it is held or waited for. Only its shard's
// mutex guards it.
type rowLock struct {
	shard *rowLockShard
	hash  uint64
	key   []byte
	next  *rowLock // another row with the same hash
	// readers hold it shared; writer holds it exclusively.
	readers int
	writer  bool
	// waitCh, made by the first waiter, is closed when the lock is free.
	waitCh chan struct{}
	// own is set for a lock that is its holder's (see rowLocks.lock): it
	// never goes to the shard's free list.
	own bool
}

// rowLockSeed seeds the row hash; a per-process seed keeps crafted rows
// from piling into one shard.
var rowLockSeed = maphash.MakeSeed()

// ErrRowLockTimeout is returned when a row lock is not granted in time.
var ErrRowLockTimeout = errors.New("region: timed out waiting for row lock")

// lock takes row's lock, shared or exclusive, waiting at most timeout, and
// returns the lock for unlock.
//
// own, if not nil, is the caller's memory for an exclusive lock: if the row
// is not locked, own becomes its lock until unlock. A writer's scratch is
// most often in its processor's cache, while a lock from the shard's free
// list, its key buffer and the list itself were last written by whichever
// processor released them: with writers on two processors, Increments
// from 32 goroutines went about 10% faster without row locks at all (an
// unsafe experiment), and own recovers 3-6% of it. Shared locks have no
// single owner (the first reader may release first), so they take the
// free list's.
//
// ctx's deadline, if sooner, ends the wait too (with ErrRowLockTimeout), and
// so does its cancellation.
func (l *rowLocks) lock(ctx context.Context, row []byte, exclusive bool, timeout time.Duration, own *rowLock) (*rowLock, error) {
	h := maphash.Bytes(rowLockSeed, row)
	s := &l.shards[h%rowLockShards]
	var deadline <-chan time.Time
	for {
		s.mu.Lock()
		rl := s.find(h, row)
		if rl == nil {
			if !exclusive {
				own = nil
			}
			rl = s.insert(h, row, own)
		}
		if !rl.writer && (!exclusive || rl.readers == 0) {
			if exclusive {
				rl.writer = true
			} else {
				rl.readers++
			}
			s.mu.Unlock()
			return rl, nil
		}
		if rl.waitCh == nil {
			rl.waitCh = make(chan struct{})
		}
		ch := rl.waitCh
		s.mu.Unlock()
		// rl may be released and reused for another row once the mutex is
		// unlocked: from here on only ch is ours.
		if deadline == nil {
			timeout = waitLimit(ctx, timeout)
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		}
		// The errors name a copy of the row: row itself does not escape,
		// so neither does a caller's request that holds it.
		select {
		case <-ch:
		case <-deadline:
			return nil, errors.Wrapf(ErrRowLockTimeout, "row %q after %s", string(row), timeout)
		case <-ctx.Done():
			return nil, errors.Wrapf(ErrRowLockTimeout, "row %q: %v", string(row), context.Cause(ctx))
		}
	}
}

// unlock releases a lock returned by lock with the same exclusive.
func (l *rowLocks) unlock(rl *rowLock, exclusive bool) {
	s := rl.shard
	s.mu.Lock()
	defer s.mu.Unlock()
	if exclusive {
		rl.writer = false
	} else {
		rl.readers--
	}
	if rl.readers == 0 && !rl.writer {
		if rl.waitCh != nil {
			close(rl.waitCh)
		}
		s.remove(rl)
	}
}

// lockRows locks rows in sorted order, so two batches never deadlock, and
// appends the locks to held, for unlockRows. rows must be sorted and free of
// duplicates. On error it holds none of them.
func (l *rowLocks) lockRows(ctx context.Context, rows [][]byte, exclusive bool, timeout time.Duration, held []*rowLock) ([]*rowLock, error) {
	start := len(held)
	for _, row := range rows {
		rl, err := l.lock(ctx, row, exclusive, timeout, nil)
		if err != nil {
			l.unlockRows(held[start:], exclusive)
			return held[:start], err
		}
		held = append(held, rl)
	}
	return held, nil
}

func (l *rowLocks) unlockRows(held []*rowLock, exclusive bool) {
	for _, rl := range held {
		l.unlock(rl, exclusive)
	}
}

// head returns where the chain of hash h starts: a slot or the map entry,
// nil if no held lock has that hash.
func (s *rowLockShard) head(h uint64) *rowLock {
	for _, rl := range s.slots {
		if rl != nil && rl.hash == h {
			return rl
		}
	}
	if len(s.locks) == 0 {
		return nil
	}
	return s.locks[h]
}

// setHead makes rl (nil: none) the start of the chain of hash h.
func (s *rowLockShard) setHead(h uint64, rl *rowLock) {
	for i, sl := range s.slots {
		if sl != nil && sl.hash == h {
			s.slots[i] = rl
			return
		}
	}
	if _, ok := s.locks[h]; ok {
		if rl == nil {
			delete(s.locks, h)
		} else {
			s.locks[h] = rl
		}
		return
	}
	if rl == nil {
		return
	}
	for i, sl := range s.slots {
		if sl == nil {
			s.slots[i] = rl
			return
		}
	}
	if s.locks == nil {
		s.locks = map[uint64]*rowLock{}
	}
	s.locks[h] = rl
}

func (s *rowLockShard) find(h uint64, row []byte) *rowLock {
	for rl := s.head(h); rl != nil; rl = rl.next {
		if bytes.Equal(rl.key, row) {
			return rl
		}
	}
	return nil
}

func (s *rowLockShard) insert(h uint64, row []byte, own *rowLock) *rowLock {
	var rl *rowLock
	if own != nil {
		rl = own
		rl.shard, rl.own = s, true
	} else if n := len(s.free); n > 0 {
		rl, s.free = s.free[n-1], s.free[:n-1]
	} else {
		rl = &rowLock{shard: s}
	}
	rl.hash, rl.key, rl.next = h, append(rl.key[:0], row...), s.head(h)
	s.setHead(h, rl)
	return rl
}

func (s *rowLockShard) remove(rl *rowLock) {
	if p := s.head(rl.hash); p == rl {
		s.setHead(rl.hash, rl.next)
	} else {
		for p.next != rl {
			p = p.next
		}
		p.next = rl.next
	}
	rl.next, rl.waitCh = nil, nil
	if rl.own {
		// The holder's memory again, key buffer and all.
		rl.shard = nil
		return
	}
	if len(s.free) < maxFreeRowLocks && cap(rl.key) <= maxReusedRowKey {
		rl.key = rl.key[:0]
		s.free = append(s.free, rl)
	}
}

// waitLimit returns d, or less if ctx's deadline comes sooner (at least a
// millisecond, so that a timer still fires).
func waitLimit(ctx context.Context, d time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		if rem := time.Until(dl); rem < d {
			return max(rem, time.Millisecond)
		}
	}
	return d
}
