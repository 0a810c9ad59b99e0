package memstore

import (
	"bytes"
	"cmp"
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
	// cellSlotSize is the size of a cell's slab slot: its KeyValue header
	// and its column or list node.
	cellSlotSize = int64(unsafe.Sizeof(cell{}))
	// btreeEntryOverhead estimates the memory of a cell that starts a
	// column, beyond its slot: its share of the B-tree, a 32-byte entry in a
	// node's items slice at the 50% (sequential inserts) to ~75% (random
	// inserts) fill that splits leave, plus node headers and child pointers:
	// measured, 45 bytes per entry for random rows, 72 for sequential ones
	// (500k cells).
	btreeEntryOverhead = 56
)

// Size is the memory accounting of a segment, or a change to it. It is HBase's
// MemStoreSize (without the off-heap part, which we do not have).
type Size struct {
	// DataSize is the sum of the cells' serialized KeyValue sizes:
	// 8 + key length + value length, plus 2 + tags length for a cell with tags
	// (HBase's KeyValueUtil.length).
	DataSize int64
	// HeapSize estimates the memory the cells hold: each cell's bytes, its
	// slab slot (KeyValue header and list node) and, for a cell that starts
	// a column, its share of the B-tree. It does not count the free tail of
	// the arena's current chunk (at most 2 MiB per segment). Flush
	// thresholds compare against it, as HBase 2's do.
	HeapSize int64
	// CellCount is the number of distinct cells.
	CellCount int64
}

// Add returns the sum of s and o.
func (s Size) Add(o Size) Size {
	return Size{DataSize: s.DataSize + o.DataSize, HeapSize: s.HeapSize + o.HeapSize, CellCount: s.CellCount + o.CellCount}
}

// Neg returns -s, for taking s out of a total.
func (s Size) Neg() Size {
	return Size{DataSize: -s.DataSize, HeapSize: -s.HeapSize, CellCount: -s.CellCount}
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

// A segment groups its cells by column (row, family and qualifier): the
// B-tree holds one entry per column, and a column holds its cells, the
// versions, in a list in the segment's order (newest first, for cells that
// differ only in timestamp). A Put of a new row is one B-tree insert, as a
// tree of cells would do; a new version of a column a read-modify-write loop
// updates (an Increment, an Append, a Get and a Put) is a B-tree lookup and a
// list insert that leaves the tree as it is. So the tree stays as small as
// the number of columns, however many versions pile up until the next flush,
// a reader finds a column's newest cell without skipping the others, and a
// write that adds a version copies no B-tree nodes that a clone shares.
//
// Lists are read without locks: a writer (under the segment's mutex, or an
// Upsert that writes the column alone) fills a node and then publishes it
// with one atomic store, so a reader walking a list sees each node either
// fully or not at all; a node Upsert unlinks keeps its link to the rest. A
// scanner skips the nodes numbered after its opening.

// column is the cells of one column. Its first cell's node is inline, so that
// a column of one cell, the common case, is one slab allocation.
type column struct {
	// v0 comes first, and with head in the slot's first cache line (see
	// cell): a lookup of the column's newest version reads head there. So
	// does an upsert, with the spare fields.
	v0   version
	head atomic.Pointer[version] // the column's first cell in the segment's order
	// spare is the slot of the own cell (an ownCell or ownCellLarge) an
	// upsert last unlinked from the column, for
	// the column's next upsert to reuse once no read can reach it: once
	// oldest(spareSeq) answers spareSeq or more, where spareSeq is the
	// sequence id of the upsert that unlinked it (see Upsert). A counter so
	// cycles through three cells, the newest, the one before and the
	// spare, and its upserts allocate nothing. They are touched only by the
	// column's writer, which Upsert requires to be alone.
	spare    *cell
	spareSeq encoding.SeqNum
	// kv is a cell of the column, for the comparisons that need its family
	// and qualifier in full. It never changes.
	kv *encoding.KeyValue
}

// version is one cell of a column and the link to the next. What a walk of
// the list decides on is inline, in one cache line: an upsert's prune reads
// nothing else of the versions it passes (before, a version's type, tags
// and own flag were in three more lines of its slot, a cache miss each on a
// counter's cold older versions).
type version struct {
	// seq is the cell's sequence id, and ver the segment's write number
	// that added it (see Segment.ver), inline so that a scanner skips a cell
	// it must not see without reading it.
	seq  encoding.SeqNum
	next atomic.Pointer[version]
	kv   atomic.Pointer[encoding.KeyValue] // replaced by an equal cell (same key and sequence id)
	ver  uint64
	// typ and tagged are the cell's type and whether it has tags, for
	// prune. They change, with kv, only by the column's writer.
	typ    encoding.Type
	tagged bool
	// own is set for an upserted cell's node whose memory is its own (see
	// Segment.Upsert): only such a node is ever unlinked, since removing a
	// cell in the arena would free nothing.
	own bool
	// recycle is set for an own node that is an ownCell's or an
	// ownCellLarge's and starts no column: once unlinked, its cell may
	// become its column's spare.
	recycle bool
	// size is the cell's DataSize, for a prune that removes it
	// (noSize if it does not fit).
	size uint32
}

// cellSize is what a cell in its own slot adds to a segment's Size.
func cellSize(kv *encoding.KeyValue) Size {
	return Size{DataSize: DataSize(kv), HeapSize: cellSlotSize + int64(payloadLen(kv)), CellCount: 1}
}

// noSize is version.size for a cell whose DataSize does not fit in it.
const noSize = math.MaxUint32

// setCell points v at c, with c's type, tags flag and size. REQUIRES: s.mu
// held, or v not yet reachable.
func (v *version) setCell(c *encoding.KeyValue) {
	v.typ, v.tagged = c.Type, len(c.Tags) > 0
	v.size = noSize
	if n := DataSize(c); n < noSize {
		v.size = uint32(n)
	}
	v.kv.Store(c)
}

// removedSize is what removing v's cell takes from a segment's Size, from
// v alone when it can: a prune removes cold versions, whose KeyValue it
// would otherwise read only for this.
func (v *version) removedSize() Size {
	if v.size == noSize {
		return cellSize(v.kv.Load())
	}
	// DataSize is 8 + the key (its 12 bytes of lengths, timestamp and
	// type, then row, family, qualifier) + the value, + 2 + the tags if
	// any: the cell's payload and 20 or 22 bytes.
	payload := int64(v.size) - 8 - encoding.KeyInfraSize
	if v.tagged {
		payload -= 2
	}
	return Size{DataSize: int64(v.size), HeapSize: cellSlotSize + payload, CellCount: 1}
}

// entry is a B-tree item: a column and, inline, what decides most comparisons
// without touching the column's cells. A comparison through a *KeyValue
// costs two cache misses on a large segment (the KeyValue header, then the
// row bytes); with the row inline (a pointer and a length) it costs one, and
// with 8 bytes of the row inline none, when those differ.
//
// The inline bytes are the 8 that follow the segment's common row prefix
// (Segment.skip), when the row starts with it: rows of one table usually share
// a prefix ("user000..." in YCSB, pe's zero padding), and their first 8 bytes
// would then decide nothing. When both rows end within those 8 bytes, the
// inline bytes and the row lengths decide the row comparison in full.
//
// The column is inline too, for a comparer that orders families by length
// (a store's): the family's length and up to 4 bytes of the qualifier, so
// that the comparisons that end a descent in the right row (a Get's seek,
// and the lookup of an Add to a column that exists) read no cell either.
type entry struct {
	prefix uint64  // 8 row bytes after the segment's skip prefix, big-endian, zero-padded
	row    *byte   // the row's bytes
	col    *column // in a seek key, a stand-in that holds only kv
	meta   uint64  // see the meta constants
}

// The bits of entry.meta.
const (
	metaRowLen    = 0x7fff // len(kv.Row); rows are at most 32767 bytes
	metaHasSkip   = 0x8000 // the row starts with the segment's skip prefix
	metaFamShift  = 16     // 8 bits: len(kv.Family), at most 127
	metaLastOnRow = 1 << 24
	metaQualShift = 25 // 3 bits: len(kv.Qualifier) if at most 4, else metaQualLong
	metaQualLong  = 7
	metaQualBytes = 32 // 32 bits: the qualifier's first 4 bytes, big-endian, zero-padded
)

// entry returns the B-tree item for col, kv's column, or for a seek key
// for kv if col is a stand-in.
func (s *Segment) entry(kv *encoding.KeyValue, col *column) entry {
	e := entry{row: unsafe.SliceData(kv.Row), col: col, meta: uint64(len(kv.Row)) | uint64(len(kv.Family))<<metaFamShift}
	if skip := s.skip; bytes.HasPrefix(kv.Row, skip) {
		e.prefix = rowPrefix(kv.Row[len(skip):])
		e.meta |= metaHasSkip
	}
	if len(kv.Family)+len(kv.Qualifier) == 0 && kv.Type == encoding.TypeMinimum {
		e.meta |= metaLastOnRow
	}
	q := kv.Qualifier
	ql := uint64(len(q))
	if ql > 4 {
		ql = metaQualLong
	}
	var b [4]byte
	copy(b[:], q)
	e.meta |= ql<<metaQualShift | uint64(binary.BigEndian.Uint32(b[:]))<<metaQualBytes
	return e
}

// compareColumnsInline compares the columns of two entries of one row by
// their meta bits, for a comparer that orders families by length, and
// reports whether the bits decided. They do unless both qualifiers are
// longer than 4 bytes and share their first 4.
func compareColumnsInline(a, b uint64) (int, bool) {
	if (a|b)&metaLastOnRow != 0 {
		switch {
		case a&b&metaLastOnRow != 0:
			return 0, true
		case a&metaLastOnRow != 0:
			return 1, true
		}
		return -1, true
	}
	if af, bf := a>>metaFamShift&0xff, b>>metaFamShift&0xff; af != bf {
		return cmp.Compare(af, bf), true
	}
	if aq, bq := a>>metaQualBytes, b>>metaQualBytes; aq != bq {
		return cmp.Compare(aq, bq), true
	}
	// Equal first bytes: a qualifier of at most 4 bytes is a prefix of the
	// other (its padding is zeros), and sorts first.
	al, bl := a>>metaQualShift&7, b>>metaQualShift&7
	if al == metaQualLong && bl == metaQualLong {
		return 0, false
	}
	return cmp.Compare(al, bl), true
}

// rowBytes returns the entry's row.
func (e *entry) rowBytes() []byte { return unsafe.Slice(e.row, e.meta&metaRowLen) }

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

// lessFunc returns the B-tree order of columns for cmp, for entries built
// with a skip prefix of skipLen bytes. For all but the hbase:meta comparer,
// rows compare bytewise, so the inline prefix can decide.
func lessFunc(cmp *encoding.Comparer, skipLen int) btree.LessFunc[entry] {
	if cmp.IsMeta() {
		return func(a, b entry) bool {
			if c := cmp.CompareRows(a.rowBytes(), b.rowBytes()); c != 0 {
				return c < 0
			}
			return cmp.CompareColumns(a.col.kv, b.col.kv) < 0
		}
	}
	inline := uint64(skipLen + 8) // rows up to this long are inline in full
	byLen := cmp.FamiliesByLength()
	columnLess := func(a, b entry) bool {
		if byLen {
			if c, ok := compareColumnsInline(a.meta, b.meta); ok {
				return c < 0
			}
		}
		return cmp.CompareColumns(a.col.kv, b.col.kv) < 0
	}
	return func(a, b entry) bool {
		if a.meta&b.meta&metaHasSkip != 0 {
			if a.prefix != b.prefix {
				return a.prefix < b.prefix
			}
			// Equal prefixes: rows that both end within them differ only in
			// length (the shorter one's padding is zeros).
			if al, bl := a.meta&metaRowLen, b.meta&metaRowLen; al <= inline && bl <= inline {
				if al != bl {
					return al < bl
				}
				return columnLess(a, b)
			}
		}
		if c := bytes.Compare(a.rowBytes(), b.rowBytes()); c != 0 {
			return c < 0
		}
		return columnLess(a, b)
	}
}

// learnSkipAt is the number of cells after which a segment picks its skip
// prefix, unless a clone comes first (see readLive): the common prefix of
// the smallest and largest rows so far, cut to leave 8 bytes of each inline.
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
	// No longer than leaves 8 bytes of the shorter row inline: rows added in
	// order (a table's first counters, ctrs0000000000 to ctrs0000000063)
	// share more than the rows that follow will, and a skip prefix those
	// lack makes every comparison among them read both rows. The 8 bytes
	// after this one still tell the first rows apart.
	n = min(n, len(a)-8, len(b)-8)
	if n < 4 {
		return // the first 8 bytes already tell most rows apart
	}
	s.skip = append([]byte(nil), a[:n]...)
	s.less = lessFunc(s.cmp, n)
	t := btree.NewG(btreeDegree, s.less)
	s.mu.tree.Ascend(func(e entry) bool {
		t.ReplaceOrInsert(s.entry(e.col.kv, e.col))
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
	minTS     atomic.Int64  // math.MaxInt64 while empty
	maxTS     atomic.Int64  // math.MinInt64 while empty
	// familyDeletes counts the DeleteFamily and DeleteFamilyVersion
	// markers added, of any row (see MemStore.Newest).
	familyDeletes atomic.Int64
	// deletes counts the delete markers added, of any type; tagged is
	// set once a cell with tags is added. A flush reads them to skip its
	// passes over every cell (see Deletes and HasTags).
	deletes atomic.Int64
	tagged  atomic.Bool
	frozen  atomic.Bool // set under mu; no Add succeeds after

	// ver is the number of Adds that have taken effect: each Add numbers its
	// cell ver+1 under mu and then publishes that as ver. A scanner sees the
	// cells numbered up to ver at its opening, whichever tree it reads. Cells
	// are removed only by Upsert, and only those no reader returns, so that
	// view never changes.
	ver atomic.Uint64

	// readTree is a copy-on-write clone of mu.tree that scanners share. It is
	// stored under mu, reset to nil by any write, and loaded without mu. Once
	// the segment is frozen it is mu.tree itself.
	readTree atomic.Pointer[btree.BTreeG[entry]]

	// skip is the common row prefix the B-tree's inline row bytes follow
	// (see entry); empty until learnSkip sets it, fixed after.
	skip []byte
	// less is the tree's order, set with skip. A scanner compares seek keys
	// with it without mu: learnSkip changes it only while no reader works
	// without mu.
	less btree.LessFunc[entry]
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
		// updates steers Add between two ways of adding a cell: while it is
		// positive, recent cells mostly went to existing columns, and Add
		// looks the column up first (a read-only descent) rather than
		// inserting an entry that replaces it (a write that copies the
		// nodes a clone shares).
		updates int
		// probe is the stand-in column of that lookup's seek key.
		probe column
		// probeKV is the seek key of Newest's lookup.
		probeKV encoding.KeyValue
	}
}

// NewSegment returns an empty mutable segment ordered by cmp (in full,
// sequence ids included).
func NewSegment(cmp *encoding.Comparer) *Segment {
	s := &Segment{cmp: cmp}
	s.minSeq.Store(math.MaxUint64)
	s.minTS.Store(math.MaxInt64)
	s.maxTS.Store(math.MinInt64)
	s.less = lessFunc(cmp, 0)
	s.mu.tree = btree.NewG(btreeDegree, s.less)
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
	return s.addSlot(s.arena.copyKV(kv), nil, nil)
}

// Upsert adds kv as Add does, and then removes from its column the puts that
// no reader can see any more: those after a put that every reader sees,
// with oldest() the oldest read point of any read in progress or to come.
// It is HBase's upsert, which an Increment or Append to a family that keeps
// one version uses, so that a counter's memstore holds a few cells rather
// than one per increment until the next flush. The cell is copied to memory
// of its own rather than into the arena, so that a removed cell's memory is
// freed (as HBase copies upserted cells out of its MemStoreLAB); a small
// cell's memory goes to the column's next upsert (see column.spare).
//
// oldest is called when the column holds a put that an untagged put besides
// kv hides, with need that put's sequence id, and when the column has a
// spare cell, with need the spare's: an answer of need or more removes what
// the put hides, or frees the spare, and oldest may return an older one it
// knows without work. It reports false when it cannot tell (a read is
// taking its read point right now), and nothing is removed or reused then.
// A put the reader that holds the oldest read point sees is kept, as are
// delete markers and puts with tags (a TTL tag can expire a newer put
// before an older one). The returned change in size counts the removed
// cells; a removed cell kept as its column's spare stays in the heap size.
//
// An upsert to a column the segment has takes no lock: it is the column's
// only writer (below), so it adds to and prunes the column's list alone, and
// its cell needs no number from the segment's write count. A scanner opened
// before it returns cannot see the cell anyway, as no read point reaches
// kv's sequence id before then, and one opened after sees it as any other.
// A new column takes the segment's mutex, as Add does.
//
// REQUIRES: as Add; no other Add or Upsert of kv's column, and no freeze
// (MemStore.Snapshot), runs concurrently: a region holds the row's lock
// exclusively, and its updates lock shared; every reader of the segment
// that does not hold the row's lock reads at a read point oldest accounts
// for, and stays accounted for as long as it uses the cells it read (an
// upserted cell may be reused after); no reader's read point reaches kv's
// sequence id before Upsert returns (as none passes a write in progress).
func (s *Segment) Upsert(kv *encoding.KeyValue, oldest func(need encoding.SeqNum) (encoding.SeqNum, bool)) Size {
	d, ok := s.upsert(kv, oldest, nil)
	if !ok {
		panic(errors.AssertionFailedf("memstore: Upsert to a frozen segment"))
	}
	return d
}

// upsert is Upsert; col, if not nil, is kv's column in s, which a lookup
// under the row's lock found (see Hint).
func (s *Segment) upsert(kv *encoding.KeyValue, oldest func(need encoding.SeqNum) (encoding.SeqNum, bool), col *column) (Size, bool) {
	if s.frozen.Load() {
		return Size{}, false
	}
	if col == nil {
		// The lookup may read a clone, older than the live tree: it still
		// holds the column if the column is older still, and the column
		// is then the tree's, as only a write to it would replace it.
		col = s.column(kv.Row, kv.Family, kv.Qualifier)
	}
	n := payloadLen(kv)
	if n > ownCellLargeInline {
		return s.addSlot(newOwnCell(kv), oldest, col)
	}
	if col != nil {
		return s.upsertColumn(kv, n, oldest, col), true
	}
	// A new column: its cell is allocated before mu is taken, so that the
	// mutex is not held through an allocation (and any garbage collection
	// work it is charged).
	slot := newOwnCell(kv)
	s.mu.Lock()
	return s.addLocked(slot, oldest, nil)
}

// upsertColumn is upsert of a cell of n <= ownCellLargeInline bytes to col,
// its column in s, without s.mu. It reuses the column's spare cell if it is
// of the class n takes and no read can reach it any more.
func (s *Segment) upsertColumn(kv *encoding.KeyValue, n int, oldest func(need encoding.SeqNum) (encoding.SeqNum, bool), col *column) Size {
	var d Size
	var slot *cell
	var buf []byte
	if sp := col.spare; sp != nil {
		// Its node tells its size, and so its class, in the line about to
		// be written, where its cell header is cold.
		r := sp.col.v0.removedSize()
		if large := n > ownCellInline; large == (int(r.HeapSize-cellSlotSize) > ownCellInline) {
			if rp, ok := oldest(col.spareSeq); ok && rp >= col.spareSeq {
				// Its heap size was kept while it was the spare; the cell
				// counts it again below.
				d.HeapSize -= r.HeapSize
				col.spare = nil
				*sp = cell{}
				slot, buf = sp, ownCellBuf(sp, large)
			}
		}
	}
	if slot == nil {
		slot, buf = newUpsertCell(n)
	}
	fill(&slot.kv, kv, buf[:n])
	c := &slot.kv
	added := cellSize(c)
	// Number 0: the cell is seen by every scanner its sequence id lets see
	// it (see Upsert).
	if s.addVersion(col, c, 0, &slot.col.v0) {
		slot.col.v0.own, slot.col.v0.recycle = true, true
	} else {
		added.CellCount = 0
	}
	d = d.Add(added).Add(s.prune(col, c, oldest))
	if s.frozen.Load() {
		panic(errors.AssertionFailedf("memstore: Upsert ran concurrently with a Snapshot"))
	}
	s.noteBounds(c)
	s.addSize(d)
	return d
}

// noteBounds widens the segment's sequence id and timestamp bounds to c's.
// Upserts without the mutex call it concurrently with Adds, so each bound
// moves by compare-and-swap.
func (s *Segment) noteBounds(c *encoding.KeyValue) {
	for v := s.minSeq.Load(); uint64(c.SeqNum) < v && !s.minSeq.CompareAndSwap(v, uint64(c.SeqNum)); v = s.minSeq.Load() {
	}
	for v := s.minTS.Load(); c.Timestamp < v && !s.minTS.CompareAndSwap(v, c.Timestamp); v = s.minTS.Load() {
	}
	for v := s.maxTS.Load(); c.Timestamp > v && !s.maxTS.CompareAndSwap(v, c.Timestamp); v = s.maxTS.Load() {
	}
	if c.Type.IsDelete() {
		s.deletes.Add(1)
		if c.Type == encoding.TypeDeleteFamily || c.Type == encoding.TypeDeleteFamilyVersion {
			s.familyDeletes.Add(1)
		}
	}
	if len(c.Tags) > 0 && !s.tagged.Load() {
		s.tagged.Store(true)
	}
}

// addSize adds d to the segment's accounting, leaving alone the counters it
// does not change: an upsert that replaces a counter's cell with one of the
// same size changes none, and writes no line other processors read.
func (s *Segment) addSize(d Size) {
	if d.DataSize != 0 {
		s.dataSize.Add(d.DataSize)
	}
	if d.HeapSize != 0 {
		s.heapSize.Add(d.HeapSize)
	}
	if d.CellCount != 0 {
		s.cellCount.Add(d.CellCount)
	}
}

// addSlot adds the cell in slot to the segment; with oldest set, it then
// prunes the cell's column as Upsert does. known, if not nil, is the cell's
// column in the segment, which then needs no lookup.
func (s *Segment) addSlot(slot *cell, oldest func(need encoding.SeqNum) (encoding.SeqNum, bool), known *column) (Size, bool) {
	s.mu.Lock()
	return s.addLocked(slot, oldest, known)
}

// addLocked is addSlot with s.mu held, which it releases. A cell it adds to
// a column that exists is never recycled: an upsert's own cell goes there
// only through upsertColumn, and one that starts a column holds it.
func (s *Segment) addLocked(slot *cell, oldest func(need encoding.SeqNum) (encoding.SeqNum, bool), known *column) (Size, bool) {
	c := &slot.kv
	d := cellSize(c)
	d.CellCount = 0 // counted below, if c is a new cell rather than a replacement

	if s.frozen.Load() {
		s.mu.Unlock()
		return Size{}, false
	}
	ver := s.ver.Load() + 1
	col := known
	if col == nil && s.mu.updates > 0 {
		s.mu.probe.kv = c
		old, ok := s.mu.tree.Get(s.entry(c, &s.mu.probe))
		s.mu.probe.kv = nil
		if ok {
			col = old.col
			s.mu.updates = min(s.mu.updates+1, maxUpdates)
		} else {
			s.mu.updates -= 2
		}
	}
	if col == nil {
		// No reader sees nc before mu is released: readers of the live
		// tree hold mu, and clones made before are dropped below.
		nc := &slot.col
		nc.kv = c
		if old, replaced := s.mu.tree.ReplaceOrInsert(s.entry(c, nc)); !replaced {
			nc.v0.ver, nc.v0.seq = ver, c.SeqNum
			nc.v0.setCell(c)
			nc.head.Store(&nc.v0)
			d.HeapSize += btreeEntryOverhead
			d.CellCount = 1
		} else {
			// The column existed: the tree now holds nc in its place. nc
			// takes over the old column's list, and cells go on into that
			// list from either; a reader still holding the old column (a
			// clone) does not see the cells added after it was opened anyway.
			nc.head.Store(old.col.head.Load())
			col = nc
			s.mu.updates = maxUpdates
		}
		if s.readTree.Load() != nil {
			s.readTree.Store(nil)
		}
		s.mu.liveReads = 0
	}
	if col != nil {
		if s.addVersion(col, c, ver, &slot.col.v0) {
			d.CellCount = 1
			slot.col.v0.own = oldest != nil
		}
		if oldest != nil {
			d = d.Add(s.prune(col, c, oldest))
		}
	}
	if !s.learned && s.cellCount.Load()+d.CellCount >= learnSkipAt {
		s.learnSkip()
	}
	s.noteBounds(c)
	// Counts last: a reader that sees the cell counted sees its bounds.
	s.ver.Store(ver)
	s.addSize(d)
	s.mu.Unlock()
	return d, true
}

// prune unlinks from col the upserted puts that no reader can see
// (see Upsert); added is the cell just added, which stays. Readers walk the
// list without the mutex: an unlinked node keeps its link to the rest of the
// list, so a reader on it goes on as before, and a reader that comes later
// skips it. The first own cell of an ownCell it unlinks becomes the column's
// spare, if it has none. REQUIRES: the caller is col's only writer (see
// Upsert).
//
// Pruning on every upsert keeps a counter's list at the cell added, the one
// before (which the reads in progress see) and the one that goes: the walk
// then reads one node that is not in the cache already. A walk stops after
// maxPruneSteps nodes, so that while an old read keeps versions alive the
// upserts of a hot column cost no more than that.
func (s *Segment) prune(col *column, added *encoding.KeyValue, oldest func(need encoding.SeqNum) (encoding.SeqNum, bool)) Size {
	// Is there a put to remove: one of memory of its own after the newest
	// untagged put? The walks end at a put in the arena after that one:
	// upserted cells are newer than the puts of the column before them
	// (an Increment writes after the newest timestamp), so what follows is
	// in the arena too, and stays.
	var shieldSeq encoding.SeqNum
	shield, removable, steps := false, false, 0
	for v := col.head.Load(); v != nil && !removable; v = v.next.Load() {
		if steps++; steps > maxPruneSteps {
			return Size{}
		}
		switch {
		case v.kv.Load() == added || v.typ != encoding.TypePut:
		case shield:
			if !v.own {
				return Size{}
			}
			removable = true
		case !v.tagged:
			shield, shieldSeq = true, v.seq
		}
	}
	if !removable {
		return Size{}
	}
	rp, ok := oldest(shieldSeq)
	if !ok {
		return Size{}
	}
	var d Size
	shield = false
	var prev *version
	steps = 0
	for v := col.head.Load(); v != nil && steps < maxPruneSteps; steps++ {
		next := v.next.Load()
		kv := v.kv.Load()
		switch {
		case kv == added || v.typ != encoding.TypePut || v.seq > rp:
		case !shield:
			shield = !v.tagged
		case !v.own:
			return d
		default:
			// prev is not nil: the shield is before v.
			prev.next.Store(next)
			r := v.removedSize()
			d.DataSize -= r.DataSize
			d.CellCount -= r.CellCount
			if v.recycle && col.spare == nil {
				// Kept, so its memory stays in the heap size. Reads in
				// progress may be on it: no read registered after this
				// upsert's sequence id can reach it.
				col.spare, col.spareSeq = ownCellOf(v), added.SeqNum
			} else {
				d.HeapSize -= r.HeapSize
			}
			v = next
			continue
		}
		prev, v = v, next
	}
	return d
}

// maxPruneSteps bounds the nodes one prune walks.
const maxPruneSteps = 64

// maxUpdates caps Segment.mu.updates: after a run of updates, that many adds
// of new columns switch Add back to inserting first.
const maxUpdates = 16

// addVersion adds c, numbered ver, to col's list in order, or replaces an
// equal cell (same key and sequence id) in place, and reports whether it
// added a cell. The replacement keeps the replaced cell's number, so that a
// scanner opened in between finds the cell, in either form, rather than
// neither. v is c's list node, unused so far. REQUIRES: s.mu held, or the
// caller is col's only writer (see Upsert).
func (s *Segment) addVersion(col *column, c *encoding.KeyValue, ver uint64, v *version) bool {
	var prev *version
	next := col.head.Load()
	for next != nil {
		r := encoding.CompareVersions(next.kv.Load(), c)
		if r == 0 {
			next.setCell(c)
			// The node and the cell are no longer one.
			next.own, next.recycle = false, false
			return false
		}
		if r > 0 {
			break
		}
		prev, next = next, next.next.Load()
	}
	v.ver, v.seq = ver, c.SeqNum
	v.setCell(c)
	v.next.Store(next)
	if prev == nil {
		col.head.Store(v)
	} else {
		prev.next.Store(v)
	}
	return true
}

// freeze makes the segment immutable. Adds that have not taken mu yet fail.
func (s *Segment) freeze() {
	s.mu.Lock()
	s.frozen.Store(true)
	s.cloned = true
	s.readTree.Store(s.mu.tree)
	s.mu.Unlock()
}

// Newest returns the first cell, in version order, of the column
// family:qualifier of row that is visible at readPoint: its newest version
// (the greatest timestamp; of equal ones, a delete marker before a put, then
// the greater sequence id), which may be a delete marker; nil if the segment
// has none. It is one B-tree lookup, for a read that wants nothing but a
// column's newest value (an Increment's). The cell is the segment's and must
// not be modified.
func (s *Segment) Newest(row, family, qualifier []byte, readPoint encoding.SeqNum) *encoding.KeyValue {
	kv, _ := s.newest(row, family, qualifier, readPoint)
	return kv
}

// newest is Newest, and the column it looked up (nil if none).
func (s *Segment) newest(row, family, qualifier []byte, readPoint encoding.SeqNum) (*encoding.KeyValue, *column) {
	col := s.column(row, family, qualifier)
	if col == nil {
		return nil, nil
	}
	for v := col.head.Load(); v != nil; v = v.next.Load() {
		if v.seq <= readPoint {
			return v.kv.Load(), col
		}
	}
	return nil, col
}

// column looks up the column family:qualifier of row in the live tree, nil
// if the segment has none. Its version list is in version order and only
// grows (under mu, with atomic links), so a walk of it after the lookup sees
// every cell added before.
func (s *Segment) column(row, family, qualifier []byte) *column {
	if t := s.readTree.Load(); t != nil {
		// A clone (or the frozen tree) is read without mu, so that point
		// reads do not queue behind writers: Increments on existing
		// columns add versions without changing the tree, and keep it.
		p := columnProbes.Get().(*columnProbe)
		col := s.lookup(t, &p.kv, &p.col, row, family, qualifier)
		columnProbes.Put(p)
		return col
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	col := s.lookup(s.mu.tree, &s.mu.probeKV, &s.mu.probe, row, family, qualifier)
	// A run of lookups with no new column in between clones the tree for
	// the lookups after, as a scanner's refills do (readLive); not before
	// the segment has picked its skip prefix, which a clone would fix.
	if s.mu.liveReads++; s.mu.liveReads >= cloneAfterLiveReads && s.learned && !s.frozen.Load() {
		s.cloned = true
		s.readTree.Store(s.mu.tree.Clone())
	}
	return col
}

// lookup finds the column of row, family and qualifier in t, building the
// seek key in kv and probe and clearing them after, so that neither keeps
// the caller's slices alive.
func (s *Segment) lookup(t *btree.BTreeG[entry], kv *encoding.KeyValue, probe *column, row, family, qualifier []byte) *column {
	*kv = encoding.KeyValue{Row: row, Family: family, Qualifier: qualifier, Type: encoding.TypePut}
	probe.kv = kv
	e, ok := t.Get(s.entry(kv, probe))
	*kv, probe.kv = encoding.KeyValue{}, nil
	if !ok {
		return nil
	}
	return e.col
}

// columnProbe is the seek key of a lookup in a tree read without mu.
type columnProbe struct {
	kv  encoding.KeyValue
	col column
}

var columnProbes = sync.Pool{New: func() any { return new(columnProbe) }}

// familyDeleteCovers reports whether a DeleteFamily marker at or after ts,
// or a DeleteFamilyVersion marker at ts, of family in row is visible at
// readPoint: whether the segment deletes a cell of that family and row at
// ts. The markers are the row's empty-qualifier column of the family; a
// segment without any skips the lookup.
func (s *Segment) familyDeleteCovers(row, family []byte, ts int64, readPoint encoding.SeqNum) bool {
	if s.familyDeletes.Load() == 0 {
		return false
	}
	col := s.column(row, family, []byte{})
	if col == nil {
		return false
	}
	for v := col.head.Load(); v != nil; v = v.next.Load() {
		kv := v.kv.Load()
		if kv.Timestamp < ts {
			return false // the rest is older still
		}
		if v.seq > readPoint {
			continue
		}
		if kv.Type == encoding.TypeDeleteFamily || kv.Type == encoding.TypeDeleteFamilyVersion && kv.Timestamp == ts {
			return true
		}
	}
	return false
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
//
// A clone fixes the skip prefix for good (see learnSkip), so one made before
// the segment has picked it would leave every comparison of its B-tree
// reading both rows. Reads of new rows come first as often as not (an
// Increment of a counter the memstore lacks reads the row before it
// writes), and with them the segment never learned: Increments from 32
// goroutines on 10,000 new counters ran 10-20% slower in the runs where a
// clone came first. So the prefix is picked before the first clone, from
// the rows there are; a tree of fewer than two is read live.
func (s *Segment) readLive(sc *SegmentScanner) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.readTree.Load(); t != nil {
		sc.tree = t
		return false
	}
	if sc.fill > liveFill || s.mu.liveReads >= cloneAfterLiveReads {
		if !s.learned {
			if s.mu.tree.Len() < 2 {
				sc.iterate(s.mu.tree)
				return true
			}
			s.learnSkip()
		}
		sc.tree = s.mu.tree.Clone()
		s.cloned = true
		s.readTree.Store(sc.tree)
		return false
	}
	s.mu.liveReads++
	sc.iterate(s.mu.tree)
	return true
}

// Size returns the segment's accounting.
func (s *Segment) Size() Size {
	return Size{DataSize: s.dataSize.Load(), HeapSize: s.heapSize.Load(), CellCount: s.cellCount.Load()}
}

// Len returns the number of cells.
func (s *Segment) Len() int { return int(s.cellCount.Load()) }

// Deletes returns the number of delete markers of any type added to the
// segment (an equal cell that replaced one counts again): zero means the
// segment holds puts only.
func (s *Segment) Deletes() int64 { return s.deletes.Load() }

// HasTags reports whether a cell with tags was ever added to the segment,
// as HBase's Segment.isTagsPresent: a flush writes a file with tags only
// then.
func (s *Segment) HasTags() bool { return s.tagged.Load() }

// Empty reports whether the segment holds no cell.
func (s *Segment) Empty() bool { return s.cellCount.Load() == 0 }

// MinSeq returns the smallest sequence id added, and false if the segment is
// empty.
func (s *Segment) MinSeq() (encoding.SeqNum, bool) {
	v := s.minSeq.Load()
	return encoding.SeqNum(v), v != math.MaxUint64
}

// TimeRange returns the smallest and largest cell timestamps added (HBase's
// TimeRangeTracker), and false if the segment is empty.
func (s *Segment) TimeRange() (minTS, maxTS int64, ok bool) {
	minTS, maxTS = s.minTS.Load(), s.maxTS.Load()
	return minTS, maxTS, minTS <= maxTS
}
