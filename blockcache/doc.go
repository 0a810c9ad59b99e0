// Package blockcache is the region server's cache of decoded HFile blocks:
// HBase's LruBlockCache, sharded, with the adaptive data-block admission of
// HBase's LruAdaptiveBlockCache (hfile.block.cache.policy=AdaptiveLRU), or
// with TinyLFU admission in front (hfile.block.cache.policy=TinyLFU).
//
// # Usage
//
//	opts := blockcache.DefaultOptions()
//	_ = opts.SetConfig("hfile.block.cache.size", "64m")
//	c, err := blockcache.New[*hfile.Block](opts)
//	defer c.Close()
//	if b, ok := c.Get(blockcache.Key{File: id, Offset: off}); ok { ... }
//	c.Add(blockcache.Key{File: id, Offset: off}, b, blockcache.KindData, inMemory)
//
// The cache is generic in its value, which only has to report the memory it
// keeps alive (Value.MemSize); whether a block is a data block and whether its
// family is IN_MEMORY are given with each Add. Package hfileadapter turns an
// LRU[*hfile.Block] into an hfile.Cache.
//
// # Concurrency
//
// Every method of LRU is safe for concurrent use. Values are shared with every
// caller that gets them and must not be modified once added. Get takes only
// the lock of one shard and does not allocate.
//
// # Semantics (HBase's LruBlockCache)
//
// A new block has SINGLE priority, or MEMORY if added with inMemory; a hit
// promotes SINGLE to MULTI and makes the block the most recently used of its
// priority. (A hit on a MULTI or MEMORY block only marks it, and eviction
// moves a marked block to the front instead of evicting it: CLOCK's
// approximation of LRU, as HBase only stamps an access time on a hit. TinyLFU
// keeps the exact order, which its admission test compares against.) A background goroutine evicts when the cache passes its acceptable
// size (0.99 of the maximum) and every period (10 s), freeing down to the
// minimum size (0.95): the three priorities are buckets with target sizes
// 0.25 / 0.5 / 0.25 of the minimum size, taken in ascending order of overflow,
// each freeing min(overflow, remaining/bucketsLeft) from its least recently
// used blocks (§4.1 of shared/docs/hbase-storage-facts.md). With
// hbase.lru.rs.inmemoryforcemode the in-memory bucket is evicted only when
// single and multi cannot cover the target, and single:multi is kept near 1:2.
// Inserts are refused, and counted as failed, once the cache reaches the hard
// limit (1.2 × acceptable), and blocks above hbase.lru.max.block.size are never
// cached. Sizes are honest: a block is charged its MemSize plus the entry and
// map slot that hold it.
//
// # Sharding, and why eviction is per shard with global targets
//
// Keys are spread over N shards (default: the power of two at or above
// 4 × GOMAXPROCS, as Pebble's cache), each with its own mutex, map and three
// LRU lists, so readers of different blocks do not contend (the HDFS-15202
// idea). The shard is chosen by a hash of the offset mixed with the file id,
// not by offset % N alone: every HFile's first data block is at offset 0, and
// files written with fixed-size blocks would put every block in few shards.
//
// An exact global LRU would need a global access stamp, one atomic counter
// bumped by every hit on every core: precisely the contention sharding is for.
// So the eviction computes HBase's plan globally (bucket totals summed over
// the shards, bytes to free per bucket by HBase's algorithm) and carries it
// out per shard: each shard frees from the tail of that bucket's list its
// share of the bucket's target, proportional to its share of the bucket's
// bytes, with what an earlier shard over-freed deducted from the next (and a
// rotating start, so no shard is always first). Priorities are therefore
// exactly HBase's; recency is exact within a shard and, since keys are spread
// uniformly, approximately global. With one shard it is HBase's algorithm.
//
// A hit changes the block's list position and maybe its priority, so Get
// takes its shard's mutex exclusively. A read lock would not be cheaper: an
// RWMutex read lock is itself an atomic add on one shared word, and recency
// would then need per-entry atomics and a sort at eviction time. Sharding is
// what removes contention; the critical section is a map lookup and a few
// pointer moves.
//
// Eviction is asynchronous, as in HBase: between runs, inserts may take the
// cache up to the hard limit, and beyond it they fail. Readers that insert
// without ever blocking (a benchmark, a CPU-starved machine) can outrun the
// eviction goroutine, so most of their inserts fail until it runs;
// FailedInsertionCount shows it.
//
// # Adaptive admission (AdaptiveLRU)
//
// After each eviction run the controller adds the bytes the run targeted (in
// whole MiB, truncated per run as HBase does) to the period's sum; at the end
// of each period (hbase.lru.cache.heavy.eviction.period.ms, 10 s) it adjusts
// cacheDataBlockPercent exactly as LruAdaptiveBlockCache does and logs one line
// like HBase's. While the percent is below 100, a data block whose
// offset % 100 >= percent is not cached; index, bloom and meta blocks always
// are.
//
// The gain comes from the blocks that are not cached costing nothing to
// cache: LRU.Admits (hfileadapter's AdmitsDataBlock, an
// hfile.DataBlockAdmitter) lets the HFile reader ask before it reads a block,
// so a refused block is never offered (no shard lock, no insert, no
// eviction), and is read into pooled memory that its iterator reuses
// instead of a fresh allocation that would become garbage (hfile/pool.go).
// A point read's seek does not even look such a block up (LRU.SkipsLookup,
// hfileadapter's SkipsDataBlock): the cache holds it only if it was admitted
// before the percent fell, and that copy is left to age out; the read counts
// as a miss, by sample (one read in 16 counts 16), so that the count is not
// an atomic add on a line every core writes.
//
// # TinyLFU admission (TinyLFU)
//
// HBase's offset rule needs tens of seconds of heavy eviction to move, and
// it turns away hot and cold blocks alike. TinyLFU (Einziger, Friedman and
// Manes, 2017) decides per block: each shard keeps a count-min sketch of its
// reads (four rows of 4-bit counters, conservative update, every counter
// halved after hbase.blockcache.tinylfu.sample.factor × the shard's blocks
// reads, so counts say "recently"), updated by Get under the shard lock it
// already holds. Once the cache is within 10% of the eviction's target, a
// data block is admitted only if its reads before this miss outnumber those
// of the block its shard would evict next (the least recently used
// single-access block, else multi-access). A block must so be read twice
// within the sample to get in: on a uniform workload, where no policy can
// raise the hit ratio above capacity/table, blocks stop replacing each
// other; on a skewed one, the hot blocks get in and one-off reads do not
// push them out. Eviction, priorities and sizes stay HBase's LRU, and
// Admits (which then takes the shard lock) answers for the reader before
// it reads, as for AdaptiveLRU. HBase's own TinyLfuBlockCache is
// Caffeine's W-TinyLFU with its own eviction; this is only its admission
// filter, in front of HBase's LruBlockCache.
package blockcache
