package mvcc

import (
	"sync"
	"sync/atomic"
)

// Read is a read in progress, registered with BeginRead: its read point and
// what EndRead needs to unregister it.
type Read struct {
	point uint64
	epoch uint64
}

// Point returns the read's read point: it sees the writes numbered at or
// below it.
func (r Read) Point() uint64 { return r.point }

// reads tracks the reads in progress so that a writer can learn a lower
// bound of their read points: HBase's HRegion.getSmallestReadPoint, which
// takes the smallest of the open scanners' read points and the MVCC read
// point. A write may drop a version that no read at or above that bound can
// see (HBase's upsert of a VERSIONS=1 column).
//
// HBase keeps the open scanners' read points in a map. Here a read only
// counts itself in one of two epochs, so that BeginRead and EndRead are an
// atomic add each and never wait: every read in progress belongs to the
// current epoch or the one before, and each epoch has a base, the read
// point when it began, at or below the read point of every read in it.
// SmallestReadPoint starts a new epoch whenever the previous one has no
// reads left (its counter is then reused for the new one) and answers with
// the base of the oldest epoch that still has reads. The bound lags: a read
// that began long ago holds it at its epoch's base until it ends, as an open
// scanner holds HBase's.
//
// Why a read always lands in an epoch whose base is at or below its read
// point: BeginRead loads the epoch, counts itself in it and loads the epoch
// again, retrying if it moved; only then does it take its read point. A new
// epoch stores its base before it is published, so a read that saw the
// epoch unchanged takes its read point after that base was taken (read
// points never decrease). And SmallestReadPoint reuses the counter of epoch
// e only on moving from e+1 to e+2, after it has published e+1 and found the
// counter at zero: a read counted there after that finds the epoch moved
// and retries; one counted before is seen. All of these are sequentially
// consistent atomic operations.
type reads struct {
	epoch atomic.Uint64
	_     [56]byte
	// count[e&1] counts the reads in progress of epoch e (and briefly some
	// that found the epoch moved and are about to retry). Each counter has
	// a cache line of its own.
	count [2]struct {
		n atomic.Int64
		_ [56]byte
	}
	// base[e&1] is epoch e's base; written only with mu held, before the
	// epoch is published.
	base [2]atomic.Uint64
	// smallest is the last bound computed, for callers that find mu busy:
	// a bound once valid stays valid, because later reads take later read
	// points.
	smallest atomic.Uint64
	mu       sync.Mutex // serializes starting epochs
}

// BeginRead registers a read at the current read point and returns it. The
// read must be ended with EndRead; until then SmallestReadPoint is at or
// below its read point. It never blocks and allocates nothing.
func (c *Control) BeginRead() Read {
	rs := &c.reads
	for {
		e := rs.epoch.Load()
		n := &rs.count[e&1].n
		n.Add(1)
		if rs.epoch.Load() == e {
			return Read{point: c.readPoint.Load(), epoch: e}
		}
		n.Add(-1) // an epoch started meanwhile: count in that one
	}
}

// EndRead ends a read begun with BeginRead. Each read must be ended exactly
// once.
func (c *Control) EndRead(r Read) {
	c.reads.count[r.epoch&1].n.Add(-1)
}

// SmallestReadPoint returns a read point at or below that of every read in
// progress (begun with BeginRead and not yet ended) and at or below the
// current read point: no read in progress, and none begun later, sees a
// write that is older than another write numbered at or below it and
// hidden by it. It may lag behind the true smallest read point. It never
// blocks.
func (c *Control) SmallestReadPoint() uint64 {
	rs := &c.reads
	if !rs.mu.TryLock() {
		return rs.smallest.Load()
	}
	e := rs.epoch.Load()
	if rs.count[(e-1)&1].n.Load() == 0 {
		// The previous epoch has no reads left: start epoch e+1 on its
		// counter, with the read point as its base.
		rs.base[(e+1)&1].Store(c.readPoint.Load())
		e++
		rs.epoch.Store(e)
	}
	s := rs.base[e&1].Load()
	if rs.count[(e-1)&1].n.Load() != 0 {
		s = rs.base[(e-1)&1].Load()
	}
	if s > rs.smallest.Load() {
		rs.smallest.Store(s)
	} else {
		s = rs.smallest.Load()
	}
	rs.mu.Unlock()
	return s
}
