package scanner

import (
	"github.com/regionkv/regionkv/encoding"
)

// StoreScanner reads one store (column family) forward: it merges the
// store's scanners in a KeyValueHeap and applies a QueryMatcher. It is
// HBase's StoreScanner.
type StoreScanner struct {
	heap    *KeyValueHeap
	matcher *QueryMatcher
	cmp     *encoding.Comparer
	keyBuf  []byte
	done    bool
}

// NewStoreScanner positions scanners at startKey and returns a StoreScanner
// over them. It takes ownership of the scanners.
func NewStoreScanner(cmp *encoding.Comparer, scanners []KeyValueScanner, startKey encoding.Key, opts QueryOptions) (*StoreScanner, error) {
	for _, s := range scanners {
		if err := s.Seek(startKey); err != nil {
			for _, s := range scanners {
				s.Close()
			}
			return nil, err
		}
	}
	return &StoreScanner{heap: NewKeyValueHeap(cmp, scanners), matcher: NewQueryMatcher(cmp, opts), cmp: cmp}, nil
}

// PeekRow returns the row of the next cell the scanner will consider, nil
// when it is done. A region scanner uses it to pick the next row across
// families.
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

// SeekRow moves forward to the first cell of row (or the next row after it).
func (s *StoreScanner) SeekRow(row []byte) error {
	s.keyBuf = encoding.FirstOnRow(s.keyBuf[:0], row)
	return s.heap.Reseek(s.keyBuf)
}

// NextRow appends copies of the matching cells of the next row to dst and
// returns it; it returns dst unchanged with ok false when the scan is done.
// A row with no matching cells is skipped.
func (s *StoreScanner) NextRow(dst []*encoding.KeyValue) (_ []*encoding.KeyValue, ok bool, err error) {
	for {
		row := s.PeekRow()
		if row == nil {
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
	s.matcher.SetRow(kv.Row)
	row := s.matcher.Row()
	for {
		kv = s.heap.Peek()
		if kv == nil || s.cmp.CompareRows(kv.Row, row) != 0 {
			return dst, nil
		}
		var err error
		switch s.matcher.Match(kv) {
		case MatchInclude:
			dst = append(dst, kv.Clone())
			err = s.heap.Next()
		case MatchIncludeAndSeekNextCol:
			dst = append(dst, kv.Clone())
			err = s.seekNextCol(kv)
		case MatchIncludeAndSeekNextRow:
			dst = append(dst, kv.Clone())
			err = s.seekNextRow()
		case MatchSkip:
			err = s.heap.Next()
		case MatchSeekNextCol:
			err = s.seekNextCol(kv)
		case MatchSeekNextRow:
			err = s.seekNextRow()
		case MatchSeekToColumnHint:
			s.keyBuf = encoding.FirstOnRowCol(s.keyBuf[:0], row, kv.Family, s.matcher.NextColumnHint())
			err = s.heap.Reseek(s.keyBuf)
		case MatchDone:
			s.done = true
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

func (s *StoreScanner) seekNextCol(kv *encoding.KeyValue) error {
	s.keyBuf = encoding.LastOnRowCol(s.keyBuf[:0], kv.Row, kv.Family, kv.Qualifier)
	return s.heap.Reseek(s.keyBuf)
}

func (s *StoreScanner) seekNextRow() error {
	s.keyBuf = encoding.LastOnRow(s.keyBuf[:0], s.matcher.Row())
	return s.heap.Reseek(s.keyBuf)
}

// Close releases the scanners.
func (s *StoreScanner) Close() { s.heap.Close() }
