package hfile

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// skippingCache is an unbounded cache that tells readers to skip the data
// blocks at odd offsets, and records what it is asked.
type skippingCache struct {
	mu                 sync.Mutex
	m                  map[int64]*Block
	lookups, offered   map[int64]int
	counted, uncounted int
}

func newSkippingCache() *skippingCache {
	return &skippingCache{m: map[int64]*Block{}, lookups: map[int64]int{}, offered: map[int64]int{}}
}

func (c *skippingCache) GetBlock(_ uint64, off int64) *Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lookups[off]++
	return c.m[off]
}

func (c *skippingCache) GetCachedBlock(file uint64, off int64) *Block { return c.GetBlock(file, off) }

func (c *skippingCache) CacheBlock(_ uint64, off int64, b *Block, _ bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offered[off]++
	if c.m[off] == nil {
		c.m[off] = b
	}
}

func (c *skippingCache) SkipsDataBlock(_ uint64, off int64, count bool) bool {
	if off%2 == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if count {
		c.counted++
	} else {
		c.uncounted++
	}
	return true
}

// TestSkippedDataBlocks: a point read of a data block the cache says to skip
// neither looks it up (nor peeks at it before asking the bloom) nor offers
// it, reads it into pooled memory, and finds its cell; the cache is told
// once per read to count it. Other blocks are looked up and cached as
// before.
func TestSkippedDataBlocks(t *testing.T) {
	data, kvs := pinFile(t)
	cache := newSkippingCache()
	r := openBytes(t, data, cache)
	rng := rand.New(rand.NewPCG(5, 5))
	rows := make([]int, 3000)
	for i := range rows {
		rows[i] = rng.IntN(len(kvs))
	}
	pointReads(t, r, kvs, rows)

	var kept int
	for off, n := range cache.lookups {
		if b := cache.m[off]; b != nil && b.Type.IsData() {
			require.Zero(t, off%2, "a skipped block was cached")
			kept += n
		}
	}
	for off := range cache.offered {
		if off%2 == 1 {
			require.False(t, cache.m[off].Type.IsData(), "a skipped data block at %d was offered", off)
		}
	}
	for off := range cache.lookups {
		if off%2 == 1 {
			// An odd offset looked up must be an index or bloom block.
			b := cache.m[off]
			require.NotNil(t, b)
			require.False(t, b.Type.IsData(), "data block at %d looked up", off)
		}
	}
	// Half the blocks, about, are skipped: their reads asked to count.
	require.Greater(t, cache.counted, len(rows)/4)
	require.Greater(t, kept, len(rows)/4)
	require.Greater(t, cache.uncounted, 0, "the bloom's peek asks without counting")
}
