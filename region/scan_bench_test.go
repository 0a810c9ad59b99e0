package region_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/region"
	"github.com/regionkv/regionkv/wal"
	"github.com/stretchr/testify/require"
)

// Region scanner benchmarks over a table like `regionsrv pe
// sequentialWrite` writes with --valueSize=90 --compress=GZ: 100k rows of
// info0:0 in one GZ store file. One op is one row returned by
// Scanner.Next, forwards or reversed, so ns/op is ns per row and the
// reverse/forward ratio is the figure of `pe scan` and `pe reverseScan`.
// With cache=none the region has no block cache, as `regionsrv pe` has
// none; with cache=map every block is cached after the first pass.
//
//	go test ./region -run '^$' -bench RegionScan -benchtime 300000x

// mapBlockCache is an unbounded hfile.Cache.
type mapBlockCache struct {
	mu sync.RWMutex
	m  map[[2]int64]*hfile.Block
}

func (c *mapBlockCache) GetBlock(file uint64, off int64) *hfile.Block {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[[2]int64{int64(file), off}]
}

func (c *mapBlockCache) CacheBlock(file uint64, off int64, b *hfile.Block, _ bool) {
	c.mu.Lock()
	c.m[[2]int64{int64(file), off}] = b
	c.mu.Unlock()
}

const regionBenchRows = 100_000

func peKey(i int) []byte { return []byte(fmt.Sprintf("%026d", i)) }

// writePETable writes regionBenchRows PE-style rows into a region in dir
// and flushes them into one store file.
func writePETable(b *testing.B, dir string, enc encoding.DataBlockEncoding) {
	r, err := region.Open(dir, region.Options{Table: "TestTable", Families: []region.FamilyOptions{
		{Name: "info0", Encoding: enc, Compression: hfile.CompressionGZ},
	}, DisableAutoCompaction: true})
	require.NoError(b, err)
	rng := rand.New(rand.NewPCG(3, 3))
	family, qualifier := []byte("info0"), []byte("0")
	var batch []region.Mutation
	for i := 0; i < regionBenchRows; i++ {
		v := make([]byte, 90)
		for j := 0; j < len(v); j += 8 {
			c := byte('A' + rng.IntN(26))
			for k := j; k < min(j+8, len(v)); k++ {
				v[k] = c
			}
		}
		p := region.NewPut(peKey(i)).Add(family, qualifier, v)
		p.Durability = wal.SkipWAL
		if batch = append(batch, p); len(batch) == 1000 {
			require.NoError(b, r.Batch(batch))
			batch = batch[:0]
		}
	}
	require.NoError(b, r.Flush())
	require.NoError(b, r.Close())
}

func BenchmarkRegionScan(b *testing.B) {
	for _, enc := range []encoding.DataBlockEncoding{encoding.EncodingPrefix, encoding.EncodingFastDiff, encoding.EncodingNone} {
		dir := b.TempDir()
		written := false
		for _, cache := range []string{"none", "map"} {
			for _, dirn := range []string{"forward", "reverse"} {
				b.Run(fmt.Sprintf("enc=%s/cache=%s/%s", enc, cache, dirn), func(b *testing.B) {
					if !written {
						writePETable(b, dir, enc)
						written = true
					}
					opts := region.Options{DisableAutoCompaction: true}
					if cache == "map" {
						opts.BlockCache = &mapBlockCache{m: map[[2]int64]*hfile.Block{}}
					}
					r, err := region.Open(dir, opts)
					require.NoError(b, err)
					defer r.Close()
					scan := &region.Scan{Reversed: dirn == "reverse",
						Columns: []region.Column{{Family: []byte("info0"), Qualifier: []byte("0")}}}
					var sc *region.Scanner
					next := func() {
						if sc == nil {
							if sc, err = r.NewScanner(scan); err != nil {
								b.Fatal(err)
							}
						}
						res, err := sc.Next()
						if err != nil {
							b.Fatal(err)
						}
						if res == nil {
							sc.Close()
							sc = nil
						}
					}
					if cache == "map" {
						for i := 0; i <= regionBenchRows; i++ { // warm the cache
							next()
						}
					}
					b.ReportAllocs()
					b.ResetTimer()
					start := time.Now()
					for i := 0; i < b.N; i++ {
						next()
					}
					b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
					if sc != nil {
						sc.Close()
					}
				})
			}
		}
	}
}
