package memstore

import (
	"math"
	"sync"

	"github.com/google/btree"

	"github.com/regionkv/regionkv/encoding"
)

// Refill sizes. A seek collects minFill cells, enough for a Get's row
// without walking far; each further refill in the same direction collects
// four times more, up to maxFill, so long scans pay one B-tree descent per
// maxFill cells.
const (
	minFill = 4
	maxFill = 256
)

// Cells of one column a forward refill collects, after a seek and after
// that: a Get of the newest version of a column with many (a counter's)
// needs its first cell only, and a scan that keeps one version per column
// steps over a few before it seeks past the column. The refill stops there
// and the next goes on down the column's list, without a B-tree descent.
const (
	seekColCells = 1
	stepColCells = 4
)

// When a scanner reads the live tree rather than a clone; see
// Segment.readLive. Refills of up to liveFill cells (a seek's and the one
// after) read it, unless cloneAfterLiveReads refills have read it since the
// last write: a clone is then cheaper than holding readers and writers on
// one mutex.
const (
	liveFill            = 4 * minFill
	cloneAfterLiveReads = 8
)

type direction int8

const (
	unpositioned direction = 0
	forward      direction = 1
	backward     direction = -1
)

// SegmentScanner iterates over the cells of one Segment that are visible at
// a read point (sequence id <= read point), in the segment's order, forward
// and backward. It is HBase's SegmentScanner (a MemStoreScanner per segment);
// the scanner package merges it with the store files' scanners.
//
// A scanner reads a snapshot of its segment taken when it was opened; see the
// package comment for what that includes. It is not safe for concurrent use.
// The cells it returns are immutable and stay valid after the scanner moves
// on or is closed; the caller must not modify them.
//
// Positioning follows Pebble's iterators: a scanner is at a cell, or
// exhausted (after the last visible cell, or before the first). Next from
// before the first cell returns the first, Prev from after the last returns
// the last, and Next or Prev on a scanner not yet positioned act as
// SeekToFirst or SeekToLast.
//
// Internally the scanner holds a run of consecutive visible cells collected
// from the tree in one descent, and serves Next, Prev and nearby seeks from
// it; see the package comment.
type SegmentScanner struct {
	seg       *Segment
	cmp       *encoding.Comparer
	readPoint encoding.SeqNum
	// ver is the segment's write count when the scanner was opened: it sees
	// the cells numbered up to ver and no others.
	ver uint64
	// tree is a tree the scanner may read without locking (a clone, or a
	// frozen segment's tree), nil until one is needed.
	tree *btree.BTreeG[entry]

	// buf is a run of consecutive visible cells in direction dir: ascending
	// when forward, descending when backward. buf[pos] is the current cell;
	// pos == len(buf) means exhausted in direction dir, which needs
	// more == false. more reports that visible cells may follow buf[len-1]
	// in direction dir.
	buf  []*encoding.KeyValue
	used int // the longest buf has been since the scanner was opened: Close clears that much
	pos  int
	dir  direction
	more bool
	fill int // cells the next refill collects
	// colCells is the number of cells of one column the next forward refill
	// collects (see seekColCells).
	colCells int
	// tail is the list node of buf's last cell if a forward refill stopped
	// in or at the end of a column: the next refill goes on from there.
	// nil otherwise.
	tail *version

	// State of a refill in progress, read by collect.
	skipPivot bool               // drop a cell equal to pivot (SeekLT)
	pivot     encoding.KeyValue  // seek key as a cell; only set during a refill
	from      *encoding.KeyValue // cells before it are dropped, until the first column is collected
	start     *encoding.KeyValue // where the B-tree iteration starts; nil: at the end
	startKey  entry              // start as a seek key, built under the tree's skip prefix
	startCol  column             // startKey's stand-in column
	skipStart bool               // skip the first column if it is start's, collected already
	colN      int                // cells collected of the column being collected
	collectFn btree.ItemIteratorG[entry]
	rev       []*encoding.KeyValue // a column's cells, for collectBackward

	// A seek's refill that stops in the middle of its first column, at
	// seekColCells of a column with more versions (a Get of a counter's
	// row), goes on in the same B-tree iteration past the rest of that
	// column's list and collects what follows it into ahead: the refill
	// a seek past the column (encoding.LastOnRowCol, where a Get or a scan
	// that keeps one version goes next) would make, minus its descent.
	// ahead is a run of consecutive visible cells from the first after the
	// column of buf's last cell; aheadTail is the list node where it
	// stopped, as tail is for buf (nil: it reaches the end of the tree).
	// It is live while buf still ends in that column; seekAhead and
	// continueTail use it, and any other refill drops it.
	ahead      []*encoding.KeyValue
	aheadTail  *version
	aheadLive  bool
	wantAhead  bool   // the refill in progress may collect ahead
	collecting bool   // the refill in progress is collecting ahead
	aheadKey   []byte // seekAhead's scratch key
	// descents counts B-tree iterations, for tests.
	descents int
}

var scannerPool = sync.Pool{New: func() any {
	s := &SegmentScanner{buf: make([]*encoding.KeyValue, 0, maxFill)}
	s.collectFn = s.collect
	return s
}}

// NewScanner returns a scanner over the cells of s visible at readPoint. It
// takes no lock and allocates nothing. Close it when done.
func (s *Segment) NewScanner(readPoint encoding.SeqNum) *SegmentScanner {
	sc := scannerPool.Get().(*SegmentScanner)
	sc.seg, sc.cmp, sc.readPoint = s, s.cmp, readPoint
	sc.ver = s.ver.Load()
	sc.tree = s.readTree.Load()
	return sc
}

// Segment returns the segment the scanner reads.
func (s *SegmentScanner) Segment() *Segment { return s.seg }

// ReadPoint returns the scanner's read point.
func (s *SegmentScanner) ReadPoint() encoding.SeqNum { return s.readPoint }

// Close releases the scanner for reuse. It must not be used afterwards; cells
// it returned stay valid.
func (s *SegmentScanner) Close() {
	buf := s.buf[:s.used]
	clear(buf) // do not let the pool pin a flushed segment's arena
	clear(s.ahead)
	*s = SegmentScanner{buf: buf[:0], collectFn: s.collectFn, rev: s.rev[:0], ahead: s.ahead[:0], aheadKey: s.aheadKey[:0]}
	scannerPool.Put(s)
}

// Current returns the cell the scanner is at, or nil if it is exhausted or
// not positioned. HBase calls this peek.
func (s *SegmentScanner) Current() *encoding.KeyValue {
	if s.pos < len(s.buf) {
		return s.buf[s.pos]
	}
	return nil
}

// ColumnGoesOn reports whether, going forward, the cells the scanner has
// collected end at its current cell in the middle of the cell's column:
// more of the column's versions follow in its list, uncollected. Stepping
// over them with Next walks the list, a cache miss per version of a
// counter's long history, and then descends the B-tree for the column
// after it all the same; a seek past the column (encoding.LastOnRowCol)
// skips the list and costs that one descent. A caller about to leave the
// column (HBase's trySkipToNextColumn) seeks at once when this holds.
func (s *SegmentScanner) ColumnGoesOn() bool {
	return s.dir == forward && s.pos == len(s.buf)-1 && s.tail != nil && s.tail.next.Load() != nil
}

// SeekGE moves to the first visible cell whose key is >= key, ignoring
// sequence ids, and returns it, or nil if there is none. A seek forward to a
// key within the cells already collected (HBase's reseek) costs a binary
// search of those instead of a B-tree descent. key is not retained.
//
// REQUIRES: key is a well-formed key (see encoding.ParseKey).
func (s *SegmentScanner) SeekGE(key encoding.Key) *encoding.KeyValue {
	if kv, ok := s.seekInBuf(key, forward); ok {
		return kv
	}
	if kv, ok := s.seekAhead(key); ok {
		return kv
	}
	s.setPivot(key)
	s.fill, s.colCells = minFill, seekColCells
	s.wantAhead = true
	s.refill(forward, &s.pivot)
	s.wantAhead = false
	return s.Current()
}

// seekAhead answers SeekGE(key) from ahead if it is live and key lies past
// the column buf ends in, so that the answer is in ahead or after it,
// reporting whether it did.
func (s *SegmentScanner) seekAhead(key encoding.Key) (*encoding.KeyValue, bool) {
	if !s.aheadLive || s.dir != forward || len(s.buf) == 0 {
		return nil, false
	}
	a := s.buf[len(s.buf)-1]
	s.aheadKey = encoding.LastOnRowCol(s.aheadKey[:0], a.Row, a.Family, a.Qualifier)
	if s.cmp.CompareKeys(key, s.aheadKey) < 0 {
		return nil, false // key may fall in the column's uncollected versions
	}
	i := 0
	for i < len(s.ahead) && s.before(s.ahead[i], key, forward) {
		i++
	}
	if i == len(s.ahead) && s.aheadTail != nil {
		return nil, false // past what ahead holds, and more follows
	}
	s.takeAhead()
	s.pos = i
	s.fill = minFill
	return s.Current(), true
}

// takeAhead makes ahead the scanner's run of cells, positioned at its
// first, with ahead's continuation.
func (s *SegmentScanner) takeAhead() {
	s.buf = s.buf[:0]
	s.pos = 0
	s.appendAhead()
}

// appendAhead appends ahead to buf, which ends with the column ahead
// follows, takes over ahead's continuation and drops it.
func (s *SegmentScanner) appendAhead() {
	s.buf = append(s.buf, s.ahead...)
	s.tail = s.aheadTail
	s.more = s.aheadTail != nil
	s.used = max(s.used, len(s.buf))
	s.dropAhead()
}

// dropAhead forgets ahead, clearing its cells so that they are not kept
// alive.
func (s *SegmentScanner) dropAhead() {
	clear(s.ahead)
	s.ahead, s.aheadTail, s.aheadLive = s.ahead[:0], nil, false
}

// SeekLT moves to the last visible cell whose key is < key, ignoring sequence
// ids, and returns it, or nil if there is none. It is HBase's seekBefore.
// key is not retained.
//
// REQUIRES: key is a well-formed key (see encoding.ParseKey).
func (s *SegmentScanner) SeekLT(key encoding.Key) *encoding.KeyValue {
	if kv, ok := s.seekInBuf(key, backward); ok {
		return kv
	}
	s.setPivot(key)
	s.skipPivot = true
	s.fill = minFill
	s.refill(backward, &s.pivot)
	return s.Current()
}

// SeekToFirst moves to the first visible cell and returns it, or nil if
// there is none.
func (s *SegmentScanner) SeekToFirst() *encoding.KeyValue {
	s.fill, s.colCells = minFill, seekColCells
	s.refill(forward, nil)
	return s.Current()
}

// SeekToLast moves to the last visible cell and returns it, or nil if there
// is none.
func (s *SegmentScanner) SeekToLast() *encoding.KeyValue {
	s.fill = minFill
	s.refill(backward, nil)
	return s.Current()
}

// Next moves to the next visible cell and returns it, or nil if there is
// none. It allocates nothing.
func (s *SegmentScanner) Next() *encoding.KeyValue { return s.step(forward) }

// Prev moves to the previous visible cell and returns it, or nil if there is
// none. It allocates nothing.
func (s *SegmentScanner) Prev() *encoding.KeyValue { return s.step(backward) }

// step moves one visible cell in direction m.
func (s *SegmentScanner) step(m direction) *encoding.KeyValue {
	switch {
	case s.dir == unpositioned:
		return s.seekToEnd(-m)
	case m == s.dir:
		if s.pos >= len(s.buf) {
			return nil // exhausted in this direction: stay so
		}
		s.pos++
		if s.pos < len(s.buf) {
			return s.buf[s.pos]
		}
		if !s.more {
			return nil
		}
		s.fill = min(4*s.fill, maxFill)
		s.continueFrom(m, s.buf[len(s.buf)-1])
		return s.Current()
	default: // against the direction of buf
		if s.pos >= len(s.buf) {
			// Exhausted in direction s.dir. If buf is not empty its last cell
			// is the extreme visible cell (more is false); if it is, the seek
			// that emptied it found nothing, so every visible cell lies the
			// other way.
			if len(s.buf) == 0 {
				return s.seekToEnd(s.dir)
			}
			s.pos = len(s.buf) - 1
			return s.buf[s.pos]
		}
		if s.pos > 0 {
			s.pos--
			return s.buf[s.pos]
		}
		s.fill = minFill
		s.continueFrom(m, s.buf[0])
		return s.Current()
	}
}

// seekToEnd is SeekToLast if d is forward, SeekToFirst if backward: it moves
// to the visible cell furthest in direction d.
func (s *SegmentScanner) seekToEnd(d direction) *encoding.KeyValue {
	if d == forward {
		return s.SeekToLast()
	}
	return s.SeekToFirst()
}

// continueFrom refills buf in direction d starting at anchor, a visible cell,
// and moves to the cell after it. Keeping the anchor as buf[0] keeps buf a
// run of consecutive visible cells, so a step back needs no refill.
func (s *SegmentScanner) continueFrom(d direction, anchor *encoding.KeyValue) {
	// The anchor counts among a column's cells: take at least one more.
	s.colCells = stepColCells
	if d == forward && s.dir == forward && s.tail != nil && s.buf[len(s.buf)-1] == anchor {
		s.continueTail(anchor)
	} else {
		s.refill(d, anchor)
	}
	s.pos = min(1, len(s.buf)) // len(s.buf) >= 1: the anchor is in the tree and visible
}

// continueTail is continueFrom forward from buf's last cell when a refill
// stopped at s.tail: it collects the rest of tail's column from its list,
// and then, if there is room, the columns after it from the B-tree.
func (s *SegmentScanner) continueTail(anchor *encoding.KeyValue) {
	tail := s.tail
	s.buf = append(s.buf[:0], anchor)
	s.pos = 0
	s.tail = nil
	s.colN = 0
	defer func() { s.used = max(s.used, len(s.buf)) }()
	for v := tail.next.Load(); v != nil; v = v.next.Load() {
		if v.seq > s.readPoint || v.ver > s.ver {
			continue
		}
		if !s.take(v) {
			s.more = true
			return
		}
	}
	// The column is done; go on after it.
	if s.aheadLive {
		// Collected already, by the seek that stopped in this column.
		s.appendAhead()
		return
	}
	s.start, s.skipStart = anchor, true
	s.load()
	s.start, s.skipStart = nil, false
	s.more = s.tail != nil
}

// refill collects up to s.fill visible cells in direction d, from the start
// (from == nil) or from the cells >= from (forward) or <= from (backward),
// and positions the scanner at the first.
func (s *SegmentScanner) refill(d direction, from *encoding.KeyValue) {
	s.buf = s.buf[:0]
	s.pos = 0
	s.dir = d
	s.tail = nil
	if s.aheadLive {
		s.dropAhead()
	}
	s.from, s.start = from, from
	s.load()
	s.from, s.start = nil, nil
	if s.collecting {
		// The iteration ran to the end of the tree while collecting ahead.
		s.collecting = false
		s.aheadLive = true
	}
	s.used = max(s.used, len(s.buf))
	s.more = s.tail != nil || d == backward && len(s.buf) == s.fill
	s.skipPivot = false
	s.pivot = encoding.KeyValue{}
}

// load runs the B-tree iteration of a refill set up in s, on a tree it may
// read without the segment's mutex, or on the live tree under it.
func (s *SegmentScanner) load() {
	if s.ver == 0 {
		// The segment had no cell when the scanner opened, and the cells
		// added since are not visible to it (see Segment.NewScanner): no
		// tree to read, and no mutex for the reads of an empty memstore
		// to meet on (a segment this small is not cloned; see readLive).
		return
	}
	if s.tree == nil {
		s.tree = s.seg.readTree.Load()
	}
	if s.tree != nil || !s.seg.readLive(s) {
		s.iterate(s.tree)
	}
}

// iterate collects cells of t for refill, in direction s.dir from s.start.
// The seek key is built here, where the caller holds the segment's mutex if
// t is the live tree, so that it agrees with t on the skip prefix.
func (s *SegmentScanner) iterate(t *btree.BTreeG[entry]) {
	s.descents++
	s.colN = 0
	if s.start != nil {
		s.startCol.kv = s.start
		s.startKey = s.seg.entry(s.start, &s.startCol)
	}
	switch {
	case s.dir == forward && s.start == nil:
		t.Ascend(s.collectFn)
	case s.dir == forward:
		t.AscendGreaterOrEqual(s.startKey, s.collectFn)
	case s.start == nil:
		t.Descend(s.collectFn)
	default:
		t.DescendLessOrEqual(s.startKey, s.collectFn)
	}
	s.startKey, s.startCol.kv = entry{}, nil
}

// take appends v's cell to buf and reports whether the refill goes on. A
// forward refill stops when buf is full, or when it has taken s.colCells
// cells of one column and more follow, and then notes where (s.tail).
func (s *SegmentScanner) take(v *version) bool {
	if s.collecting {
		s.ahead = append(s.ahead, v.kv.Load())
		s.colN++
		if len(s.ahead) == minFill || s.colN == seekColCells && v.next.Load() != nil {
			s.aheadTail = v
			s.collecting = false
			s.aheadLive = true
			return false
		}
		return true
	}
	s.buf = append(s.buf, v.kv.Load())
	s.colN++
	if len(s.buf) == s.fill || s.colN == s.colCells && v.next.Load() != nil {
		s.tail = v
		if s.wantAhead && len(s.buf) < s.fill {
			// Stopped by the column's limit: collect what follows the
			// column (see ahead).
			s.wantAhead = false
			s.collecting = true
		}
		return false
	}
	return true
}

// collect is the B-tree iterator of refill: it collects the visible cells
// of a column in direction s.dir. The first column may be from's own; of it,
// collect keeps only the cells at or after s.from in that direction. The
// columns after it lie past from's.
func (s *SegmentScanner) collect(e entry) bool {
	if s.dir == backward {
		return s.collectBackward(e)
	}
	if s.skipStart {
		s.skipStart = false
		if !s.seg.less(s.startKey, e) {
			return true // start's column, collected already
		}
	}
	s.colN = 0
	if s.from != nil {
		if s.seg.less(s.startKey, e) {
			s.from = nil // not from's column
		} else if s.from.Type == encoding.TypeMinimum && s.from.Timestamp == encoding.OldestTimestamp {
			// Past the column's last cell (encoding.LastOnRowCol, the seek
			// that leaves a column): skip the list rather than walk it.
			s.from = nil
			return true
		}
	}
	for v := e.col.head.Load(); v != nil; v = v.next.Load() {
		if v.seq > s.readPoint || v.ver > s.ver {
			continue
		}
		if s.from != nil {
			if encoding.CompareVersions(v.kv.Load(), s.from) < 0 {
				continue
			}
			s.from = nil // the rest of the list sorts after it
		}
		if !s.take(v) {
			// A switch to collecting ahead leaves the rest of the
			// column's list and goes on to the next column.
			s.from = nil
			return s.collecting
		}
	}
	s.from = nil
	return true
}

// collectBackward is collect going backward: it walks e's list, which is
// in ascending order, into s.rev, and collects that in reverse.
func (s *SegmentScanner) collectBackward(e entry) bool {
	if s.from != nil && s.seg.less(e, s.startKey) {
		s.from = nil // not from's column
	}
	rev := s.rev[:0]
	for v := e.col.head.Load(); v != nil; v = v.next.Load() {
		if v.seq > s.readPoint || v.ver > s.ver {
			continue
		}
		kv := v.kv.Load()
		if s.from != nil && encoding.CompareVersions(kv, s.from) > 0 {
			break // so does the rest of the list
		}
		if s.skipPivot && kv.SeqNum == math.MaxUint64 && s.cmp.CompareKeyValues(kv, &s.pivot) == 0 {
			// SeekLT's pivot sorts before every cell with key equal to the seek
			// key but one with the reserved sequence id; keep even that out.
			continue
		}
		rev = append(rev, kv)
	}
	s.from = nil
	full := false
	for i := len(rev) - 1; i >= 0 && !full; i-- {
		s.buf = append(s.buf, rev[i])
		full = len(s.buf) == s.fill
	}
	clear(rev)
	s.rev = rev[:0]
	return !full
}

// setPivot makes s.pivot the smallest cell with the given key: with the
// largest sequence id it sorts before every cell of that key.
func (s *SegmentScanner) setPivot(key encoding.Key) {
	s.pivot = key.KeyValue(nil)
	s.pivot.SeqNum = math.MaxUint64
}

// seekInBuf answers a seek in direction d (forward: SeekGE, backward: SeekLT)
// from the collected cells if it can, reporting whether it did.
func (s *SegmentScanner) seekInBuf(key encoding.Key, d direction) (*encoding.KeyValue, bool) {
	if s.dir != d || s.pos >= len(s.buf) {
		return nil, false
	}
	// The answer is the first visible cell in direction d that is not
	// "before" the key: < key for SeekGE, >= key for SeekLT. Along buf,
	// before is true and then false.
	if !s.before(s.buf[s.pos], key, d) {
		if s.pos > 0 && s.before(s.buf[s.pos-1], key, d) {
			return s.buf[s.pos], true
		}
		return nil, false
	}
	last := len(s.buf) - 1
	if s.before(s.buf[last], key, d) {
		if s.more {
			return nil, false
		}
		s.pos = len(s.buf)
		return nil, true
	}
	lo, hi := s.pos+1, last
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.before(s.buf[mid], key, d) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	s.pos = lo
	return s.buf[lo], true
}

// before reports whether kv comes before the answer to a seek for key in
// direction d.
func (s *SegmentScanner) before(kv *encoding.KeyValue, key encoding.Key, d direction) bool {
	c := s.cmp.CompareKeyValueKey(kv, key)
	if d == forward {
		return c < 0
	}
	return c >= 0
}
