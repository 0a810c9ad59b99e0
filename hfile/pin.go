package hfile

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/cockroachdb/errors"
)

// Pinned index and bloom blocks.
//
// Every point read walks a file's index to a leaf block and asks one of its
// bloom chunks: two block cache lookups that nearly always hit (these blocks
// are a few percent of a file, and every read needs one of them), each of
// which takes a shard's mutex, looks the block up in the shard's map and
// marks it, writing cache lines that every core writes. In a profile of `pe
// randomRead 8` on a table ten times the cache they were about three quarters
// of the cache's 23% of the CPU.
//
// So a reader keeps, for each block under its root index (the leaves of a
// two-level index) and for each bloom chunk, the block it last found in the
// cache, and reads it from there without asking the cache while the cache
// still holds it. In a three-level index (a file of a few GB, with 16 KiB
// index blocks) the accelerator of each intermediate block keeps the leaves
// under it the same way, for as long as the intermediate block lives:
//   - Only a block found in the cache, or kept by the reader itself when
//     there is no cache (metaBlocks), is pinned; a block the cache refused
//     never is. Pinning needs a RefCountingCache, which tells a heap block
//     it drops it (Block.Unref sets dropped): a dropped pinned block is not
//     read again, and the slot's next read goes through the cache. The
//     reader thus keeps no memory alive that the cache does not count,
//     except a dropped block until its slot is next read.
//   - One read in pinRefreshEvery, drawn from the runtime's per-thread
//     generator (no shared counter), asks the cache anyway, so that the
//     block keeps its recency and priority there: a hot block is not evicted
//     for looking idle. A SampledCache counts that read as pinRefreshEvery
//     hits, so the cache's hit count stays an unbiased estimate of its reads.
//   - A cache without reference counts gets no pins: it would never say
//     that it dropped a block.

// pinRefreshEvery is how many reads of a pinned block ask the cache once, on
// average: often enough that a hot block is always marked recently used
// (a leaf read a few hundred times a second is refreshed every few
// milliseconds), rarely enough that the lookups cost little.
const pinRefreshEvery = 16

// SampledCache is implemented by a Cache that can count one lookup as
// several hits: GetBlockSampled is GetBlock, counting weight hits when it
// finds the block (and one miss when it does not). A reader asks it for one
// read in pinRefreshEvery of a pinned block, with weight pinRefreshEvery.
type SampledCache interface {
	GetBlockSampled(file uint64, offset int64, weight int) *Block
}

// readerPins are a Reader's pinned blocks; nil slices pin nothing.
type readerPins struct {
	// leaves[i] is the block that root index entry i points at.
	leaves []atomic.Pointer[Block]
	// general and deleteFamily hold the bloom filters' chunks, by number.
	general, deleteFamily bloomPins
}

// bloomPins are one bloom filter's pinned chunks; it is the bloomChunks
// the reader's bloom lookups load through.
type bloomPins struct {
	r      *Reader
	chunks []atomic.Pointer[Block]
}

// initPins sizes the pins once the index and blooms are known; a cache that
// does not count references gets none.
func (r *Reader) initPins() {
	r.pins.general.r, r.pins.deleteFamily.r = r, r
	if r.opts.Cache != nil && !r.shareBlocks {
		return
	}
	if r.trailer.NumDataIndexLevels > 1 {
		r.pins.leaves = make([]atomic.Pointer[Block], r.dataIndex.len())
	}
	if r.bloom != nil {
		r.pins.general.chunks = make([]atomic.Pointer[Block], len(r.bloom.Chunks))
	}
	if r.dfBloom != nil {
		r.pins.deleteFamily.chunks = make([]atomic.Pointer[Block], len(r.dfBloom.Chunks))
	}
}

// pinnedBlock returns the block at off (onDiskSize bytes), an index or bloom
// block, from slot while the cache holds it there, else as readBlock does,
// pinning it in slot if it came from the cache.
func (r *Reader) pinnedBlock(slot *atomic.Pointer[Block], off int64, onDiskSize int) (*Block, error) {
	pinned := slot.Load()
	if pinned != nil && !pinned.dropped.Load() {
		if rand.Uint32()%pinRefreshEvery != 0 {
			return pinned, nil
		}
		if sc, ok := r.opts.Cache.(SampledCache); ok {
			if b := sc.GetBlockSampled(r.opts.FileID, off, pinRefreshEvery); b != nil {
				if b != pinned {
					slot.Store(b)
				}
				return b, nil
			}
		}
	}
	b, held, err := r.readBlockHeld(off, onDiskSize, true)
	if err != nil {
		return nil, errors.Wrapf(err, "hfile %s", r.name)
	}
	switch {
	case held:
		slot.Store(b)
	case pinned != nil:
		slot.CompareAndSwap(pinned, nil)
	}
	return b, nil
}

// bloomChunk loads chunk i through its pin.
func (p *bloomPins) bloomChunk(i int, off int64, onDiskSize int32) ([]byte, error) {
	if i >= len(p.chunks) {
		return p.r.loadBloomChunk(off, onDiskSize)
	}
	b, err := p.r.pinnedBlock(&p.chunks[i], off, int(onDiskSize))
	return p.r.bloomChunkData(b, off, err)
}
