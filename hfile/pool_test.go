package hfile

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/offheap"
	"github.com/stretchr/testify/require"
)

func TestPoolClass(t *testing.T) {
	prev := -1
	for n := 1; n <= poolMaxBytes; n += 1 + n/97 {
		class, size, ok := poolClass(n)
		require.True(t, ok, n)
		require.GreaterOrEqual(t, size, n)
		require.GreaterOrEqual(t, class, prev, n)
		require.Less(t, class, poolClasses, n)
		if n > 1<<poolMinLog+1 {
			require.LessOrEqual(t, size, n+n/poolSteps, "a class wastes at most a sixteenth: %d", n)
		}
		c2, s2, _ := poolClass(size)
		require.Equal(t, class, c2, "a buffer's capacity maps back to its class (%d)", n)
		require.Equal(t, size, s2)
		prev = class
	}
	_, _, ok := poolClass(poolMaxBytes + 1)
	require.False(t, ok)
	// The largest class is the last.
	class, size, _ := poolClass(poolMaxBytes)
	require.Equal(t, poolClasses-1, class)
	require.Equal(t, poolMaxBytes, size)
	// A default-size block: 4 KiB of cells, one more cell, the header,
	// checksums and the next block's header.
	_, size, _ = poolClass(4096 + 130 + 33 + 4 + 33)
	require.Equal(t, 4096+256, size)
	// A 4 KiB FAST_DIFF block of 110-byte cells: 3,343 bytes after its
	// header, and the next block's header.
	_, size, _ = poolClass(33 + 3343 + 33)
	require.Equal(t, 3456, size)
}

// admitCache is a mapCache that implements DataBlockAdmitter and checks that
// no pooled block ever reaches it.
type admitCache struct {
	*mapCache
	admit      func(off int64) bool
	mu         sync.Mutex
	offered    int
	pooledSeen int
}

func (c *admitCache) AdmitsDataBlock(_ uint64, off int64) bool { return c.admit(off) }

func (c *admitCache) CacheBlock(file uint64, off int64, b *Block, inMemory bool) {
	c.mu.Lock()
	c.offered++
	if b.state != blockHeap {
		c.pooledSeen++
	}
	c.mu.Unlock()
	c.mapCache.CacheBlock(file, off, b, inMemory)
}

func openBytes(t testing.TB, data []byte, cache Cache) *Reader {
	t.Helper()
	r, err := Open(bytes.NewReader(data), int64(len(data)), t.Name(), ReaderOptions{Cache: cache})
	require.NoError(t, err)
	return r
}

// TestPooledBlockLifetime: blocks the cache refuses are pooled, owned by the
// iterator, kept while current or previous, released when dropped or on
// Close, and never offered to the cache.
func TestPooledBlockLifetime(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	kvs := peCells(rng, 3000) // ~130 bytes a cell: ~24 blocks of 16 KiB
	data := buildFile(t, kvs, WriterOptions{BlockSize: 16 << 10, BloomType: BloomRow})
	cache := &admitCache{mapCache: newMapCache(), admit: func(int64) bool { return false }}
	r := openBytes(t, data, cache)

	it := r.NewIterator(true)
	ok, err := it.First()
	require.True(t, ok)
	require.NoError(t, err)
	first := it.blk
	require.True(t, first.Pooled(), "a refused data block is pooled")
	val := it.Value()
	want := string(kvs[0].Value)
	require.Equal(t, want, string(val))
	// Walk into the second block: the first is kept as the previous one.
	i := 1
	for ; it.blk == first; i++ {
		ok, err = it.Next()
		require.True(t, ok)
		require.NoError(t, err)
	}
	second := it.blk
	require.Same(t, first, it.other)
	require.Equal(t, want, string(val), "a value stays valid while its block is the previous one")
	require.Equal(t, blockPooled, first.state)
	// Into the third: the first is dropped and released.
	for ; it.blk == second; i++ {
		ok, err = it.Next()
		require.True(t, ok)
		require.NoError(t, err)
	}
	require.Same(t, second, it.other)
	require.NotEqual(t, blockPooled, first.state, "a block dropped by the iterator goes back to the pool")
	third := it.blk
	require.Equal(t, string(kvs[i-1].Value), string(it.Value()))

	// Seeking back to the second block reuses it (no read), and keeps the third.
	res, err := it.SeekTo(kvs[i-2].Key())
	require.NoError(t, err)
	require.Equal(t, encoding.SeekExact, res)
	require.Same(t, second, it.blk)
	require.Same(t, third, it.other)

	it.Close()
	require.NotEqual(t, blockPooled, second.state)
	require.NotEqual(t, blockPooled, third.state)
	require.False(t, it.Valid())
	_, err = it.SeekTo(kvs[0].Key())
	require.ErrorIs(t, err, errClosed)
	it.Close() // idempotent

	cache.mu.Lock()
	defer cache.mu.Unlock()
	require.Zero(t, cache.pooledSeen, "a pooled block reached the cache")
	for _, b := range cache.m {
		require.False(t, b.Type.IsData(), "a refused data block was cached")
	}
}

// TestAdmittedBlocksAreNotPooled: a block the cache takes lives on the heap,
// and an iterator's Close leaves it alone.
func TestAdmittedBlocksAreNotPooled(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	kvs := peCells(rng, 2000)
	data := buildFile(t, kvs, WriterOptions{BlockSize: 16 << 10})
	even := func(off int64) bool { return off%2 == 0 }
	cache := &admitCache{mapCache: newMapCache(), admit: even}
	r := openBytes(t, data, cache)
	it := r.NewIterator(true)
	n := 0
	for ok, err := it.First(); ok || err != nil; ok, err = it.Next() {
		require.NoError(t, err)
		require.Equal(t, !even(it.blk.Offset), it.blk.Pooled(), "block at %d", it.blk.Offset)
		requireCell(t, kvs[n], it, true)
		n++
	}
	require.Len(t, kvs, n)
	it.Close()
	cache.mu.Lock()
	require.Zero(t, cache.pooledSeen)
	for off, b := range cache.m {
		require.Equal(t, blockHeap, b.state, "cached block at %d", off[1])
		if b.Type.IsData() {
			require.True(t, even(off[1]))
		}
	}
	cache.mu.Unlock()
	// Without cacheBlocks nothing is offered, everything read is pooled,
	// and cached blocks are still served from the cache.
	it = r.NewIterator(false)
	for ok, err := it.First(); ok || err != nil; ok, err = it.Next() {
		require.NoError(t, err)
		_, cached := cache.m[[2]int64{0, it.blk.Offset}]
		require.Equal(t, !cached, it.blk.Pooled())
	}
	it.Close()
}

// TestPooledBlocksConcurrent runs iterators over one reader in parallel,
// forwards, backwards (SeekBefore, as reverse scans do) and by random seeks,
// with no cache, a refusing cache and a half-admitting one, and checks every
// cell, and that values kept by copying stay right while other iterators
// reuse the pool. Run with -race: released buffers are then poisoned, so a
// use after release reads garbage, and a read racing a reuse is reported.
func TestPooledBlocksConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	kvs := peCells(rng, 4000)
	for _, comp := range []Compression{CompressionNone, CompressionSnappy} {
		data := buildFile(t, kvs, WriterOptions{BlockSize: 8 << 10, Compression: comp})
		for _, tc := range []struct {
			name  string
			cache Cache
		}{
			{"nocache", nil},
			{"refusing", &admitCache{mapCache: newMapCache(), admit: func(int64) bool { return false }}},
			{"halfadmitting", &admitCache{mapCache: newMapCache(), admit: func(off int64) bool { return off%100 < 50 }}},
		} {
			cache := tc.cache
			t.Run(comp.String()+"/"+tc.name, func(t *testing.T) {
				r := openBytes(t, data, cache)
				var wg sync.WaitGroup
				for g := 0; g < 6; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rng := rand.New(rand.NewPCG(uint64(g), 1))
						var kept [][]byte
						var keptIdx []int
						for round := 0; round < 3; round++ {
							it := r.NewIterator(g%2 == 0)
							switch g % 3 {
							case 0: // forward from a random cell
								i := rng.IntN(len(kvs))
								res, err := it.SeekTo(kvs[i].Key())
								if err != nil || res != encoding.SeekExact {
									t.Errorf("SeekTo: %v %v", res, err)
									return
								}
								for ; i < len(kvs); i++ {
									if !bytes.Equal(it.Value(), kvs[i].Value) {
										t.Errorf("cell %d: wrong value", i)
										return
									}
									ok, err := it.Next()
									if err != nil || ok != (i+1 < len(kvs)) {
										t.Errorf("Next after %d: %v %v", i, ok, err)
										return
									}
								}
							case 1: // backwards, cell by cell
								for i := len(kvs) - 1; i > len(kvs)-1500; i-- {
									ok, err := it.SeekBefore(kvs[i].Key())
									if err != nil || !ok {
										t.Errorf("SeekBefore %d: %v %v", i, ok, err)
										return
									}
									if !bytes.Equal(it.Key(), kvs[i-1].Key()) || !bytes.Equal(it.Value(), kvs[i-1].Value) {
										t.Errorf("SeekBefore %d: wrong cell", i)
										return
									}
								}
							case 2: // random gets, keeping copies
								for n := 0; n < 300; n++ {
									i := rng.IntN(len(kvs))
									res, err := it.SeekTo(kvs[i].Key())
									if err != nil || res != encoding.SeekExact {
										t.Errorf("SeekTo: %v %v", res, err)
										return
									}
									kept = append(kept, bytes.Clone(it.Value()))
									keptIdx = append(keptIdx, i)
								}
							}
							it.Close()
						}
						for j, v := range kept {
							if !bytes.Equal(v, kvs[keptIdx[j]].Value) {
								t.Errorf("a copied value changed")
								return
							}
						}
					}()
				}
				wg.Wait()
				if ac, ok := cache.(*admitCache); ok {
					require.Zero(t, ac.pooledSeen, "a pooled block reached the cache")
				}
			})
		}
	}
}

// TestPoisonedAfterClose shows what the lifetime rule protects against: a
// slice kept past Close aliases memory the pool hands to the next read.
func TestPoisonedAfterClose(t *testing.T) {
	if !poisonReleased {
		t.Skip("released blocks are poisoned only under -race")
	}
	rng := rand.New(rand.NewPCG(10, 10))
	kvs := peCells(rng, 500)
	r := openBytes(t, buildFile(t, kvs, WriterOptions{}), nil)
	it := r.NewIterator(false)
	_, err := it.SeekTo(kvs[10].Key())
	require.NoError(t, err)
	v := it.Value()
	require.Equal(t, kvs[10].Value, v)
	it.Close()
	require.Equal(t, bytes.Repeat([]byte{0xDB}, len(v)), v)
}

// TestRefusedReadsDoNotAllocateBlocks: in steady state, a Get-like seek that
// misses the cache and reads a block the cache refuses allocates no more
// than a seek that hits the cache (the pool provides the block), while a
// seek whose block is cached allocates the block.
func TestRefusedReadsDoNotAllocateBlocks(t *testing.T) {
	if poisonReleased {
		t.Skip("the race detector allocates")
	}
	rng := rand.New(rand.NewPCG(11, 11))
	kvs := peCells(rng, 20000)
	data := buildFile(t, kvs, WriterOptions{})
	measure := func(admit, evict bool) float64 {
		cache := &admitCache{mapCache: newMapCache(), admit: func(int64) bool { return admit }}
		r := openBytes(t, data, cache)
		seek := func(i int) {
			it := r.NewIterator(true)
			if res, err := it.SeekTo(kvs[i].Key()); err != nil || res != encoding.SeekExact {
				t.Fatal(res, err)
			}
			it.Close()
		}
		for i := range kvs { // load index and blocks; warm the pool
			if i%10 == 0 {
				seek(i)
			}
		}
		return testing.AllocsPerRun(300, func() {
			if evict {
				for k, b := range cache.m {
					if b.Type.IsData() {
						delete(cache.m, k)
					}
				}
			}
			seek(rng.IntN(len(kvs)))
		})
	}
	hit := measure(true, false)
	refused := measure(false, false)
	cachedMiss := measure(true, true)
	t.Logf("allocations per seek: hit %.1f, refused miss %.1f, cached miss %.1f", hit, refused, cachedMiss)
	require.LessOrEqual(t, refused, hit+0.5, "a refused block must come from the pool")
	require.GreaterOrEqual(t, cachedMiss, hit+1.5, "a cached block is a new allocation and a Block")
}

// TestPoolClassSize checks poolClassSize against poolClass for every class.
func TestPoolClassSize(t *testing.T) {
	for class := 0; class < poolClasses; class++ {
		size := poolClassSize(class)
		got, gotSize, ok := poolClass(size)
		if !ok || got != class || gotSize != size {
			t.Fatalf("class %d: size %d maps back to class %d size %d ok %v", class, size, got, gotSize, ok)
		}
		if c := offheapClasses[class]; (c != nil) != (size <= offheap.MaxSize) || c != nil && c.Size() != size {
			t.Fatalf("class %d (size %d): off-heap class %v", class, size, c)
		}
	}
}
