// Package offheap allocates fixed-size byte buffers outside the Go heap,
// for the block memory of the read path: the Go side of HBase's off-heap
// ByteBuffAllocator (HBASE-21879) and of Pebble's manually managed cache
// memory.
//
// Why: a block cache as large as the data is most of a process's Go heap,
// and the garbage collector sets the next heap goal at twice the live heap.
// Between two collections every short-lived allocation (a Result per Get)
// then lands on pages the process has never touched, and on a virtual
// machine each first touch is a page fault costing ~15 µs. With a 200 MiB
// cache, 100,000 Gets took 3,000-8,000 faults and ran up to a quarter
// slower than the same Gets reading into a reused Result. With block
// memory here, the heap is a few tens of MiB, collections recycle the same
// pages, and the faults all but disappear.
//
// Memory comes from the OS in 64 MiB mappings that are never unmapped, cut
// into 2 MiB chunks; each chunk serves one size class until it is empty
// again. A few emptied chunks stay resident for the next class that needs
// one; the pages of the others are released with MADV_DONTNEED (the
// address range stays mapped and is reused by any class). Since nothing is ever unmapped, a slice kept past
// Free reads reused or zeroed bytes, as a pooled Go buffer would, and never
// faults. Off Linux, chunks are Go allocations.
//
// Buffers are not scanned by the garbage collector: they must never hold Go
// pointers. A buffer that is never freed is never reused: its holder must
// free it (package hfile counts references to the blocks it shares).
//
// # Usage
//
//	c := offheap.NewClass(3456)
//	buf, h := c.Alloc()
//	...
//	c.Free(h) // buf must not be used after this
package offheap

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cockroachdb/errors"
)

const (
	// ChunkSize is the memory one chunk of a class holds.
	ChunkSize = 2 << 20
	// MaxSize is the largest buffer a class serves: eight to a chunk, so
	// that no more than an eighth of a chunk is lost to rounding.
	MaxSize = ChunkSize / 8
	// mappingSize is how much address space is mapped at once.
	mappingSize = 64 << 20
)

// Handle identifies an allocated buffer for Free. The zero Handle is no
// buffer.
type Handle struct {
	c    *chunk
	slot int32
}

// Valid reports whether h names a buffer.
func (h Handle) Valid() bool { return h.c != nil }

// chunk is ChunkSize bytes of memory serving one class.
type chunk struct {
	mem        []byte
	class      *Class
	free       []int32 // freed slots, reused first
	next       int32   // slots below next have been handed out
	used       int32
	prev, succ *chunk // in the class's list of chunks with free slots
	listed     bool
}

// Class allocates buffers of one size. It is safe for concurrent use.
type Class struct {
	size     int
	perChunk int32

	mu      sync.Mutex
	partial *chunk // chunks with free slots (and some used ones)
}

// NewClass returns a Class of size-byte buffers, 0 < size <= MaxSize.
func NewClass(size int) *Class {
	if size <= 0 || size > MaxSize {
		panic(errors.AssertionFailedf("offheap: class size %d outside 1..%d", size, MaxSize))
	}
	return &Class{size: size, perChunk: int32(ChunkSize / size)}
}

// Size returns the size of the class's buffers.
func (c *Class) Size() int { return c.size }

// Alloc returns a buffer of c's size (len and cap) and its handle. Its
// contents are whatever its previous user left, or zeros.
func (c *Class) Alloc() ([]byte, Handle) {
	c.mu.Lock()
	ch := c.partial
	if ch == nil {
		c.mu.Unlock()
		ch = chunks.get()
		ch.class = c
		c.mu.Lock()
		c.pushLocked(ch)
	}
	var slot int32
	if n := len(ch.free); n > 0 {
		slot = ch.free[n-1]
		ch.free = ch.free[:n-1]
	} else {
		slot = ch.next
		ch.next++
	}
	ch.used++
	if ch.used == c.perChunk {
		c.removeLocked(ch)
	}
	c.mu.Unlock()
	stats.inUse.Add(int64(c.size))
	off := int(slot) * c.size
	return ch.mem[off : off+c.size : off+c.size], Handle{c: ch, slot: slot}
}

// Free makes h's buffer available again. The buffer must not be used
// afterwards, and h must not be freed twice.
func (c *Class) Free(h Handle) {
	ch := h.c
	if ch == nil {
		panic(errors.AssertionFailedf("offheap: freeing no buffer"))
	}
	var release *chunk
	c.mu.Lock()
	if ch.class != c || h.slot < 0 || h.slot >= ch.next {
		c.mu.Unlock()
		panic(errors.AssertionFailedf("offheap: freeing a buffer class %d did not allocate", c.size))
	}
	if ch.used == c.perChunk {
		c.pushLocked(ch)
	}
	ch.used--
	ch.free = append(ch.free, h.slot)
	if ch.used == 0 {
		c.removeLocked(ch)
		ch.free, ch.next, ch.class = ch.free[:0], 0, nil
		release = ch
	}
	c.mu.Unlock()
	stats.inUse.Add(-int64(c.size))
	if release != nil {
		chunks.put(release)
	}
}

func (c *Class) pushLocked(ch *chunk) {
	ch.prev, ch.succ, ch.listed = nil, c.partial, true
	if c.partial != nil {
		c.partial.prev = ch
	}
	c.partial = ch
}

func (c *Class) removeLocked(ch *chunk) {
	if !ch.listed {
		return
	}
	if ch.prev != nil {
		ch.prev.succ = ch.succ
	} else {
		c.partial = ch.succ
	}
	if ch.succ != nil {
		ch.succ.prev = ch.prev
	}
	ch.prev, ch.succ, ch.listed = nil, nil, false
}

// chunkSource hands out chunks and takes back emptied ones. It keeps up to
// warmChunks of them as they are, for the next class that needs one (a
// class whose only buffer is allocated and freed in turn would otherwise
// give its chunk back and fault it in again each time), and releases the
// pages of the others.
type chunkSource struct {
	mu       sync.Mutex
	warm     []*chunk // emptied, still resident
	released []*chunk // emptied, pages released, memory still mapped
	mapping  []byte   // the rest of the current mapping
}

// warmChunks is how many emptied chunks stay resident: 8 MiB.
const warmChunks = 4

var chunks chunkSource

func (s *chunkSource) get() *chunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.warm); n > 0 {
		ch := s.warm[n-1]
		s.warm = s.warm[:n-1]
		return ch
	}
	if n := len(s.released); n > 0 {
		ch := s.released[n-1]
		s.released = s.released[:n-1]
		stats.resident.Add(ChunkSize)
		return ch
	}
	if len(s.mapping) < ChunkSize {
		s.mapping = mapMemory(mappingSize)
		stats.mapped.Add(int64(len(s.mapping)))
	}
	ch := &chunk{mem: s.mapping[:ChunkSize:ChunkSize]}
	s.mapping = s.mapping[ChunkSize:]
	stats.resident.Add(ChunkSize)
	return ch
}

func (s *chunkSource) put(ch *chunk) {
	s.mu.Lock()
	if len(s.warm) < warmChunks {
		s.warm = append(s.warm, ch)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	releaseMemory(ch.mem)
	stats.resident.Add(-ChunkSize)
	s.mu.Lock()
	s.released = append(s.released, ch)
	s.mu.Unlock()
}

var stats struct {
	mapped, resident, inUse atomic.Int64
}

// Stats are the package's memory figures.
type Stats struct {
	// Mapped is the address space mapped for chunks.
	Mapped int64
	// Chunks is the memory of chunks serving classes or kept resident
	// for reuse: an upper bound on what is resident.
	Chunks int64
	// InUse is the memory of allocated buffers.
	InUse int64
}

// ReadStats returns the current figures.
func ReadStats() Stats {
	return Stats{Mapped: stats.mapped.Load(), Chunks: stats.resident.Load(), InUse: stats.inUse.Load()}
}

// addr returns the address of b's first byte.
func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
