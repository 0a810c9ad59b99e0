package scanner

import (
	"container/heap"

	"github.com/regionkv/regionkv/encoding"
)

// KeyValueHeap merges scanners into one sorted stream: HBase's
// KeyValueHeap, and with reversed set its ReversedKeyValueHeap, which
// orders rows descending and the cells within a row ascending. Equal cells
// (same key and sequence id) come from the scanner with the larger Order
// first.
type KeyValueHeap struct {
	cmp *encoding.Comparer
	h   scannerHeap
	// top is the top scanner's current cell, nil when the heap is empty:
	// Peek is asked several times for every cell a store scanner reads, and
	// the cell only changes when the heap moves a scanner, which it
	// records here after every move (setTop).
	top    *encoding.KeyValue
	all    []KeyValueScanner
	rowBuf []byte
	keyBuf []byte
}

type scannerHeap struct {
	cmp      *encoding.Comparer
	reversed bool
	s        []KeyValueScanner
}

func (h *scannerHeap) Len() int { return len(h.s) }
func (h *scannerHeap) Less(i, j int) bool {
	a, b := h.s[i], h.s[j]
	ka, kb := a.Peek(), b.Peek()
	if h.reversed {
		if c := h.cmp.CompareRows(ka.Row, kb.Row); c != 0 {
			return c > 0
		}
	}
	if c := h.cmp.CompareKeyValues(ka, kb); c != 0 {
		return c < 0
	}
	return a.Order() > b.Order()
}
func (h *scannerHeap) Swap(i, j int) { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *scannerHeap) Push(x any)    { h.s = append(h.s, x.(KeyValueScanner)) }
func (h *scannerHeap) Pop() any {
	n := len(h.s) - 1
	x := h.s[n]
	h.s = h.s[:n]
	return x
}

// NewKeyValueHeap builds a heap over positioned scanners; exhausted ones are
// left out (but still closed by Close).
func NewKeyValueHeap(cmp *encoding.Comparer, scanners []KeyValueScanner, reversed bool) *KeyValueHeap {
	kh := &KeyValueHeap{}
	kh.reset(cmp, scanners, reversed)
	return kh
}

// reset makes kh a heap over scanners, reusing its memory.
func (kh *KeyValueHeap) reset(cmp *encoding.Comparer, scanners []KeyValueScanner, reversed bool) {
	kh.cmp, kh.all = cmp, scanners
	kh.h.cmp, kh.h.reversed = cmp, reversed
	kh.rowBuf, kh.keyBuf = kh.rowBuf[:0], kh.keyBuf[:0]
	kh.rebuild()
}

func (kh *KeyValueHeap) rebuild() {
	kh.h.s = kh.h.s[:0]
	for _, s := range kh.all {
		if s.Peek() != nil {
			kh.h.s = append(kh.h.s, s)
		}
	}
	heap.Init(&kh.h)
	kh.setTop()
}

// setTop records the top scanner's cell after the heap changed.
func (kh *KeyValueHeap) setTop() {
	kh.top = nil
	if len(kh.h.s) > 0 {
		kh.top = kh.h.s[0].Peek()
	}
}

// Peek returns the smallest current cell, nil when every scanner is done.
func (kh *KeyValueHeap) Peek() *encoding.KeyValue { return kh.top }

// Next advances past the current cell.
func (kh *KeyValueHeap) Next() error {
	if len(kh.h.s) == 0 {
		return nil
	}
	top := kh.h.s[0]
	if kh.h.reversed {
		if sf, ok := top.(*StoreFileScanner); ok && sf.rowEndsHere() {
			// The file's row ends here: straight to the row before.
			kh.keyBuf = encoding.FirstOnRow(kh.keyBuf[:0], kh.top.Row)
			if err := top.SeekToPreviousRow(kh.keyBuf); err != nil {
				return err
			}
			kh.fixTop(top)
			return nil
		}
		kh.rowBuf = append(kh.rowBuf[:0], kh.top.Row...)
	}
	if err := top.Next(); err != nil {
		return err
	}
	if kh.h.reversed {
		// A scanner leaving the row goes back to the row before it, as in
		// HBase's ReversedKeyValueHeap.next.
		if kv := top.Peek(); kv == nil || kh.cmp.CompareRows(kv.Row, kh.rowBuf) != 0 {
			kh.keyBuf = encoding.FirstOnRow(kh.keyBuf[:0], kh.rowBuf)
			if err := top.SeekToPreviousRow(kh.keyBuf); err != nil {
				return err
			}
		}
	}
	kh.fixTop(top)
	return nil
}

// nextStartsRow is Next for a forward heap that also reports whether the
// new top cell is in another row than the one it leaves, when that is known
// without comparing rows: the heap holds one scanner, a store file's, whose
// block decoder saw it.
func (kh *KeyValueHeap) nextStartsRow() (starts, known bool, err error) {
	if len(kh.h.s) == 1 && !kh.h.reversed {
		if sf, ok := kh.h.s[0].(*StoreFileScanner); ok {
			if starts, known, err = sf.nextStartsRow(); err != nil {
				return false, false, err
			}
			kh.fixTop(sf)
			return starts, known, nil
		}
	}
	return false, false, kh.Next()
}

// topColumnGoesOn reports whether the top scanner is a memstore scanner
// whose Next would walk on down a long list of versions of the current
// column (memstore.SegmentScanner.ColumnGoesOn): leaving the column is then
// cheaper by a seek.
func (kh *KeyValueHeap) topColumnGoesOn() bool {
	if len(kh.h.s) == 0 || kh.h.reversed {
		return false
	}
	m, ok := kh.h.s[0].(*MemStoreScanner)
	return ok && m.s.ColumnGoesOn()
}

// Seek positions every scanner at the first cell >= key.
func (kh *KeyValueHeap) Seek(key encoding.Key) error {
	for _, s := range kh.all {
		if err := s.Seek(key); err != nil {
			return err
		}
	}
	kh.rebuild()
	return nil
}

// Reseek moves forward to key. Only scanners behind key move, as in HBase's
// generalizedSeek: the others are already at or past it.
func (kh *KeyValueHeap) Reseek(key encoding.Key) error {
	for len(kh.h.s) > 0 {
		top := kh.h.s[0]
		if kh.cmp.CompareKeyValueKey(kh.top, key) >= 0 {
			return nil
		}
		if err := top.Reseek(key); err != nil {
			return err
		}
		kh.fixTop(top)
	}
	return nil
}

// SeekToPreviousRow (reverse) moves every scanner at or after key's row to
// the row before it; scanners already on earlier rows stay.
func (kh *KeyValueHeap) SeekToPreviousRow(key encoding.Key) error {
	row := key.Row()
	for len(kh.h.s) > 0 {
		top := kh.h.s[0]
		if kh.cmp.CompareRows(kh.top.Row, row) < 0 {
			return nil
		}
		if err := top.SeekToPreviousRow(key); err != nil {
			return err
		}
		kh.fixTop(top)
	}
	return nil
}

// BackwardSeek (reverse) moves the scanners in key's row that are before
// key to the first cell >= key in that row, or to their previous row.
func (kh *KeyValueHeap) BackwardSeek(key encoding.Key) error {
	row := key.Row()
	for len(kh.h.s) > 0 {
		top := kh.h.s[0]
		kv := kh.top
		if kh.cmp.CompareRows(kv.Row, row) != 0 || kh.cmp.CompareKeyValueKey(kv, key) >= 0 {
			return nil
		}
		if err := top.BackwardSeek(key); err != nil {
			return err
		}
		kh.fixTop(top)
	}
	return nil
}

// SeekToLastRow positions every scanner on its last row.
func (kh *KeyValueHeap) SeekToLastRow() error {
	for _, s := range kh.all {
		if err := s.SeekToLastRow(); err != nil {
			return err
		}
	}
	kh.rebuild()
	return nil
}

// BackwardSeekAll positions every scanner with BackwardSeek(key): the start
// of a reverse scan.
func (kh *KeyValueHeap) BackwardSeekAll(key encoding.Key) error {
	for _, s := range kh.all {
		if err := s.BackwardSeek(key); err != nil {
			return err
		}
	}
	kh.rebuild()
	return nil
}

// SeekToPreviousRowAll positions every scanner on the row before key's.
func (kh *KeyValueHeap) SeekToPreviousRowAll(key encoding.Key) error {
	for _, s := range kh.all {
		if err := s.SeekToPreviousRow(key); err != nil {
			return err
		}
	}
	kh.rebuild()
	return nil
}

func (kh *KeyValueHeap) fixTop(top KeyValueScanner) {
	kv := top.Peek()
	switch {
	case kv == nil:
		heap.Pop(&kh.h)
	case len(kh.h.s) == 1:
		kh.top = kv
		return
	case len(kh.h.s) == 2:
		// The usual merge (a file and the memstore, or two files): one
		// comparison, without container/heap's calls through an interface.
		if kh.h.Less(1, 0) {
			kh.h.Swap(0, 1)
		}
	default:
		heap.Fix(&kh.h, 0)
	}
	kh.setTop()
}

// Close closes every scanner.
func (kh *KeyValueHeap) Close() {
	for _, s := range kh.all {
		s.Close()
	}
	// Keep the heap's slice for reuse, without the scanners.
	clear(kh.h.s[:cap(kh.h.s)])
	kh.all, kh.h.s, kh.top = nil, kh.h.s[:0], nil
}
