package mvcc

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/errors"
)

// ErrWritesInFlight is returned (marked, test with errors.Is) by AdvanceTo
// when entries have been begun and not yet retired.
var ErrWritesInFlight = errors.New("mvcc: writes in flight")

// Control is HBase's MultiVersionConcurrencyControl: it hands out write
// numbers in increasing order and publishes a read point at or below which
// every write has completed. All its methods are safe for concurrent use:
// ReadPoint and WritePoint are lock-free, CompleteAndWait and Await may block
// until earlier writes complete, and the rest hold an internal lock briefly.
// Every entry returned by Begin or BeginWith must be passed to Complete or
// CompleteAndWait exactly once, even if the write fails, or the read point
// stalls; see the package comment.
//
// The zero value is equivalent to New(0). A Control must not be copied.
//
// # Waking waiters
//
// A writer that has to wait blocks on a channel of its own entry, made only
// when it actually waits and closed by whichever Complete retires the entry.
// Each waiter is therefore woken exactly once, when its write is visible, and
// writers that never wait allocate nothing for it. The alternatives were
// rejected: a sync.Cond broadcast (or a generation channel closed and
// replaced) on each advance wakes every waiter on every advance, including
// those whose entries are still beyond the new read point, so with n waiters
// and one-step advances the wake-ups grow as n², which is the pattern
// HBASE-15213 removed; and a sync.Cond cannot be combined with a select or a
// deadline later. Pebble's commit pipeline makes the same choice with a
// sync.WaitGroup per batch; a lazily made channel costs nothing for writers
// that find their entry already visible.
//
// The lock is a plain mutex held for O(1) work per entry, so a lock-free
// queue would buy little: every Complete must look at the head anyway.
type Control struct {
	// readPoint is the largest write number such that it and every smaller
	// one have completed. Written only with mu held, read without it.
	readPoint atomic.Uint64
	// writePoint is the last write number handed out. Written only with mu
	// held, read without it.
	writePoint atomic.Uint64

	// mu protects the write queue and the completed and done fields of the
	// entries in it. It is held only for O(1) work per entry (plus the
	// BeginWith action), never while waiting.
	mu struct {
		sync.Mutex
		// queue holds the entries readPoint+1 … writePoint, in order: its
		// length is always writePoint-readPoint.
		queue entryQueue
	}
}

// WriteEntry is one write in flight: HBase's
// MultiVersionConcurrencyControl.WriteEntry. Only the goroutine that began it
// may complete it.
type WriteEntry struct {
	writeNumber uint64
	// completed is set, with Control.mu held, by the first Complete.
	completed bool
	// done is made, with Control.mu held, by a CompleteAndWait that has to
	// wait, and closed by the Complete that retires the entry, after the
	// read point has been advanced past it.
	done chan struct{}
}

// WriteNumber returns the entry's write number, which is also the region
// sequence id of the write.
func (e *WriteEntry) WriteNumber() uint64 { return e.writeNumber }

// New returns a Control whose read point and write point are both start: the
// first entry begun gets write number start+1.
func New(start uint64) *Control {
	c := &Control{}
	c.readPoint.Store(start)
	c.writePoint.Store(start)
	return c
}

// ReadPoint returns the read point: every write numbered at or below it has
// completed, and none above it is visible. It never blocks and never
// decreases.
func (c *Control) ReadPoint() uint64 { return c.readPoint.Load() }

// WritePoint returns the last write number handed out. It never blocks and
// never decreases.
func (c *Control) WritePoint() uint64 { return c.writePoint.Load() }

// Begin starts a write and returns its entry, numbered one above the previous
// write point. The entry must be completed.
func (c *Control) Begin() *WriteEntry { return c.BeginWith(nil) }

// BeginWith is Begin, and also calls action (if not nil) with the new write
// number while still holding the lock that orders write numbers, so whatever
// action does happens in write-number order across goroutines. The WAL uses
// it to take its append slot in mvcc order.
//
// REQUIRES: action is short, does not block, does not panic and does not call
// back into c (that would deadlock).
func (c *Control) BeginWith(action func(writeNumber uint64)) *WriteEntry {
	c.mu.Lock()
	wp := c.writePoint.Load()
	if wp == math.MaxUint64 {
		c.mu.Unlock()
		panic(errors.AssertionFailedf("mvcc: write point exhausted"))
	}
	e := &WriteEntry{writeNumber: wp + 1}
	c.mu.queue.pushBack(e)
	c.writePoint.Store(e.writeNumber)
	if action != nil {
		action(e.writeNumber)
	}
	c.mu.Unlock()
	return e
}

// Complete marks e completed, then retires the completed prefix of the write
// queue (whoever began those entries) and moves the read point to the last
// of them, waking their waiters. It reports whether e is now visible, that is
// whether the read point is at or above e's number; if not, an earlier write
// is still in flight and e becomes visible when that one completes.
//
// Completing an entry that is already complete does nothing more than report
// its visibility. Completing an entry of another Control is a bug and panics
// with an assertion failure, as does any broken queue invariant.
func (c *Control) Complete(e *WriteEntry) bool {
	c.mu.Lock()
	visible := c.completeLocked(e)
	c.mu.Unlock()
	return visible
}

// CompleteAndWait completes e like Complete and, if e is not yet visible,
// waits until another goroutine's Complete retires it. When it returns,
// ReadPoint() ≥ e.WriteNumber().
func (c *Control) CompleteAndWait(e *WriteEntry) {
	c.mu.Lock()
	if c.completeLocked(e) {
		c.mu.Unlock()
		return
	}
	// e is still in the queue, so no Complete has closed e.done yet; the
	// one that retires e will close it after advancing the read point.
	if e.done == nil {
		e.done = make(chan struct{})
	}
	done := e.done
	c.mu.Unlock()
	<-done
}

// Await waits until every write begun before the call is visible. It does so
// by beginning a marker entry and completing it with CompleteAndWait, so like
// any write it consumes a write number.
func (c *Control) Await() {
	c.CompleteAndWait(c.Begin())
}

// AdvanceTo moves the read point and the write point to n, so that the next
// entry is numbered n+1. It is meant for region open and replay, before
// writes start: it returns an error marked ErrWritesInFlight if any entry has
// been begun and not yet retired. Points never move backwards: if n is below
// the current write point, AdvanceTo does nothing and returns nil.
func (c *Control) AdvanceTo(n uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if inFlight := c.mu.queue.len(); inFlight > 0 {
		return errors.Mark(errors.Newf(
			"mvcc: cannot advance to %d: %d writes in flight (read point %d, write point %d)",
			n, inFlight, c.readPoint.Load(), c.writePoint.Load()), ErrWritesInFlight)
	}
	if n > c.writePoint.Load() {
		// With an empty queue, read point == write point.
		c.writePoint.Store(n)
		c.readPoint.Store(n)
	}
	return nil
}

// completeLocked marks e completed, retires the completed prefix of the
// queue, and reports whether e is visible.
//
// REQUIRES: c.mu is held.
func (c *Control) completeLocked(e *WriteEntry) bool {
	if e == nil {
		panic(errors.AssertionFailedf("mvcc: complete of a nil entry"))
	}
	rp := c.readPoint.Load()
	if e.writeNumber <= rp {
		// Already retired: a repeated Complete.
		return true
	}
	// The queue holds rp+1 … writePoint in order, so e's slot is known;
	// checking it catches entries of another Control and a broken queue.
	if i := e.writeNumber - rp - 1; i >= uint64(c.mu.queue.len()) || c.mu.queue.at(int(i)) != e {
		panic(errors.AssertionFailedf(
			"mvcc: entry %d is not in the write queue (read point %d, write point %d)",
			e.writeNumber, rp, c.writePoint.Load()))
	}
	e.completed = true
	c.drainLocked(rp)
	return c.readPoint.Load() >= e.writeNumber
}

// drainLocked retires the completed prefix of the queue: it advances the read
// point to the last entry of the prefix and only then wakes that prefix's
// waiters, so a woken waiter always observes its own write as visible. rp is
// the current read point.
//
// REQUIRES: c.mu is held.
func (c *Control) drainLocked(rp uint64) {
	q := &c.mu.queue
	n := 0
	last := rp
	for ; n < q.len(); n++ {
		e := q.at(n)
		if !e.completed {
			break
		}
		if e.writeNumber != last+1 {
			panic(errors.AssertionFailedf(
				"mvcc: write queue out of order: entry %d follows %d", e.writeNumber, last))
		}
		last = e.writeNumber
	}
	if n == 0 {
		return
	}
	c.readPoint.Store(last)
	for ; n > 0; n-- {
		if e := q.popFront(); e.done != nil {
			close(e.done)
		}
	}
}
