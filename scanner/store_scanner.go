package scanner

import (
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
)

// StoreScanner reads one store (column family): it merges the store's
// scanners in a KeyValueHeap and applies a QueryMatcher, forward or
// reversed. It is HBase's StoreScanner and ReversedStoreScanner.
//
// A reversed StoreScanner moves between rows only by key: each scanner
// steps back with SeekToPreviousRow (a seekBefore plus a forward reseek,
// HBASE-28043), and values are copied only for the cells it returns.
type StoreScanner struct {
	heap     KeyValueHeap
	matcher  QueryMatcher
	cmp      *encoding.Comparer
	reversed bool
	reuse    bool
	filter   filter.Filter
	keyBuf   []byte
	rowBuf   []byte
	famBuf   []byte // the column seekNextCol leaves
	qualBuf  []byte
	done     bool
	// leftRow is set by trySkip when its last step reached another row (or
	// the end): Row then returns without looking at the cell again.
	leftRow bool
	// plain says the read wants the newest version of every column and no
	// more, without a filter: Row then reads a row alone from a heap of one
	// store file (plainRow).
	plain bool

	// Arena for returned cells when reusing.
	kvs []encoding.KeyValue
	buf []byte
	// carver, if set, gives the memory for the bytes of the cells Row
	// returns instead of buf (see SetCarver).
	carver Carver
}

// A Carver gives the memory of a cell the scanner returns: CarveCell
// returns the struct to copy it to and an empty slice with room for its n
// bytes.
type Carver interface {
	CarveCell(n int) (*encoding.KeyValue, []byte)
}

// SetCarver makes the scanner copy the cells it returns to memory from c
// until the next SetCarver(nil). A caller that keeps the cells (the region
// scanner's owned results) carves them from its own memory, so they are
// copied once rather than twice.
func (s *StoreScanner) SetCarver(c Carver) { s.carver = c }

// NewStoreScanner positions scanners at opts.StartRow (for a reversed scan,
// at the last row <= it) and returns a StoreScanner over them. It takes
// ownership of the scanners.
func NewStoreScanner(cmp *encoding.Comparer, scanners []KeyValueScanner, opts QueryOptions) (*StoreScanner, error) {
	s := &StoreScanner{}
	if err := s.Reset(cmp, scanners, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// Reset makes *s a new StoreScanner over scanners, as NewStoreScanner
// returns, reusing the memory of its heap, matcher and buffers: a point
// read keeps one in a reusable struct instead of allocating it. s must be
// zero or closed. On error the scanners are closed.
func (s *StoreScanner) Reset(cmp *encoding.Comparer, scanners []KeyValueScanner, opts QueryOptions) error {
	*s = StoreScanner{cmp: cmp, reversed: opts.Reversed, reuse: opts.ReuseCells, filter: opts.Filter,
		heap: s.heap, matcher: s.matcher, keyBuf: s.keyBuf[:0], rowBuf: s.rowBuf[:0], kvs: s.kvs[:0], buf: s.buf[:0],
		famBuf: s.famBuf[:0], qualBuf: s.qualBuf[:0]}
	// (carver is nil again: a scanner's owner sets it per read.)
	s.matcher.reset(cmp, opts)
	s.heap.reset(cmp, scanners, opts.Reversed)
	s.plain = s.matcher.plain()
	var err error
	switch {
	case !opts.Reversed && opts.StartExclusive:
		s.keyBuf = encoding.LastOnRow(s.keyBuf[:0], opts.StartRow)
		err = s.heap.Seek(s.keyBuf)
	case !opts.Reversed:
		s.keyBuf = encoding.FirstOnRow(s.keyBuf[:0], opts.StartRow)
		err = s.heap.Seek(s.keyBuf)
	case opts.StartRow == nil:
		err = s.heap.SeekToLastRow()
	case opts.StartExclusive:
		s.keyBuf = encoding.FirstOnRow(s.keyBuf[:0], opts.StartRow)
		err = s.heap.SeekToPreviousRowAll(s.keyBuf)
	default:
		s.keyBuf = encoding.FirstOnRow(s.keyBuf[:0], opts.StartRow)
		err = s.heap.BackwardSeekAll(s.keyBuf)
	}
	if err != nil {
		s.heap.Close()
		return err
	}
	return nil
}

// PeekRow returns the row of the next cell the scanner will consider, nil
// when it is done. A region scanner uses it to pick the next row across
// families. The slice is valid until the scanner moves.
func (s *StoreScanner) PeekRow() []byte {
	if s.done {
		return nil
	}
	kv := s.heap.Peek()
	if kv == nil || s.matcher.PastStop(kv.Row) {
		s.done = true
		return nil
	}
	return kv.Row
}

// SeekRow moves to row, or the next row after it in the scan's direction,
// skipping what lies between. Moving against the direction is not allowed.
func (s *StoreScanner) SeekRow(row []byte) error {
	s.keyBuf = encoding.FirstOnRow(s.keyBuf[:0], row)
	if s.reversed {
		if kv := s.heap.Peek(); kv != nil && s.cmp.CompareRows(kv.Row, row) > 0 {
			return s.heap.SeekToPreviousRow(encoding.LastOnRow(s.keyBuf[:0], row))
		}
		return nil
	}
	return s.heap.Reseek(s.keyBuf)
}

// SkipRow moves past the row the scanner is at.
func (s *StoreScanner) SkipRow() error {
	kv := s.heap.Peek()
	if kv == nil {
		return nil
	}
	if s.reversed {
		s.keyBuf = encoding.FirstOnRow(s.keyBuf[:0], kv.Row)
		return s.heap.SeekToPreviousRow(s.keyBuf)
	}
	s.keyBuf = encoding.LastOnRow(s.keyBuf[:0], kv.Row)
	return s.heap.Reseek(s.keyBuf)
}

// NextRow appends the matching cells of the next row with any to dst and
// returns it; ok is false when the scan is done. With ReuseCells the cells
// are valid until the next call.
func (s *StoreScanner) NextRow(dst []*encoding.KeyValue) (_ []*encoding.KeyValue, ok bool, err error) {
	for {
		if s.PeekRow() == nil {
			return dst, false, nil
		}
		n := len(dst)
		if dst, err = s.Row(dst); err != nil {
			return dst, false, err
		}
		if len(dst) > n {
			return dst, true, nil
		}
	}
}

// Row appends the matching cells of the row the scanner is at (PeekRow)
// and leaves the scanner at the next row.
func (s *StoreScanner) Row(dst []*encoding.KeyValue) ([]*encoding.KeyValue, error) {
	kv := s.heap.Peek()
	if kv == nil {
		return dst, nil
	}
	if s.reuse {
		s.kvs, s.buf = s.kvs[:0], s.buf[:0]
	}
	first := true
	if s.plain && len(s.heap.h.s) == 1 {
		if sf, ok := s.heap.h.s[0].(*StoreFileScanner); ok {
			var handOver bool
			var err error
			if dst, handOver, err = s.plainRow(sf, dst); !handOver || err != nil {
				return dst, err
			}
			// The matcher takes the row over where plainRow left it.
			first = false
		}
	}
	if first {
		s.matcher.SetRow(kv.Row)
	}
	row := s.matcher.Row()
	for ; ; first = false {
		if s.done {
			return dst, nil
		}
		kv = s.heap.Peek()
		if kv == nil {
			return dst, nil
		}
		// The first cell is the row's (SetRow took its row from it).
		if !first && s.cmp.CompareRows(kv.Row, row) != 0 {
			s.endRow()
			return dst, nil
		}
		var err error
		switch s.matcher.Match(kv) {
		case MatchInclude:
			dst = append(dst, s.include(kv))
			err = s.heap.Next()
		case MatchIncludeAndSeekNextCol:
			c := s.include(kv)
			dst = append(dst, c)
			if s.filter == nil {
				// The copy keeps the column (a filter's transform could
				// have changed it).
				err = s.seekPastCol(c.Family, c.Qualifier)
			} else {
				err = s.seekNextCol(kv)
			}
		case MatchIncludeAndSeekNextRow:
			dst = append(dst, s.include(kv))
			err = s.seekNextRow()
		case MatchSeekNextUsingHint:
			err = s.seekHint(kv)
		case MatchSkip:
			err = s.heap.Next()
		case MatchSeekNextCol:
			err = s.seekNextCol(kv)
		case MatchSeekNextRow:
			err = s.seekNextRow()
		case MatchSeekToColumnHint:
			s.keyBuf = encoding.FirstOnRowCol(s.keyBuf[:0], row, kv.Family, s.matcher.NextColumnHint())
			err = s.seekInRow(s.keyBuf)
		case MatchDone:
			s.done = true
			return dst, s.matcher.Err()
		}
		if err != nil {
			return dst, err
		}
		if s.leftRow {
			s.leftRow = false
			s.endRow()
			return dst, nil
		}
	}
}

// plainRow is Row for a plain read (s.plain) whose heap holds only sf,
// the usual scan of a compacted store: it copies the first cell of each
// column and steps over the column's older versions, without the matcher
// or the heap, which decide nothing here. A reversed read steps forward
// within the row too, and at the row's end moves sf to the row before, as
// a reversed heap's Next would. At the first cell that needs the matcher
// (a delete marker, or a cell with tags, which may carry a TTL) it hands
// over: the matcher is then where Row would have left it, and the caller
// goes on from that cell.
func (s *StoreScanner) plainRow(sf *StoreFileScanner, dst []*encoding.KeyValue) (_ []*encoding.KeyValue, handOver bool, err error) {
	// The heap's top is &sf.cur while sf is valid; once sf is done the
	// heap must drop it.
	defer s.heap.fixTop(sf)
	kv := &sf.cur
	var last *encoding.KeyValue // the copy of the last cell included
	for {
		if kv.Type != encoding.TypePut || len(kv.Tags) > 0 {
			s.handOver(kv, last)
			return dst, true, nil
		}
		last = s.copyFileCell(sf)
		dst = append(dst, last)
		for steps := 1; ; steps++ {
			if s.reversed && sf.rowEndsHere() {
				return dst, false, s.plainPrevRow(sf, last.Row)
			}
			starts, known, err := sf.nextStartsRow()
			if err != nil {
				return dst, false, err
			}
			if !sf.valid || (known && starts) || (!known && s.cmp.CompareRows(kv.Row, last.Row) != 0) {
				// The row's end.
				if s.reversed {
					return dst, false, s.plainPrevRow(sf, last.Row)
				}
				return dst, false, nil
			}
			if string(kv.Qualifier) != string(last.Qualifier) || string(kv.Family) != string(last.Family) {
				break // the next column
			}
			// An older version of the column (or the same one at a lower
			// sequence id), hidden: unless it is a marker, which could
			// mask other columns. Past skipSteps of them the matcher takes
			// over, and seeks past the rest as Row does.
			if kv.Type != encoding.TypePut || steps >= skipSteps {
				s.handOver(kv, last)
				return dst, true, nil
			}
		}
	}
}

// plainPrevRow moves sf, done with row, to the row before it.
func (s *StoreScanner) plainPrevRow(sf *StoreFileScanner, row []byte) error {
	s.keyBuf = encoding.FirstOnRow(s.keyBuf[:0], row)
	return sf.SeekToPreviousRow(s.keyBuf)
}

// handOver sets the matcher where Row would have it at kv, plainRow having
// included last (nil: none yet) and stepped over the rest of its column.
func (s *StoreScanner) handOver(kv, last *encoding.KeyValue) {
	if last == nil {
		s.matcher.SetRow(kv.Row)
		return
	}
	s.matcher.SetRow(last.Row)
	s.matcher.resumeColumn(last.Qualifier, last.Timestamp)
}

// endRow is where Row stops, at the next row's first cell. HBase's matcher
// asks FilterAllRemaining before anything else, so its store scanner gives
// up there when the filter became done during this row, before the region
// resets it (ColumnCountGetFilter relies on that).
func (s *StoreScanner) endRow() {
	if f := s.filter; f != nil && f.FilterAllRemaining() {
		s.done = true
	}
}

// include copies a cell the scanner returns, after the filter's transform.
func (s *StoreScanner) include(kv *encoding.KeyValue) *encoding.KeyValue {
	if f := s.filter; f != nil {
		kv = f.TransformCell(kv)
	}
	return s.copyCell(kv)
}

// seekHint moves to the filter's hint if it lies ahead, else to the next cell.
func (s *StoreScanner) seekHint(kv *encoding.KeyValue) error {
	hint := s.filter.NextCellHint(kv)
	if hint == nil {
		return s.heap.Next()
	}
	c := s.cmp.CompareKeyValueKey(kv, hint)
	if s.reversed {
		switch rc := s.cmp.CompareRows(hint.Row(), kv.Row); {
		case rc < 0:
			// An earlier row: go to the last row at or before it, i.e.
			// before the row just after it.
			s.rowBuf = append(append(s.rowBuf[:0], hint.Row()...), 0)
			s.keyBuf = encoding.FirstOnRow(s.keyBuf[:0], s.rowBuf)
			return s.heap.SeekToPreviousRow(s.keyBuf)
		case rc == 0 && c < 0:
			// Further along this row (a column hint: cells within a row
			// still come in column order). HBase's reversed scanner steps
			// cell by cell here; a seek within the row returns the same.
			s.keyBuf = append(s.keyBuf[:0], hint...)
			return s.heap.BackwardSeek(s.keyBuf)
		}
		return s.heap.Next()
	}
	if c >= 0 {
		return s.heap.Next()
	}
	s.keyBuf = append(s.keyBuf[:0], hint...)
	return s.heap.Reseek(s.keyBuf)
}

// copyCell copies a cell the scanner returns; only now is its value copied.
func (s *StoreScanner) copyCell(kv *encoding.KeyValue) *encoding.KeyValue {
	return s.copyCellOf(kv, nil)
}

// copyFileCell is copyCell for sf's current cell, which its iterator's
// key filled: one move copies its row, family and qualifier.
func (s *StoreScanner) copyFileCell(sf *StoreFileScanner) *encoding.KeyValue {
	return s.copyCellOf(&sf.cur, sf.it.Key())
}

// copyCellOf is copyCell of kv, and, if key is not nil, of kv as key
// filled it (encoding.KeyValue.CopyFilledTo).
func (s *StoreScanner) copyCellOf(kv *encoding.KeyValue, key encoding.Key) *encoding.KeyValue {
	if !s.reuse {
		return kv.Clone()
	}
	var dst *encoding.KeyValue
	var mem []byte
	if s.carver != nil {
		n := len(kv.Row) + len(kv.Family) + len(kv.Qualifier) + len(kv.Value) + len(kv.Tags)
		if key != nil {
			n = encoding.FilledCopySize(kv)
		}
		dst, mem = s.carver.CarveCell(n)
	} else {
		s.kvs = append(s.kvs, encoding.KeyValue{})
		dst, mem = &s.kvs[len(s.kvs)-1], s.buf
	}
	if key != nil {
		mem = kv.CopyFilledTo(dst, key, mem)
	} else {
		mem = kv.CopyTo(dst, mem)
	}
	if s.carver == nil {
		s.buf = mem
	}
	return dst
}

// seekInRow moves forward to key within the current row.
func (s *StoreScanner) seekInRow(key encoding.Key) error {
	if s.reversed {
		return s.heap.BackwardSeek(key)
	}
	return s.heap.Reseek(key)
}

// skipSteps is how many cells seekNextCol and seekNextRow step over with
// Next before they give up and seek, as HBase's trySkipToNextColumn and
// trySkipToNextRow do. The next column is most often the next cell (one
// version per column, the usual case): a step decodes one cell, where a
// seek compares against the index key and searches the block, and, in a
// reverse scan, walks the index (BackwardSeek is a full Seek).
const skipSteps = 4

func (s *StoreScanner) seekNextCol(kv *encoding.KeyValue) error {
	// kv changes as the heap moves: keep its column. (The seek key is
	// only built if stepping does not get past the column.)
	s.famBuf = append(s.famBuf[:0], kv.Family...)
	s.qualBuf = append(s.qualBuf[:0], kv.Qualifier...)
	return s.seekPastCol(s.famBuf, s.qualBuf)
}

// seekPastCol moves past the column family:qualifier of the current row,
// which must stay unchanged while the heap moves: a copy (seekNextCol's, or
// the one include made of the cell).
func (s *StoreScanner) seekPastCol(family, qualifier []byte) error {
	s.leftRow = false
	// A memstore column whose versions go on is left by a seek at once:
	// stepping would walk them, and get past them only by a seek anyway.
	if !s.heap.topColumnGoesOn() {
		if done, err := s.trySkip(false, family, qualifier); done || err != nil {
			return err
		}
	}
	s.keyBuf = encoding.LastOnRowCol(s.keyBuf[:0], s.matcher.Row(), family, qualifier)
	return s.seekInRow(s.keyBuf)
}

func (s *StoreScanner) seekNextRow() error {
	s.leftRow = false
	if s.matcher.AtLastRow() {
		// Nothing lies beyond (a Get's row): seeking there would only
		// cost a descent of every scanner.
		s.done = true
		return nil
	}
	if s.reversed {
		s.keyBuf = encoding.FirstOnRow(s.keyBuf[:0], s.matcher.Row())
		return s.heap.SeekToPreviousRow(s.keyBuf)
	}
	s.keyBuf = encoding.LastOnRow(s.keyBuf[:0], s.matcher.Row())
	if !s.heap.topColumnGoesOn() {
		if done, err := s.trySkip(true, nil, nil); done || err != nil {
			return err
		}
	}
	return s.heap.Reseek(s.keyBuf)
}

// trySkip steps with Next over the cells of the column being left (the
// matcher's row, family:qualifier) or, wholeRow, of the row, for at most
// skipSteps cells. It reports whether the scanner got past them; if not,
// the caller seeks. The cells stepped over are exactly those the seek would
// skip: within a row cells come in column order, in a reversed heap too,
// which leaves a row for the row before it, also ending the column.
func (s *StoreScanner) trySkip(wholeRow bool, family, qualifier []byte) (bool, error) {
	row := s.matcher.Row()
	for i := 0; i < skipSteps; i++ {
		starts, known, err := s.heap.nextStartsRow()
		if err != nil {
			return false, err
		}
		top := s.heap.Peek()
		if top == nil || (known && starts) || (!known && s.cmp.CompareRows(top.Row, row) != 0) {
			s.leftRow = true
			return true, nil
		}
		if !wholeRow && (string(top.Qualifier) != string(qualifier) || string(top.Family) != string(family)) {
			return true, nil
		}
	}
	return false, nil
}

// Close releases the scanners.
func (s *StoreScanner) Close() { s.heap.Close() }
