package blockcache

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConcurrent runs readers, writers, file evictions and stats against a
// cache whose eviction goroutine is running, then checks its invariants.
// Run it under -race.
func TestConcurrent(t *testing.T) {
	for _, tc := range []struct {
		policy Policy
		inline bool
	}{{PolicyLRU, false}, {PolicyAdaptiveLRU, false}, {PolicyTinyLFU, false}, {PolicyLRU, true}, {PolicyTinyLFU, true}} {
		policy := tc.policy
		name := policy.String()
		if tc.inline {
			name += "/inline"
		}
		t.Run(name, func(t *testing.T) {
			opts := testOptions(2 << 20)
			opts.Shards = 4
			opts.Policy = policy
			opts.EvictionThread = !tc.inline
			opts.HeavyEvictionCountLimit = 0
			opts.HeavyEvictionMBSizeLimit = 1
			opts.Period = 5 * time.Millisecond
			c, err := New[*testBlock](opts)
			require.NoError(t, err)
			defer c.Close()

			ops := 20_000
			if testing.Short() || raceEnabled {
				ops = 5_000
			}
			var wg sync.WaitGroup
			for g := 0; g < 6; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 1))
					for i := 0; i < ops; i++ {
						k := Key{File: uint64(rng.IntN(4)), Offset: int64(rng.IntN(2000)) * 4099}
						switch r := rng.IntN(100); {
						case r < 60:
							if b, ok := c.Get(k); ok {
								require.EqualValues(t, k.Offset, b.id)
							}
						case r < 98:
							kind := KindData
							if r%5 == 0 {
								kind = KindIndex
							}
							c.Add(k, &testBlock{size: 4096 + int64(rng.IntN(4096)), id: int(k.Offset)}, kind, r%7 == 0)
						case r < 99:
							c.Stats()
						default:
							if rng.IntN(20) == 0 {
								c.EvictFile(uint64(rng.IntN(4)))
							}
						}
					}
				}()
			}
			wg.Wait()
			// Let the goroutine finish any run in progress.
			c.evictMu.Lock()
			checkInvariants(t, c)
			c.evictMu.Unlock()
			st := c.Stats()
			require.LessOrEqual(t, st.Size, c.hardLimit+6*(8192+c.entryOverhead))
			require.Greater(t, st.EvictionCount, int64(0))
			t.Logf("%+v", st)
		})
	}
}
