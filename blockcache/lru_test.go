package blockcache

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestDerivedSizes(t *testing.T) {
	c := newTestLRU(t, testOptions(100_000))
	require.EqualValues(t, 100_000, c.maxSize)
	require.EqualValues(t, 99_000, c.acceptableSize)
	require.EqualValues(t, 95_000, c.minSize)
	require.EqualValues(t, 118_800, c.hardLimit)
	require.Equal(t, [numPriorities]int64{23_750, 47_500, 23_750}, c.bucketTarget)
}

func TestPriorityAndPromotion(t *testing.T) {
	c := newTestLRU(t, testOptions(1<<20))
	k1, k2 := Key{File: 1, Offset: 0}, Key{File: 1, Offset: 100}
	require.True(t, c.Add(k1, block(c, 1000, 1), KindData, false))
	require.True(t, c.Add(k2, block(c, 1000, 2), KindIndex, true))
	require.False(t, c.Add(k1, block(c, 1000, 3), KindData, false), "already cached")

	st := c.Stats()
	require.EqualValues(t, 1000, st.SingleSize)
	require.EqualValues(t, 0, st.MultiSize)
	require.EqualValues(t, 1000, st.MemorySize)
	require.EqualValues(t, 2, st.Count)
	require.EqualValues(t, 1, st.DataBlockCount)

	// A hit promotes single → multi and returns the first value added.
	b, ok := c.Get(k1)
	require.True(t, ok)
	require.Equal(t, 1, b.id)
	// An in-memory block stays in-memory.
	_, ok = c.Get(k2)
	require.True(t, ok)
	_, ok = c.Get(Key{File: 2, Offset: 0})
	require.False(t, ok)

	st = c.Stats()
	require.EqualValues(t, 0, st.SingleSize)
	require.EqualValues(t, 1000, st.MultiSize)
	require.EqualValues(t, 1000, st.MemorySize)
	require.EqualValues(t, 2, st.HitCount)
	require.EqualValues(t, 1, st.MissCount)
	require.InDelta(t, 2.0/3, st.HitRatio(), 1e-9)
	require.InDelta(t, 200.0/3, st.Map()["blockCacheCountHitPercent"], 1e-9)
	checkInvariants(t, c)
}

// TestGetSampled: a sampled Get's hit counts its weight, as many hits as
// the reads it stands for, and promotes as one hit does; its miss counts one.
func TestGetSampled(t *testing.T) {
	c := newTestLRU(t, testOptions(1<<20))
	k := Key{File: 1, Offset: 0}
	require.True(t, c.Add(k, block(c, 1000, 1), KindIndex, false))
	b, ok := c.GetSampled(k, 16)
	require.True(t, ok)
	require.Equal(t, 1, b.id)
	_, ok = c.GetSampled(Key{File: 1, Offset: 5}, 16)
	require.False(t, ok)
	st := c.Stats()
	require.EqualValues(t, 16, st.HitCount)
	require.EqualValues(t, 1, st.MissCount)
	require.EqualValues(t, 1000, st.MultiSize, "promoted by its first hit")
	checkInvariants(t, c)
}

// TestGetIfCached: GetIfCached counts and promotes a hit as Get does, and
// counts nothing for a block that is not cached (its caller may not read it).
func TestGetIfCached(t *testing.T) {
	for _, policy := range []Policy{PolicyLRU, PolicyTinyLFU} {
		t.Run(policy.String(), func(t *testing.T) {
			o := testOptions(1 << 20)
			o.Policy = policy
			c := newTestLRU(t, o)
			k := Key{File: 1, Offset: 0}
			require.True(t, c.Add(k, block(c, 1000, 7), KindData, false))
			for i := 0; i < 3; i++ {
				_, ok := c.GetIfCached(Key{File: 1, Offset: 100})
				require.False(t, ok)
			}
			st := c.Stats()
			require.EqualValues(t, 0, st.MissCount, "a block not cached is not a miss")
			require.EqualValues(t, 0, st.HitCount)
			v, ok := c.GetIfCached(k)
			require.True(t, ok)
			require.Equal(t, 7, v.id)
			st = c.Stats()
			require.EqualValues(t, 1, st.HitCount)
			require.EqualValues(t, 1000, st.MultiSize, "a hit promotes as Get's does")
			_, ok = c.Get(Key{File: 1, Offset: 100})
			require.False(t, ok)
			require.EqualValues(t, 1, c.Stats().MissCount, "Get still counts the miss")
			checkInvariants(t, c)
		})
	}
}

// TestRecharge: Recharge adds to a cached value's charge, which leaves the
// cache with it; a key not cached, or cached with another value, is left
// alone.
func TestRecharge(t *testing.T) {
	c := newTestLRU(t, testOptions(1<<20))
	k := Key{File: 1, Offset: 0}
	v := block(c, 1000, 1)
	require.True(t, c.Add(k, v, KindData, false))
	before := c.Stats().Size
	c.Recharge(k, v, 300)
	st := c.Stats()
	require.EqualValues(t, before+300, st.Size)
	require.EqualValues(t, 1300, st.SingleSize)
	require.EqualValues(t, 0, st.HitCount, "a recharge is not a hit")
	c.Recharge(k, block(c, 1000, 2), 500)                       // another value under k
	c.Recharge(Key{File: 2, Offset: 0}, block(c, 1000, 3), 500) // not cached
	require.EqualValues(t, before+300, c.Stats().Size)
	checkInvariants(t, c)
	require.Equal(t, 1, c.EvictFile(1))
	require.EqualValues(t, 0, c.Stats().Size, "eviction frees the recharged bytes too")
}

// fill adds n blocks of charge 1000 at offsets base, base+1, ... with the
// given priority (multi: added then hit once), oldest first.
func fill(t *testing.T, c *LRU[*testBlock], base, n int, p priority) []Key {
	t.Helper()
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = Key{File: 7, Offset: int64(base + i)}
		require.True(t, c.Add(keys[i], block(c, 1000, base+i), KindData, p == prioMemory))
		if p == prioMulti {
			_, ok := c.Get(keys[i])
			require.True(t, ok)
		}
	}
	return keys
}

// cached returns which of keys are still cached.
func cached(c *LRU[*testBlock], keys []Key) []bool {
	out := make([]bool, len(keys))
	for i, k := range keys {
		out[i] = c.Contains(k)
	}
	return out
}

// firstEvicted returns a want-vector: the first n keys gone, the rest kept.
func firstEvicted(total, n int) []bool {
	out := make([]bool, total)
	for i := n; i < total; i++ {
		out[i] = true
	}
	return out
}

func TestEvictionBuckets(t *testing.T) {
	// max 100,000, min 95,000; targets single 23,750, multi 47,500,
	// memory 23,750; blocks are charged 1000 each.
	t.Run("single only overflows", func(t *testing.T) {
		c := newTestLRU(t, testOptions(100_000))
		s := fill(t, c, 0, 50, prioSingle)
		m := fill(t, c, 100, 40, prioMulti)
		mem := fill(t, c, 200, 15, prioMemory)
		// toFree 10,000; memory (-8,750) and multi (-7,500) have no
		// overflow; single frees min(26,250, 10,000/1).
		require.EqualValues(t, 10_000, c.runEviction(0))
		require.Equal(t, firstEvicted(50, 10), cached(c, s))
		require.Equal(t, firstEvicted(40, 0), cached(c, m))
		require.Equal(t, firstEvicted(15, 0), cached(c, mem))
		st := c.Stats()
		require.EqualValues(t, 10, st.EvictionCount)
		require.EqualValues(t, 10_000, st.EvictedBytes)
		require.EqualValues(t, 95_000, st.Size)
		checkInvariants(t, c)
		// At the minimum size, another run does nothing.
		require.EqualValues(t, 0, c.runEviction(0))
	})
	t.Run("single and multi overflow, recency counts", func(t *testing.T) {
		c := newTestLRU(t, testOptions(100_000))
		s := fill(t, c, 0, 40, prioSingle)
		m := fill(t, c, 100, 60, prioMulti)
		mem := fill(t, c, 200, 5, prioMemory)
		// Touch the two oldest multi blocks: they become the most recent.
		c.Get(m[0])
		c.Get(m[1])
		// toFree 10,000. Overflows: memory -18,750, multi 12,500, single
		// 16,250. Multi frees min(12,500, 10,000/2) = 5,000, then single
		// min(16,250, 5,000/1) = 5,000.
		require.EqualValues(t, 10_000, c.runEviction(0))
		require.Equal(t, firstEvicted(40, 5), cached(c, s))
		want := firstEvicted(60, 7)
		want[0], want[1] = true, true
		require.Equal(t, want, cached(c, m))
		require.Equal(t, firstEvicted(5, 0), cached(c, mem))
		checkInvariants(t, c)
	})
	t.Run("all overflow, integer division and overshoot", func(t *testing.T) {
		c := newTestLRU(t, testOptions(100_000))
		s := fill(t, c, 0, 30, prioSingle)
		m := fill(t, c, 100, 50, prioMulti)
		mem := fill(t, c, 200, 30, prioMemory)
		// toFree 15,000. Overflows: multi 2,500, single 6,250, memory 6,250
		// (tie: single first). Multi: min(2,500, 15,000/3) = 2,500, which
		// takes 3 blocks (3,000); single: min(6,250, 12,000/2) = 6,000;
		// memory: min(6,250, 6,000/1) = 6,000.
		require.EqualValues(t, 15_000, c.runEviction(0))
		require.Equal(t, firstEvicted(30, 6), cached(c, s))
		require.Equal(t, firstEvicted(50, 3), cached(c, m))
		require.Equal(t, firstEvicted(30, 6), cached(c, mem))
		require.EqualValues(t, 95_000, c.Size())
		checkInvariants(t, c)
	})
}

// TestFull: the cache is full from its minimum size on, the size an
// eviction run leaves it at.
func TestFull(t *testing.T) {
	c := newTestLRU(t, testOptions(100_000))
	fill(t, c, 0, 94, prioSingle) // charged 1000 each
	require.False(t, c.Full(), "at %d", c.Size())
	fill(t, c, 100, 1, prioSingle)
	require.True(t, c.Full(), "at %d", c.Size())
	fill(t, c, 200, 10, prioSingle)
	c.runEviction(0)
	require.EqualValues(t, 95_000, c.Size())
	require.True(t, c.Full(), "after eviction")
	c.EvictFile(7) // fill's file
	require.False(t, c.Full(), "empty")
}

func TestEvictionForceInMemory(t *testing.T) {
	opts := testOptions(100_000)
	opts.ForceInMemory = true
	t.Run("single and multi cannot cover", func(t *testing.T) {
		c := newTestLRU(t, opts)
		s := fill(t, c, 0, 3, prioSingle)
		m := fill(t, c, 100, 4, prioMulti)
		mem := fill(t, c, 200, 98, prioMemory)
		// toFree 10,000 > s+m = 7,000: empty both, then 3,000 of memory.
		require.EqualValues(t, 10_000, c.runEviction(0))
		require.Equal(t, firstEvicted(3, 3), cached(c, s))
		require.Equal(t, firstEvicted(4, 4), cached(c, m))
		require.Equal(t, firstEvicted(98, 3), cached(c, mem))
		checkInvariants(t, c)
	})
	t.Run("single small: all from multi", func(t *testing.T) {
		c := newTestLRU(t, opts)
		s := fill(t, c, 0, 10, prioSingle)
		m := fill(t, c, 100, 60, prioMulti)
		mem := fill(t, c, 200, 35, prioMemory)
		// toFree 10,000, remain = 70,000-10,000 = 60,000 ≥ 3×10,000.
		require.EqualValues(t, 10_000, c.runEviction(0))
		require.Equal(t, firstEvicted(10, 0), cached(c, s))
		require.Equal(t, firstEvicted(60, 10), cached(c, m))
		require.Equal(t, firstEvicted(35, 0), cached(c, mem))
	})
	t.Run("multi small: all from single", func(t *testing.T) {
		c := newTestLRU(t, opts)
		s := fill(t, c, 0, 60, prioSingle)
		m := fill(t, c, 100, 10, prioMulti)
		mem := fill(t, c, 200, 35, prioMemory)
		// remain 60,000; 3×10,000 ≤ 2×60,000.
		require.EqualValues(t, 10_000, c.runEviction(0))
		require.Equal(t, firstEvicted(60, 10), cached(c, s))
		require.Equal(t, firstEvicted(10, 0), cached(c, m))
		require.Equal(t, firstEvicted(35, 0), cached(c, mem))
	})
	t.Run("both: single down to a third", func(t *testing.T) {
		c := newTestLRU(t, opts)
		s := fill(t, c, 0, 30, prioSingle)
		m := fill(t, c, 100, 40, prioMulti)
		mem := fill(t, c, 200, 35, prioMemory)
		// remain 60,000: single frees 30,000 - 20,000 = 10,000 = toFree.
		require.EqualValues(t, 10_000, c.runEviction(0))
		require.Equal(t, firstEvicted(30, 10), cached(c, s))
		require.Equal(t, firstEvicted(40, 0), cached(c, m))
		require.Equal(t, firstEvicted(35, 0), cached(c, mem))

		c2 := newTestLRU(t, opts)
		s = fill(t, c2, 0, 24, prioSingle)
		m = fill(t, c2, 100, 46, prioMulti)
		mem = fill(t, c2, 200, 35, prioMemory)
		// remain 60,000: single frees 24,000 - 20,000 = 4,000, multi 6,000.
		require.EqualValues(t, 10_000, c2.runEviction(0))
		require.Equal(t, firstEvicted(24, 4), cached(c2, s))
		require.Equal(t, firstEvicted(46, 6), cached(c2, m))
		require.Equal(t, firstEvicted(35, 0), cached(c2, mem))
	})
}

func TestHardLimitAndMaxBlockSize(t *testing.T) {
	opts := testOptions(100_000)
	opts.MaxBlockSize = 50_000
	c := newTestLRU(t, opts)
	// Without the eviction goroutine the cache grows to the hard limit
	// (118,800): the 119th block of 1000 is refused.
	for i := 0; i < 119; i++ {
		require.True(t, c.Add(Key{Offset: int64(i)}, block(c, 1000, i), KindData, false), "block %d", i)
	}
	require.False(t, c.Add(Key{Offset: 1000}, block(c, 1000, 1000), KindData, false))
	require.EqualValues(t, 1, c.Stats().FailedInsertionCount)
	// The refused insert woke the (absent) eviction goroutine.
	require.Len(t, c.wake, 1)
	// Too large a block is a failed insert too, whatever the room.
	c.runEviction(0)
	require.False(t, c.Add(Key{Offset: 2000}, &testBlock{size: 50_001}, KindData, false))
	require.True(t, c.Add(Key{Offset: 2001}, &testBlock{size: 50_000 - c.entryOverhead}, KindData, false))
	require.EqualValues(t, 2, c.Stats().FailedInsertionCount)
	checkInvariants(t, c)
}

func TestBackgroundEviction(t *testing.T) {
	opts := testOptions(100_000)
	opts.Shards = 4
	c, err := New[*testBlock](opts)
	require.NoError(t, err)
	defer c.Close()
	for i := 0; i < 100; i++ {
		c.Add(Key{Offset: int64(i)}, block(c, 1000, i), KindData, false)
	}
	// Passing the acceptable size (99,000) woke the eviction goroutine,
	// which frees down to the minimum (95,000).
	require.Eventually(t, func() bool { return c.Size() <= 95_000 }, 10*time.Second, time.Millisecond)
	st := c.Stats()
	require.GreaterOrEqual(t, st.EvictionRuns, int64(1))
	require.Equal(t, st.EvictionCount, 100-st.Count)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	require.EqualValues(t, 0, c.Size())
	require.False(t, c.Add(Key{Offset: 1}, block(c, 1000, 1), KindData, false), "closed")
	_, ok := c.Get(Key{Offset: 1})
	require.False(t, ok)
}

func TestEvictFile(t *testing.T) {
	opts := testOptions(1 << 20)
	opts.Shards = 4
	c := newTestLRU(t, opts)
	for f := uint64(1); f <= 3; f++ {
		for i := 0; i < 20; i++ {
			c.Add(Key{File: f, Offset: int64(i)}, block(c, 1000, i), KindData, false)
		}
	}
	require.Equal(t, 20, c.EvictFile(2))
	require.Equal(t, 0, c.EvictFile(2))
	st := c.Stats()
	require.EqualValues(t, 40, st.Count)
	require.EqualValues(t, 40_000, st.Size)
	require.EqualValues(t, 0, st.EvictionCount, "file removal is not eviction")
	require.False(t, c.Contains(Key{File: 2, Offset: 5}))
	require.True(t, c.Contains(Key{File: 3, Offset: 5}))
	checkInvariants(t, c)
}

// TestMultiShardEviction checks that per-shard eviction with proportional
// targets frees what one shard would, by priority, and only old blocks.
func TestMultiShardEviction(t *testing.T) {
	opts := testOptions(1_000_000)
	opts.Shards = 8
	c := newTestLRU(t, opts)
	// Generation 1, then generation 2, in every bucket; keys spread over
	// the shards by the hash. Charges of 1000.
	old1 := fill(t, c, 0, 200, prioSingle)
	oldM := fill(t, c, 10_000, 200, prioMulti)
	new1 := fill(t, c, 1_000, 300, prioSingle)
	newM := fill(t, c, 11_000, 300, prioMulti)
	mem := fill(t, c, 20_000, 50, prioMemory)
	// 1,050,000 charged; toFree 100,000. Overflows: memory -187,500,
	// multi 25,000, single 262,500. Multi frees 25,000, single 75,000.
	require.EqualValues(t, 100_000, c.runEviction(0))
	st := c.Stats()
	// Each bucket frees its target, overshooting by less than one block.
	require.InDelta(t, 500_000-75_000, st.SingleSize, 999)
	require.InDelta(t, 500_000-25_000, st.MultiSize, 999)
	require.EqualValues(t, 50_000, st.MemorySize)
	// Only first-generation blocks went.
	require.Equal(t, firstEvicted(300, 0), cached(c, new1))
	require.Equal(t, firstEvicted(300, 0), cached(c, newM))
	require.Equal(t, firstEvicted(50, 0), cached(c, mem))
	gone := func(keys []Key) (n int) {
		for _, ok := range cached(c, keys) {
			if !ok {
				n++
			}
		}
		return n
	}
	require.InDelta(t, 75, gone(old1), 1)
	require.InDelta(t, 25, gone(oldM), 1)
	checkInvariants(t, c)
}

func TestShardSpread(t *testing.T) {
	opts := testOptions(1 << 30)
	opts.Shards = 16
	c := newTestLRU(t, opts)
	// Block 0 of many files, and aligned offsets of one file: both spread.
	counts := make([]int, 16)
	for f := uint64(0); f < 1600; f++ {
		counts[c.shardIndex(Key{File: f})]++
	}
	for i := range counts {
		require.InDelta(t, 100, counts[i], 40, "shard %d: %v", i, counts)
		counts[i] = 0
	}
	for off := int64(0); off < 1600*65536; off += 65536 {
		counts[c.shardIndex(Key{File: 9, Offset: off})]++
	}
	for i := range counts {
		require.InDelta(t, 100, counts[i], 40, "shard %d: %v", i, counts)
	}
}

// heapBlock holds real memory: a 4 KiB buffer (an exact size class) and a
// struct of 32 bytes.
type heapBlock struct {
	data []byte
	_    uint64
}

func (b *heapBlock) MemSize() int64 { return int64(cap(b.data)) + int64(unsafe.Sizeof(*b)) }

// TestHonestAccounting compares the cache's size with what the Go heap
// grows by when it holds the blocks.
func TestHonestAccounting(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds its own memory")
	}
	opts := testOptions(1 << 30)
	opts.Shards = 8
	c, err := newLRU[*heapBlock](opts)
	require.NoError(t, err)
	defer c.Close()
	require.EqualValues(t, 32, unsafe.Sizeof(heapBlock{}))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 20_000
	for i := 0; i < n; i++ {
		c.Add(Key{File: 1, Offset: int64(i) * 4133}, &heapBlock{data: make([]byte, 4096)}, KindData, false)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc - before.HeapAlloc)
	size := c.Size()
	require.EqualValues(t, n*(4096+32+c.entryOverhead), size)
	ratio := float64(size) / float64(grown)
	t.Logf("charged %d bytes, heap grew %d (%.3f); per-entry overhead %d, measured %.1f",
		size, grown, ratio, c.entryOverhead, float64(grown)/n-4096-32)
	require.InDelta(t, 1, ratio, 0.05, "charged %d, heap grew %d", size, grown)
	runtime.KeepAlive(c)
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Options)
		want string
	}{
		{func(o *Options) { o.Size, o.Fraction = 0, 0 }, "disables"},
		{func(o *Options) { o.SingleFactor = 0.3 }, "sum to 1"},
		{func(o *Options) { o.MinFactor = 0.995 }, "min factor"},
		{func(o *Options) { o.AcceptableFactor = 1 }, "min factor"},
		{func(o *Options) { o.HardLimitFactor = 0.9 }, "hard capacity"},
		{func(o *Options) { o.Period = 0 }, "period"},
	} {
		o := testOptions(1 << 20)
		tc.mod(&o)
		_, err := New[*testBlock](o)
		require.ErrorContains(t, err, tc.want, fmt.Sprintf("%+v", o))
	}
	// Some factors may be 0, as in HBase.
	o := testOptions(1 << 20)
	o.SingleFactor, o.MultiFactor, o.MemoryFactor = 0.5, 0.5, 0
	c, err := New[*testBlock](o)
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

// TestSecondChance: with LRU, a hit on a multi-access block marks it, and
// an eviction run moves it to the front instead of evicting it; once moved,
// it is evicted like any other block unless hit again.
func TestSecondChance(t *testing.T) {
	c := newTestLRU(t, testOptions(100_000))
	m := fill(t, c, 100, 90, prioMulti)
	c.Get(m[0]) // the oldest, marked
	s := c.shardFor(m[0])
	// Free one block: m[0] gets its second chance, m[1] goes.
	require.EqualValues(t, 1000, c.freeShard(s, prioMulti, 1000))
	require.True(t, c.Contains(m[0]), "a marked block survives")
	require.False(t, c.Contains(m[1]), "the oldest unmarked block goes")
	// m[0] is now the most recent: the next 88 go before it, then it.
	require.EqualValues(t, 88_000, c.freeShard(s, prioMulti, 88_000))
	require.Equal(t, []bool{true, false, false}, cached(c, m[:3]))
	require.EqualValues(t, 1000, c.freeShard(s, prioMulti, 1000))
	require.False(t, c.Contains(m[0]), "without another hit it goes in turn")
	checkInvariants(t, c)

	// TinyLFU keeps the exact order: a hit moves the block to the front.
	o := tinyOptions(100_000)
	o.Shards = 1
	tc := newTestLRU(t, o)
	m = fill(t, tc, 100, 50, prioMulti)
	tc.Get(m[0])
	s = tc.shardFor(m[0])
	require.Same(t, s.m[m[0]], s.lists[prioMulti].root.next, "moved to the front at once")
}

// TestInlineEviction: without the eviction thread, the insert that takes the
// cache past its acceptable size evicts before it returns: a small cache all
// the way down to its minimum size, a large one by inlineEvictionMax at a
// time, and no insert fails. AdaptiveLRU keeps its goroutine, whose runs its
// controller measures.
func TestInlineEviction(t *testing.T) {
	const blockCharge = 64 << 10
	for _, tc := range []struct {
		name string
		size int64
	}{{"small", 8 << 20}, {"large", 64 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(tc.size)
			o.EvictionThread = false
			c := newTestLRU(t, o) // no goroutine: only inserts can evict
			runs := int64(0)
			for i := 0; i < 4*int(tc.size/blockCharge); i++ {
				before := c.size.Load()
				require.True(t, c.Add(Key{File: 1, Offset: int64(i)}, block(c, blockCharge, i), KindData, false), "insert %d", i)
				after := c.size.Load()
				require.LessOrEqual(t, after, c.acceptableSize, "insert %d left the cache past its acceptable size", i)
				if st := c.Stats(); st.EvictionRuns > runs {
					runs = st.EvictionRuns
					// The run freed down to the minimum, or by at most
					// inlineEvictionMax (plus the block that crossed).
					want := max(c.minSize, before+blockCharge-inlineEvictionMax-blockCharge)
					require.GreaterOrEqual(t, after, want-blockCharge, "insert %d: run freed too much", i)
					if tc.size/20 <= inlineEvictionMax {
						require.LessOrEqual(t, after, c.minSize, "insert %d: a small cache frees to its minimum", i)
					}
				}
			}
			st := c.Stats()
			require.Zero(t, st.FailedInsertionCount)
			require.Greater(t, st.EvictionRuns, int64(1))
			if tc.size/20 > inlineEvictionMax {
				// Steps of at most inlineEvictionMax: more runs than blocks
				// past the acceptable size would need at the minimum.
				require.Greater(t, st.EvictionRuns, 3*(tc.size/blockCharge)/int64((tc.size-c.minSize)/blockCharge))
			}
			checkInvariants(t, c)
		})
	}

	t.Run("adaptive keeps the goroutine", func(t *testing.T) {
		o := testOptions(8 << 20)
		o.EvictionThread = false
		o.Policy = PolicyAdaptiveLRU
		c := newTestLRU(t, o)
		for i := 0; i < int(c.acceptableSize/blockCharge)+2; i++ {
			c.Add(Key{File: 1, Offset: int64(i)}, block(c, blockCharge, i), KindData, false)
		}
		require.Greater(t, c.size.Load(), c.acceptableSize, "an AdaptiveLRU insert evicted")
		require.Zero(t, c.Stats().EvictionRuns)
	})
}
