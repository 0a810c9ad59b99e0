package mvcc

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/cpu"
)

// ErrWritesInFlight is returned (marked, test with errors.Is) by AdvanceTo
// when entries have been begun and not yet retired.
var ErrWritesInFlight = errors.New("mvcc: writes in flight")

// Control is HBase's MultiVersionConcurrencyControl: it hands out write
// numbers in increasing order and publishes a read point at or below which
// every write has completed. All its methods are safe for concurrent use:
// ReadPoint, WritePoint and Complete are lock-free, CompleteAndWait and Await
// may block until earlier writes complete, and the rest hold an internal lock
// briefly.
// Every entry returned by Begin or BeginWith must be passed to Complete or
// CompleteAndWait exactly once, even if the write fails, or the read point
// stalls; see the package comment.
//
// The zero value is equivalent to New(0). A Control must not be copied.
//
// # Cost per write
//
// With many more writers than processors, a writer usually completes its
// entry while an earlier write is still in flight (its goroutine runnable
// but not running, say after waiting for the WAL), so most CompleteAndWait
// calls have to wait: in BenchmarkControl on two processors 70 to 90% of
// them with 64 writers. What such a write costs decides whether throughput
// holds up as writers are added, and it used to be more than it had to be:
// every Complete took the lock (as every Begin must), a waiter held it while
// it made its channel, and the Complete that retired entries closed their
// channels with the lock held. A contended sync.Mutex does not spin while
// the processor has other runnable goroutines, so with tens of writers a
// contended acquisition parks too, and each park needs a wake-up: with 64
// writers goroutines spent 1.5 to 6µs per write blocked on locks (summed
// over the blocked goroutines), and every waiting write allocated a channel.
//
// So a Complete used to take the lock only if its entry was next to retire
// (the read point just below it), and every other Complete marked its entry
// completed with an atomic operation and returned, leaving it to whoever
// completed the entry ahead. A waiter registers without the lock too
// (below), and the entry is allocated outside it. With 64 writers, time
// blocked on locks fell more than tenfold, and throughput rose by about 20%
// with 64 writers and 50% with 256 (see BenchmarkControl).
//
// Now no Complete takes the lock. The entries in flight sit in a ring
// indexed by write number, which Begin fills under the lock, and a Complete
// whose entry is next retires it and the completed entries after it one at
// a time, each by a compare-and-swap of the read point, without the lock
// (see drain). With writers on two processors, each write had been taking
// the lock twice, in Begin and in Complete, and its cache line and the
// queue's went back and forth between the processors' caches each time; on
// this host, in the state where such a round trip takes about half a
// microsecond, Increments from 32 goroutines ran 15% faster without the
// second acquisition, as fast as from one. The read point has a cache line
// of its own, apart from the lines Begin writes.
//
// What remains is the waiting itself: a lone writer never waits, while with
// 64 writers most writes block and are woken, a park and a ready through
// the Go scheduler, which on two busy processors costs about a microsecond
// of processor time per write, several times the rest of the write. No
// ordering of the queue avoids it, because the waiter's goroutine has to
// give way to the one whose write it waits for.
//
// # Waking waiters
//
// A writer whose entry is not visible after its Complete, nor after its
// two yields, blocks on a sync.WaitGroup in its entry, registered by an
// atomic transition of the entry's state from completed to
// completed-and-waiting; the drain that retires the entry marks it retired
// with an atomic operation after moving the read point past it, and if that
// finds a waiter, releases it. Exactly one of the two transitions wins, so
// a waiter is either released exactly once, when its write is visible, or
// sees that its entry was retired and does not block. The entry is 32 bytes
// without pointers, and waiting allocates nothing. Pebble's commit pipeline
// blocks on a sync.WaitGroup per batch in the same way.
//
// The alternatives were rejected. A sync.Cond broadcast (or a generation
// channel closed and replaced) on each advance wakes every waiter on every
// advance, including those whose entries are still beyond the new read
// point, so with n waiters and one-step advances the wake-ups grow as n²,
// which is the pattern HBASE-15213 removed. Spinning before blocking was
// measured and dropped. Spinning on the read point without yielding almost
// never succeeds, because the write waited for is usually not running.
// Yielding with runtime.Gosched first, checking the read point after each
// yield, resolves about 95% of waits without blocking, and when the process
// gets only one core (under taskset, or while other builds run) it raised
// throughput by about 60% with 64 and 256 writers; but on two idle cores
// every yield goes through the scheduler's global run queue and its lock,
// which both processors then fight over, and throughput fell by a quarter
// with 64 writers and by half with 4 and 16, when waiters yielded until
// their write was visible. Two yields, then blocking, is what
// CompleteAndWait does: most waits end within them, without a park and a
// wake-up, and a wait that does not costs only two passes through the
// scheduler. 300k Increments from 32 goroutines on 10k counters blocked
// 45k times instead of 182k, and took 4.4 instead of 5.0 µs each (4
// goroutines: 4.2 instead of 4.9 µs).
//
// Entries are not pooled: a WriteEntry may be completed again after it is
// retired (a harmless no-op), which a recycled entry could not tell from
// the completion of a new write. A writer may reuse an entry of its own
// memory instead (BeginInto), if it ends each write with Finish: that
// waits until the drain that retired the entry has marked it retired, its
// last access, so no drain touches the entry once it is begun again. A
// drain may still find it in the ring slot of an earlier write, even one
// of another Control (regions share the writers' scratch), so its write
// number and owner are atomic, and a drain that reads another number or
// another owner there stops as for an entry not yet begun. The region's
// writes keep their entry in their pooled scratch: a Put then allocates
// nothing, and an Increment only its Result, 32 bytes less garbage per
// write.
//
// # Cache lines
//
// The fields sit on three cache lines by who writes them: the read point
// (every Complete), the write point and the lock (every Begin), and the id
// and ring, which Complete reads on every call and which hardly change.
// Were the id and ring on the Begin line, as they were, a Complete on one
// processor would miss on the line the other's Begin had just written. A
// Control is 192 bytes, a size class whose objects start on a line
// boundary (see TestControlLayout); at 104 bytes it sat at any multiple of
// 16, and which lines its fields shared changed from one run to the next.
type Control struct {
	// readPoint is the largest write number such that it and every smaller
	// one have completed. It moves by compare-and-swap, one entry at a
	// time, in Complete (or with mu held, in AdvanceTo), and is read
	// without a lock.
	readPoint atomic.Uint64
	_         [cacheLine - 8]byte

	// writePoint is the last write number handed out. Written only with mu
	// held, read without it.
	writePoint atomic.Uint64
	// mu orders Begins. It is held only for O(1) work per entry (plus the
	// BeginWith action), never while waiting or waking.
	mu struct {
		sync.Mutex
		// readPoint is a read point loaded before, so at most the current
		// one: while writePoint-readPoint leaves room in the ring, Begin
		// need not read the read point's line.
		readPoint uint64
	}
	_ [cacheLine - 8 - 16]byte

	// id tells this Control's entries from those of other Controls. It is
	// set, with mu held, by the first Begin (so the zero value works) and
	// read without it. See controlIDs.
	id atomic.Uint32
	// ring holds the entries readPoint+1 … writePoint, the entry numbered n
	// at n&mask. Begin stores entries into it with mu held and replaces it
	// with a larger copy when it is full; Complete reads it without a lock.
	ring atomic.Pointer[entryRing]
	_    [cacheLine - 16]byte
}

// cacheLine is the processor's cache line size, as golang.org/x/sys/cpu
// pads for it.
const cacheLine = int(unsafe.Sizeof(cpu.CacheLinePad{}))

// entryRing is a power-of-two ring of entries.
type entryRing struct {
	mask  uint64
	slots []atomic.Pointer[WriteEntry]
}

func newEntryRing(size int) *entryRing {
	return &entryRing{mask: uint64(size - 1), slots: make([]atomic.Pointer[WriteEntry], size)}
}

// at returns the entry stored for write number n, which is that entry only
// if its writeNumber is n.
func (r *entryRing) at(n uint64) *WriteEntry { return r.slots[n&r.mask].Load() }

// minRingSize is the size of a Control's first ring: it grows to the
// largest number of writes ever in flight at once, about the number of
// handler goroutines.
const minRingSize = 64

// WriteEntry is one write in flight: HBase's
// MultiVersionConcurrencyControl.WriteEntry. Only the goroutine that began it
// may complete it.
type WriteEntry struct {
	// writeNumber is atomic because an entry may be begun again
	// (BeginInto) while a drain still finds it in the ring slot of its
	// previous write, and reads its number to tell that it is not the
	// entry it looks for.
	writeNumber atomic.Uint64
	// state holds the entryCompleted, entryWaiting and entryRetired bits,
	// changed only by atomic operations; see Control.
	state atomic.Uint32
	// owner is the id of the Control that began the entry, so that
	// completing the entry of another Control is caught without the lock.
	// An id rather than a *Control keeps the entry free of pointers. It is
	// atomic for the same reason as writeNumber: an entry begun again may
	// be begun by another Control, whose write numbers are another count,
	// so a drain that finds it in a stale slot checks both.
	owner atomic.Uint32
	// wake is what a waiter blocks on: it adds 1 before setting
	// entryWaiting, and the drain that then sets entryRetired calls Done.
	wake sync.WaitGroup
}

// Bits of WriteEntry.state. entryCompleted is set by a Complete that cannot
// retire its entry at once (one that can leaves it unset); entryWaiting by a
// CompleteAndWait that has to block, only while the entry is completed and
// not retired; entryRetired by the drain that retires the entry, after the
// read point has moved past it.
const (
	entryCompleted = 1 << iota
	entryWaiting
	entryRetired
)

// controlIDs hands out Control ids. They are 32 bits to keep WriteEntry
// small, so after 2³² Controls they repeat and completing the entry of
// another Control with the same id is no longer caught; 0 means none yet.
var controlIDs atomic.Uint32

func newControlID() uint32 {
	for {
		if id := controlIDs.Add(1); id != 0 {
			return id
		}
	}
}

// WriteNumber returns the entry's write number, which is also the region
// sequence id of the write.
func (e *WriteEntry) WriteNumber() uint64 { return e.writeNumber.Load() }

// Idle reports whether e can begin a write (BeginInto): it is the zero
// WriteEntry, or its last write was retired and no drain refers to it any
// more, as after Finish.
func (e *WriteEntry) Idle() bool {
	st := e.state.Load()
	return st&entryRetired != 0 || st == 0 && e.writeNumber.Load() == 0
}

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
// REQUIRES: action is short, does not block and does not call back into c
// (that would deadlock). If it panics, the entry is completed and the panic
// goes on.
func (c *Control) BeginWith(action func(writeNumber uint64)) *WriteEntry {
	e := &WriteEntry{} // allocated outside the lock
	c.begin(e, action)
	return e
}

// BeginInto is BeginWith into an entry of the caller's memory, for a writer
// that keeps memory from write to write (the region's pooled write scratch)
// and so begins its writes without allocating. e must be idle (see Idle):
// the zero WriteEntry, or one whose previous write the caller ended with
// Finish. It panics with an assertion failure otherwise.
//
// Entries from BeginWith are not reused this way, since a retired entry
// may be completed again (a no-op), which a reused one could not tell
// from the completion of its new write; Finish is what makes reuse safe.
func (c *Control) BeginInto(e *WriteEntry, action func(writeNumber uint64)) {
	if !e.Idle() {
		panic(errors.AssertionFailedf("mvcc: entry %d begun again before it was finished", e.writeNumber.Load()))
	}
	e.state.Store(0)
	c.begin(e, action)
}

// begin numbers e, puts it in the write queue and runs action, under c.mu.
func (c *Control) begin(e *WriteEntry, action func(writeNumber uint64)) {
	c.mu.Lock()
	wp := c.writePoint.Load()
	if wp == math.MaxUint64 {
		c.mu.Unlock()
		panic(errors.AssertionFailedf("mvcc: write point exhausted"))
	}
	id := c.id.Load()
	if id == 0 {
		id = newControlID()
		c.id.Store(id)
	}
	n := wp + 1
	// The owner before the number: a drain loads them the other way
	// round, so one that sees the new number sees the new owner.
	e.owner.Store(id)
	e.writeNumber.Store(n)
	r := c.ring.Load()
	// The slot of e's number holds the entry numbered size before it,
	// which must be retired.
	if r == nil || n-c.mu.readPoint > uint64(len(r.slots)) {
		c.mu.readPoint = c.readPoint.Load()
		if r == nil || n-c.mu.readPoint > uint64(len(r.slots)) {
			r = c.growLocked(r, wp)
		}
	}
	r.slots[n&r.mask].Store(e)
	c.writePoint.Store(n)
	if action != nil {
		c.runAction(action, e, n)
	}
	c.mu.Unlock()
}

// growLocked replaces the ring r (nil for none yet) with one twice as
// large, or of minRingSize, holding the entries in flight up to wp.
// Complete may still read r meanwhile: the entries it finds there are the
// same, and one it looks for and does not find is one begun after the
// switch, whose own Complete finds it in the new ring. REQUIRES: c.mu held.
func (c *Control) growLocked(r *entryRing, wp uint64) *entryRing {
	size := minRingSize
	if r != nil {
		size = 2 * len(r.slots)
	}
	nr := newEntryRing(size)
	if r != nil {
		for n := c.readPoint.Load() + 1; n <= wp; n++ {
			nr.slots[n&nr.mask].Store(r.at(n))
		}
	}
	c.ring.Store(nr)
	return nr
}

// runAction runs a BeginWith action under c.mu. Should it panic, the entry
// is completed and the lock released before the panic goes on: an entry
// left in the queue would stop the read point for good, and the lock would
// stop every writer.
func (c *Control) runAction(action func(uint64), e *WriteEntry, n uint64) {
	defer func() {
		if p := recover(); p != nil {
			// The panic unwinds BeginWith past its Unlock.
			c.mu.Unlock()
			c.Complete(e)
			panic(p)
		}
	}()
	action(n)
}

// Complete marks e completed, then retires the completed prefix of the write
// queue (whoever began those entries), moving the read point past each in
// turn and waking its waiter. It reports whether e is now visible, that is
// whether the read point is at or above e's number; if not, an earlier write
// is still in flight and e becomes visible when that one completes.
//
// It takes no lock: it is one atomic read-modify-write and a load when an
// earlier entry is in flight, and a compare-and-swap of the read point per
// entry it retires otherwise.
//
// Completing an entry that is already complete does nothing more than report
// its visibility. Completing an entry of another Control is a bug and panics
// with an assertion failure, as does any broken queue invariant.
func (c *Control) Complete(e *WriteEntry) bool {
	if e == nil {
		panic(errors.AssertionFailedf("mvcc: complete of a nil entry"))
	}
	n := e.writeNumber.Load()
	if e.owner.Load() != c.id.Load() {
		panic(errors.AssertionFailedf(
			"mvcc: entry %d was begun by another Control (read point %d, write point %d)",
			n, c.readPoint.Load(), c.writePoint.Load()))
	}
	// Completed first, and only then a look at the read point: see drain.
	e.state.Or(entryCompleted)
	rp := c.readPoint.Load()
	if n <= rp {
		// Retired already: by a drain that ran meanwhile, or this is a
		// repeated Complete.
		return true
	}
	if rp+1 < n {
		// An earlier entry is in flight: whoever retires it goes on to e.
		return false
	}
	// e was at the head of the queue when rp was loaded: the ring holds it
	// unless a drain has retired it since (e is marked completed, so
	// another goroutine's drain may), after which a Begin may have taken
	// its slot or replaced the ring without it.
	if testHookBeforeRingCheck != nil {
		testHookBeforeRingCheck()
	}
	if r := c.ring.Load(); r.at(n) != e {
		if rp := c.readPoint.Load(); rp < n {
			panic(errors.AssertionFailedf(
				"mvcc: entry %d is not in the write queue (read point %d, write point %d)",
				n, rp, c.writePoint.Load()))
		}
		return true
	}
	c.drain()
	return c.readPoint.Load() >= n
}

// testHookBeforeRingCheck, if set (by tests), runs in Complete between its
// read of the read point and its look at the ring.
var testHookBeforeRingCheck func()

// CompleteAndWait completes e like Complete and, if e is not yet visible,
// blocks until another goroutine's Complete retires it. When it returns,
// ReadPoint() ≥ e.WriteNumber().
func (c *Control) CompleteAndWait(e *WriteEntry) {
	if c.Complete(e) {
		return
	}
	n := e.writeNumber.Load()
	// The writes ahead of e are most often running, or runnable: yield to
	// them a few times before parking, which costs a wake-up per entry.
	for i := 0; i < waitYields; i++ {
		runtime.Gosched()
		if c.readPoint.Load() >= n {
			return
		}
	}
	// Complete marked e completed and left it in the queue. Add before
	// registering, so that the drain's Done cannot come first.
	e.wake.Add(1)
	if !e.state.CompareAndSwap(entryCompleted, entryCompleted|entryWaiting) {
		if e.state.Load()&entryRetired == 0 {
			panic(errors.AssertionFailedf("mvcc: entry %d waited on twice", n))
		}
		// Retired since: the read point is past e, and no drain will call
		// Done.
		e.wake.Done()
		return
	}
	e.wake.Wait()
}

// Finish is CompleteAndWait for an entry begun with BeginInto: when it
// returns, e's write is visible and e is idle, so it may begin another
// write. Beyond CompleteAndWait it waits for the drain that retired e to
// mark it retired, which follows the read point's move past e by a few
// instructions (a drain on another goroutine may be preempted in between,
// hence the yield).
func (c *Control) Finish(e *WriteEntry) {
	c.CompleteAndWait(e)
	for e.state.Load()&entryRetired == 0 {
		runtime.Gosched()
	}
}

// waitYields is how many times CompleteAndWait yields before it parks.
const waitYields = 2

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
	rp, wp := c.readPoint.Load(), c.writePoint.Load()
	if rp != wp {
		return errors.Mark(errors.Newf(
			"mvcc: cannot advance to %d: %d writes in flight (read point %d, write point %d)",
			n, wp-rp, rp, wp), ErrWritesInFlight)
	}
	if n > wp {
		// No write in flight, so no Complete moves the read point.
		c.writePoint.Store(n)
		c.readPoint.Store(n)
		c.mu.readPoint = n
	}
	return nil
}

// drain retires the completed prefix of the queue: while the entry after the
// read point is completed, it moves the read point to it by compare-and-swap
// and, if the entry has a waiter, wakes it. Several goroutines may drain at
// once; each entry is retired by the one whose compare-and-swap moved the
// read point past it.
//
// A Complete marks its entry completed and then reads the read point; a
// drain moves the read point and then loads the ring, the next entry and its
// state. These are sequentially consistent atomic operations, so either the
// drain sees the entry there and completed, or the Complete sees the read
// point just below its entry and drains itself: no completed head is left
// behind. For that the ring is loaded again after each move: an entry begun
// after the ring was replaced is only in the new one.
func (c *Control) drain() {
	id := c.id.Load()
	for {
		rp := c.readPoint.Load()
		e := c.ring.Load().at(rp + 1)
		if e == nil || e.writeNumber.Load() != rp+1 || e.owner.Load() != id || e.state.Load()&entryCompleted == 0 {
			return
		}
		if !c.readPoint.CompareAndSwap(rp, rp+1) {
			continue // another drain retired it
		}
		if e.state.Or(entryRetired)&entryWaiting != 0 {
			// The waiter owns e again once released: no access after Done.
			e.wake.Done()
		}
	}
}
