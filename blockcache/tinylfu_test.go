package blockcache

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSketchCountsAndHalves(t *testing.T) {
	s := newSketch(1024, 10)
	require.EqualValues(t, 1024, s.mask+1)
	a, b := keyHash(Key{File: 1, Offset: 0}), keyHash(Key{File: 1, Offset: 4096})
	for i := 0; i < 5; i++ {
		s.add(a, 1000)
	}
	s.add(b, 1000)
	require.EqualValues(t, 5, s.estimate(a))
	require.EqualValues(t, 1, s.estimate(b))
	require.EqualValues(t, 0, s.estimate(keyHash(Key{File: 2, Offset: 0})))
	// Counters saturate at 15.
	for i := 0; i < 40; i++ {
		s.add(a, 1000)
	}
	require.EqualValues(t, counterMax, s.estimate(a))
	s.halve()
	require.EqualValues(t, 7, s.estimate(a))
	require.EqualValues(t, 0, s.estimate(b), "1/2 rounds down")
	require.EqualValues(t, 1, s.halvings)
}

func TestSketchHalvesAfterSample(t *testing.T) {
	// sample = 10 × max(blocks, minSample) = 640 adds.
	s := newSketch(64, 10)
	for i := 0; i < 639; i++ {
		s.add(keyHash(Key{Offset: int64(i % 7)}), 3)
	}
	require.Zero(t, s.halvings)
	s.add(keyHash(Key{Offset: 0}), 3)
	require.EqualValues(t, 1, s.halvings)
	require.EqualValues(t, 320, s.adds, "the next halving comes after half a sample")
}

// TestSketchNeverUndercounts checks the count-min promise on a skewed
// stream: every estimate is at least the true count (capped at 15), and
// collisions stay rare at the default width.
func TestSketchNeverUndercounts(t *testing.T) {
	s := newSketch(4*1000, 1<<30) // no halving
	rng := rand.New(rand.NewPCG(7, 7))
	z := rand.NewZipf(rng, 1.1, 1, 20_000)
	truth := map[uint64]uint64{}
	for i := 0; i < 20_000; i++ {
		k := Key{File: 3, Offset: int64(z.Uint64()) * 4200}
		s.add(keyHash(k), 1000)
		truth[uint64(k.Offset)]++
	}
	over := 0
	for off, n := range truth {
		est := s.estimate(keyHash(Key{File: 3, Offset: int64(off)}))
		require.GreaterOrEqual(t, est, min(n, counterMax), "offset %d", off)
		if est > min(n, counterMax) {
			over++
		}
	}
	require.Less(t, over, len(truth)/10, "%d of %d keys overestimated", over, len(truth))
}

func tinyOptions(size int64) Options {
	o := testOptions(size)
	o.Policy = PolicyTinyLFU
	return o
}

func TestTinyLFUAdmission(t *testing.T) {
	c := newTestLRU(t, tinyOptions(100_000)) // minSize 95,000; filters from 85,500
	// Below the floor everything is admitted, read or not.
	for i := 0; i < 86; i++ {
		require.True(t, c.Add(Key{File: 1, Offset: int64(i)}, block(c, 1000, i), KindData, false))
	}
	require.GreaterOrEqual(t, c.Size(), c.admitFloor)
	require.False(t, c.Add(Key{File: 1, Offset: 86}, block(c, 1000, 86), KindData, false), "never read")
	victim := Key{File: 1, Offset: 0} // least recently used single block, never read

	// A block read for the first time (its miss) does not beat a victim
	// never read: its own miss does not count. Read twice, it does.
	once, twice := Key{File: 2, Offset: 0}, Key{File: 2, Offset: 1}
	_, ok := c.Get(once)
	require.False(t, ok)
	require.False(t, c.Admits(once, KindData))
	c.sketchAccess(twice, 2)
	require.True(t, c.Admits(twice, KindData))

	// Read the victim twice: now the candidate needs 2 reads more than it
	// (besides its miss), so 3 reads lose and 4 win; Add agrees.
	c.sketchAccess(victim, 2)
	require.False(t, c.Admits(twice, KindData))
	require.False(t, c.Add(twice, block(c, 1000, -2), KindData, false))
	thrice, four := Key{File: 2, Offset: 2}, Key{File: 2, Offset: 3}
	c.sketchAccess(thrice, 3)
	c.sketchAccess(four, 4)
	require.False(t, c.Admits(thrice, KindData))
	require.True(t, c.Admits(four, KindData))
	require.True(t, c.Add(four, block(c, 1000, -4), KindData, false))

	// Index, bloom and other blocks are never filtered.
	for _, kind := range []Kind{KindIndex, KindBloom, KindOther} {
		k := Key{File: 3, Offset: int64(kind)}
		require.True(t, c.Admits(k, kind))
		require.True(t, c.Add(k, block(c, 1000, 0), kind, false))
	}
	st := c.Stats()
	require.EqualValues(t, 5, st.AdmissionRejectedCount) // 86, once, twice twice, thrice
	require.EqualValues(t, 5, st.Map()["blockCacheAdmissionRejectedCount"])
	require.Equal(t, 100, st.CacheDataBlockPercent)
	checkInvariants(t, c)
}

// sketchAccess counts n reads of k as Get does, without touching the cache.
func (c *LRU[V]) sketchAccess(k Key, n int) {
	s := c.shardFor(k)
	s.mu.Lock()
	for i := 0; i < n; i++ {
		s.sk.add(keyHash(k), s.count)
	}
	s.mu.Unlock()
}

// TestTinyLFUVictimIsMultiWhenNoSingle checks that with no single-access
// block left, the candidate is weighed against the least recent multi one.
func TestTinyLFUVictimIsMultiWhenNoSingle(t *testing.T) {
	c := newTestLRU(t, tinyOptions(100_000))
	keys := fill(t, c, 0, 86, prioMulti) // each added, then hit once; the last passes the floor
	require.Zero(t, c.Stats().SingleSize)
	// The victim keys[0] was read once (its hit); fill does not go through
	// Get's miss, so that is its whole count.
	k := Key{File: 9, Offset: 9}
	c.sketchAccess(k, 2)
	require.False(t, c.Admits(k, KindData), "2 reads (one the miss) do not beat the multi victim's 1")
	c.sketchAccess(k, 1)
	require.True(t, c.Admits(k, KindData))
	c.sketchAccess(keys[0], 1)
	require.False(t, c.Admits(k, KindData), "the victim is the least recent multi block")
}

// simulate replays a trace of block reads against a cache as a reader
// would (Get; on a miss, Admits, then Add), running eviction when it is
// due, and returns the hit ratio. It is deterministic: no goroutine, no
// clock.
func simulate(t *testing.T, policy Policy, next func() int64, reads int) float64 {
	o := testOptions(200 * 5000) // 200 blocks of 5,000
	o.Policy = policy
	o.Shards = 4
	c := newTestLRU(t, o)
	var hits int
	for i := 0; i < reads; i++ {
		k := Key{File: 1, Offset: next() * 5000}
		if _, ok := c.Get(k); ok {
			hits++
			continue
		}
		if c.Admits(k, KindData) {
			c.Add(k, block(c, 5000, int(k.Offset)), KindData, false)
		}
		if c.Size() > c.acceptableSize {
			c.evictionStep()
		}
	}
	checkInvariants(t, c)
	return float64(hits) / float64(reads)
}

// TestTinyLFUHitRatio checks what the policy is for, on fixed traces over
// 20× the cache: on a skewed workload it keeps the hot blocks that one-off
// reads would push out of an LRU, and on a uniform one, where no policy can
// beat capacity/table, it stops replacing blocks without losing hits.
func TestTinyLFUHitRatio(t *testing.T) {
	const blocks, reads = 4000, 200_000
	zipf := func() func() int64 {
		z := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.05, 1, blocks-1)
		return func() int64 { return int64(z.Uint64()) }
	}
	uniform := func() func() int64 {
		rng := rand.New(rand.NewPCG(3, 4))
		return func() int64 { return rng.Int64N(blocks) }
	}
	lruZ, tinyZ := simulate(t, PolicyLRU, zipf(), reads), simulate(t, PolicyTinyLFU, zipf(), reads)
	lruU, tinyU := simulate(t, PolicyLRU, uniform(), reads), simulate(t, PolicyTinyLFU, uniform(), reads)
	t.Logf("zipfian: LRU %.3f, TinyLFU %.3f; uniform: LRU %.3f, TinyLFU %.3f", lruZ, tinyZ, lruU, tinyU)
	require.Greater(t, tinyZ, lruZ+0.015)
	require.Greater(t, tinyU, lruU-0.01)
}

// TestTinyLFUChurnsLessOnUniform checks the other half: on a uniform trace
// TinyLFU inserts (and so evicts) a fraction of what LRU does.
func TestTinyLFUChurnsLessOnUniform(t *testing.T) {
	evictions := func(policy Policy) int64 {
		o := testOptions(200 * 5000)
		o.Policy = policy
		c := newTestLRU(t, o)
		rng := rand.New(rand.NewPCG(5, 6))
		for i := 0; i < 100_000; i++ {
			k := Key{File: 1, Offset: rng.Int64N(4000) * 5000}
			if _, ok := c.Get(k); !ok && c.Admits(k, KindData) {
				c.Add(k, block(c, 5000, 0), KindData, false)
			}
			if c.Size() > c.acceptableSize {
				c.evictionStep()
			}
		}
		return c.Stats().EvictionCount
	}
	lru, tiny := evictions(PolicyLRU), evictions(PolicyTinyLFU)
	t.Logf("evictions: LRU %d, TinyLFU %d", lru, tiny)
	require.Less(t, tiny, lru/2)
}

func TestTinyLFUDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	o := tinyOptions(100_000)
	o.Shards = 8
	c := newTestLRU(t, o)
	for i := 0; i < 100; i++ {
		c.Add(Key{File: 1, Offset: int64(i)}, block(c, 1000, i), KindData, false)
	}
	require.GreaterOrEqual(t, c.Size(), c.admitFloor, "Admits must take the filtering path")
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		c.Get(Key{File: 1, Offset: int64(i % 100)}) // hit
		k := Key{File: 2, Offset: int64(i)}
		c.Get(k) // miss
		c.Admits(k, KindData)
		i++
	})
	require.Zero(t, allocs)
}
