package hfile

import (
	"math/bits"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/offheap"
)

// Pooled blocks.
//
// A data block that the block cache will not take (no cache, a scan that
// does not cache blocks, or AdaptiveLRU skipping the block's offset) is read
// into a pooled buffer instead of a fresh allocation, and goes back to the
// pool when the Iterator that read it no longer needs it. This is the Go
// side of HBase's LruAdaptiveBlockCache gain: a block read once and thrown
// away costs neither cache work nor garbage.
//
// Lifetime rules:
//   - A pooled block is owned by exactly one Iterator and never reaches the
//     block cache or any other caller: Reader.readBlock never returns one,
//     only the Iterator's own read path does.
//   - The Iterator keeps it while it is the current or the previous data
//     block (Iterator.blk, Iterator.other), and releases it when it drops
//     out of both, or on Iterator.Close. Slices from Key, Value and Tags are
//     therefore valid until the iterator has moved off the cell's block and
//     the one after it, or is closed; callers copy what they keep (the
//     scanner package copies returned cells, rows and seek keys).
//   - A cached block is never pooled. With a cache that counts references
//     (RefCountingCache), a data block read to be cached is shared instead:
//     it lives in a pooled buffer too, and counts its holders (the cache
//     while it is cached, and each Iterator that holds it as blk or other).
//     The cache takes a reference on Add and on every Get hit, under its
//     lock, and drops it when the block leaves the cache; the Iterator drops
//     its own as it does a pooled block's. The last holder returns the
//     buffer to the pool. Every holder must drop its reference: a buffer
//     off the Go heap (below) is never collected, so one that is not
//     released stays allocated for good. readBlock, whose callers never
//     release, returns a heap copy of a shared block (see readBlockHeld).
//   - Any other block lives on the heap, and release is a no-op for it.
//
// A cache can ask for the blocks it shares to live outside the Go heap
// (OffHeapCache): buffers up to offheap.MaxSize (256 KiB, every block of the
// usual sizes) then come from package offheap's 2 MiB chunks, in huge pages,
// and are freed there when released. A block cache as large as the data is
// most of a read-heavy process's memory; on the Go heap it set the
// collector's heap goal at twice its size, so that between two collections
// every short-lived allocation touched a fresh page (3,000-8,000 page faults
// per 100,000 Gets with a 220 MiB cache, at ~15 µs each on a VM). A small
// cache is better on the heap: its size gives the collector room, where the
// few MiB of heap left without it had a scan that allocates a Result per row
// collect three times as often (a fifth fewer rows per second with an 11 MiB
// cache). Other pooled buffers are Go buffers in sync.Pools.
//
// Under the race detector released buffers are overwritten (poisonReleased),
// so a cell that still aliases one reads as garbage in any -race test, and
// a concurrent read of it is reported as a race.

// Pool size classes: sixteen per power of two, from 1 KiB (exclusive) to
// 16 MiB. A cached block is charged its whole buffer, so the classes are
// fine: with four per power of two, a 4 KiB block (plus a cell, checksums
// and the next header, about 4.2 KiB) took a 5 KiB buffer and a cache held
// a fifth fewer blocks than their data would fit; it now takes 4.25 KiB. A
// 64 KiB block takes 68 KiB. Larger blocks are not pooled. The classes go
// down to 1 KiB because encoded blocks are smaller than BLOCKSIZE, which
// counts unencoded bytes: a 4 KiB FAST_DIFF block of the peer harness's
// cells is about 3.4 KiB with its headers, and took the smallest class
// when that was 4.25 KiB, a quarter more than it needs; it takes 3.375 KiB.
const (
	poolMinLog   = 10 // sizes above 1<<poolMinLog
	poolMaxLog   = 24 // up to 1<<poolMaxLog
	poolSteps    = 16 // classes per power of two
	poolClasses  = (poolMaxLog - poolMinLog) * poolSteps
	poolMaxBytes = 1 << poolMaxLog
)

// blockPools holds *Block values with a buffer of the class's size.
var blockPools [poolClasses]sync.Pool

// poolClass returns the class of an n-byte buffer and its size; ok is false
// if n is too large to pool.
func poolClass(n int) (class, size int, ok bool) {
	if n > poolMaxBytes {
		return 0, 0, false
	}
	n = max(n, 1<<poolMinLog+1)
	k := bits.Len(uint(n - 1)) // 1<<(k-1) < n <= 1<<k
	step := 1 << (k - 1) / poolSteps
	q := (n + step - 1) / step // poolSteps+1..2*poolSteps steps of 1<<(k-1)/poolSteps
	return (k-poolMinLog-1)*poolSteps + q - poolSteps - 1, q * step, true
}

// getPooledBlock returns a zeroed Block, marked pooled, whose buf has room
// for n bytes; ok is false if n is too large to pool. With offHeap, a
// buffer up to offheap.MaxSize is allocated outside the Go heap (see
// package offheap); any other is a Go buffer from a sync.Pool.
func getPooledBlock(n int, offHeap bool) (*Block, bool) {
	class, size, ok := poolClass(n)
	if !ok {
		return nil, false
	}
	if c := offheapClasses[class]; c != nil && offHeap {
		b, _ := bareBlocks.Get().(*Block)
		if b == nil {
			b = &Block{}
		}
		b.buf, b.mem = c.Alloc()
		b.state = blockPooled
		return b, true
	}
	if v := blockPools[class].Get(); v != nil {
		b := v.(*Block)
		b.state = blockPooled
		return b, true
	}
	return &Block{buf: make([]byte, size), state: blockPooled}, true
}

// offheapClasses[class] allocates the buffers of the pool classes up to
// offheap.MaxSize; nil above.
var offheapClasses = func() (cs [poolClasses]*offheap.Class) {
	for class := range cs {
		if size := poolClassSize(class); size <= offheap.MaxSize {
			cs[class] = offheap.NewClass(size)
		}
	}
	return cs
}()

// bareBlocks holds released Block structs of off-heap buffers, without
// their buffers.
var bareBlocks sync.Pool

// poolClassSize returns the buffer size of class.
func poolClassSize(class int) int {
	k := class/poolSteps + poolMinLog + 1 // 1<<(k-1) < size <= 1<<k
	q := class%poolSteps + poolSteps + 1
	return q * (1 << (k - 1) / poolSteps)
}

// Block pool states.
const (
	blockHeap     uint8 = iota // an ordinary block: garbage collected, may be cached
	blockPooled                // from the pool, owned by one iterator
	blockReleased              // back in the pool: nothing may use it
	blockShared                // from the pool, reference counted (refs)
)

// release drops the caller's hold on b: a pooled block returns to its
// pool, a shared block loses one reference; it does nothing for any other
// block. The caller must hold the only reference to a pooled b, or one of
// the references to a shared one, and must not use b's data afterwards.
func (b *Block) release() {
	if b == nil {
		return
	}
	switch b.state {
	case blockPooled:
		b.recycle()
	case blockShared:
		b.Unref()
	case blockReleased:
		// Two owners would read each other's data: stop rather than
		// return wrong cells.
		panic(errors.AssertionFailedf("hfile: pooled block at offset %d released twice", b.Offset))
	}
}

// recycle puts b's buffer back in its pool.
func (b *Block) recycle() {
	buf := b.buf
	if poisonReleased {
		for i := range buf {
			buf[i] = 0xDB
		}
	}
	class, _, _ := poolClass(cap(buf))
	if b.mem.Valid() {
		offheapClasses[class].Free(b.mem)
		*b = Block{state: blockReleased}
		bareBlocks.Put(b)
		return
	}
	*b = Block{buf: buf[:cap(buf)], state: blockReleased}
	blockPools[class].Put(b)
}

// Ref takes a reference on a shared block; it does nothing for any other.
// A RefCountingCache calls it when it caches b and on every Get that
// returns b, while b is cached (so that b cannot be recycled in between).
func (b *Block) Ref() {
	if b.state == blockShared {
		b.refs.Add(1)
	}
}

// Unref drops a reference taken by Ref (or the reader's, for the Iterator
// that read b); the last one returns b's buffer to the pool. It does
// nothing for a block that is not shared.
func (b *Block) Unref() {
	switch b.state {
	case blockShared:
		n := b.refs.Add(-1)
		switch {
		case n == 0:
			b.recycle()
		case n < 0:
			panic(errors.AssertionFailedf("hfile: shared block at offset %d unreferenced too often", b.Offset))
		}
	case blockHeap:
		// A heap block's holders are not counted: its Unref comes only
		// from a RefCountingCache dropping it (see Reader.pinnedBlock).
		b.dropped.Store(true)
	case blockReleased:
		panic(errors.AssertionFailedf("hfile: block at offset %d unreferenced after its release", b.Offset))
	}
}

// Shared reports whether b is a reference-counted shared block (for tests).
func (b *Block) Shared() bool { return b.state == blockShared }

// Pooled reports whether b lives in a pooled buffer (for tests and tools).
func (b *Block) Pooled() bool { return b.state == blockPooled }

// getScratch returns a pooled block used only as a temporary buffer of n
// bytes (a compressed payload), or nil if n is too large. Scratch buffers
// stay on the Go heap: they are short-lived, and compressed sizes spread
// over many classes, each of which would hold a 2 MiB chunk off the heap
// while it has one buffer in use.
func getScratch(n int) *Block {
	b, ok := getPooledBlock(n, false)
	if !ok {
		return nil
	}
	return b
}
