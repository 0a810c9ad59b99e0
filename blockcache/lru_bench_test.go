package blockcache

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// shardCounts are the shard settings the benchmarks compare: one lock
// against the defaults.
func shardCounts() []int {
	return []int{1, 8, 32} // 8 and 32: the defaults at GOMAXPROCS 2 and 8
}

// BenchmarkCacheGet measures concurrent Gets, hit and miss, with one shard
// against the default count: sharding is there to cut lock contention.
func BenchmarkCacheGet(b *testing.B) {
	const blocks = 10_000
	for _, shards := range shardCounts() {
		opts := testOptions(1 << 30)
		opts.Shards = shards
		c, err := New[*testBlock](opts)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < blocks; i++ {
			c.Add(Key{File: 1, Offset: int64(i) * 65_599}, &testBlock{size: 64 << 10, id: i}, KindData, false)
		}
		for _, hit := range []bool{true, false} {
			name := "miss"
			file := uint64(2)
			if hit {
				name, file = "hit", 1
			}
			b.Run(fmt.Sprintf("shards=%d/%s", shards, name), func(b *testing.B) {
				var seed atomic.Uint64
				b.ReportAllocs()
				contended := c.contendedGets()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					rng := rand.New(rand.NewPCG(seed.Add(1), 7))
					for pb.Next() {
						k := Key{File: file, Offset: int64(rng.IntN(blocks)) * 65_599}
						if _, ok := c.Get(k); ok != hit {
							b.Fatal("unexpected hit or miss")
						}
					}
				})
				b.StopTimer()
				b.ReportMetric(100*float64(c.contendedGets()-contended)/float64(b.N), "contended%")
			})
		}
		c.Close()
	}
}

// BenchmarkCacheInsert measures inserts of new blocks into a full cache of
// 1,024 blocks of 64 KiB, eviction included.
//
// mode=serial-inline: one goroutine and no eviction goroutine; the loop runs
// the eviction itself whenever the cache passes its acceptable size: the
// cost of an insert with its share of eviction, and no failures.
//
// mode=parallel: GOMAXPROCS goroutines insert and only the eviction
// goroutine evicts, as in HBase (Options.EvictionThread). Inserters that
// never block outrun it (it gets the CPU about once per scheduler slice), so
// most inserts fail at the hard limit (failed/op); that is the cheap path
// this then measures.
//
// mode=parallel-inline: the same inserters with the default inline
// eviction: each insert past the acceptable size evicts, unless another is
// at it. Evicting a block costs more than inserting one, so inserters with
// nothing to do between inserts still outrun the one evicting, and about a
// quarter of the inserts fail at the hard limit; a reader inserts after a
// block read of microseconds.
func BenchmarkCacheInsert(b *testing.B) {
	for _, shards := range shardCounts() {
		for _, mode := range []string{"serial-inline", "parallel", "parallel-inline"} {
			parallel := mode != "serial-inline"
			b.Run(fmt.Sprintf("shards=%d/mode=%s", shards, mode), func(b *testing.B) {
				opts := testOptions(64 << 20)
				opts.Shards = shards
				opts.EvictionThread = mode == "parallel"
				newCache := New[*testBlock]
				if !parallel {
					newCache = newLRU[*testBlock] // no eviction goroutine
				}
				c, err := newCache(opts)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				blk := &testBlock{size: 64 << 10}
				b.ReportAllocs()
				b.ResetTimer()
				if parallel {
					var file atomic.Uint64
					b.RunParallel(func(pb *testing.PB) {
						f := file.Add(1)
						for off := int64(0); pb.Next(); off += 65_599 {
							c.Add(Key{File: f, Offset: off}, blk, KindData, false)
						}
					})
				} else {
					for i := 0; i < b.N; i++ {
						c.Add(Key{File: 1, Offset: int64(i) * 65_599}, blk, KindData, false)
						if c.size.Load() > c.acceptableSize {
							c.runEviction(0)
						}
					}
				}
				b.StopTimer()
				st := c.Stats()
				b.ReportMetric(float64(st.FailedInsertionCount)/float64(b.N), "failed/op")
			})
		}
	}
}

// BenchmarkCacheWorkload is a read path in miniature under heavy eviction:
// each op gets a block by a zipfian (scrambled, YCSB-style) or uniform
// choice among 20,000 blocks of 64 KiB; a miss allocates the block, as a
// read and decompression would, and offers it to a cache of 64 MiB (1,024
// blocks, 1/20 of the blocks). It compares LRU with AdaptiveLRU, whose
// controller runs every 100 ms with an MB limit of 10 (100 MB/s) and count
// limit 0, so it adapts within the warm-up.
func BenchmarkCacheWorkload(b *testing.B) {
	const (
		blockSize = 64 << 10
		nBlocks   = 20_000
		warmup    = 50_000
	)
	for _, dist := range []string{"zipfian", "uniform"} {
		for _, policy := range []Policy{PolicyLRU, PolicyAdaptiveLRU} {
			b.Run(fmt.Sprintf("dist=%s/policy=%s", dist, policy), func(b *testing.B) {
				opts := testOptions(64 << 20)
				opts.Shards = 0
				opts.Policy = policy
				opts.HeavyEvictionCountLimit = 0
				opts.HeavyEvictionMBSizeLimit = 10
				opts.Period = 100 * time.Millisecond
				c, err := New[*heapBlock](opts)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				var seed atomic.Uint64
				var pctSum, pctN atomic.Int64
				worker := func(n int, pb *testing.PB) {
					rng := rand.New(rand.NewPCG(seed.Add(1), 11))
					zipf := rand.NewZipf(rng, 1.01, 1, nBlocks-1)
					for i := 0; pb == nil && i < n || pb != nil && pb.Next(); i++ {
						var idx uint64
						if dist == "zipfian" {
							idx = scramble(zipf.Uint64()) % nBlocks
						} else {
							idx = uint64(rng.IntN(nBlocks))
						}
						k := Key{File: 1, Offset: int64(idx) * 65_599}
						if _, ok := c.Get(k); !ok {
							c.Add(k, &heapBlock{data: make([]byte, blockSize)}, KindData, false)
						}
						if i%1024 == 0 {
							pctSum.Add(int64(c.CacheDataBlockPercent()))
							pctN.Add(1)
						}
					}
				}
				var wg sync.WaitGroup
				for g := 0; g < 2; g++ {
					wg.Add(1)
					go func() { defer wg.Done(); worker(warmup/2, nil) }()
				}
				wg.Wait()
				before := c.Stats()
				pctSum.Store(0)
				pctN.Store(0)
				b.ReportAllocs()
				cpu := processCPU()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) { worker(0, pb) })
				b.StopTimer()
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
				st := c.Stats()
				hits, misses := st.HitCount-before.HitCount, st.MissCount-before.MissCount
				b.ReportMetric(100*float64(hits)/float64(hits+misses), "hit%")
				b.ReportMetric(float64(st.EvictedBytes-before.EvictedBytes)/float64(b.N)/blockSize, "evicted/op")
				if n := pctN.Load(); n > 0 {
					b.ReportMetric(float64(pctSum.Load())/float64(n), "avgPct")
				}
			})
		}
	}
}

// contendedGets returns how many Gets found their shard's lock held: the
// contention sharding is meant to remove.
func (c *LRU[V]) contendedGets() (n int64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += s.contended
		s.mu.Unlock()
	}
	return n
}

// scramble spreads zipfian ranks over the key space, as YCSB's scrambled
// zipfian does, so the hot blocks are not the first ones.
func scramble(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return x
}
