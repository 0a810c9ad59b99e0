package region

import (
	"fmt"
	"testing"

	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/blockcache/hfileadapter"
	"github.com/stretchr/testify/require"
)

// TestBlockCacheOnReadPath: reads go through the block cache, repeated reads
// hit it, and a compaction drops the replaced files' blocks.
func TestBlockCacheOnReadPath(t *testing.T) {
	bo := blockcache.DefaultOptions()
	require.NoError(t, bo.SetConfig("hfile.block.cache.size", "8m"))
	c, err := hfileadapter.New(bo)
	require.NoError(t, err)
	defer c.Close()
	r := openTest(t, t.TempDir(), func(o *Options) { o.BlockCache = c; o.DisableAutoCompaction = true })
	defer r.Close()
	for f := 0; f < 3; f++ {
		for i := 0; i < 300; i++ {
			require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%03d", i))).AddAt(fam, b("q"), int64(f+1), make([]byte, 100))))
		}
		require.NoError(t, r.Flush())
	}
	read := func() {
		for i := 0; i < 300; i++ {
			res, err := r.Get(NewGet(b(fmt.Sprintf("r%03d", i))))
			require.NoError(t, err)
			require.Len(t, res.Cells, 1)
		}
	}
	read()
	first := c.Stats()
	read()
	second := c.Stats()
	require.Greater(t, second.HitCount-first.HitCount, int64(300), "a second pass over the same rows hits the cache")
	require.Equal(t, first.MissCount, second.MissCount, "and misses nothing")
	require.NoError(t, r.Compact(true))
	read()
	after := c.Stats()
	require.Less(t, after.Count, second.Count, "the compacted-away files' blocks are evicted")
}
