package hfileadapter_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/hfile"

	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/blockcache/hfileadapter"
	"github.com/regionkv/regionkv/internal/offheap"
	"github.com/regionkv/regionkv/region"
	"github.com/stretchr/testify/require"
)

// refusing is the adapter with a fixed admission percent, as AdaptiveLRU's
// cacheDataBlockPercent (the real controller needs tens of MB of eviction to
// move), or with the cache's own admission if percent is negative; it also
// checks that no pooled block is ever offered.
type refusing struct {
	hfileadapter.Cache
	percent int64
	mu      sync.Mutex
	pooled  int
}

func (c *refusing) AdmitsDataBlock(file uint64, off int64) bool {
	if c.percent < 0 {
		return c.Cache.AdmitsDataBlock(file, off)
	}
	return off%100 < c.percent
}

func (c *refusing) CacheBlock(file uint64, off int64, b *hfile.Block, inMemory bool) {
	if b.Pooled() {
		c.mu.Lock()
		c.pooled++
		c.mu.Unlock()
	}
	if !b.Type.IsData() || c.percent < 0 || c.AdmitsDataBlock(file, off) {
		c.Cache.CacheBlock(file, off, b, inMemory)
	}
}

// TestPooledBlocksThroughRegion reads a region through a small cache that
// refuses 70% of data blocks, so that they are read into pooled memory, with
// concurrent gets, scans and reverse scans. Every cell a read returns must
// stay right after the read while other reads reuse the pool: region and
// scanner copy what they return. Under -race, released blocks are poisoned,
// so a returned cell that aliased one would read as garbage. The TinyLFU
// case does the same with the real TinyLFU admission deciding, and the
// sharedLRU case with every block admitted, shared and recycled on eviction.
func TestPooledBlocksThroughRegion(t *testing.T) {
	t.Run("refuse70", func(t *testing.T) { testPooledBlocksThroughRegion(t, blockcache.PolicyLRU, 30) })
	t.Run("TinyLFU", func(t *testing.T) { testPooledBlocksThroughRegion(t, blockcache.PolicyTinyLFU, -1) })
	// LRU admits every block: all are shared, and the small cache's
	// eviction recycles them while other reads hold them.
	t.Run("sharedLRU", func(t *testing.T) { testPooledBlocksThroughRegion(t, blockcache.PolicyLRU, -1) })
}

func testPooledBlocksThroughRegion(t *testing.T, policy blockcache.Policy, percent int64) {
	inUse := offheap.ReadStats().InUse
	o := blockcache.DefaultOptions()
	o.Size = 256 << 10
	o.OffHeapMinSize = 0 // shared blocks off the heap, small as the cache is
	o.Policy = policy
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	lru, err := hfileadapter.New(o)
	require.NoError(t, err)
	defer lru.Close() // idempotent: also closed below
	c := &refusing{Cache: lru, percent: percent}

	fam, qual := []byte("f"), []byte("q")
	r, err := region.Open(t.TempDir(), region.Options{
		Families:   []region.FamilyOptions{{Name: "f", BlockSize: 4 << 10}},
		BlockCache: c, DisableAutoCompaction: true,
	})
	require.NoError(t, err)
	defer r.Close() // idempotent: also closed below
	const rows = 3000
	rowKey := func(i int) []byte { return []byte(fmt.Sprintf("row%06d", i)) }
	value := func(i, file int) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("<%06d/%d>", i, file)), 20)
	}
	for file := 0; file < 2; file++ {
		for i := file; i < rows; i += 2 {
			require.NoError(t, r.Put(region.NewPut(rowKey(i)).Add(fam, qual, value(i, file))))
		}
		require.NoError(t, r.Flush())
	}
	want := func(i int) []byte { return value(i, i%2) }

	deadline := time.Now().Add(time.Second)
	if testing.Short() {
		deadline = time.Now().Add(200 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var kept [][]byte
			var keptRow []int
			for n := 0; time.Now().Before(deadline); n++ {
				switch g {
				case 0, 1: // gets
					i := (n*7919 + g*31) % rows
					res, err := r.Get(region.NewGet(rowKey(i)))
					if err != nil || len(res.Cells) != 1 {
						t.Errorf("get %d: %v %v", i, res, err)
						return
					}
					kept = append(kept, res.Cells[0].Value)
					keptRow = append(keptRow, i)
				case 2, 3: // forward and reverse scans of 200 rows
					start := (n * 1013) % rows
					s := &region.Scan{StartRow: rowKey(start), Limit: 200, Reversed: g == 3, NoCacheBlocks: n%2 == 0}
					sc, err := r.NewScanner(s)
					if err != nil {
						t.Error(err)
						return
					}
					i := start
					for {
						res, err := sc.Next()
						if err != nil {
							t.Error(err)
							return
						}
						if res == nil {
							break
						}
						kept = append(kept, res.Cells[0].Value)
						keptRow = append(keptRow, i)
						if g == 3 {
							i--
						} else {
							i++
						}
					}
					sc.Close()
				}
				if len(kept) > 2000 {
					kept, keptRow = kept[1000:], keptRow[1000:]
				}
			}
			for j, v := range kept {
				if !bytes.Equal(v, want(keptRow[j])) {
					t.Errorf("row %d: value changed after the read: %q", keptRow[j], v)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.Zero(t, c.pooled, "a pooled block was offered to the cache")
	st := lru.Stats()
	t.Logf("block cache: %+v", st)
	require.NotZero(t, st.DataBlockCount)
	if policy == blockcache.PolicyTinyLFU {
		require.NotZero(t, st.AdmissionRejectedCount)
	}

	// Every block buffer comes back: a compaction reads both files through
	// pooled blocks, and once the region and the cache are closed no
	// off-heap buffer is left allocated (a holder that never dropped its
	// reference would keep one for good).
	require.NoError(t, r.Compact(true))
	require.NoError(t, r.Close())
	require.NoError(t, lru.Close())
	require.Equal(t, inUse, offheap.ReadStats().InUse, "off-heap bytes still allocated after closing")
}
