package scanner

import (
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/memstore"
)

// KeyValueScanner is one sorted source of cells: HBase's KeyValueScanner.
type KeyValueScanner interface {
	// Peek returns the current cell, or nil when the scanner is exhausted.
	// The cell is valid until the scanner moves.
	Peek() *encoding.KeyValue
	// Next moves to the next visible cell.
	Next() error
	// Seek moves to the first visible cell whose key is >= key (ignoring
	// sequence ids).
	Seek(key encoding.Key) error
	// Reseek is Seek for a key at or after the current position; it may be
	// cheaper.
	Reseek(key encoding.Key) error
	// SeekToPreviousRow moves to the first visible cell of the last row
	// before key's row that has one (reverse scans).
	SeekToPreviousRow(key encoding.Key) error
	// SeekToLastRow moves to the first visible cell of the last row that
	// has one.
	SeekToLastRow() error
	// BackwardSeek moves to the first visible cell >= key in key's row, or
	// else to the previous row's first (reverse scans).
	BackwardSeek(key encoding.Key) error
	// Order breaks ties between equal cells of different scanners: the
	// larger order is the newer source and comes first.
	Order() int64
	// Close releases the scanner.
	Close()
}

// MemStoreScanner adapts a memstore segment scanner.
type MemStoreScanner struct {
	s      *memstore.SegmentScanner
	cur    *encoding.KeyValue
	order  int64
	keyBuf []byte
}

// NewMemStoreScanner wraps s; memstore segments are newer than any file, so
// give them the highest orders.
func NewMemStoreScanner(s *memstore.SegmentScanner, order int64) *MemStoreScanner {
	m := &MemStoreScanner{}
	m.Reset(s, order)
	m.cur = s.SeekToFirst()
	return m
}

// Reset makes *m an unpositioned scanner of s (Peek returns nil until a
// seek), reusing its memory. A StoreScanner seeks every scanner it is given,
// so positioning on the first cell first would be wasted work.
func (m *MemStoreScanner) Reset(s *memstore.SegmentScanner, order int64) {
	m.s, m.order, m.keyBuf, m.cur = s, order, m.keyBuf[:0], nil
}

func (m *MemStoreScanner) Peek() *encoding.KeyValue { return m.cur }
func (m *MemStoreScanner) Next() error              { m.cur = m.s.Next(); return nil }
func (m *MemStoreScanner) Seek(k encoding.Key) error {
	m.cur = m.s.SeekGE(k)
	return nil
}
func (m *MemStoreScanner) Reseek(k encoding.Key) error { return m.Seek(k) }

func (m *MemStoreScanner) SeekToPreviousRow(k encoding.Key) error {
	m.keyBuf = encoding.FirstOnRow(m.keyBuf[:0], k.Row())
	m.cur = m.s.SeekLT(m.keyBuf)
	if m.cur != nil {
		// Memstore cells are immutable: their row can be kept.
		m.keyBuf = encoding.FirstOnRow(m.keyBuf[:0], m.cur.Row)
		m.cur = m.s.SeekGE(m.keyBuf)
	}
	return nil
}

func (m *MemStoreScanner) SeekToLastRow() error {
	if last := m.s.SeekToLast(); last != nil {
		m.keyBuf = encoding.FirstOnRow(m.keyBuf[:0], last.Row)
		m.cur = m.s.SeekGE(m.keyBuf)
	} else {
		m.cur = nil
	}
	return nil
}

func (m *MemStoreScanner) BackwardSeek(k encoding.Key) error {
	m.cur = m.s.SeekGE(k)
	if m.cur == nil || m.s.Segment().Comparer().CompareRows(m.cur.Row, k.Row()) > 0 {
		return m.SeekToPreviousRow(k)
	}
	return nil
}
func (m *MemStoreScanner) Order() int64 { return m.order }

// Close returns the segment scanner to its pool and drops the cell m was
// at. A MemStoreScanner is often kept for reuse (a Get's pooled readers):
// the cell would keep its slab, and through the older versions its list
// links, most of a segment that a flush has since dropped.
func (m *MemStoreScanner) Close() {
	m.s.Close()
	m.s, m.cur = nil, nil
}

// StoreFileScanner reads one store file at a read point: HBase's
// StoreFileScanner over an hfile.Iterator.
type StoreFileScanner struct {
	it        hfile.Iterator
	r         *hfile.Reader
	cmp       *encoding.Comparer
	readPoint encoding.SeqNum
	order     int64
	// fixedSeq, if not 0, is every cell's sequence id (SetSeqNum).
	fixedSeq encoding.SeqNum
	cur      encoding.KeyValue
	valid    bool
	seeked   bool // positioned at least once; !valid then means exhausted

	// Reverse scans (HBASE-28043): hint is the key of the last cell of the
	// row before the current one, found by the seekBefore that positioned
	// us, so the next step back needs one seekBefore and a cheap forward
	// reseek. Only keys are copied, never values (HBASE-29103).
	hint    []byte
	hasHint bool
	target  []byte
	target2 []byte
	rowBuf  []byte // a row SeekToPreviousRow steps back from, copied

	// Row bounds (SetRowBounds): the scanner shows only rows in [lo, hi),
	// as HBase's HalfStoreFileReader shows a reference file's half of its
	// parent's file. loKey and hiKey are their first-on-row keys, used
	// when hasLo and hasHi are set. pastHi is set when a forward move met
	// a cell at or past hi.
	loKey, hiKey encoding.Key
	hasLo, hasHi bool
	pastHi       bool

	// probe, if hasProbe, is the point read the next Seek is for (SetRowProbe).
	probe    hfile.RowProbe
	hasProbe bool
}

// NewStoreFileScanner returns an unpositioned scanner of r; call Seek first.
func NewStoreFileScanner(r *hfile.Reader, readPoint encoding.SeqNum, order int64, cacheBlocks bool) *StoreFileScanner {
	s := &StoreFileScanner{}
	s.Reset(r, readPoint, order, cacheBlocks)
	return s
}

// Reset makes *s a new unpositioned scanner of r, as NewStoreFileScanner
// returns, reusing its memory. s must be zero or closed.
func (s *StoreFileScanner) Reset(r *hfile.Reader, readPoint encoding.SeqNum, order int64, cacheBlocks bool) {
	hint, target, target2, rowBuf := s.hint[:0], s.target[:0], s.target2[:0], s.rowBuf[:0]
	lo, hi := s.loKey[:0], s.hiKey[:0]
	it := s.it // (closed: InitIterator keeps only its buffers)
	*s = StoreFileScanner{r: r, cmp: r.Comparer(), readPoint: readPoint, order: order, it: it,
		hint: hint, target: target, target2: target2, rowBuf: rowBuf, loKey: lo, hiKey: hi}
	r.InitIterator(&s.it, cacheBlocks)
}

// SetRowBounds limits the scanner to the rows in [lo, hi); a nil bound
// leaves that side open. It is how a store reads a reference file (HBase's
// HalfStoreFileReader): the bottom half of a parent's file is [nil, split
// row), the top half [split row, nil). Call it after Reset or
// NewStoreFileScanner, before the first seek.
func (s *StoreFileScanner) SetRowBounds(lo, hi []byte) {
	s.hasLo, s.hasHi = lo != nil, hi != nil
	if s.hasLo {
		s.loKey = encoding.FirstOnRow(s.loKey[:0], lo)
	}
	if s.hasHi {
		s.hiKey = encoding.FirstOnRow(s.hiKey[:0], hi)
	}
}

// SetRowProbe makes the next Seek the seek of a point read of p's row
// (the key must be in that row): it asks the file's blooms only if the
// block it lands in is not cached (hfile.Iterator.SeekToRow), and leaves
// the scanner exhausted if they rule the row out. A store that checks the
// blooms itself before opening the scanner does not call it.
func (s *StoreFileScanner) SetRowProbe(p hfile.RowProbe) {
	s.probe, s.hasProbe = p, true
}

// AtUpperBound reports whether a forward move stopped at the upper row
// bound: the cells the scanner did not return lie past it. A compaction's
// audit of a reference file takes that as the end of its half.
func (s *StoreFileScanner) AtUpperBound() bool { return s.pastHi }

// belowLo reports whether row is before the lower bound.
func (s *StoreFileScanner) belowLo(row []byte) bool {
	return s.hasLo && s.cmp.CompareRows(row, s.loKey.Row()) < 0
}

// clampLo returns k, or the lower bound's key if k is before it.
func (s *StoreFileScanner) clampLo(k encoding.Key) encoding.Key {
	if s.belowLo(k.Row()) {
		return s.loKey
	}
	return k
}

// clampHi returns k, or the upper bound's key if k's row is past it: the
// row before k's is then the last row below the bound.
func (s *StoreFileScanner) clampHi(k encoding.Key) encoding.Key {
	if s.hasHi && s.cmp.CompareRows(k.Row(), s.hiKey.Row()) > 0 {
		return s.hiKey
	}
	return k
}

// checkLo invalidates a position a backward move left below the lower
// bound: the half has no row there.
func (s *StoreFileScanner) checkLo() {
	if s.valid && s.belowLo(s.cur.Row) {
		s.valid, s.hasHint = false, false
	}
}

// SetSeqNum makes every cell of the file read with sequence id n, whatever
// the file records: how HBase's StoreFileScanner reads a bulk-loaded file
// (its cells take the sequence id the load gave the file), so that the
// read point and the order of equal cells treat them as written at n. Call
// it after Reset (or NewStoreFileScanner), before the first seek.
func (s *StoreFileScanner) SetSeqNum(n encoding.SeqNum) { s.fixedSeq = n }

// seqNum is the current cell's sequence id.
func (s *StoreFileScanner) seqNum() encoding.SeqNum {
	if s.fixedSeq != 0 {
		return s.fixedSeq
	}
	return s.it.SeqNum()
}

// load makes the iterator's cell the current one.
func (s *StoreFileScanner) load() {
	s.it.KeyValue(&s.cur)
	if s.fixedSeq != 0 {
		s.cur.SeqNum = s.fixedSeq
	}
	s.valid = true
}

func (s *StoreFileScanner) Peek() *encoding.KeyValue {
	if !s.valid {
		return nil
	}
	return &s.cur
}

func (s *StoreFileScanner) Order() int64 { return s.order }

// Close releases the scanner, and with it the cells it returned (their
// blocks may be pooled memory the next read reuses). The store keeps the
// file referenced until its readers' scanners are closed.
func (s *StoreFileScanner) Close() {
	s.it.Close()
	s.valid = false
}

// settle loads the iterator's cell and skips cells newer than the read point.
func (s *StoreFileScanner) settle(ok bool, err error) error {
	for ; ok && err == nil; ok, err = s.it.Next() {
		if s.seqNum() <= s.readPoint {
			s.load()
			if s.hasHi && s.cmp.CompareRows(s.cur.Row, s.hiKey.Row()) >= 0 {
				s.pastHi = true
				break
			}
			return nil
		}
	}
	s.valid = false
	return err
}

func (s *StoreFileScanner) Next() error {
	if !s.valid {
		return nil
	}
	return s.settle(s.it.Next())
}

// nextStartsRow is Next that also reports whether the cell it moves to is
// in another row than the one it leaves, when the block's decoder knows
// without comparing rows: known is false when it does not, or when Next
// stepped over cells the read point hides.
func (s *StoreFileScanner) nextStartsRow() (starts, known bool, err error) {
	if !s.valid {
		return false, false, nil
	}
	ok, err := s.it.Next()
	if ok && err == nil && s.it.SeqNum() <= s.readPoint {
		starts, known = s.it.StartsRow()
	}
	return starts, known, s.settle(ok, err)
}

func (s *StoreFileScanner) Seek(k encoding.Key) error {
	s.hasHint = false
	if s.hasProbe {
		s.hasProbe = false
		res, skipped, err := s.it.SeekToRow(s.clampLo(k), &s.probe)
		s.probe = hfile.RowProbe{}
		if skipped && err == nil {
			s.seeked, s.valid = true, false
			return nil
		}
		return s.afterSeek(res, err)
	}
	res, err := s.it.SeekTo(s.clampLo(k))
	return s.afterSeek(res, err)
}

func (s *StoreFileScanner) Reseek(k encoding.Key) error {
	if !s.valid {
		if s.seeked {
			return nil // exhausted: nothing lies ahead
		}
		return s.Seek(k)
	}
	s.hasHint = false
	res, err := s.it.Reseek(s.clampLo(k))
	return s.afterSeek(res, err)
}

func (s *StoreFileScanner) afterSeek(res int, err error) error {
	s.seeked = true
	if err != nil {
		s.valid = false
		return err
	}
	switch res {
	case encoding.SeekPrecedesFile:
		return s.settle(s.it.First())
	case encoding.SeekBefore:
		// On the last cell < key: the answer is the next one.
		return s.settle(s.it.Next())
	}
	// Exact, or on the first cell after key.
	return s.settle(true, nil)
}

// rowEndsHere reports whether the cell after the current one is known,
// without moving, to be in another row: a reversed heap then steps back to
// the previous row from here, instead of stepping forward onto the row
// after (decoding nothing, but loading the cell and perhaps the next block)
// to see that the row ended. False means unknown.
func (s *StoreFileScanner) rowEndsHere() bool {
	if !s.valid {
		return false
	}
	starts, ok := s.it.NextStartsRow()
	return ok && starts
}

func (s *StoreFileScanner) SeekToPreviousRow(k encoding.Key) error {
	err := s.seekToPreviousRow(s.clampHi(k))
	s.checkLo()
	return err
}

func (s *StoreFileScanner) seekToPreviousRow(k encoding.Key) error {
	s.seeked = true
	row := k.Row()
	if s.valid && s.cmp.CompareRows(s.cur.Row, row) >= 0 {
		// Most steps back stay in the block: walk back over its cells.
		moved, err := s.prevRowInBlock(row)
		if err != nil || moved {
			return err
		}
	}
	if s.hasHint && s.cmp.CompareRows(encoding.Key(s.hint).Row(), row) < 0 {
		// The hint's row is the one before ours: go there directly.
		s.target = encoding.FirstOnRow(s.target[:0], encoding.Key(s.hint).Row())
		return s.seekRowSavingHint()
	}
	s.target = encoding.FirstOnRow(s.target[:0], row)
	ok, err := s.it.SeekBefore(s.target)
	if err != nil || !ok {
		s.valid, s.hasHint = false, false
		return err
	}
	// On the last cell of the previous row R. Its first cell is usually in
	// the same block, among the cells the seek decoded. (row may have been
	// the iterator's memory: s.target holds a copy.)
	s.hasHint = false
	s.rowBuf = append(s.rowBuf[:0], encoding.Key(s.target).Row()...)
	if moved, err := s.prevRowInBlock(s.rowBuf); err != nil || moved {
		return err
	}
	// It is not (or R has no visible cell and the row before it is not):
	// aim at R's first cell with a seek that also finds the row before.
	if ok, err = s.it.SeekBefore(encoding.FirstOnRow(s.target[:0], s.rowBuf)); err != nil || !ok {
		s.valid = false
		return err
	}
	s.target = encoding.FirstOnRow(s.target[:0], s.it.Key().Row())
	return s.seekRowSavingHint()
}

// prevRowInBlock moves to the first visible cell of the last row before
// row that has one, while the block shows where the rows start; it
// reports false, having moved back only over rows with no visible cell, if
// the caller must go on with a seek.
//
// The search starts at the current cell, in row, after it, or before it
// (then that cell's row is the one before).
func (s *StoreFileScanner) prevRowInBlock(row []byte) (bool, error) {
	for {
		ok, err := s.it.SeekBeforeRow(row)
		if err != nil {
			s.valid, s.hasHint = false, false
			return false, err
		}
		if !ok {
			return false, nil
		}
		s.hasHint = false // the hint describes where a seek left us
		// On the first cell of the row before: take its first visible cell,
		// most often this one.
		if s.seqNum() <= s.readPoint {
			s.load()
			return true, nil
		}
		// (The row is copied: the seeker may reuse its key memory.)
		s.target = encoding.FirstOnRow(s.target[:0], s.it.Key().Row())
		row = encoding.Key(s.target).Row()
		for {
			if s.seqNum() <= s.readPoint {
				s.load()
				return true, nil
			}
			more, err := s.it.Next()
			if err != nil {
				s.valid = false
				return false, err
			}
			if !more || s.cmp.CompareRows(s.it.Key().Row(), row) != 0 {
				break
			}
		}
		// Nothing visible in that row: step back again from the cell after it.
		if !s.it.Valid() {
			return false, nil
		}
	}
}

// seekRowSavingHint positions on the first visible cell of the row of
// s.target (a first-on-row key): one seekBefore, which also yields the hint
// for the next step back, then a forward reseek. If that row has nothing
// visible at the read point it steps back a row, and so on.
func (s *StoreFileScanner) seekRowSavingHint() error {
	for {
		ok, err := s.it.SeekBefore(s.target)
		if err != nil {
			s.valid = false
			return err
		}
		if ok {
			s.hint = append(s.hint[:0], s.it.Key()...)
			s.hasHint = true
		} else {
			s.hasHint = false
			if _, err := s.it.First(); err != nil {
				s.valid = false
				return err
			}
		}
		res, err := s.it.Reseek(s.target)
		if err != nil {
			s.valid = false
			return err
		}
		ok, err = true, nil
		if res == encoding.SeekBefore {
			ok, err = s.it.Next()
		}
		targetRow := encoding.Key(s.target).Row()
		for ; ok && err == nil; ok, err = s.it.Next() {
			if s.cmp.CompareRows(s.it.Key().Row(), targetRow) != 0 {
				break // the row has no visible cell
			}
			if s.seqNum() <= s.readPoint {
				s.load()
				return nil
			}
		}
		if err != nil {
			s.valid = false
			return err
		}
		if !s.hasHint {
			s.valid = false
			return nil
		}
		s.target, s.target2 = s.target2, s.target
		s.target = encoding.FirstOnRow(s.target[:0], encoding.Key(s.hint).Row())
	}
}

func (s *StoreFileScanner) SeekToLastRow() error {
	if s.hasHi {
		return s.SeekToPreviousRow(s.hiKey)
	}
	err := s.seekToLastRow()
	s.checkLo()
	return err
}

func (s *StoreFileScanner) seekToLastRow() error {
	s.seeked = true
	last := s.r.LastKey()
	if last == nil {
		s.valid, s.hasHint = false, false
		return nil
	}
	s.target = encoding.FirstOnRow(s.target[:0], last.Row())
	return s.seekRowSavingHint()
}

func (s *StoreFileScanner) BackwardSeek(k encoding.Key) error {
	if s.belowLo(k.Row()) {
		// Every row of the half is after k's.
		s.seeked, s.valid, s.hasHint = true, false, false
		return nil
	}
	if err := s.Seek(k); err != nil {
		return err
	}
	if !s.valid || s.cmp.CompareRows(s.cur.Row, k.Row()) > 0 {
		return s.SeekToPreviousRow(k)
	}
	return nil
}
