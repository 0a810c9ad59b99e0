package scanner

import (
	"container/heap"

	"github.com/regionkv/regionkv/encoding"
)

// KeyValueHeap merges scanners into one sorted stream: HBase's
// KeyValueHeap. Equal cells (same key and sequence id) come from the
// scanner with the larger Order first.
type KeyValueHeap struct {
	cmp *encoding.Comparer
	h   scannerHeap
	all []KeyValueScanner
	err error
}

type scannerHeap struct {
	cmp *encoding.Comparer
	s   []KeyValueScanner
}

func (h *scannerHeap) Len() int { return len(h.s) }
func (h *scannerHeap) Less(i, j int) bool {
	a, b := h.s[i], h.s[j]
	if c := h.cmp.CompareKeyValues(a.Peek(), b.Peek()); c != 0 {
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
func NewKeyValueHeap(cmp *encoding.Comparer, scanners []KeyValueScanner) *KeyValueHeap {
	kh := &KeyValueHeap{cmp: cmp, h: scannerHeap{cmp: cmp}, all: scanners}
	kh.rebuild()
	return kh
}

func (kh *KeyValueHeap) rebuild() {
	kh.h.s = kh.h.s[:0]
	for _, s := range kh.all {
		if s.Peek() != nil {
			kh.h.s = append(kh.h.s, s)
		}
	}
	heap.Init(&kh.h)
}

// Peek returns the smallest current cell, nil when every scanner is done.
func (kh *KeyValueHeap) Peek() *encoding.KeyValue {
	if len(kh.h.s) == 0 {
		return nil
	}
	return kh.h.s[0].Peek()
}

// Next advances past the current cell.
func (kh *KeyValueHeap) Next() error {
	if len(kh.h.s) == 0 {
		return nil
	}
	top := kh.h.s[0]
	if err := top.Next(); err != nil {
		return err
	}
	if top.Peek() == nil {
		heap.Pop(&kh.h)
	} else {
		heap.Fix(&kh.h, 0)
	}
	return nil
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
		if kh.cmp.CompareKeyValueKey(top.Peek(), key) >= 0 {
			return nil
		}
		if err := top.Reseek(key); err != nil {
			return err
		}
		if top.Peek() == nil {
			heap.Pop(&kh.h)
		} else {
			heap.Fix(&kh.h, 0)
		}
	}
	return nil
}

// Close closes every scanner.
func (kh *KeyValueHeap) Close() {
	for _, s := range kh.all {
		s.Close()
	}
	kh.all, kh.h.s = nil, nil
}
