package memstore

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/regionkv/regionkv/encoding"
)

// Arena sizes. HBase's MemStoreLAB uses fixed 2 MiB chunks
// (hbase.hregion.memstore.mslab.chunksize); we start smaller and double, so a
// store that sees a handful of writes (hbase:meta, a cold family) does not pin
// 2 MiB per segment.
const (
	minChunkSize = 64 << 10
	maxChunkSize = 2 << 20
	// maxArenaAlloc is HBase's hbase.hregion.memstore.mslab.max.allocation:
	// larger cells get an allocation of their own rather than wasting the
	// tail of a chunk.
	maxArenaAlloc = 256 << 10

	minSlabLen = 16
	maxSlabLen = 1024
)

// arena is the MemStoreLAB: a bump allocator for the cells of one segment.
// Cell bytes come from byte chunks (no pointers, so the garbage collector
// never scans them); KeyValue headers, with the columns and list nodes that
// index them, come from slabs. A space is
// reserved with an atomic add on the current chunk's offset, so concurrent
// writers copy in parallel; only replacing a full chunk takes mu. Memory is
// never freed individually: the garbage collector reclaims a chunk when no
// cell in it is referenced any more.
type arena struct {
	chunk atomic.Pointer[byteChunk]
	cells atomic.Pointer[slab[cell]]
	// reserved counts the bytes of chunks, slabs and large allocations.
	reserved atomic.Int64
	mu       sync.Mutex // serializes replacing chunk or slab

	// readyChunk and readyCells are the next chunk and slab of full size,
	// made ready by a goroutine beside the writers (see prepare), nil
	// while there are none.
	readyChunk atomic.Pointer[byteChunk]
	readyCells atomic.Pointer[slab[cell]]
	preparing  atomic.Bool
}

type byteChunk struct {
	buf []byte
	off atomic.Int64 // may run past len(buf): a reservation that did not fit
}

// slab is a run of structs handed out one at a time.
type slab[T any] struct {
	items []T
	n     atomic.Int64 // may run past len(items)
}

// payloadLen returns the number of cell bytes copyKV copies for kv.
func payloadLen(kv *encoding.KeyValue) int {
	return len(kv.Row) + len(kv.Family) + len(kv.Qualifier) + len(kv.Value) + len(kv.Tags)
}

// cell is a cell's slab slot: the column it starts or, if it joins a
// column, only the list node inline in that (col.v0), and its KeyValue
// header. One slot per cell keeps a cell's header next to its list node,
// which a scanner reads first. The node comes first, so that it and the
// column's head share the slot's first cache line (slots of 216 bytes;
// an ownCell is 256-byte aligned).
type cell struct {
	col column
	kv  encoding.KeyValue
}

// copyKV returns a copy of kv that lives in the arena, in a slot of its own.
func (a *arena) copyKV(kv *encoding.KeyValue) *cell {
	buf := a.allocBytes(payloadLen(kv))
	slot := alloc(a, &a.cells, &a.readyCells)
	fill(&slot.kv, kv, buf)
	return slot
}

// ownCell is a cell with room for its bytes inline: an upserted cell
// (Segment.Upsert) of up to ownCellInline bytes is one allocation of its
// own, reused by its column (column.spare) or freed once it is removed and
// no reader holds it. 40 bytes take the 216-byte slot to the 256-byte size
// class, and hold a counter's row, family and qualifier of up to 32 bytes
// and its 8-byte value; ownCellLarge, in the 320-byte class, holds up to
// 104 (HBase PE's IncrementTest counters take 52).
type ownCell struct {
	c   cell
	buf [ownCellInline]byte
}

type ownCellLarge struct {
	c   cell
	buf [ownCellLargeInline]byte
}

const (
	ownCellInline      = 40
	ownCellLargeInline = 104
)

// newUpsertCell returns the slot of a new ownCell or ownCellLarge, whichever
// fits n bytes, and its buffer. REQUIRES: n <= ownCellLargeInline.
func newUpsertCell(n int) (*cell, []byte) {
	if n <= ownCellInline {
		oc := new(ownCell)
		return &oc.c, oc.buf[:]
	}
	oc := new(ownCellLarge)
	return &oc.c, oc.buf[:]
}

// ownCellBuf returns the inline buffer of the ownCell, or the ownCellLarge
// if large, whose slot c is.
func ownCellBuf(c *cell, large bool) []byte {
	if large {
		return (*ownCellLarge)(unsafe.Pointer(c)).buf[:]
	}
	return (*ownCell)(unsafe.Pointer(c)).buf[:]
}

// newOwnCell returns a copy of kv outside the arena.
func newOwnCell(kv *encoding.KeyValue) *cell {
	var slot *cell
	var buf []byte
	if n := payloadLen(kv); n <= ownCellLargeInline {
		slot, buf = newUpsertCell(n)
		buf = buf[:n]
	} else {
		slot, buf = &cell{}, make([]byte, n)
	}
	fill(&slot.kv, kv, buf)
	return slot
}

// fill makes c a copy of kv whose bytes are in buf, payloadLen(kv) long.
func fill(c *encoding.KeyValue, kv *encoding.KeyValue, buf []byte) {
	c.Timestamp, c.Type, c.SeqNum = kv.Timestamp, kv.Type, kv.SeqNum
	var off int
	c.Row, off = take(buf, off, kv.Row)
	c.Family, off = take(buf, off, kv.Family)
	c.Qualifier, off = take(buf, off, kv.Qualifier)
	c.Value, off = take(buf, off, kv.Value)
	c.Tags, _ = take(buf, off, kv.Tags)
}

// take copies b to buf[off:] and returns the copy, capped so that appending
// to it cannot overwrite its neighbour, and the offset after it. A nil b
// stays nil.
func take(buf []byte, off int, b []byte) ([]byte, int) {
	if b == nil {
		return nil, off
	}
	end := off + copy(buf[off:], b)
	return buf[off:end:end], end
}

// allocBytes returns n bytes of arena memory.
func (a *arena) allocBytes(n int) []byte {
	if n == 0 {
		return nil
	}
	if n > maxArenaAlloc {
		a.reserved.Add(int64(n))
		return make([]byte, n)
	}
	for {
		c := a.chunk.Load()
		if c != nil {
			end := c.off.Add(int64(n))
			if end <= int64(len(c.buf)) {
				return c.buf[end-int64(n) : end : end]
			}
		}
		a.growChunk(c, n)
	}
}

// growChunk replaces full with a new chunk of at least n bytes, unless
// another writer already replaced it.
func (a *arena) growChunk(full *byteChunk, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.chunk.Load() != full {
		return
	}
	size := minChunkSize
	if full != nil {
		size = min(2*len(full.buf), maxChunkSize)
	}
	for size < n {
		size *= 2
	}
	next := (*byteChunk)(nil)
	if size == maxChunkSize {
		next = a.readyChunk.Swap(nil)
		a.prepare()
	}
	if next == nil {
		next = &byteChunk{buf: make([]byte, size)}
	}
	a.chunk.Store(next)
	a.reserved.Add(int64(size))
}

// prepare starts a goroutine that makes a chunk and a slab of full size
// ready for the next growChunk and growSlab, unless one is running. Memory
// new to the process faults in a page at a time on its first store, and the
// kernel zeroes each page while the writer waits (reused memory the runtime
// zeroes instead, as long): in a lone writer's load that was about a sixth
// of its time (perf: clear_page_erms under Segment.add). The goroutine
// allocates the memory and stores into each of its pages, so that this work
// runs beside the writers. Only an arena that has reached full-size chunks
// gets memory made ready, so that a store that sees a few writes does not
// hold 2 MiB more for nothing.
func (a *arena) prepare() {
	if !a.preparing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			if a.readyChunk.Load() == nil {
				c := &byteChunk{buf: make([]byte, maxChunkSize)}
				for i := 0; i < len(c.buf); i += pageSize {
					c.buf[i] = 0
				}
				a.readyChunk.Store(c)
			}
			if a.readyCells.Load() == nil {
				sl := &slab[cell]{items: make([]cell, maxSlabLen)}
				// A store every page or closer.
				step := max(1, pageSize/int(unsafe.Sizeof(cell{})))
				for i := 0; i < len(sl.items); i += step {
					sl.items[i].kv.Timestamp = 0
				}
				a.readyCells.Store(sl)
			}
			a.preparing.Store(false)
			// A writer that took one while this ran found prepare busy:
			// make it again.
			if a.readyChunk.Load() != nil && a.readyCells.Load() != nil || !a.preparing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// pageSize is the smallest page size of the platforms we run on: prepare
// stores at least this often.
const pageSize = 4096

// alloc returns a zeroed T from the slab cur points to, replacing a full one.
func alloc[T any](a *arena, cur, ready *atomic.Pointer[slab[T]]) *T {
	for {
		s := cur.Load()
		if s != nil {
			i := s.n.Add(1) - 1
			if i < int64(len(s.items)) {
				return &s.items[i]
			}
		}
		growSlab(a, cur, s, ready)
	}
}

// growSlab replaces full with a new slab, twice as long up to maxSlabLen,
// unless another writer already replaced it.
// A slab of full size is taken from ready, if it holds one (see prepare).
func growSlab[T any](a *arena, cur *atomic.Pointer[slab[T]], full *slab[T], ready *atomic.Pointer[slab[T]]) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur.Load() != full {
		return
	}
	n := minSlabLen
	if full != nil {
		n = min(2*len(full.items), maxSlabLen)
	}
	next := (*slab[T])(nil)
	if n == maxSlabLen && ready != nil {
		next = ready.Swap(nil)
		a.prepare()
	}
	if next == nil {
		next = &slab[T]{items: make([]T, n)}
	}
	cur.Store(next)
	a.reserved.Add(int64(n) * int64(unsafe.Sizeof(*new(T))))
}

// ownCellOf returns the slot of the own cell (ownCell or ownCellLarge) whose
// node v is. REQUIRES: v.recycle.
func ownCellOf(v *version) *cell {
	// v is c.col.v0, at offset 0 of the slot, at offset 0 of the own cell.
	return (*cell)(unsafe.Pointer(v))
}
