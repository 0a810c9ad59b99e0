package region

import (
	"sync/atomic"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/mvcc"
)

// readPoints registers the read points of the reads in progress, Gets and
// open Scanners: HBase's scannerReadPoints, which its getSmallestReadPoint
// reads. An upsert (memstore.MemStore.Upsert, for an Increment or Append to
// a family of one version) removes only the versions that no read at or
// after the oldest of them can see.
//
// A read claims one of a fixed set of slots with one compare-and-swap, so
// that concurrent Gets share no lock and, mostly, no cache line; when every
// slot it tries is taken it is counted in overflow instead, and upserts
// remove nothing while any such read runs.
type readPoints struct {
	slots    [readPointSlots]readPointSlot
	overflow atomic.Int64
	// floor is the newest oldest read point computed: no read in progress
	// or to come is older, so it stays an answer, only a staler one. An
	// upsert whose shield it covers (most, when writes spread over many
	// columns) reads no slot.
	floor atomic.Uint64
}

// readPointSlots is the number of slots: more than the reads a 2-core
// server runs at once, and a short scan for oldest.
const readPointSlots = 32

// slotProbes is how many slots a read tries before it overflows.
const slotProbes = 4

// readPointSlot is a slot's state: free, taken by a read that is loading
// its read point, or that read point plus slotReadPoint.
type readPointSlot struct {
	v atomic.Uint64
	_ [56]byte // a cache line each
}

const (
	slotFree      = 0
	slotLoading   = 1
	slotReadPoint = 2
)

// readSlot is a read's registration, for release.
type readSlot int

const overflowSlot readSlot = -1

// readHint is where a read's shared counters start: the read-point slot it
// tries first, the shard of its file references. Gets and scans take one
// from their pooled state, which sync.Pool keeps mostly on one processor, so
// a core mostly writes the same lines.
type readHint uint32

var nextReadHint atomic.Uint32

// newReadHint returns the next hint, spreading them over the slots.
func newReadHint() readHint { return readHint(nextReadHint.Add(1) * slotProbes) }

// shard returns which of n shards of a shared lock or counter the hint
// picks. Hints are slotProbes apart, so they are divided by it first:
// hint%n alone reaches only one shard in slotProbes.
func (h readHint) shard(n uint32) uint32 { return uint32(h) / slotProbes % n }

// acquire registers a read and returns its read point, mvcc's read point
// now, and its registration. It tries the slots from hint's on.
func (p *readPoints) acquire(c *mvcc.Control, hint readHint) (encoding.SeqNum, readSlot) {
	start := uint32(hint)
	for i := uint32(0); i < slotProbes; i++ {
		n := (start + i) % readPointSlots
		s := &p.slots[n]
		if s.v.Load() == slotFree && s.v.CompareAndSwap(slotFree, slotLoading) {
			// Loading, then the read point: oldest either sees the slot
			// loading (and removes nothing) or reads the read point
			// before this does (see oldest).
			rp := c.ReadPoint()
			s.v.Store(rp + slotReadPoint)
			return encoding.SeqNum(rp), readSlot(n)
		}
	}
	p.overflow.Add(1)
	return encoding.SeqNum(c.ReadPoint()), overflowSlot
}

// release ends the read registered as s.
func (p *readPoints) release(s readSlot) {
	if s == overflowSlot {
		p.overflow.Add(-1)
		return
	}
	p.slots[s].v.Store(slotFree)
}

// oldest returns a read point that no read in progress or to come is older
// than, or false if it cannot tell now (a read is loading its read point,
// or overflowed). It is floor if that is need or more; else it scans the
// slots for the oldest read point held, and makes that the floor.
//
// The read point is loaded first: a read that registers after the slots are
// scanned loads its read point later, so it gets one at least as new. A read
// that registered before the scan is seen with its read point, or loading.
func (p *readPoints) oldest(c *mvcc.Control, need encoding.SeqNum) (encoding.SeqNum, bool) {
	floor := p.floor.Load()
	if floor >= uint64(need) {
		return encoding.SeqNum(floor), true
	}
	rp := c.ReadPoint()
	if p.overflow.Load() > 0 {
		return 0, false
	}
	for i := range p.slots {
		switch v := p.slots[i].v.Load(); v {
		case slotFree:
		case slotLoading:
			return 0, false
		default:
			rp = min(rp, v-slotReadPoint)
		}
	}
	for floor < rp && !p.floor.CompareAndSwap(floor, rp) {
		floor = p.floor.Load()
	}
	return encoding.SeqNum(rp), true
}
