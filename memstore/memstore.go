package memstore

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/errors"

	"github.com/regionkv/regionkv/encoding"
)

// ErrSnapshotMismatch is returned (marked; test with errors.Is) by
// ClearSnapshot when the id is not the current snapshot's: HBase's
// UnexpectedStateException from DefaultMemStore.clearSnapshot.
var ErrSnapshotMismatch = errors.New("memstore: snapshot id mismatch")

// MemStore is one store's memstore, HBase's DefaultMemStore: an active
// segment that takes writes and, between Snapshot and ClearSnapshot, the
// immutable snapshot segment a flush is writing out. All methods are safe for
// concurrent use. Add never blocks on a flush, and readers see both segments.
type MemStore struct {
	cmp  *encoding.Comparer
	segs atomic.Pointer[segments]
	mu   struct {
		sync.Mutex // serializes Snapshot and ClearSnapshot
		lastID     uint64
	}
}

// segments is an immutable pair, replaced as a whole so that readers always
// see an active segment and the snapshot that goes with it.
type segments struct {
	active   *Segment
	snapshot *Snapshot // nil if there is none
}

// Snapshot is a frozen segment being flushed: HBase's MemStoreSnapshot.
type Snapshot struct {
	// ID identifies the snapshot to ClearSnapshot. IDs increase.
	ID uint64
	// Segment holds the cells; it is frozen. Scan it with read point
	// math.MaxUint64 to flush every cell.
	Segment *Segment
}

// New returns an empty memstore ordered by cmp, which for a store is
// normally encoding.InnerStoreComparer (encoding.MetaComparer for hbase:meta).
func New(cmp *encoding.Comparer) *MemStore {
	m := &MemStore{cmp: cmp}
	m.segs.Store(&segments{active: NewSegment(cmp)})
	return m
}

// Comparer returns the memstore's comparer.
func (m *MemStore) Comparer() *encoding.Comparer { return m.cmp }

// Add copies kv into the active segment and returns the change in size; see
// Segment.Add. A concurrent Snapshot puts kv either in the snapshot or in the
// new active segment, never nowhere.
//
// REQUIRES: kv.Validate() == nil and kv.SeqNum != math.MaxUint64.
func (m *MemStore) Add(kv *encoding.KeyValue) Size {
	for {
		if d, ok := m.segs.Load().active.add(kv); ok {
			return d
		}
		// The segment was frozen by Snapshot, which has already published
		// the new active segment: retry there.
	}
}

// Upsert adds kv to the active segment as Segment.Upsert does and returns
// the change in size, which the cells it removes make smaller. The
// snapshot, if any, keeps its cells. h is what NewestHint returned for kv's
// column under the row lock the caller has held since, or the zero Hint: it
// spares the segment a lookup of the column when it is still the active one.
//
// REQUIRES: as Segment.Upsert: in particular, no other write to kv's column
// and no Snapshot runs concurrently.
func (m *MemStore) Upsert(kv *encoding.KeyValue, oldest func(need encoding.SeqNum) (encoding.SeqNum, bool), h Hint) Size {
	for {
		active := m.segs.Load().active
		var col *column
		if h.seg == active && h.matches(kv) {
			col = h.col
		}
		if d, ok := active.upsert(kv, oldest, col); ok {
			return d
		}
	}
}

// Hint is where NewestHint found a column, for an Upsert to it under the
// same hold of the row's lock: a column of the active segment is replaced
// in its tree only by a write to it, which the lock keeps out, so it stays
// the segment's column for that long. Once the segment is frozen, a hint
// to it is not used.
type Hint struct {
	seg *Segment
	col *column
	// The row, family and qualifier the column was looked up by: an Upsert
	// checks its cell against these, which are the caller's and in its
	// cache, rather than against the column's own cell (cold: two cache
	// misses, a twentieth of an Increment). A hint to another column, a
	// caller's bug, is then ignored rather than misplacing the cell.
	row, family, qualifier []byte
}

// matches reports whether kv is a cell of the column h was looked up for.
func (h *Hint) matches(kv *encoding.KeyValue) bool {
	return bytes.Equal(kv.Row, h.row) && bytes.Equal(kv.Family, h.family) && bytes.Equal(kv.Qualifier, h.qualifier)
}

// Snapshot makes the active segment the immutable snapshot, starts a new
// empty active segment and returns the snapshot, for a flush to write out.
// Writes go on into the new active segment meanwhile.
//
// As HBase's DefaultMemStore.snapshot: if an earlier snapshot holds cells and
// has not been cleared (a flush failed, or another is running), Snapshot
// changes nothing and returns that snapshot again (its ID tells); if the
// active segment is empty, the snapshot is an empty segment and the active
// one stays.
func (m *MemStore) Snapshot() *Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.segs.Load()
	if cur.snapshot != nil && !cur.snapshot.Segment.Empty() {
		return cur.snapshot
	}
	m.mu.lastID++
	snap := &Snapshot{ID: m.mu.lastID}
	if cur.active.Empty() {
		snap.Segment = NewSegment(m.cmp)
		snap.Segment.freeze()
		m.segs.Store(&segments{active: cur.active, snapshot: snap})
		return snap
	}
	snap.Segment = cur.active
	// Publish the new active segment first, then freeze the old one: a
	// writer that loaded the old pair either gets its cell in before the
	// freeze (and so into the snapshot) or retries into the new segment.
	m.segs.Store(&segments{active: NewSegment(m.cmp), snapshot: snap})
	snap.Segment.freeze()
	return snap
}

// ClearSnapshot drops the snapshot once its flush has been committed (the new
// file is in the store's file list, so readers find the cells there). It does
// nothing if there is no snapshot, and returns an error marked
// ErrSnapshotMismatch if id is not the current snapshot's. Scanners already
// open on the snapshot keep working.
func (m *MemStore) ClearSnapshot(id uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.segs.Load()
	if cur.snapshot == nil {
		return nil
	}
	if cur.snapshot.ID != id {
		return errors.Mark(errors.Newf("memstore: current snapshot id is %d, passed %d",
			cur.snapshot.ID, id), ErrSnapshotMismatch)
	}
	m.segs.Store(&segments{active: cur.active})
	return nil
}

// Segments returns the active segment and the snapshot (nil if none), as one
// consistent pair.
func (m *MemStore) Segments() (active *Segment, snapshot *Snapshot) {
	v := m.segs.Load()
	return v.active, v.snapshot
}

// Scanners returns one scanner per segment that may hold cells visible at
// readPoint: the active segment's first, then the snapshot's. Segments that
// are empty, or whose every cell is newer than readPoint, get none. The
// caller merges them (HBase's KeyValueHeap) and closes each.
func (m *MemStore) Scanners(readPoint encoding.SeqNum) []*SegmentScanner {
	return m.AppendScanners(nil, readPoint)
}

// AppendScanners is Scanners appending to dst, to save the allocation.
func (m *MemStore) AppendScanners(dst []*SegmentScanner, readPoint encoding.SeqNum) []*SegmentScanner {
	v := m.segs.Load()
	if mayHaveVisible(v.active, readPoint) {
		dst = append(dst, v.active.NewScanner(readPoint))
	}
	if v.snapshot != nil && mayHaveVisible(v.snapshot.Segment, readPoint) {
		dst = append(dst, v.snapshot.Segment.NewScanner(readPoint))
	}
	return dst
}

// Newest returns the newest cell of the column family:qualifier of row
// visible at readPoint in the active segment and the snapshot (see
// Segment.Newest), and whether a DeleteFamily or DeleteFamilyVersion marker
// visible in either deletes it. The caller must keep the row from changing
// meanwhile (an Increment holds its row lock).
func (m *MemStore) Newest(row, family, qualifier []byte, readPoint encoding.SeqNum) (kv *encoding.KeyValue, familyDeleted bool) {
	kv, familyDeleted, _ = m.NewestHint(row, family, qualifier, readPoint)
	return kv, familyDeleted
}

// NewestHint is Newest, and a Hint to the column in the active segment for
// an Upsert under the same hold of the row's lock (the zero Hint if the
// active segment has no such column).
func (m *MemStore) NewestHint(row, family, qualifier []byte, readPoint encoding.SeqNum) (kv *encoding.KeyValue, familyDeleted bool, h Hint) {
	v := m.segs.Load()
	kv, col := v.active.newest(row, family, qualifier, readPoint)
	if col != nil {
		h = Hint{seg: v.active, col: col, row: row, family: family, qualifier: qualifier}
	}
	var snap *Segment
	if v.snapshot != nil {
		snap = v.snapshot.Segment
		if skv := snap.Newest(row, family, qualifier, readPoint); skv != nil && (kv == nil || encoding.CompareVersions(skv, kv) < 0) {
			kv = skv
		}
	}
	if kv == nil {
		return nil, false, h
	}
	familyDeleted = v.active.familyDeleteCovers(row, family, kv.Timestamp, readPoint) ||
		snap != nil && snap.familyDeleteCovers(row, family, kv.Timestamp, readPoint)
	return kv, familyDeleted, h
}

func mayHaveVisible(s *Segment, readPoint encoding.SeqNum) bool {
	minSeq, ok := s.MinSeq()
	return ok && minSeq <= readPoint
}

// Size returns the accounting of the active segment and the snapshot
// together.
func (m *MemStore) Size() Size {
	v := m.segs.Load()
	sz := v.active.Size()
	if v.snapshot != nil {
		sz = sz.Add(v.snapshot.Segment.Size())
	}
	return sz
}

// ActiveSize returns the accounting of the active segment.
func (m *MemStore) ActiveSize() Size { return m.segs.Load().active.Size() }

// SnapshotSize returns the accounting of the snapshot, zero if none.
func (m *MemStore) SnapshotSize() Size {
	if s := m.segs.Load().snapshot; s != nil {
		return s.Segment.Size()
	}
	return Size{}
}

// Len returns the number of cells in the active segment and the snapshot.
func (m *MemStore) Len() int { return int(m.Size().CellCount) }

// MinSeq returns the smallest sequence id added since the last Snapshot (that
// of the active segment), and false if nothing was.
func (m *MemStore) MinSeq() (encoding.SeqNum, bool) { return m.segs.Load().active.MinSeq() }

// TimeRange returns the smallest and largest timestamps added since the last
// Snapshot, and false if nothing was.
func (m *MemStore) TimeRange() (minTS, maxTS int64, ok bool) {
	return m.segs.Load().active.TimeRange()
}

// EarliestUnflushedSeq returns the smallest sequence id in the memstore,
// snapshot included, and false if it is empty: every WAL entry below it is
// in a store file.
func (m *MemStore) EarliestUnflushedSeq() (encoding.SeqNum, bool) {
	v := m.segs.Load()
	seq, ok := v.active.MinSeq()
	if v.snapshot != nil {
		if s, sok := v.snapshot.Segment.MinSeq(); sok && (!ok || s < seq) {
			seq, ok = s, true
		}
	}
	return seq, ok
}
