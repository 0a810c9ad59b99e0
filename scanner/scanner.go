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
	// Order breaks ties between equal cells of different scanners: the
	// larger order is the newer source and comes first.
	Order() int64
	// Close releases the scanner.
	Close()
}

// MemStoreScanner adapts a memstore segment scanner.
type MemStoreScanner struct {
	s     *memstore.SegmentScanner
	cur   *encoding.KeyValue
	order int64
}

// NewMemStoreScanner wraps s; memstore segments are newer than any file, so
// give them the highest orders.
func NewMemStoreScanner(s *memstore.SegmentScanner, order int64) *MemStoreScanner {
	m := &MemStoreScanner{s: s, order: order}
	m.cur = s.SeekToFirst()
	return m
}

func (m *MemStoreScanner) Peek() *encoding.KeyValue { return m.cur }
func (m *MemStoreScanner) Next() error              { m.cur = m.s.Next(); return nil }
func (m *MemStoreScanner) Seek(k encoding.Key) error {
	m.cur = m.s.SeekGE(k)
	return nil
}
func (m *MemStoreScanner) Reseek(k encoding.Key) error { return m.Seek(k) }
func (m *MemStoreScanner) Order() int64                { return m.order }
func (m *MemStoreScanner) Close()                      { m.s.Close() }

// StoreFileScanner reads one store file at a read point: HBase's
// StoreFileScanner over an hfile.Iterator.
type StoreFileScanner struct {
	it        *hfile.Iterator
	readPoint encoding.SeqNum
	order     int64
	cur       encoding.KeyValue
	valid     bool
	seeked    bool // positioned at least once; !valid then means exhausted
}

// NewStoreFileScanner returns an unpositioned scanner of r; call Seek first.
func NewStoreFileScanner(r *hfile.Reader, readPoint encoding.SeqNum, order int64, cacheBlocks bool) *StoreFileScanner {
	return &StoreFileScanner{it: r.NewIterator(cacheBlocks), readPoint: readPoint, order: order}
}

func (s *StoreFileScanner) Peek() *encoding.KeyValue {
	if !s.valid {
		return nil
	}
	return &s.cur
}

func (s *StoreFileScanner) Order() int64 { return s.order }
func (s *StoreFileScanner) Close()       {}

// settle loads the iterator's cell and skips cells newer than the read point.
func (s *StoreFileScanner) settle(ok bool, err error) error {
	for ; ok && err == nil; ok, err = s.it.Next() {
		if s.it.SeqNum() <= s.readPoint {
			s.it.KeyValue(&s.cur)
			s.valid = true
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

func (s *StoreFileScanner) Seek(k encoding.Key) error {
	res, err := s.it.SeekTo(k)
	return s.afterSeek(res, err)
}

func (s *StoreFileScanner) Reseek(k encoding.Key) error {
	if !s.valid {
		if s.seeked {
			return nil // exhausted: nothing lies ahead
		}
		return s.Seek(k)
	}
	res, err := s.it.Reseek(k)
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
