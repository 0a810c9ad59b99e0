package blockcache

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGetDoesNotAllocate enforces Get's zero-allocation promise, hit and miss.
func TestGetDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	opts := testOptions(1 << 20)
	opts.Shards = 8
	c := newTestLRU(t, opts)
	for i := 0; i < 100; i++ {
		c.Add(Key{File: 1, Offset: int64(i)}, block(c, 1000, i), KindData, i%2 == 0)
	}
	i, wrong := 0, 0
	hits := testing.AllocsPerRun(1000, func() {
		if _, ok := c.Get(Key{File: 1, Offset: int64(i % 100)}); !ok {
			wrong++ // a cached block missed
		}
		i++
	})
	misses := testing.AllocsPerRun(1000, func() {
		if _, ok := c.Get(Key{File: 2, Offset: int64(i)}); ok {
			wrong++ // an absent block hit
		}
		i++
	})
	require.Zero(t, wrong, "Get returned wrong results")
	require.Zero(t, hits)
	require.Zero(t, misses)
}

// TestEntriesComeInSlabs: a shard allocates its entries entrySlabLen at a
// time, and reuses every removed one before it allocates more.
func TestEntriesComeInSlabs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var s shard[*testBlock]
	got := make([]*entry[*testBlock], 0, 2*entrySlabLen)
	take := func() {
		for range entrySlabLen {
			got = append(got, s.newEntryLocked())
		}
	}
	// AllocsPerRun calls take once more first: 2 × entrySlabLen in all.
	require.Equal(t, 1.0, testing.AllocsPerRun(1, take), "one slab per %d entries", entrySlabLen)
	require.Len(t, got, 2*entrySlabLen)

	// Removed (as removeLocked leaves them), they are handed out again,
	// newest first, before any new slab.
	for _, e := range got {
		*e = entry[*testBlock]{next: s.free}
		s.free = e
	}
	s.slab = nil
	old := got
	got = make([]*entry[*testBlock], 0, 2*entrySlabLen)
	require.Zero(t, testing.AllocsPerRun(1, take))
	for i, e := range got {
		require.Same(t, old[len(old)-1-i], e)
	}
}

// TestRemovedEntriesAllReused: every entry a removal frees is reused, so
// that filling a shard again after emptying it allocates no entry, however
// many blocks it held (it used to keep 64 and leave the rest to the
// collector).
func TestRemovedEntriesAllReused(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := newTestLRU(t, testOptions(1<<20)) // one shard
	const n = 3 * entrySlabLen
	blocks := make([]*testBlock, n)
	for i := range blocks {
		blocks[i] = block(c, 1000, i)
	}
	fill := func() {
		for i, b := range blocks {
			require.True(t, c.Add(Key{File: 1, Offset: int64(i)}, b, KindData, false))
		}
		c.EvictFile(1)
	}
	fill() // the map's room and the entries, once
	require.Zero(t, testing.AllocsPerRun(3, fill))
	checkInvariants(t, c)
}
