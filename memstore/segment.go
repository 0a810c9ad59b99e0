package memstore

import (
	"bytes"
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cockroachdb/errors"
	"github.com/google/btree"

	"github.com/regionkv/regionkv/encoding"
)

// btreeDegree is the B-tree's minimum degree: nodes hold up to 63 cell
// pointers. Benchmarks of 16, 32 and 64 differed by a few percent; 32 keeps
// the path a writer copies after a clone short (about 4 nodes for a million
// cells) without making each copied node large.
const btreeDegree = 32

// Heap accounting constants.
const (
	// kvStructSize is the size of a KeyValue header in a slab.
	kvStructSize = int64(unsafe.Sizeof(encoding.KeyValue{}))
	// btreeEntryOverhead estimates the B-tree's memory per cell: a 32-byte
	// entry in a node's items slice, at the 50% (sequential inserts) to ~75%
	// (random inserts) fill that splits leave, plus node headers and child
	// pointers. Measured: 45 bytes per cell for random rows, 72 for
	// sequential ones (500k cells).
	btreeEntryOverhead = 56
)

// Size is the memory accounting of a segment, or a change to it. It is HBase's
// MemStoreSize (without the off-heap part, which we do not have).
type Size struct {
	// DataSize is the sum of the cells' serialized KeyValue sizes:
	// 8 + key length + value length, plus 2 + tags length for a cell with tags
	// (HBase's KeyValueUtil.length). Flush thresholds compare against it.
	DataSize int64
	// HeapSize estimates the memory the cells hold: each cell's bytes, its
	// KeyValue header and its share of the B-tree. It does not count the free
	// tail of the arena's current chunk (at most 2 MiB per segment).
	HeapSize int64
	// CellCount is the number of distinct cells.
	CellCount int64
}

// Add returns the sum of s and o.
func (s Size) Add(o Size) Size {
	return Size{DataSize: s.DataSize + o.DataSize, HeapSize: s.HeapSize + o.HeapSize, CellCount: s.CellCount + o.CellCount}
}

// IsEmpty reports whether s is all zeros.
func (s Size) IsEmpty() bool { return s == Size{} }

// DataSize returns kv's serialized size as HBase counts it in a memstore:
// 8 + key length + value length, plus 2 + tags length if kv has tags.
func DataSize(kv *encoding.KeyValue) int64 {
	n := 8 + kv.KeyLen() + len(kv.Value)
	if len(kv.Tags) > 0 {
		n += 2 + len(kv.Tags)
	}
	return int64(n)
}

// entry is a B-tree item: a cell and, inline, what decides most comparisons
// without touching the cell. A comparison through a *KeyValue costs two cache
// misses on a large segment (the KeyValue header, then the row bytes); with
// the row inline it costs one, and with 8 bytes of the row inline none, when
// those differ. The row is a pointer and a length rather than a slice, which
// leaves room for the cell's version in 32 bytes.
//
// The inline bytes are the 8 that follow the segment's common row prefix
// (Segment.skip), when the row starts with it: rows of one table usually share
// a prefix ("user000..." in YCSB, pe's zero padding), and their first 8 bytes
// would then decide nothing.
type entry struct {
	prefix uint64 // 8 row bytes after the segment's skip prefix, big-endian, zero-padded
	row    *byte  // kv.Row's bytes
	kv     *encoding.KeyValue
	meta   uint64 // version<<16 | hasSkip<<15 | len(kv.Row); rows are at most 32767 bytes
}

const (
	metaRowLen  = 0x7fff
	metaHasSkip = 0x8000 // the row starts with the segment's skip prefix
)

// entry returns the B-tree item for kv, added as the segment's write number
// ver (see Segment.ver).
func (s *Segment) entry(kv *encoding.KeyValue, ver uint64) entry {
	e := entry{row: unsafe.SliceData(kv.Row), kv: kv, meta: ver<<16 | uint64(len(kv.Row))}
	if skip := s.skip; bytes.HasPrefix(kv.Row, skip) {
		e.prefix = rowPrefix(kv.Row[len(skip):])
		e.meta |= metaHasSkip
	}
	return e
}

// rowBytes returns the entry's row.
func (e *entry) rowBytes() []byte { return unsafe.Slice(e.row, e.meta&metaRowLen) }

// ver returns the write number that added the entry's cell.
func (e *entry) ver() uint64 { return e.meta >> 16 }

// rowPrefix returns the first 8 bytes of row as a big-endian number, padded
// with zeros. For rows a and b, rowPrefix(a) < rowPrefix(b) implies a < b in
// bytewise order; equal prefixes decide nothing.
func rowPrefix(row []byte) uint64 {
	if len(row) >= 8 {
		return binary.BigEndian.Uint64(row)
	}
	var b [8]byte
	copy(b[:], row)
	return binary.BigEndian.Uint64(b[:])
}

// lessFunc returns the B-tree order for cmp: its full order, sequence ids
// included, taking the inline row bytes and row first where cmp orders rows
// bytewise (all but the hbase:meta comparer). Two rows that both start with
// the segment's skip prefix are ordered by the bytes after it; any other pair
// by their whole rows.
func lessFunc(cmp *encoding.Comparer) btree.LessFunc[entry] {
	if cmp.IsMeta() {
		return func(a, b entry) bool { return cmp.CompareKeyValues(a.kv, b.kv) < 0 }
	}
	return func(a, b entry) bool {
		if a.meta&b.meta&metaHasSkip != 0 && a.prefix != b.prefix {
			return a.prefix < b.prefix
		}
		if c := bytes.Compare(a.rowBytes(), b.rowBytes()); c != 0 {
			return c < 0
		}
		return cmp.CompareKeyValuesSameRow(a.kv, b.kv) < 0
	}
}

// learnSkipAt is the number of cells after which a segment picks its skip
// prefix: the common prefix of the smallest and largest rows so far.
const learnSkipAt = 64

// learnSkip sets s.skip from the rows added so far and rebuilds the tree with
// entries that use it. It runs once, under mu, and only if no scanner has
// ever had a tree of the segment to read without mu: entries and seek keys
// must agree on the skip prefix, and a scanner's seek key is built with the
// current one.
func (s *Segment) learnSkip() {
	s.learned = true
	if s.cmp.IsMeta() || s.cloned || s.mu.tree.Len() < 2 {
		return
	}
	lo, _ := s.mu.tree.Min()
	hi, _ := s.mu.tree.Max()
	a, b := lo.rowBytes(), hi.rowBytes()
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if n < 4 {
		return // the first 8 bytes already tell most rows apart
	}
	s.skip = append([]byte(nil), a[:n]...)
	t := btree.NewG(btreeDegree, lessFunc(s.cmp))
	s.mu.tree.Ascend(func(e entry) bool {
		t.ReplaceOrInsert(s.entry(e.kv, e.ver()))
		return true
	})
	s.mu.tree = t
}

// Segment is a sorted set of cells with its size accounting: HBase's Segment
// with its CellSet and MemStoreLAB. All methods are safe for concurrent use;
// see the package comment for the scheme. A Segment is mutable until it
// becomes a MemStore's snapshot, and immutable ("frozen") after.
type Segment struct {
	cmp   *encoding.Comparer
	arena arena

	// Accounting, updated under mu and readable at any time. Each value is
	// read atomically, but a reader may see one updated before another.
	dataSize  atomic.Int64
	heapSize  atomic.Int64
	cellCount atomic.Int64
	minSeq    atomic.Uint64 // math.MaxUint64 while empty
	maxSeq    atomic.Uint64
	minTS     atomic.Int64 // math.MaxInt64 while empty
	maxTS     atomic.Int64 // math.MinInt64 while empty
	frozen    atomic.Bool  // set under mu; no Add succeeds after

	// ver is the number of Adds that have taken effect: each Add numbers its
	// cell ver+1 under mu and then publishes that as ver. A scanner sees the
	// cells numbered up to ver at its opening, whichever tree it reads. Cells
	// are never removed, so that view never changes.
	ver atomic.Uint64

	// readTree is a copy-on-write clone of mu.tree that scanners share. It is
	// stored under mu, reset to nil by any write, and loaded without mu. Once
	// the segment is frozen it is mu.tree itself.
	readTree atomic.Pointer[btree.BTreeG[entry]]

	// skip is the common row prefix the B-tree's inline row bytes follow
	// (see entry); empty until learnSkip sets it, fixed after.
	skip []byte
	// learned and cloned are touched under mu only: learnSkip has run, and a
	// tree of the segment has been handed to a reader that does not hold mu.
	learned, cloned bool

	mu struct {
		sync.Mutex
		// tree is only ever touched under mu. Readers use readTree, or read
		// tree itself while holding mu.
		tree *btree.BTreeG[entry]
		// liveReads counts the refills that read tree since the last write;
		// see cloneAfterLiveReads.
		liveReads int
	}
}

// NewSegment returns an empty mutable segment ordered by cmp (in full,
// sequence ids included).
func NewSegment(cmp *encoding.Comparer) *Segment {
	s := &Segment{cmp: cmp}
	s.minSeq.Store(math.MaxUint64)
	s.minTS.Store(math.MaxInt64)
	s.maxTS.Store(math.MinInt64)
	s.mu.tree = btree.NewG(btreeDegree, lessFunc(cmp))
	return s
}

// Comparer returns the segment's comparer.
func (s *Segment) Comparer() *encoding.Comparer { return s.cmp }

// Add copies kv into the segment and returns the change in its size. A cell
// equal to one already present (same key and sequence id) replaces it; the
// cell count stays, and the data and heap sizes still grow by the new cell,
// as HBase counts an overwrite when MemStoreLAB is on (the replaced copy's
// arena bytes stay allocated). kv is not retained.
//
// Sequence id math.MaxUint64 is reserved for seek keys and must not be used.
// It panics if the segment is frozen.
//
// REQUIRES: kv.Validate() == nil.
func (s *Segment) Add(kv *encoding.KeyValue) Size {
	d, ok := s.add(kv)
	if !ok {
		panic(errors.AssertionFailedf("memstore: Add to a frozen segment"))
	}
	return d
}

// add is Add that reports false instead of adding to a frozen segment.
func (s *Segment) add(kv *encoding.KeyValue) (Size, bool) {
	if s.frozen.Load() {
		return Size{}, false
	}
	// Copy outside the lock: the arena reserves space with an atomic add.
	c := s.arena.copyKV(kv)
	d := Size{DataSize: DataSize(kv), HeapSize: kvStructSize + int64(payloadLen(kv))}

	s.mu.Lock()
	if s.frozen.Load() {
		s.mu.Unlock()
		return Size{}, false
	}
	ver := s.ver.Load() + 1
	e := s.entry(c, ver)
	if old, replaced := s.mu.tree.ReplaceOrInsert(e); replaced {
		// The replacement takes the replaced cell's number (its row has the
		// same length), so that a scanner opened in between finds the cell,
		// in either form, rather than neither. A second descent, but equal
		// cells are rare.
		e.meta = old.meta
		s.mu.tree.ReplaceOrInsert(e)
	} else {
		d.CellCount = 1
		d.HeapSize += btreeEntryOverhead
	}
	if s.readTree.Load() != nil {
		s.readTree.Store(nil)
	}
	s.mu.liveReads = 0
	if !s.learned && s.mu.tree.Len() >= learnSkipAt {
		s.learnSkip()
	}
	if uint64(c.SeqNum) < s.minSeq.Load() {
		s.minSeq.Store(uint64(c.SeqNum))
	}
	if uint64(c.SeqNum) > s.maxSeq.Load() {
		s.maxSeq.Store(uint64(c.SeqNum))
	}
	if c.Timestamp < s.minTS.Load() {
		s.minTS.Store(c.Timestamp)
	}
	if c.Timestamp > s.maxTS.Load() {
		s.maxTS.Store(c.Timestamp)
	}
	// Counts last: a reader that sees the cell counted sees its bounds.
	s.ver.Store(ver)
	s.dataSize.Add(d.DataSize)
	s.heapSize.Add(d.HeapSize)
	s.cellCount.Add(d.CellCount)
	s.mu.Unlock()
	return d, true
}

// freeze makes the segment immutable. Adds that have not taken mu yet fail.
func (s *Segment) freeze() {
	s.mu.Lock()
	s.frozen.Store(true)
	s.cloned = true
	s.readTree.Store(s.mu.tree)
	s.mu.Unlock()
}

// Frozen reports whether the segment is immutable (it is or was a snapshot).
func (s *Segment) Frozen() bool { return s.frozen.Load() }

// readLive is a refill of sc that found no clone cached. Under mu, it either
// serves the refill from the live tree and returns true, or points sc.tree at
// a tree it may read without mu (a clone, made now if need be) and returns
// false.
//
// Reading the live tree spares the next write copying a root-to-leaf path of
// the nodes a clone would share, several KiB; that costs as much as ten seeks
// or more. So a seek, and a scanner's first few cells after it, read the live
// tree while writes come in between; a scanner that goes on (a scan), or a
// run of reads with no write in between, clones instead, to keep mu free of
// readers' descents.
func (s *Segment) readLive(sc *SegmentScanner, d direction, from *encoding.KeyValue) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.readTree.Load(); t != nil {
		sc.tree = t
		return false
	}
	if sc.fill > liveFill || s.mu.liveReads >= cloneAfterLiveReads {
		sc.tree = s.mu.tree.Clone()
		s.cloned = true
		s.readTree.Store(sc.tree)
		return false
	}
	s.mu.liveReads++
	sc.iterate(s.mu.tree, d, from)
	return true
}

// Size returns the segment's accounting.
func (s *Segment) Size() Size {
	return Size{DataSize: s.dataSize.Load(), HeapSize: s.heapSize.Load(), CellCount: s.cellCount.Load()}
}

// Len returns the number of cells.
func (s *Segment) Len() int { return int(s.cellCount.Load()) }

// Empty reports whether the segment holds no cell.
func (s *Segment) Empty() bool { return s.cellCount.Load() == 0 }

// MinSeq returns the smallest sequence id added, and false if the segment is
// empty.
func (s *Segment) MinSeq() (encoding.SeqNum, bool) {
	v := s.minSeq.Load()
	return encoding.SeqNum(v), v != math.MaxUint64
}

// MaxSeq returns the largest sequence id added, 0 if the segment is empty.
func (s *Segment) MaxSeq() encoding.SeqNum { return encoding.SeqNum(s.maxSeq.Load()) }

// TimeRange returns the smallest and largest cell timestamps added (HBase's
// TimeRangeTracker), and false if the segment is empty.
func (s *Segment) TimeRange() (minTS, maxTS int64, ok bool) {
	minTS, maxTS = s.minTS.Load(), s.maxTS.Load()
	return minTS, maxTS, minTS <= maxTS
}
