package hfile

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/offheap"
	"github.com/stretchr/testify/require"
)

// refCache is a RefCountingCache that holds at most max blocks and evicts
// the oldest first, as the blockcache LRU does with references: it takes
// one when it caches a block and one for the caller of every GetBlock hit,
// under its lock, and drops its own on eviction.
type refCache struct {
	mu    sync.Mutex
	max   int
	m     map[int64]*Block
	order []int64
	// sharedSeen counts shared blocks offered; heapData heap data blocks.
	sharedSeen, heapData int
	// offHeap is what OffHeapBlocks reports.
	offHeap bool
}

func newRefCache(max int) *refCache { return &refCache{max: max, m: map[int64]*Block{}} }

func (c *refCache) CountsBlockRefs() bool { return true }

func (c *refCache) OffHeapBlocks() bool { return c.offHeap }

func (c *refCache) GetBlock(_ uint64, off int64) *Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.m[off]
	if b != nil {
		b.Ref()
	}
	return b
}

func (c *refCache) CacheBlock(_ uint64, off int64, b *Block, _ bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.Shared() {
		c.sharedSeen++
	} else if b.Type.IsData() {
		c.heapData++
	}
	if _, ok := c.m[off]; ok {
		return
	}
	b.Ref()
	c.m[off] = b
	c.order = append(c.order, off)
	for len(c.m) > c.max {
		c.evictLocked()
	}
}

func (c *refCache) evictLocked() {
	off := c.order[0]
	c.order = c.order[1:]
	c.m[off].Unref()
	delete(c.m, off)
}

// evictAll empties the cache.
func (c *refCache) evictAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.order) > 0 {
		c.evictLocked()
	}
}

// TestSharedBlockLifetime: with a reference-counting cache, a data block
// read to be cached is shared; it stays valid while the iterator holds it,
// although the cache evicts it, and returns to the pool when the last
// holder lets go; a block the cache still holds survives the iterator's
// Close.
func TestSharedBlockLifetime(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	kvs := peCells(rng, 3000)
	data := buildFile(t, kvs, WriterOptions{BlockSize: 16 << 10, BloomType: BloomRow})
	cache := newRefCache(1000)
	r := openBytes(t, data, cache)

	it := r.NewIterator(true)
	ok, err := it.First()
	require.True(t, ok)
	require.NoError(t, err)
	first := it.blk
	require.True(t, first.Shared(), "a data block read to be cached is shared")
	require.EqualValues(t, 2, first.refs.Load(), "the iterator's reference and the cache's")
	val := it.Value()
	want := string(kvs[0].Value)

	// The cache lets go of every block; the iterator still holds first.
	cache.evictAll()
	require.EqualValues(t, 1, first.refs.Load())
	require.Equal(t, want, string(val), "a held block stays valid after its eviction")

	// Two blocks on, first is dropped by the iterator and recycled.
	i := 1
	for blocks := 0; blocks < 2; i++ {
		prev := it.blk
		ok, err = it.Next()
		require.True(t, ok)
		require.NoError(t, err)
		require.Equal(t, string(kvs[i].Value), string(it.Value()))
		if it.blk != prev {
			blocks++
		}
	}
	require.Equal(t, blockReleased, first.state, "the last holder recycles a shared block")

	// A block the cache still holds survives Close with the cache's
	// reference; the cache's eviction then recycles it.
	cur := it.blk
	require.EqualValues(t, 2, cur.refs.Load())
	it.Close()
	require.Equal(t, blockShared, cur.state)
	require.EqualValues(t, 1, cur.refs.Load())
	cache.evictAll()
	require.Equal(t, blockReleased, cur.state)

	// A hit takes its own reference: two iterators on one cached block.
	a, b := r.NewIterator(true), r.NewIterator(true)
	_, err = a.SeekTo(kvs[100].Key())
	require.NoError(t, err)
	_, err = b.SeekTo(kvs[101].Key())
	require.NoError(t, err)
	require.Same(t, a.blk, b.blk)
	require.EqualValues(t, 3, a.blk.refs.Load())
	blk := a.blk
	a.Close()
	require.EqualValues(t, 2, blk.refs.Load())
	b.Close()
	require.EqualValues(t, 1, blk.refs.Load())

	cache.mu.Lock()
	require.Zero(t, cache.heapData, "every data block offered was shared")
	require.NotZero(t, cache.sharedSeen)
	cache.mu.Unlock()

	// A cache that does not count references gets heap blocks.
	plain := &admitCache{mapCache: newMapCache(), admit: func(int64) bool { return true }}
	it = openBytes(t, data, plain).NewIterator(true)
	_, err = it.First()
	require.NoError(t, err)
	require.Equal(t, blockHeap, it.blk.state)
	it.Close()
}

// TestSharedBlocksConcurrent is TestPooledBlocksConcurrent's workload
// through a reference-counting cache of 4 blocks, so that blocks are
// evicted and recycled while other iterators hold and read them. Under
// -race, recycled buffers are poisoned.
func TestSharedBlocksConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	kvs := peCells(rng, 4000)
	for _, tc := range []struct {
		comp    Compression
		offHeap bool
	}{{CompressionNone, false}, {CompressionSnappy, false}, {CompressionNone, true}, {CompressionSnappy, true}} {
		comp := tc.comp
		name := comp.String()
		if tc.offHeap {
			name += "/offheap"
		}
		t.Run(name, func(t *testing.T) {
			cache := newRefCache(4)
			cache.offHeap = tc.offHeap
			r := openBytes(t, buildFile(t, kvs, WriterOptions{BlockSize: 8 << 10, Compression: comp}), cache)
			var wg sync.WaitGroup
			for g := 0; g < 6; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 2))
					for round := 0; round < 3; round++ {
						it := r.NewIterator(true)
						switch g % 3 {
						case 0: // forward from a random cell
							i := rng.IntN(len(kvs))
							if res, err := it.SeekTo(kvs[i].Key()); err != nil || res != encoding.SeekExact {
								t.Errorf("SeekTo: %v %v", res, err)
								return
							}
							for ; i < len(kvs); i++ {
								if string(it.Value()) != string(kvs[i].Value) {
									t.Errorf("cell %d: wrong value", i)
									return
								}
								if ok, err := it.Next(); err != nil || ok != (i+1 < len(kvs)) {
									t.Errorf("Next after %d: %v %v", i, ok, err)
									return
								}
							}
						case 1: // backwards
							for i := len(kvs) - 1; i > len(kvs)-1500; i-- {
								if ok, err := it.SeekBefore(kvs[i].Key()); err != nil || !ok {
									t.Errorf("SeekBefore %d: %v %v", i, ok, err)
									return
								}
								if string(it.Key()) != string(kvs[i-1].Key()) || string(it.Value()) != string(kvs[i-1].Value) {
									t.Errorf("SeekBefore %d: wrong cell", i)
									return
								}
							}
						case 2: // random seeks
							for n := 0; n < 300; n++ {
								i := rng.IntN(len(kvs))
								if res, err := it.SeekTo(kvs[i].Key()); err != nil || res != encoding.SeekExact {
									t.Errorf("SeekTo: %v %v", res, err)
									return
								}
								if string(it.Value()) != string(kvs[i].Value) {
									t.Errorf("cell %d: wrong value", i)
									return
								}
							}
						}
						it.Close()
					}
				}()
			}
			wg.Wait()
			// Every reference but the cache's was dropped: emptying the
			// cache recycles every block it held.
			cache.mu.Lock()
			held := make([]*Block, 0, len(cache.m))
			for _, b := range cache.m {
				if b.Type.IsData() {
					require.EqualValues(t, 1, b.refs.Load(), "block at %d", b.Offset)
					held = append(held, b)
				}
			}
			cache.mu.Unlock()
			cache.evictAll()
			for _, b := range held {
				require.Equal(t, blockReleased, b.state)
			}
		})
	}
}

// openFirst opens data through a refCache of 1000 blocks that asks for
// off-heap blocks if offHeap is set, and returns an iterator on its first
// cell.
func openFirst(t *testing.T, data []byte, offHeap bool) (*Reader, *refCache, *Iterator) {
	t.Helper()
	cache := newRefCache(1000)
	cache.offHeap = offHeap
	r := openBytes(t, data, cache)
	it := r.NewIterator(true)
	ok, err := it.First()
	require.True(t, ok)
	require.NoError(t, err)
	return r, cache, it
}

// TestSharedBlocksOffHeap: a cache that asks for off-heap blocks gets its
// shared data blocks in off-heap buffers, which come back when the last
// holder lets go; one that does not gets Go buffers. Pooled blocks (not
// cached) stay on the Go heap either way.
func TestSharedBlocksOffHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	kvs := peCells(rng, 2000)
	for _, comp := range []Compression{CompressionNone, CompressionSnappy} {
		data := buildFile(t, kvs, WriterOptions{BlockSize: 8 << 10, Compression: comp})
		for _, offHeap := range []bool{false, true} {
			inUse := offheap.ReadStats().InUse
			r, cache, it := openFirst(t, data, offHeap)
			require.True(t, it.blk.Shared())
			require.Equal(t, offHeap, it.blk.mem.Valid(), "%s offHeap=%v", comp, offHeap)
			n := 1
			ok, err := it.Next()
			for ; ok; ok, err = it.Next() {
				require.Equal(t, string(kvs[n].Value), string(it.Value()))
				n++
			}
			require.NoError(t, err)
			require.Equal(t, len(kvs), n)
			if offHeap {
				require.Greater(t, offheap.ReadStats().InUse, inUse)
			} else {
				require.Equal(t, inUse, offheap.ReadStats().InUse)
			}
			it.Close()
			cache.evictAll()
			require.Equal(t, inUse, offheap.ReadStats().InUse, "%s offHeap=%v: buffers not freed", comp, offHeap)

			// Not cached: pooled, on the heap.
			it = r.NewIterator(false)
			ok, err = it.First()
			require.True(t, ok)
			require.NoError(t, err)
			require.True(t, it.blk.Pooled())
			require.False(t, it.blk.mem.Valid())
			it.Close()
		}
	}
}

// TestSharedMissesDoNotAllocateBlocks: in steady state, a seek that misses a
// reference-counting cache, whose eviction recycles the block it drops,
// allocates no more than a seek that hits.
func TestSharedMissesDoNotAllocateBlocks(t *testing.T) {
	if poisonReleased {
		t.Skip("the race detector allocates")
	}
	rng := rand.New(rand.NewPCG(14, 14))
	kvs := peCells(rng, 20000)
	data := buildFile(t, kvs, WriterOptions{})
	measure := func(capacity int) float64 {
		cache := newRefCache(capacity)
		r := openBytes(t, data, cache)
		seek := func(i int) {
			it := r.NewIterator(true)
			if res, err := it.SeekTo(kvs[i].Key()); err != nil || res != encoding.SeekExact {
				t.Fatal(res, err)
			}
			it.Close()
		}
		for i := range kvs { // load the index; warm the pool
			if i%10 == 0 {
				seek(i)
			}
		}
		cache.order = append(make([]int64, 0, 4*capacity+1000), cache.order...)
		return testing.AllocsPerRun(300, func() { seek(rng.IntN(len(kvs))) })
	}
	hit := measure(100000)
	miss := measure(8) // nearly every seek misses and evicts a block
	t.Logf("allocations per seek: hit %.2f, miss %.2f", hit, miss)
	require.LessOrEqual(t, miss, hit+0.5, "a missed block must come from the pool, and its evicted one return to it")
}

// TestSharedBlockWhereIndexWanted: a reader that finds a cached (shared)
// data block where it wanted an index or bloom block gets a heap copy, so
// that it keeps no reference and pins nothing the cache may recycle; the
// read then fails on the block's type. With off-heap blocks a reference
// kept would keep the buffer for good.
func TestSharedBlockWhereIndexWanted(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 15))
	kvs := peCells(rng, 500)
	data := buildFile(t, kvs, WriterOptions{BlockSize: 4 << 10, BloomType: BloomRow})
	r, cache, it := openFirst(t, data, true)
	blk := it.blk
	off, size := blk.Offset, blk.OnDiskSize
	it.Close()
	require.True(t, blk.Shared())
	require.EqualValues(t, 1, blk.refs.Load(), "the cache's reference only")

	_, _, err := r.IndexBlock(off, size)
	require.ErrorContains(t, err, "expected an index block")
	require.EqualValues(t, 1, blk.refs.Load(), "IndexBlock kept a reference")

	_, err = r.loadBloomChunk(off, int32(size))
	require.ErrorContains(t, err, "bloom index points at")
	require.EqualValues(t, 1, blk.refs.Load(), "a bloom chunk read kept a reference")

	var slot atomic.Pointer[Block]
	b, err := r.pinnedBlock(&slot, off, size)
	require.NoError(t, err)
	require.NotSame(t, blk, b, "readBlock returned the shared block itself")
	require.Equal(t, blockHeap, b.state)
	require.Equal(t, blk.Data, b.Data)
	require.Nil(t, slot.Load(), "a copy of a shared block was pinned")
	require.EqualValues(t, 1, blk.refs.Load(), "a pinned-block read kept a reference")

	cache.evictAll()
	require.Equal(t, blockReleased, blk.state)
}
