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
